package present

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// Dash stands for a number that cannot be shown (not finite) in the
// report's tables and prose.
const Dash = "—"

// Missing stands for a value nobody recorded, in a field of a table or a
// line of a job's facts: the one spelling gpuprof show, the terminal UI's
// detail, the jobs tables and the notice digest write for it (issue #41).
// Prose says why instead ("not measured", "unknown: …").
const Missing = "-"

// OrMissing writes an empty value as Missing.
func OrMissing(s string) string {
	if s == "" {
		return Missing
	}
	return s
}

// Number writes v with dec decimals and thousands separators:
// "12,345.6", "-3"; a non-finite v is a Dash. "-0" is written "0".
func Number(v float64, dec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Dash
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Int writes an integer with thousands separators: "10,000".
func Int(n int) string { return Number(float64(n), 0) }

// Plural is one when n is 1, else many: the word for n things.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count writes n with the word for n: "1 job", "2,000 jobs".
func Count(n int, one, many string) string {
	return Int(n) + " " + Plural(n, one, many)
}

// List writes words as prose lists them: "a", "a and b", "a, b and c";
// "" for none.
func List(w []string) string {
	switch len(w) {
	case 0:
		return ""
	case 1:
		return w[0]
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}

// Duration writes a duration as Slurm does, [D-]HH:MM:SS ("06:12:00",
// "2-03:00:00", "00:00:45"; slurmext's form, the one of sacct, squeue and
// --time), so that every page and sacct agree. It is rounded to the
// nearest second: Slurm's own durations are whole seconds, and a replay's
// mean of 7,199.6 s reads "02:00:00", not "01:59:59". A negative
// duration is its magnitude with a leading '-'.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 0 {
		return "-" + slurmext.FormatDuration(-d, false)
	}
	return slurmext.FormatDuration(d, false)
}

// Seconds is Duration of a number of seconds (as statistics hold them);
// a non-finite one is a Dash.
func Seconds(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return Dash
	}
	return Duration(time.Duration(sec * float64(time.Second)))
}

// Instant writes an instant as sacct does, "2026-11-03T14:05:01" in loc
// (nil: the local zone), Missing ("-") when unset.
func Instant(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return Missing
	}
	return slurmext.FormatTime(t, loc)
}

// Percent writes a fraction (0–1) as a percentage with one decimal:
// 0.923 is "92.3 %"; a non-finite one is a Dash.
func Percent(frac float64) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return Dash
	}
	return Number(frac*100, 1) + " %"
}

// Share writes a share of a whole (a fraction, 0–1) as prose writes it:
// a percentage to at most one decimal, a zero decimal dropped, "25 %",
// "29.9 %" (Decimal). Tables, whose columns align, write Percent. A
// non-finite share is a Dash.
func Share(frac float64) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return Dash
	}
	return Decimal(frac*100) + " %"
}

// WholePercent writes a fraction (0–1) as a whole percentage without its
// unit: 0.94 is "94". The terminal UI's compact lines add "%" ("94% of
// the card", "failed 29%"). A non-finite fraction is a Dash.
func WholePercent(frac float64) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return Dash
	}
	return Number(frac*100, 0)
}

// Times writes a ratio as Decimal does, with "×": 3.24 is "3.2×", 3 is
// "3×" (limit over run time, a request over its use, a margin), in tables
// and prose alike. A non-finite ratio is a Dash.
func Times(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Dash
	}
	return Decimal(v) + "×"
}

// GPUHours writes GPU-hours without a unit: one decimal below 1,000,
// none from 1,000 ("12.5", "1,234").
func GPUHours(h float64) string {
	if math.Abs(h) >= 1000 {
		return Number(h, 0)
	}
	return Number(h, 1)
}

// Amount writes an amount of money in the configured prices' currency:
// whole units with thousands separators ("12,345"); a non-finite one is
// a Dash. The buy-or-rent table of the plan writes its amounts by it in
// the CLI and the report alike.
func Amount(v float64) string { return Number(v, 0) }

