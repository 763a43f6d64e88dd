package config

import (
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    uint64
		wantErr bool
	}{
		{name: "binary GiB", in: "6GiB", want: 6 << 30},
		{name: "decimal GB", in: "6GB", want: 6_000_000_000},
		{name: "Slurm G is binary", in: "6G", want: 6 << 30},
		{name: "MiB", in: "512MiB", want: 512 << 20},
		{name: "fractional GB", in: "1.5GB", want: 1_500_000_000},
		{name: "fractional GiB", in: "0.5GiB", want: 1 << 29},
		{name: "KiB lower case", in: "4kib", want: 4096},
		{name: "kB", in: "2kB", want: 2000},
		{name: "TiB", in: "1TiB", want: 1 << 40},
		{name: "TB", in: "2TB", want: 2_000_000_000_000},
		{name: "M", in: "3M", want: 3 << 20},
		{name: "bytes suffix", in: "100B", want: 100},
		{name: "plain number", in: "123", want: 123},
		{name: "zero", in: "0", want: 0},
		{name: "spaces", in: "  80 GiB ", want: 80 << 30},
		{name: "at the limit", in: "4194304TiB", want: 1 << 62}, // 2^22 · 2^40
		{name: "above the limit", in: "4194305TiB", wantErr: true},
		{name: "unknown unit", in: "4EB", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "unit only", in: "GiB", wantErr: true},
		{name: "negative", in: "-1", wantErr: true},
		{name: "negative with unit", in: "-1GiB", wantErr: true},
		{name: "letters", in: "abc", wantErr: true},
		{name: "huge", in: "5000000TB", wantErr: true},     // 5e18 > 2^62
		{name: "huge exponent", in: "1e30", wantErr: true}, // bytes
		{name: "infinity", in: "Inf", wantErr: true},       // ParseFloat accepts it
		{name: "not a number", in: "NaN", wantErr: true},   // ParseFloat accepts it too
		{name: "not a number GiB", in: "nanGiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBytes(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParseBytes(%q) = %d, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseBytes(%q) = %d, %v; want %d, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestBytesText(t *testing.T) {
	var b Bytes
	if err := b.UnmarshalText([]byte("2GiB")); err != nil || b != 2<<30 {
		t.Fatalf("UnmarshalText(2GiB) = %d, %v; want %d, nil", b, err, 2<<30)
	}
	text, err := b.MarshalText()
	if err != nil || string(text) != "2147483648" {
		t.Fatalf("MarshalText() = %q, %v; want \"2147483648\", nil", text, err)
	}
	var back Bytes
	if err := back.UnmarshalText(text); err != nil || back != b {
		t.Errorf("round trip = %d, %v; want %d", back, err, b)
	}
	if err := back.UnmarshalText([]byte("x")); err == nil {
		t.Error("UnmarshalText(x) = nil, want an error")
	}
}

func TestDurationText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Duration
		text string // canonical form
	}{
		{name: "second", in: "1s", want: time.Second, text: "1s"},
		{name: "milliseconds", in: "500ms", want: 500 * time.Millisecond, text: "500ms"},
		{name: "compound", in: "1m30s", want: 90 * time.Second, text: "1m30s"},
		{name: "non-canonical", in: "90s", want: 90 * time.Second, text: "1m30s"},
		{name: "hours", in: "2h", want: 2 * time.Hour, text: "2h0m0s"},
		{name: "zero", in: "0s", want: 0, text: "0s"},
		{name: "days", in: "14d", want: 14 * 24 * time.Hour, text: "336h0m0s"},
		{name: "zero days", in: "0d", want: 0, text: "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Duration
			if err := d.UnmarshalText([]byte(tt.in)); err != nil || d.D() != tt.want {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want %v, nil", tt.in, d.D(), err, tt.want)
			}
			text, err := d.MarshalText()
			if err != nil || string(text) != tt.text {
				t.Fatalf("MarshalText() = %q, %v; want %q", text, err, tt.text)
			}
			var back Duration
			if err := back.UnmarshalText(text); err != nil || back != d {
				t.Errorf("round trip = %v, %v; want %v", back.D(), err, d.D())
			}
		})
	}
}

func TestDurationTextInvalid(t *testing.T) {
	for _, in := range []string{"", "1", "fast", "1 s", "1.5d", "d", "-1d", "1h2d"} {
		t.Run(in, func(t *testing.T) {
			d := Duration(time.Minute)
			if err := d.UnmarshalText([]byte(in)); err == nil {
				t.Errorf("UnmarshalText(%q) = nil (value %v), want an error", in, d.D())
			}
			if d != Duration(time.Minute) {
				t.Errorf("failed UnmarshalText changed the value to %v", d.D())
			}
		})
	}
}
