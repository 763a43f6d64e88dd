package demo

import (
	"errors"
	"fmt"
	"time"
)

// Span is the simulated window of `gpuprof demo month`: its first day and
// its number of days, from the command's --start (YYYY-MM-DD, "" for the
// default), --months (1..12) and --days (0 for the months' days). Without a
// start the window ends where the current calendar month (UTC) begins, so
// the last month simulated is the last complete one before now. Its errors
// name the flag that is wrong.
func Span(start string, months, days int, now time.Time) (time.Time, int, error) {
	if months < 1 || months > 12 {
		return time.Time{}, 0, fmt.Errorf("--months %d: want 1 to 12", months)
	}
	if days < 0 {
		return time.Time{}, 0, errors.New("--days must be at least 1")
	}
	var first time.Time
	if start != "" {
		t, err := time.Parse(time.DateOnly, start)
		if err != nil {
			return time.Time{}, 0, fmt.Errorf("--start %q: want YYYY-MM-DD", start)
		}
		first = t
	} else {
		now = now.UTC()
		first = time.Date(now.Year(), now.Month()-time.Month(months), 1, 0, 0, 0, 0, time.UTC)
	}
	if days == 0 {
		days = int(first.AddDate(0, months, 0).Sub(first).Hours() / 24)
	}
	return first, days, nil
}
