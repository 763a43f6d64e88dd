package slurmext

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

var (
	// ErrBadDuration means a Slurm duration such as "1-02:03:04" is
	// malformed or too large for a time.Duration.
	ErrBadDuration = errors.New("malformed duration")
	// ErrBadTime means a Slurm time stamp is neither seconds since 1970 nor
	// an ISO 8601 date and time.
	ErrBadTime = errors.New("malformed time")
)

// ParseDuration parses a duration as Slurm prints and accepts it:
//
//	"D-HH:MM:SS", "HH:MM:SS", "MM:SS"    sacct Elapsed/Timelimit, jobcomp LIMIT
//	"MM:SS.mmm", "HH:MM:SS.mmm"          sacct CPU times (fractional seconds)
//	"D-HH", "D-HH:MM"                    sbatch --time forms
//	"M"                                  a bare number is minutes (sbatch
//	                                     --time, TimelimitRaw, and the LIMIT of
//	                                     jobcomp/script before Slurm 17.11)
//	"UNLIMITED", "INFINITE"              unlimited == true, d == 0
//
// Case and surrounding spaces are ignored. Slurm's "unknown" values are not
// errors: the empty string and "Partition_Limit" (the job asked for no limit
// of its own, so the partition's applies, which sacct does not say) give
// d == 0, unlimited == false, err == nil, the JobRecord convention for
// "unknown".
//
// The first field may be as large as a time.Duration allows ("90:00" is 90
// minutes); every later field must be below 60 (below 24 for hours after a
// day count). Errors wrap ErrBadDuration; a value too large for a
// time.Duration (about 292 years) is an error too.
func ParseDuration(s string) (d time.Duration, unlimited bool, err error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "", strings.EqualFold(t, "Partition_Limit"):
		return 0, false, nil
	case strings.EqualFold(t, "UNLIMITED"), strings.EqualFold(t, "INFINITE"):
		return 0, true, nil
	}
	d, ok := ParseClock(t)
	if !ok {
		return 0, false, fmt.Errorf("duration %s: want [D-][HH:]MM:SS[.frac], D-HH[:MM], minutes or UNLIMITED: %w",
			QuoteShort(s), ErrBadDuration)
	}
	return d, false, nil
}

// ParseClock parses the numeric forms of ParseDuration.
func ParseClock(t string) (time.Duration, bool) {
	var days uint64
	rest := t
	hasDays := false
	if dayStr, after, ok := strings.Cut(t, "-"); ok {
		n, ok := ParseDigits(dayStr, math.MaxInt64)
		if !ok {
			return 0, false
		}
		days, rest, hasDays = n, after, true
	}
	// At most three ':'-separated fields, cut without allocating: this
	// runs for every line of sacct text.
	var fields [3]string
	nf := 0
	for {
		if nf == len(fields) {
			return 0, false
		}
		f, after, more := strings.Cut(rest, ":")
		fields[nf] = f
		nf++
		if !more {
			break
		}
		rest = after
	}
	parts := fields[:nf]
	// Only the last field of a seconds-bearing form may carry a fraction.
	var frac time.Duration
	last := parts[len(parts)-1]
	if whole, f, ok := strings.Cut(last, "."); ok {
		if hasDays && len(parts) < 3 || !hasDays && len(parts) < 2 {
			return 0, false // "1-02.5", "5.5": the last field is not seconds
		}
		fd, ok := parseFraction(f)
		if !ok {
			return 0, false
		}
		parts[len(parts)-1], frac = whole, fd
	}
	var units []time.Duration
	switch {
	case hasDays && len(parts) == 1:
		units = []time.Duration{time.Hour}
	case hasDays && len(parts) == 2:
		units = []time.Duration{time.Hour, time.Minute}
	case hasDays:
		units = []time.Duration{time.Hour, time.Minute, time.Second}
	case len(parts) == 1:
		units = []time.Duration{time.Minute}
	case len(parts) == 2:
		units = []time.Duration{time.Minute, time.Second}
	default:
		units = []time.Duration{time.Hour, time.Minute, time.Second}
	}
	total, ok := mulAdd(0, days, 24*time.Hour)
	if !ok {
		return 0, false
	}
	for i, p := range parts {
		limit := uint64(math.MaxInt64)
		switch {
		case hasDays && i == 0:
			limit = 23
		case hasDays || i > 0:
			limit = 59
		}
		n, ok := ParseDigits(p, limit)
		if !ok {
			return 0, false
		}
		if total, ok = mulAdd(total, n, units[i]); !ok {
			return 0, false
		}
	}
	if total > math.MaxInt64-frac {
		return 0, false
	}
	return total + frac, true
}

