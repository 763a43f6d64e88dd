package slurmext

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrBadTimeSpec means a time given on the command line (--since,
// --until) is none of the forms ParseTimeSpec accepts.
var ErrBadTimeSpec = errors.New("not a time gpuprof or sacct accepts")

// TimeSpecForms lists the forms ParseTimeSpec accepts, for flag help and
// error messages.
const TimeSpecForms = "YYYY-MM-DD[THH:MM[:SS]], MMDD[YY][-HH:MM[:SS]], MM/DD[/YY][-HH:MM[:SS]], MM.DD[.YY], HH:MM[:SS][AM|PM], " +
	"today, yesterday, tomorrow, midnight, noon, elevenses, fika, teatime, " +
	"now[{+|-}count[seconds|minutes|hours|days|weeks]], uts<epoch seconds>, RFC 3339, " +
	"or a span before now such as 30m, 12h, 7d, 2w"

// maxSpanSeconds bounds a count in now±count and 7d: a century, far
// beyond any job history and far from overflowing a time.Duration.
const maxSpanSeconds = 100 * 366 * 24 * 3600

// ParseTimeSpec parses a time as sacct's -S/--starttime and -E/--endtime
// take it (Slurm's parse_time, with sacct's "past" rule), plus RFC 3339,
// "yesterday" and a span before now:
//
//	YYYY-MM-DD[THH:MM[:SS]]          2026-03-01, 2026-03-01T08:30
//	MMDD[YY], MM/DD[/YY], MM.DD[.YY] 0301, 030126, 03/01, 03/01/26 (also /2026)
//	… -HH:MM[:SS]                    03/01-08:30: a date, then a time
//	HH:MM[:SS] [AM|PM]               08:30, 8:30pm: today
//	today, yesterday, tomorrow       midnight of that day
//	midnight, noon, elevenses, fika, teatime  00:00, 12:00, 11:00, 15:00, 16:00
//	                                 today, or of a date given with them
//	now[{+|-}count[unit]]            now-7days, now+1hour, now-90 (seconds);
//	                                 units seconds, minutes, hours, days,
//	                                 weeks, singular or plural, or s, m, h, d, w
//	uts<seconds>                     seconds since 1970, as Slurm takes them
//	RFC 3339                         2026-03-01T08:30:00+01:00
//	count{s|m|h|d|w}                 30m, 12h, 7d, 2w: that long before now
//
// Words are case-insensitive. Times are in now's location, as Slurm uses
// the local time zone. As with sacct, a date without a year is this year's,
// or last year's when its month is after now's (a window start lies in the
// past), and a time without a date is today's. A date that does not exist
// (02/30) is an error, not the next month's day. Errors wrap
// ErrBadTimeSpec and name the accepted forms.
func ParseTimeSpec(s string, now time.Time) (time.Time, error) {
	t, ok := parseTimeSpec(strings.TrimSpace(s), now.Truncate(time.Second))
	if !ok {
		return time.Time{}, fmt.Errorf("time %s: %w: want %s", QuoteShort(s), ErrBadTimeSpec, TimeSpecForms)
	}
	return t, nil
}

// parseTimeSpec is ParseTimeSpec without the error text.
func parseTimeSpec(s string, now time.Time) (time.Time, bool) {
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	lower := strings.ToLower(s)
	if rest, ok := strings.CutPrefix(lower, "uts"); ok {
		n, ok := ParseDigits(rest, 1<<40)
		if !ok || n < 1_000_000 { // Slurm's own lower bound
			return time.Time{}, false
		}
		return time.Unix(int64(n), 0).In(now.Location()), true
	}
	if rest, ok := strings.CutPrefix(lower, "now"); ok {
		d, ok := parseNowOffset(rest)
		if !ok {
			return time.Time{}, false
		}
		return now.Add(d), true
	}
	if d, ok := parseSpan(lower); ok {
		return now.Add(-d), true
	}
	return parseDateTime(lower, now)
}

// parseNowOffset parses what follows "now": nothing, or a sign, a count
// and an optional unit (seconds by default), blanks allowed between them.
func parseNowOffset(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, true
	}
	sign := time.Duration(1)
	switch s[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	s = strings.TrimSpace(s[1:])
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, ok := ParseDigits(s[:i], maxSpanSeconds)
	if !ok {
		return 0, false
	}
	unit, ok := unitSeconds(strings.TrimSpace(s[i:]))
	if !ok || n*unit > maxSpanSeconds {
		return 0, false
	}
	return sign * time.Duration(n*unit) * time.Second, true
}

// unitSeconds returns the length in seconds of a unit of now±count: Slurm's
// names, singular or plural, and their one-letter forms; none is seconds.
func unitSeconds(u string) (uint64, bool) {
	switch u {
	case "", "s", "sec", "second", "seconds":
		return 1, true
	case "m", "min", "minute", "minutes":
		return 60, true
	case "h", "hour", "hours":
		return 3600, true
	case "d", "day", "days":
		return 24 * 3600, true
	case "w", "week", "weeks":
		return 7 * 24 * 3600, true
	}
	return 0, false
}

// parseSpan parses gpuprof's count{s|m|h|d|w}: digits, then one unit
// letter.
func parseSpan(s string) (time.Duration, bool) {
	if len(s) < 2 {
		return 0, false
	}
	unit, ok := unitSeconds(s[len(s)-1:])
	if !ok {
		return 0, false
	}
	n, ok := ParseDigits(s[:len(s)-1], maxSpanSeconds)
	if !ok || n*unit > maxSpanSeconds {
		return 0, false
	}
	return time.Duration(n*unit) * time.Second, true
}

// clockWord returns the hour of Slurm's named times of day.
func clockWord(w string) (hour int, ok bool) {
	switch w {
	case "midnight":
		return 0, true
	case "elevenses":
		return 11, true
	case "noon":
		return 12, true
	case "fika":
		return 15, true
	case "teatime":
		return 16, true
	}
	return 0, false
}

// dateSpec is a calendar date as parsed; year 0 means "not given".
type dateSpec struct{ year, month, day int }

// clockSpec is a time of day.
type clockSpec struct{ hour, min, sec int }

// parseDateTime parses the calendar forms: at most one date part and one
// time part, in either order, separated by blanks, 'T' or '-' (Slurm's
// separators), each part given once.
func parseDateTime(s string, now time.Time) (time.Time, bool) {
	var (
		date    *dateSpec
		clock   *clockSpec
		i       int
		sawPart bool
	)
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || (sawPart && (c == '-' || c == 't' && i+1 < len(s) && isDigit(s[i+1]))) {
			i++
			continue
		}
		word := i
		for i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			i++
		}
		if w := s[word:i]; w != "" {
			if h, ok := clockWord(w); ok && clock == nil {
				clock = &clockSpec{hour: h}
			} else if d, ok := dayWord(w, now); ok && date == nil {
				date = &d
			} else {
				return time.Time{}, false
			}
			sawPart = true
			continue
		}
		n, next, ok := parsePart(s, i)
		if !ok {
			return time.Time{}, false
		}
		switch v := n.(type) {
		case dateSpec:
			if date != nil {
				return time.Time{}, false
			}
			date = &v
		case clockSpec:
			if clock != nil {
				return time.Time{}, false
			}
			clock = &v
		}
		i, sawPart = next, true
	}
	if date == nil && clock == nil {
		return time.Time{}, false
	}
	if clock == nil {
		clock = &clockSpec{}
	}
	if date == nil {
		date = &dateSpec{year: now.Year(), month: int(now.Month()), day: now.Day()}
	}
	if date.year == 0 {
		// sacct looks back: a month after now's is last year's.
		date.year = now.Year()
		if date.month > int(now.Month()) {
			date.year--
		}
	}
	if date.day > daysIn(date.year, date.month) {
		return time.Time{}, false
	}
	return time.Date(date.year, time.Month(date.month), date.day, clock.hour, clock.min, clock.sec, 0, now.Location()), true
}