// KWh writes energy given in kilowatt-hours: one decimal below 1,000,
// none from 1,000 ("12.3 kWh", "1,234 kWh").
func KWh(kwh float64) string {
	if math.Abs(kwh) >= 1000 {
		return Number(kwh, 0) + " kWh"
	}
	return Number(kwh, 1) + " kWh"
}

// Energy writes energy given in joules: whole watt-hours below one
// kilowatt-hour ("842 Wh"), else as KWh ("12.3 kWh").
func Energy(joules float64) string {
	if wh := joules / 3600; wh < 1000 {
		return strconv.FormatFloat(wh, 'f', 0, 64) + " Wh"
	}
	return KWh(joules / 3.6e6)
}

// GiB writes bytes in GiB without the unit, to one decimal with a zero
// decimal dropped: "76.3", "80", "0.5". Callers add " GiB" (or "G" in
// the terminal UI's compact lines).
func GiB(b uint64) string {
	return Decimal(float64(b) / (1 << 30))
}

// Bytes writes a size in binary units, to one decimal with a zero
// decimal dropped, in GiB from one GiB, else MiB, else KiB: "76.3 GiB",
// "512 MiB", "0 B". A 6 MiB peak is not "0 GiB".
func Bytes(b uint64) string {
	switch {
	case b == 0:
		return "0 B"
	case b >= 1<<30:
		return GiB(b) + " GiB"
	case b >= 1<<20:
		return Decimal(float64(b)/(1<<20)) + " MiB"
	}
	return Decimal(float64(b)/(1<<10)) + " KiB"
}

// Decimal writes v rounded to one decimal (halves away from zero), a zero
// decimal dropped and no thousands separator: "2.5", "80", "1234.6"; the
// prose's numbers. A value that rounds to zero is "0", never "-0"; a
// non-finite one is a Dash.
func Decimal(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Dash
	}
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // not -0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// PercentWhole writes a fraction (0–1) as a whole percentage with its
// unit: 0.92 is "92 %", 0.634 "63 %". It is for shares read at a glance,
// where a decimal would claim a precision the number has not: a
// recommendation's confidence (recommend and the report alike), show's CPU
// efficiency and host memory peak of the request (where seff prints two
// decimals that no reader acts on). Percent keeps a decimal. A non-finite fraction is a Dash.
func PercentWhole(frac float64) string {
	if n := WholePercent(frac); n != Dash {
		return n + " %"
	}
	return Dash
}

// GPUsHeld writes a number of GPUs held at once, which shard jobs make
// fractional: a whole number as it is ("7"), GPU-equivalents of shards
// to two decimals ("52.46"), so that a note and the table beside it print
// one number.
func GPUsHeld(v float64) string {
	if v == math.Trunc(v) {
		return Number(v, 0)
	}
	return Number(v, 2)
}

// PercentOrNone writes a share that may be missing (nil) as a table cell:
// Percent, or "–" when there is none, the en dash GPUsPerRun writes for an
// unknown use (a Dash, "—", is a value that cannot be shown).
func PercentOrNone(frac *float64) string {
	if frac == nil {
		return "–"
	}
	return Percent(*frac)
}

// NoAccount and NoName stand for a name Slurm left empty: a job of a user
// with no Slurm account (no accounting, or none set), a job submitted
// with an empty --job-name. A blank cell would read as a missing row.
const (
	NoAccount = "(no account)"
	NoName    = "(no name)"
)

// Account is an account's name as a row heads it, NoAccount when empty.
func Account(name string) string {
	if strings.TrimSpace(name) == "" {
		return NoAccount
	}
	return name
}

// JobName is a job's or a task's name as a row shows it, NoName when
// empty.
func JobName(name string) string {
	if strings.TrimSpace(name) == "" {
		return NoName
	}
	return name
}
