package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{3}, 3},
		{"odd, unsorted", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSpecTotalsN(t *testing.T) {
	for _, n := range []int{100, 12345, 1_000_000} {
		got := 0
		for _, g := range spec(n).Groups {
			got += g.Jobs
		}
		if got != n {
			t.Errorf("spec(%d) plants %d jobs, want %d", n, got, n)
		}
	}
}

// TestRunSmall runs the whole harness on a few jobs with a CLI name that
// does not exist, so the scan takes the in-process fallback and says so.
func TestRunSmall(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 500, 2, "gpuprof-no-such-sqlite3", t.TempDir(), true); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"input: 500 jobs", "NOTE: gpuprof-no-such-sqlite3 CLI not found", "round 2 B", "round 2 C report", "ratio C/A", "ratio A/B"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunRejectsNoRounds(t *testing.T) {
	if err := run(&bytes.Buffer{}, 10, 0, "sqlite3", t.TempDir(), false); err == nil {
		t.Error("run with 0 rounds: got nil error, want one")
	}
}
