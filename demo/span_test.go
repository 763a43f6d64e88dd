package demo

import (
	"testing"
	"time"
)

// TestSpan: without a start the demo's months end where the current month
// begins (so the last is the last complete one), over a year's end and in
// a short February; days replace months; bad values are errors.
func TestSpan(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	type flags struct {
		start        string
		months, days int
	}
	for _, c := range []struct {
		f     flags
		now   string
		start string
		days  int
	}{
		{flags{months: 2}, "2026-12-03T11:00:00Z", "2026-10-01", 61},
		{flags{months: 1}, "2026-12-03T11:00:00Z", "2026-11-01", 30},
		{flags{months: 2}, "2027-01-15T00:00:00Z", "2026-11-01", 61},
		{flags{months: 1}, "2027-03-01T00:00:00Z", "2027-02-01", 28},
		// Local midnight of the 1st in a zone east of UTC is still the
		// previous month in UTC.
		{flags{months: 1}, "2026-12-01T00:30:00+02:00", "2026-10-01", 31},
		{flags{months: 1, days: 3}, "2026-12-03T11:00:00Z", "2026-11-01", 3},
		{flags{months: 2, start: "2026-10-01"}, "2030-01-01T00:00:00Z", "2026-10-01", 61},
	} {
		start, days, err := Span(c.f.start, c.f.months, c.f.days, at(c.now))
		if err != nil || start.Format(time.DateOnly) != c.start || days != c.days {
			t.Errorf("%+v at %s: %s, %d days, %v; want %s, %d days", c.f, c.now, start.Format(time.DateOnly), days, err, c.start, c.days)
		}
	}
	for _, c := range []struct {
		f    flags
		want string
	}{
		{flags{months: 0}, "--months 0: want 1 to 12"},
		{flags{months: 13}, "--months 13: want 1 to 12"},
		{flags{months: 1, days: -1}, "--days must be at least 1"},
		{flags{months: 1, start: "10/01/2026"}, `--start "10/01/2026": want YYYY-MM-DD`},
	} {
		if _, _, err := Span(c.f.start, c.f.months, c.f.days, time.Now()); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
}
