package cliview

import (
	"fmt"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// measureSentence says which measure of GPU use the idle and compute rules
// read (docs/analysis.md, "Two measures"): GPM's SM activity, or NVML's
// duty cycle alone, which cannot tell busy SMs from a GPU kept nominally
// busy by small kernels. "" without a job with GPU readings.
func measureSentence(s analysis.ClusterSummary) string {
	switch {
	case s.BySMActivity+s.ByDutyCycle == 0:
		return ""
	case s.BySMActivity == 0:
		return "The idle and compute rules read NVML's duty cycle alone (no GPU measured SM activity: GPM needs Hopper or later)."
	}
	return fmt.Sprintf("The idle and compute rules read GPM's SM activity for %d %s and NVML's duty cycle alone for %d.",
		s.BySMActivity, present.Plural(s.BySMActivity, "job", "jobs"), s.ByDutyCycle)
}