// dayWord parses today, yesterday and tomorrow as dates of now's calendar.
func dayWord(w string, now time.Time) (dateSpec, bool) {
	var t time.Time
	switch w {
	case "today":
		t = now
	case "yesterday":
		t = now.AddDate(0, 0, -1)
	case "tomorrow":
		t = now.AddDate(0, 0, 1)
	default:
		return dateSpec{}, false
	}
	return dateSpec{year: t.Year(), month: int(t.Month()), day: t.Day()}, true
}

// parsePart parses a numeric date or time of day at s[i:], returning a
// dateSpec or a clockSpec and where it ends.
func parsePart(s string, i int) (any, int, bool) {
	digits := func(from int) int {
		j := from
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	num := func(from, to int) int {
		n, _ := ParseDigits(s[from:to], 9999)
		return int(n)
	}
	j := digits(i)
	if j == i {
		return nil, i, false
	}
	next := byte(0)
	if j < len(s) {
		next = s[j]
	}
	if j-i == 4 && next == '-' { // YYYY-MM-DD, else MMDD-HH:MM below
		k := digits(j + 1)
		if n := k - j - 1; n >= 1 && n <= 2 && k < len(s) && s[k] == '-' {
			if l := digits(k + 1); l-k-1 >= 1 && l-k-1 <= 2 {
				d := dateSpec{year: num(i, j), month: num(j+1, k), day: num(k+1, l)}
				return d, l, validDate(d)
			}
		}
	}
	switch {
	case j-i <= 2 && next == ':': // HH:MM[:SS] [AM|PM]
		return parseClock12(s, i, j, digits, num)
	case j-i <= 2 && (next == '/' || next == '.'): // MM/DD[/YY]
		sep := next
		k := digits(j + 1)
		if k-j-1 < 1 || k-j-1 > 2 {
			return nil, i, false
		}
		d := dateSpec{month: num(i, j), day: num(j+1, k)}
		end := k
		if k < len(s) && s[k] == sep {
			l := digits(k + 1)
			switch l - k - 1 {
			case 2:
				d.year = 2000 + num(k+1, l)
			case 4:
				d.year = num(k+1, l)
			default:
				return nil, i, false
			}
			end = l
		}
		return d, end, validDate(d)
	case j-i == 4 || j-i == 6: // MMDD[YY]
		d := dateSpec{month: num(i, i+2), day: num(i+2, i+4)}
		if j-i == 6 {
			d.year = 2000 + num(i+4, i+6)
		}
		return d, j, validDate(d)
	}
	return nil, i, false
}

// parseClock12 parses HH:MM[:SS] with an optional AM or PM at s[i:]; the
// hour's digits end at j.
func parseClock12(s string, i, j int, digits func(int) int, num func(int, int) int) (any, int, bool) {
	c := clockSpec{hour: num(i, j)}
	k := digits(j + 1)
	if k-j-1 != 2 {
		return nil, i, false
	}
	c.min = num(j+1, k)
	end := k
	if k < len(s) && s[k] == ':' {
		l := digits(k + 1)
		if l-k-1 != 2 {
			return nil, i, false
		}
		c.sec, end = num(k+1, l), l
	}
	if c.hour > 23 || c.min > 59 || c.sec > 59 {
		return nil, i, false
	}
	rest := strings.TrimLeft(s[end:], " ")
	for _, half := range []string{"am", "pm"} {
		if !strings.HasPrefix(rest, half) {
			continue
		}
		if c.hour < 1 || c.hour > 12 {
			return nil, i, false
		}
		c.hour %= 12
		if half == "pm" {
			c.hour += 12
		}
		end = len(s) - len(rest) + 2
	}
	return c, end, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validDate reports a month 1–12 and a day 1–31 (daysIn checks the month's
// length once the year is known).
func validDate(d dateSpec) bool {
	return d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31 && (d.year == 0 || d.year >= 1970)
}

// daysIn returns the number of days of month in year.
func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
