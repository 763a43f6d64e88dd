package cliview

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestPlanOneGPUSingular (issue #38, the real test Slurm's month): a
// plan whose averages need one GPU says "= 1 GPU", not "1 GPUs".
func TestPlanOneGPUSingular(t *testing.T) {
	var b bytes.Buffer
	WritePlan(&b, analysis.CapacityPlan{PeriodHours: 720, GPUsNeeded: 1, CurrentGPUs: 4, CFuture: 0.5, QSafe: 0.8})
	if m := regexp.MustCompile(`\b1 GPUs\b`).FindString(b.String()); m != "" {
		t.Errorf("plural after 1 in\n%s", b.String())
	}
	if want := "= 1 GPU\n"; !bytes.Contains(b.Bytes(), []byte(want)) {
		t.Errorf("plan lacks %q:\n%s", want, b.String())
	}
}
