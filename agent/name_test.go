package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizeName(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "python3", "python3"},
		{"escape sequence", "py\x1b[2Jthon", "python"},
		{"control marked", "py\x00thon", "py\uFFFDthon"},
		{"bidi override marked", "train\u202Eyp.exe", "train\uFFFDyp.exe"},
		{"cut to 64 bytes on a rune boundary", strings.Repeat("é", 40), strings.Repeat("é", 32)},
		{"cut after an odd byte", "x" + strings.Repeat("é", 40), "x" + strings.Repeat("é", 31)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sanitizeName(tt.in)
			if got != tt.want || !utf8.ValidString(got) || len(got) > 64 {
				t.Errorf("sanitizeName(%+q) = %+q, want %+q", tt.in, got, tt.want)
			}
		})
	}
}
