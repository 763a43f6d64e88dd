package slurmext

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	const (
		h = time.Hour
		m = time.Minute
		s = time.Second
	)
	tests := []struct {
		name      string
		in        string
		want      time.Duration
		unlimited bool
	}{
		{name: "HH:MM:SS", in: "00:10:00", want: 10 * m},
		{name: "D-HH:MM:SS", in: "1-00:00:00", want: 24 * h},
		{name: "D-HH:MM:SS all fields", in: "2-03:04:05", want: 51*h + 4*m + 5*s},
		{name: "MM:SS", in: "05:30", want: 5*m + 30*s},
		{name: "MM:SS long minutes", in: "90:00", want: 90 * m},
		{name: "HH:MM:SS long hours", in: "48:00:00", want: 48 * h},
		{name: "D-HH", in: "3-12", want: 84 * h},
		{name: "D-HH:MM", in: "1-02:30", want: 26*h + 30*m},
		{name: "bare minutes", in: "120", want: 2 * h},
		{name: "zero", in: "0", want: 0},
		{name: "fraction MM:SS.mmm", in: "01:02.345", want: m + 2*s + 345*time.Millisecond},
		{name: "fraction HH:MM:SS.f", in: "01:00:00.5", want: h + 500*time.Millisecond},
		{name: "fraction D-HH:MM:SS.nnnnnnnnn", in: "1-00:00:00.000000001", want: 24*h + 1},
		{name: "UNLIMITED", in: "UNLIMITED", unlimited: true},
		{name: "INFINITE", in: "INFINITE", unlimited: true},
		{name: "lower case unlimited", in: "unlimited", unlimited: true},
		{name: "Partition_Limit is unknown", in: "Partition_Limit"},
		{name: "empty is unknown", in: ""},
		{name: "spaces around", in: "  00:01:00 ", want: m},
		{name: "largest days", in: "106751-00:00:00", want: 106751 * 24 * h},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unlimited, err := ParseDuration(tt.in)
			if err != nil || got != tt.want || unlimited != tt.unlimited {
				t.Errorf("ParseDuration(%q) = %v, %v, %v; want %v, %v, nil", tt.in, got, unlimited, err, tt.want, tt.unlimited)
			}
		})
	}
}

func TestParseDurationErrors(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{name: "word", in: "soon"},
		{name: "INVALID as sacct prints it", in: "INVALID"},
		{name: "negative", in: "-5"},
		{name: "four fields", in: "1:2:3:4"},
		{name: "four fields, the last empty", in: "1:2:3:"},
		{name: "days and four fields", in: "1-1:2:3:4"},
		{name: "seconds 60", in: "00:00:60"},
		{name: "minutes 60 after hours", in: "01:60:00"},
		{name: "hours 24 after days", in: "1-24:00:00"},
		{name: "empty day", in: "-01:00:00"},
		{name: "empty field", in: "01::00"},
		{name: "fraction on minutes", in: "5.5"},
		{name: "fraction on D-HH", in: "1-02.5"},
		{name: "fraction too long", in: "00:01.1234567890"},
		{name: "empty fraction", in: "00:01."},
		{name: "overflows Duration", in: "106752-00:00:00"},
		{name: "huge minutes", in: "99999999999999999999"},
		{name: "plus sign", in: "+5"},
		{name: "two dashes", in: "1-2-3"},
		{name: "control characters", in: "1\x00:00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, unlimited, err := ParseDuration(tt.in)
			if !errors.Is(err, ErrBadDuration) || d != 0 || unlimited {
				t.Fatalf("ParseDuration(%q) = %v, %v, %v; want 0, false, ErrBadDuration", tt.in, d, unlimited, err)
			}
			checkErrorMessage(t, err)
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		name      string
		d         time.Duration
		unlimited bool
		want      string
	}{
		{name: "zero", want: "00:00:00"},
		{name: "minutes", d: 10 * time.Minute, want: "00:10:00"},
		{name: "one day", d: 24 * time.Hour, want: "1-00:00:00"},
		{name: "fraction dropped", d: 90*time.Second + 999*time.Millisecond, want: "00:01:30"},
		{name: "unlimited", unlimited: true, want: "UNLIMITED"},
		{name: "negative clamps", d: -time.Hour, want: "00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FormatDuration(tt.d, tt.unlimited)
			if got != tt.want {
				t.Fatalf("FormatDuration(%v, %v) = %q, want %q", tt.d, tt.unlimited, got, tt.want)
			}
			back, unlimited, err := ParseDuration(got)
			if err != nil || unlimited != tt.unlimited || back != max(tt.d, 0).Truncate(time.Second) {
				t.Fatalf("ParseDuration(%q) = %v, %v, %v; want the input back", got, back, unlimited, err)
			}
		})
	}
}

