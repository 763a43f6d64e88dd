package cliview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// TestSimPlanOverBound: a purchase size and a breach month that replays
// stopped early proved over the target print the bound they proved, and
// no wait for them.
func TestSimPlanOverBound(t *testing.T) {
	b := &capacity.OverBound{Group: "partition gpu on H100", Target: 3600, Jobs: 812}
	sp := capacity.SimPlan{
		Simulated: true, TargetP95Wait: 3600, Growth: 0.3, Months: 12, Seeds: 3, LeadTimeMonths: 3,
		Models: []capacity.ModelPlan{{Model: "H100", GPUs: 8, NodeGPUs: 8, Needed: 4, Curve: []capacity.CurvePoint{
			{Added: 0, ModelP95: analysis.Spread{Median: 9000, P10: 8000, P90: 9500}},
			{Added: 1, Over: b, ComparedGroup: b.Group},
			{Added: 4, ModelP95: analysis.Spread{Median: 3000}},
		}}},
		Timeline: &capacity.Timeline{SearchedMonths: 24, BreachMonth: 7, BreachDate: time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC),
			Group: "partition gpu", Over: &capacity.OverBound{Group: "partition gpu", Target: 3600, Jobs: 104}, OrderBy: time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)},
	}
	var buf bytes.Buffer
	WriteSimPlan(&buf, sp, nil)
	out := buf.String()
	for _, w := range []string{"+1 over the target (> 01:00:00; at least 812 jobs waited longer)", "partition gpu p95 > 01:00:00; at least 104 jobs waited longer"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	if strings.Contains(out, "+1 00:00:00") {
		t.Errorf("a wait shown for the size proved over the target:\n%s", out)
	}
}
