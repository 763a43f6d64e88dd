package main

import (
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/cliview"
)

func TestCleanKeepsTerminalsSafe(t *testing.T) {
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
			if got := cliview.Clean(tt.in, 20); got != tt.want {
				t.Errorf("cliview.Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
