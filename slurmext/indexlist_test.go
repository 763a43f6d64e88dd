package slurmext

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseIndexList(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr error
	}{
		{name: "empty", in: "", want: nil},
		{name: "only spaces", in: "   ", want: nil},
		{name: "single", in: "3", want: []int{3}},
		{name: "list and range", in: "0,2-3", want: []int{0, 2, 3}},
		{name: "spaces around items", in: " 1 , 2 ", want: []int{1, 2}},
		{name: "spaces around dash", in: "1 - 3", want: []int{1, 2, 3}},
		{name: "unsorted input sorted", in: "7,1,4", want: []int{1, 4, 7}},
		{name: "duplicates removed", in: "1,1,0-2,2", want: []int{0, 1, 2}},
		{name: "leading zeros", in: "007", want: []int{7}},
		{name: "single element range", in: "5-5", want: []int{5}},
		{name: "max int32", in: "2147483647", want: []int{2147483647}},
		{name: "exactly the bound", in: "0-4095", want: seq(0, 4095)},
		{name: "reverse range", in: "3-1", wantErr: ErrBadIndexList},
		{name: "letters", in: "a,b", wantErr: ErrBadIndexList},
		{name: "negative", in: "-1", wantErr: ErrBadIndexList},
		{name: "empty item", in: "1,,2", wantErr: ErrBadIndexList},
		{name: "trailing comma", in: "1,", wantErr: ErrBadIndexList},
		{name: "open range", in: "1-", wantErr: ErrBadIndexList},
		{name: "double range", in: "1-2-3", wantErr: ErrBadIndexList},
		{name: "plus sign", in: "+1", wantErr: ErrBadIndexList},
		{name: "above int32", in: "2147483648", wantErr: ErrBadIndexList},
		{name: "huge number", in: "99999999999999999999999", wantErr: ErrBadIndexList},
		{name: "UUID", in: "GPU-8f2c", wantErr: ErrBadIndexList},
		{name: "control character", in: "1\x002", wantErr: ErrBadIndexList},
		{name: "one past the bound", in: "0-4096", wantErr: ErrTooLarge},
		{name: "huge range", in: "0-2147483647", wantErr: ErrTooLarge},
		{name: "bound counts duplicates", in: "0-4095,0", wantErr: ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIndexList(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseIndexList(%q) error = %v, want %v", tt.in, err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("ParseIndexList(%q) = %v with error, want nil", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseIndexList(%q) error = %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseIndexList(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseIndexListErrorIsSafe(t *testing.T) {
	in := strings.Repeat("\x1b[31m", 2000) + ",1"
	_, err := ParseIndexList(in)
	if err == nil {
		t.Fatal("ParseIndexList accepted escape sequences")
	}
	if msg := err.Error(); CheckMessage(msg) != nil {
		t.Errorf("error message not bounded or not escaped (%d bytes): %q", len(msg), msg)
	}
}

func TestFormatIndexList(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want string
	}{
		{name: "nil", in: nil, want: ""},
		{name: "one", in: []int{4}, want: "4"},
		{name: "several", in: []int{0, 2, 3}, want: "0,2,3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatIndexList(tt.in); got != tt.want {
				t.Errorf("FormatIndexList(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// seq returns lo..hi inclusive.
func seq(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}