func TestParseSlurmTime(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		in   string
		loc  *time.Location
		want time.Time
	}{
		{name: "epoch", in: "1796210788", want: time.Unix(1796210788, 0).UTC()},
		{name: "ISO in UTC by default", in: "2026-12-02T11:26:28", want: time.Date(2026, 12, 2, 11, 26, 28, 0, time.UTC)},
		{name: "ISO read in the given zone", in: "2026-12-02T11:26:28", loc: berlin, want: time.Date(2026, 12, 2, 10, 26, 28, 0, time.UTC)},
		{name: "ISO with fraction", in: "2026-12-02T11:26:28.5", want: time.Date(2026, 12, 2, 11, 26, 28, 5e8, time.UTC)},
		{name: "RFC 3339 with zone ignores loc", in: "2026-12-02T11:26:28+01:00", loc: time.UTC, want: time.Date(2026, 12, 2, 10, 26, 28, 0, time.UTC)},
		{name: "RFC 3339 Z", in: "2026-12-02T11:26:28Z", loc: berlin, want: time.Date(2026, 12, 2, 11, 26, 28, 0, time.UTC)},
		{name: "Unknown", in: "Unknown"},
		{name: "None", in: "None"},
		{name: "N/A", in: "N/A"},
		{name: "empty", in: ""},
		{name: "zero epoch", in: "0"},
		{name: "spaces", in: " 1796210788 ", want: time.Unix(1796210788, 0).UTC()},
		{name: "last second of 9999", in: "253402300799", want: time.Unix(253402300799, 0).UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSlurmTime(tt.in, tt.loc)
			if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Fatalf("ParseSlurmTime(%q) = %v, %v; want %v in UTC", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseSlurmTimeErrors(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{name: "after 9999", in: "253402300800"},
		{name: "huge", in: "99999999999999999999999"},
		{name: "negative", in: "-1"},
		{name: "American date", in: "12/02/26"},
		{name: "date only", in: "2026-12-02"},
		{name: "bad month", in: "2026-13-02T00:00:00"},
		{name: "before 1970", in: "1969-12-31T23:59:59"},
		{name: "word", in: "tomorrow"},
		{name: "trailing garbage", in: "1796210788x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSlurmTime(tt.in, nil)
			if !errors.Is(err, ErrBadTime) || !got.IsZero() {
				t.Fatalf("ParseSlurmTime(%q) = %v, %v; want zero, ErrBadTime", tt.in, got, err)
			}
			checkErrorMessage(t, err)
		})
	}
}

func TestMulAddOverflow(t *testing.T) {
	if _, ok := mulAdd(0, math.MaxUint64, time.Hour); ok {
		t.Fatal("mulAdd(0, MaxUint64, Hour) did not report overflow")
	}
	if _, ok := mulAdd(math.MaxInt64-1, 1, time.Nanosecond); !ok {
		t.Fatal("mulAdd(MaxInt64-1, 1, ns) reported overflow")
	}
	if _, ok := mulAdd(math.MaxInt64, 1, time.Nanosecond); ok {
		t.Fatal("mulAdd(MaxInt64, 1, ns) did not report overflow")
	}
}

// TestFormatTime: sacct's default instant, read back by ParseSlurmTime in
// the same zone, and "Unknown" for an unset one.
func TestFormatTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zoneinfo:", err)
	}
	at := time.Date(2026, 11, 3, 13, 5, 1, 0, time.UTC)
	if got := FormatTime(at, berlin); got != "2026-11-03T14:05:01" {
		t.Errorf("FormatTime = %q, want 2026-11-03T14:05:01", got)
	}
	back, err := ParseSlurmTime(FormatTime(at, berlin), berlin)
	if err != nil || !back.Equal(at) {
		t.Errorf("ParseSlurmTime(FormatTime) = %v, %v; want %v", back, err, at)
	}
	if got := FormatTime(time.Time{}, berlin); got != "Unknown" {
		t.Errorf("zero time = %q, want Unknown", got)
	}
	if back, err := ParseSlurmTime("Unknown", nil); err != nil || !back.IsZero() {
		t.Errorf("ParseSlurmTime(Unknown) = %v, %v", back, err)
	}
}