// mulAdd returns total + n*unit, reporting overflow of time.Duration.
func mulAdd(total time.Duration, n uint64, unit time.Duration) (time.Duration, bool) {
	if n > uint64(math.MaxInt64/unit) {
		return 0, false
	}
	add := time.Duration(n) * unit
	if total > math.MaxInt64-add {
		return 0, false
	}
	return total + add, true
}

// parseFraction parses 1–9 digits after a decimal point as a fraction of a
// second ("5" → 500ms, "123" → 123ms).
func parseFraction(f string) (time.Duration, bool) {
	if len(f) == 0 || len(f) > 9 {
		return 0, false
	}
	n, ok := ParseDigits(f, math.MaxInt64)
	if !ok {
		return 0, false
	}
	for i := len(f); i < 9; i++ {
		n *= 10
	}
	return time.Duration(n), true
}

// FormatDuration renders d as sacct does ("D-HH:MM:SS" or "HH:MM:SS", whole
// seconds, rounded down), or "UNLIMITED". It is the inverse of ParseDuration
// for whole seconds.
func FormatDuration(d time.Duration, unlimited bool) string {
	if unlimited {
		return "UNLIMITED"
	}
	if d < 0 {
		d = 0
	}
	secs := int64(d / time.Second)
	days, secs := secs/86400, secs%86400
	clock := fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	if days > 0 {
		return fmt.Sprintf("%d-%s", days, clock)
	}
	return clock
}

// isoLayout is sacct's default time format (no zone: the local time of the
// host that ran sacct).
const isoLayout = "2006-01-02T15:04:05"

// FormatTime renders t as sacct does by default, "2026-11-03T14:05:01",
// in loc (nil means the local zone, as sacct prints the local time of the
// host it runs on), or "Unknown" for the zero time, Slurm's word for an
// instant not set. It is the inverse of ParseSlurmTime for whole seconds
// in the same zone.
func FormatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "Unknown"
	}
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format(isoLayout)
}

// ParseSlurmTime parses a time stamp as sacct prints it: seconds since 1970
// (SLURM_TIME_FORMAT=%s, and the jobcomp/script variables) or the default
// "2026-11-03T14:05:01", read in loc because sacct prints the local time of
// the host it ran on (nil loc means UTC). RFC 3339 with a zone ("…Z",
// "…+01:00") and fractional seconds are accepted as well. The result is in
// UTC.
//
// "", "Unknown", "None", "N/A" and "0" mean "not set" and give the zero time
// with a nil error, as Slurm uses them for a job that has not started or
// ended. Errors wrap ErrBadTime; times after year 9999 are errors.
func ParseSlurmTime(s string, loc *time.Location) (time.Time, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "", t == "0", strings.EqualFold(t, "Unknown"), strings.EqualFold(t, "None"),
		strings.EqualFold(t, "N/A"):
		return time.Time{}, nil
	}
	if t[0] >= '0' && t[0] <= '9' && !strings.ContainsAny(t, "-T:") {
		u, ok := ParseDigits(t, MaxUnixSeconds)
		if !ok {
			return time.Time{}, fmt.Errorf("time %s: not seconds since 1970 up to year 9999: %w",
				QuoteShort(s), ErrBadTime)
		}
		return time.Unix(int64(u), 0).UTC(), nil
	}
	if loc == nil {
		loc = time.UTC
	}
	tm, err := time.ParseInLocation(isoLayout, t, loc)
	if err != nil {
		// Only a zoned form may follow; ParseInLocation ignores loc then.
		var err2 error
		if tm, err2 = time.Parse(time.RFC3339Nano, t); err2 != nil {
			return time.Time{}, fmt.Errorf("time %s: want seconds since 1970 or YYYY-MM-DDTHH:MM:SS: %w",
				QuoteShort(s), ErrBadTime)
		}
	}
	if tm.Unix() < 0 || tm.Unix() > MaxUnixSeconds {
		return time.Time{}, fmt.Errorf("time %s: before 1970 or after year 9999: %w", QuoteShort(s), ErrBadTime)
	}
	return tm.UTC(), nil
}
