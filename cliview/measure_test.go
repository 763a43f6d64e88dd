package cliview

import (
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestMeasureSentence: recommend and profiles say which measure the idle
// and compute rules read, and say so plainly where only the duty cycle
// exists.
func TestMeasureSentence(t *testing.T) {
	for _, tt := range []struct {
		sm, duty int
		want     string
	}{
		{0, 0, ""},
		{0, 5, "The idle and compute rules read NVML's duty cycle alone (no GPU measured SM activity: GPM needs Hopper or later)."},
		{1, 4, "The idle and compute rules read GPM's SM activity for 1 job and NVML's duty cycle alone for 4."},
		{3, 0, "The idle and compute rules read GPM's SM activity for 3 jobs and NVML's duty cycle alone for 0."},
	} {
		if got := measureSentence(analysis.ClusterSummary{BySMActivity: tt.sm, ByDutyCycle: tt.duty}); got != tt.want {
			t.Errorf("%d, %d: %q, want %q", tt.sm, tt.duty, got, tt.want)
		}
	}
}
