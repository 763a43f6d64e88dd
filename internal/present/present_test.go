package present

import "testing"

func TestActivity(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {-1, "0"}, {0.004, "0"}, {0.02, "0.02"}, {0.015, "0.01"}, {0.05, "0.05"}, {0.094, "0.09"},
		{0.1, "0.1"}, {0.25, "0.2"}, {1, "1"}, {4.55, "4.5"}, {9.9, "9.9"}, {9.96, "10"}, {13.7, "14"},
		{92.4, "92"}, {100, "100"},
	}
	for _, tt := range tests {
		if got := Activity(tt.in); got != tt.want {
			t.Errorf("Activity(%g) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestXID(t *testing.T) {
	tests := []struct {
		code  uint64
		count int
		want  string
	}{
		{79, 1, "79 GPU has fallen off the bus (hardware)"},
		{31, 3, "31 GPU memory page fault: an illegal address (application) ×3"},
		{999, 2, "999 (unclassified) ×2"},
	}
	for _, tt := range tests {
		if got := XID(tt.code, tt.count); got != tt.want {
			t.Errorf("XID(%d, %d) = %q, want %q", tt.code, tt.count, got, tt.want)
		}
	}
}
