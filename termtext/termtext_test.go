package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	const R = "\uFFFD"
	tests := []struct{ name, in, want string }{
		{"plain", "train-resnet_50", "train-resnet_50"},
		{"empty", "", ""},
		{"csi colour", "x\x1b[31mred\x1b[0m", "xred"},
		{"csi clear screen", "a\x1b[2Jb", "ab"},
		{"csi with intermediates", "a\x1b[?25lb", "ab"},
		{"osc title by BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"osc hyperlink by ST", "a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"two-byte escape", "a\x1bcb", "ab"},
		{"lone esc at end", "a\x1b", "a"},
		{"c1 csi", "a\u009b31mb", "ab"},
		{"c1 nel", "a\u0085b", "a" + R + "b"},
		{"nul", "ad\x00min", "ad" + R + "min"},
		{"del", "a\x7fb", "a" + R + "b"},
		{"backspace", "safe\b\b\b\bevil", "safe" + R + R + R + R + "evil"},
		{"newline tab cr", "a\nb\tc\rd", "a b c d"},
		{"line separator", "a\u2028b\u2029c", "a b c"},
		{"bidi override (RLO)", "invoice\u202Efdp.exe", "invoice" + R + "fdp.exe"},
		{"bidi embeddings", "a\u202Ab\u202Bc\u202Cd\u202De", "a" + R + "b" + R + "c" + R + "d" + R + "e"},
		{"bidi isolates", "a\u2066b\u2067c\u2068d\u2069e", "a" + R + "b" + R + "c" + R + "d" + R + "e"},
		{"bidi marks", "a\u200Eb\u200Fc\u061Cd", "a" + R + "b" + R + "c" + R + "d"},
		{"zero-width space", "ad\u200Bmin", "ad" + R + "min"},
		{"word joiner and bom", "\uFEFFa\u2060b", R + "a" + R + "b"},
		{"zwj between latin letters", "al\u200Dice", "al" + R + "ice"},
		{"zwnj at the start", "\u200Cbob", R + "bob"},
		{"zwj in an emoji family", "👨\u200D👩\u200D👧", "👨\u200D👩\u200D👧"},
		{"zwj after a variation selector", "🏳\uFE0F\u200D🌈", "🏳\uFE0F\u200D🌈"},
		{"zwnj in persian", "می\u200Cخواهم", "می\u200Cخواهم"},
		{"invalid utf-8", "a\xffb\xc3", "a" + R + "b" + R},
		{"a real U+FFFD stays", "a\uFFFDb", "a\uFFFDb"},
		{"cjk and emoji", "训练任务🚀", "训练任务🚀"},
		{"accents", "résumé", "résumé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clean(tt.in)
			if got != tt.want {
				t.Errorf("Clean(%+q) = %+q, want %+q", tt.in, got, tt.want)
			}
			if again := Clean(got); again != got {
				t.Errorf("Clean is not idempotent: Clean(%+q) = %+q", got, again)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clean(%+q) = %+q is not valid UTF-8", tt.in, got)
			}
			for _, r := range got {
				if Unsafe(r) {
					t.Errorf("Clean(%+q) = %+q keeps unsafe %U", tt.in, got, r)
				}
			}
		})
	}
}

func TestCleanDoesNotAllocateForCleanText(t *testing.T) {
	for _, s := range []string{"train-resnet", "训练任务🚀", "👨\u200D👩"} {
		if n := testing.AllocsPerRun(100, func() { _ = Clean(s) }); n != 0 {
			t.Errorf("Clean(%q) allocates %v times", s, n)
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		in      string
		max     int
		want    string
		wantCut bool
	}{
		{"abc", 5, "abc", false},
		{"abcdef", 4, "abcd", true},
		{"ééé", 3, "é", true}, // 2 bytes each: no half rune
		{"ééé", 4, "éé", true},
		{"🚀x", 2, "", true},
		{"abc", 0, "", true},
	}
	for _, tt := range tests {
		got, cut := Cut(tt.in, tt.max)
		if got != tt.want || cut != tt.wantCut {
			t.Errorf("Cut(%q, %d) = %q, %v, want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.wantCut)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\u202E", "👨\u200D👩", "\x9b", "a\u200D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Clean(s)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\x1b\n\r\t") {
			t.Fatalf("Clean(%+q) = %+q", s, got)
		}
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("Clean(%+q) = %+q keeps %U", s, got, r)
			}
		}
		if Clean(got) != got {
			t.Fatalf("Clean not idempotent on %+q", s)
		}
	})
}

// TestShort: Clean's rule, then a cut to 20 runes marked with "…".
func TestShort(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "train-resnet", "train-resnet"},
		{"ansi", "x\x1b[31mred\x1b[0m", "xred"},
		{"c1 csi", "a\u009b2Jb", "ab"},
		{"c1 control", "a\u0085b", "a\uFFFDb"},
		{"newline", "a\nb", "a b"},
		{"bidi override", "evil\u202Etxt.exe", "evil\uFFFDtxt.exe"},
		{"bidi isolate", "a\u2066b\u2069", "a\uFFFDb\uFFFD"},
		{"long", strings.Repeat("é", 30), strings.Repeat("é", 19) + "…"},
		{"cjk", "训练任务", "训练任务"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Short(tt.in, 20); got != tt.want {
				t.Errorf("Short(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
