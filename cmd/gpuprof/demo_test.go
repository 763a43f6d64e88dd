package main

import (
	"errors"
	"testing"
	"time"
)

// TestDemoSpan: without --start the demo's months end where the current
// month begins (so the last is the last complete one), over a year's end
// and in a short February; --days replaces --months; bad values are usage
// errors.
func TestDemoSpan(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		o     demoMonthOptions
		now   string
		start string
		days  int
	}{
		{demoMonthOptions{Months: 2}, "2026-12-03T11:00:00Z", "2026-10-01", 61},
		{demoMonthOptions{Months: 1}, "2026-12-03T11:00:00Z", "2026-11-01", 30},
		{demoMonthOptions{Months: 2}, "2027-01-15T00:00:00Z", "2026-11-01", 61},
		{demoMonthOptions{Months: 1}, "2027-03-01T00:00:00Z", "2027-02-01", 28},
		// Local midnight of the 1st in a zone east of UTC is still the
		// previous month in UTC.
		{demoMonthOptions{Months: 1}, "2026-12-01T00:30:00+02:00", "2026-10-01", 31},
		{demoMonthOptions{Months: 1, Days: 3}, "2026-12-03T11:00:00Z", "2026-11-01", 3},
		{demoMonthOptions{Months: 2, Start: "2026-10-01"}, "2030-01-01T00:00:00Z", "2026-10-01", 61},
	} {
		start, days, err := c.o.span(at(c.now))
		if err != nil || start.Format(time.DateOnly) != c.start || days != c.days {
			t.Errorf("%+v at %s: %s, %d days, %v; want %s, %d days", c.o, c.now, start.Format(time.DateOnly), days, err, c.start, c.days)
		}
	}
	for _, o := range []demoMonthOptions{{Months: 0}, {Months: 13}, {Months: 1, Days: -1}, {Months: 1, Start: "10/01/2026"}} {
		var u usageError
		if _, _, err := o.span(time.Now()); !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}
