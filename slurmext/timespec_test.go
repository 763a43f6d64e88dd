package slurmext

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the DST case needs a zone database wherever the test runs
)

func TestParseTimeSpec(t *testing.T) {
	loc := time.FixedZone("UTC+2", 2*3600)
	now := time.Date(2026, 5, 14, 10, 20, 30, 123, loc)
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time { return time.Date(y, mo, d, h, mi, s, 0, loc) }
	exact := now.Truncate(time.Second)
	tests := []struct {
		name, in string
		want     time.Time
	}{
		{"iso date", "2026-03-01", at(2026, 3, 1, 0, 0, 0)},
		{"iso date time", "2026-03-01T08:30", at(2026, 3, 1, 8, 30, 0)},
		{"iso seconds", "2026-03-01T08:30:15", at(2026, 3, 1, 8, 30, 15)},
		{"iso space", "2026-03-01 08:30", at(2026, 3, 1, 8, 30, 0)},
		{"iso one-digit month and day", "2026-3-1", at(2026, 3, 1, 0, 0, 0)},
		{"rfc 3339 with zone", "2026-03-01T08:30:00Z", time.Date(2026, 3, 1, 8, 30, 0, 0, time.UTC)},
		{"MMDD this year", "0301", at(2026, 3, 1, 0, 0, 0)},
		{"MMDD later month is last year's", "1224", at(2025, 12, 24, 0, 0, 0)},
		{"MMDDYY", "030125", at(2025, 3, 1, 0, 0, 0)},
		{"MMDD-time", "0301-08:30", at(2026, 3, 1, 8, 30, 0)},
		{"MM/DD", "03/01", at(2026, 3, 1, 0, 0, 0)},
		{"MM/DD/YY", "03/01/25", at(2025, 3, 1, 0, 0, 0)},
		{"MM/DD/YYYY", "03/01/2025", at(2025, 3, 1, 0, 0, 0)},
		{"MM/DD-HH:MM:SS", "3/1-08:30:05", at(2026, 3, 1, 8, 30, 5)},
		{"MM.DD.YY", "03.01.25", at(2025, 3, 1, 0, 0, 0)},
		{"time today", "08:30", at(2026, 5, 14, 8, 30, 0)},
		{"time later today (sacct looks back, not ahead)", "23:00:01", at(2026, 5, 14, 23, 0, 1)},
		{"pm", "8:30pm", at(2026, 5, 14, 20, 30, 0)},
		{"PM spaced", "8:30 PM", at(2026, 5, 14, 20, 30, 0)},
		{"12am", "12:15am", at(2026, 5, 14, 0, 15, 0)},
		{"12pm", "12:15pm", at(2026, 5, 14, 12, 15, 0)},
		{"today", "today", at(2026, 5, 14, 0, 0, 0)},
		{"TODAY", "TODAY", at(2026, 5, 14, 0, 0, 0)},
		{"yesterday", "yesterday", at(2026, 5, 13, 0, 0, 0)},
		{"tomorrow", "tomorrow", at(2026, 5, 15, 0, 0, 0)},
		{"midnight", "midnight", at(2026, 5, 14, 0, 0, 0)},
		{"noon", "noon", at(2026, 5, 14, 12, 0, 0)},
		{"elevenses", "elevenses", at(2026, 5, 14, 11, 0, 0)},
		{"fika", "fika", at(2026, 5, 14, 15, 0, 0)},
		{"teatime", "teatime", at(2026, 5, 14, 16, 0, 0)},
		{"noon today", "noon today", at(2026, 5, 14, 12, 0, 0)},
		{"tomorrow teatime", "tomorrow teatime", at(2026, 5, 15, 16, 0, 0)},
		{"date then word", "2026-03-01 noon", at(2026, 3, 1, 12, 0, 0)},
		{"yesterday 08:00", "yesterday 08:00", at(2026, 5, 13, 8, 0, 0)},
		{"now", "now", exact},
		{"now-7days", "now-7days", exact.Add(-7 * 24 * time.Hour)},
		{"now-1day", "now-1day", exact.Add(-24 * time.Hour)},
		{"now+2hours", "now+2hours", exact.Add(2 * time.Hour)},
		{"now-90 seconds by default", "now-90", exact.Add(-90 * time.Second)},
		{"now - 30 minutes spaced", "now - 30 minutes", exact.Add(-30 * time.Minute)},
		{"now-2weeks", "NOW-2WEEKS", exact.Add(-14 * 24 * time.Hour)},
		{"now-3d", "now-3d", exact.Add(-3 * 24 * time.Hour)},
		{"7d", "7d", exact.Add(-7 * 24 * time.Hour)},
		{"12h", "12h", exact.Add(-12 * time.Hour)},
		{"30m", "30m", exact.Add(-30 * time.Minute)},
		{"2w", "2w", exact.Add(-14 * 24 * time.Hour)},
		{"45s", "45s", exact.Add(-45 * time.Second)},
		{"uts", "uts1780000000", time.Unix(1780000000, 0)},
		{"surrounding spaces", "  today ", at(2026, 5, 14, 0, 0, 0)},
		{"leap day", "2024-02-29", at(2024, 2, 29, 0, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTimeSpec(tt.in, now)
			if err != nil {
				t.Fatalf("ParseTimeSpec(%q): %v", tt.in, err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("ParseTimeSpec(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if tt.name != "rfc 3339 with zone" && got.Location() != loc {
				t.Errorf("ParseTimeSpec(%q) in %v, want now's location %v", tt.in, got.Location(), loc)
			}
		})
	}
}

func TestParseTimeSpecErrors(t *testing.T) {
	now := time.Date(2026, 5, 14, 10, 20, 30, 0, time.UTC)
	for _, in := range []string{
		"", "bogus", "last week", "7", "7x", "d", "-7d", "7 d", "now-", "now-x", "now-7fortnights", "now+",
		"nowhere", "2026-13-01", "2026-02-30", "2025-02-29", "2026-03-01T25:00", "2026-03-01T08:60",
		"08:30:61", "8:3", "13:00pm", "0:30am", "1301", "0230", "03/32", "03/01/2", "031", "12345",
		"today today", "noon 08:30", "0301 0302", "uts12", "uts", "utsx", "1969-12-31",
		"now-99999999999999999999", "now-6000weeks", "999999d", "today\x1b[31m",
		strings.Repeat("1", 100),
	} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseTimeSpec(in, now)
			if err == nil {
				t.Fatalf("ParseTimeSpec(%q) = %v, want an error", in, got)
			}
			if !errors.Is(err, ErrBadTimeSpec) {
				t.Errorf("error %v does not wrap ErrBadTimeSpec", err)
			}
			if !strings.Contains(err.Error(), "now[{+|-}count") || !strings.Contains(err.Error(), "7d") {
				t.Errorf("error %q does not name the accepted forms", err)
			}
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("error %q carries an escape character", err)
			}
		})
	}
}

// A date keeps its wall-clock time across a daylight-saving change: 7 days
// back from a summer noon is a spring noon in local time too, as Slurm's
// mktime gives, while now-7days is exactly 168 hours.
func TestParseTimeSpecLocalTime(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 30, 12, 0, 0, 0, loc) // the day after the change to summer time
	got, err := ParseTimeSpec("2026-03-28T12:00", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 28, 12, 0, 0, 0, loc); !got.Equal(want) || now.Sub(got) != 47*time.Hour {
		t.Errorf("got %v (%v before now), want %v, 47h before now", got, now.Sub(got), want)
	}
	got, _ = ParseTimeSpec("now-2days", now)
	if now.Sub(got) != 48*time.Hour {
		t.Errorf("now-2days is %v before now, want 48h", now.Sub(got))
	}
}
