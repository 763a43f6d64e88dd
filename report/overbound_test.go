package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// TestOverBoundShown: a purchase size and a breach month that replays
// stopped early proved over the target show the bound they proved in
// every format, and no wait for them — a number the replays did not
// compute is never printed.
func TestOverBoundShown(t *testing.T) {
	d := fixture()
	sp := d.SimPlan
	b := &capacity.OverBound{Group: "partition gpu on " + sp.Models[0].Model, Target: 3600, Jobs: 812}
	sp.Models[0].Curve[1] = capacity.CurvePoint{Added: 1, Over: b, ComparedGroup: b.Group}
	sp.Timeline.Over, sp.Timeline.P95, sp.Timeline.Group = &capacity.OverBound{Group: "partition gpu", Target: 3600, Jobs: 104}, nil, "partition gpu"
	want := "&gt; 01:00:00; at least 812 jobs waited longer"
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"markdown", func(w *bytes.Buffer) error { return WriteMarkdown(w, d) }, []string{`+1: over the target (\> 01:00:00; at least 812 jobs waited longer)`, `partition gpu: replayed p95 wait \> 01:00:00; at least 104 jobs waited longer`}},
		{"html", func(w *bytes.Buffer) error { return WriteHTML(w, d) }, []string{"+1: over the target (" + want + ")", "triangles at the top"}},
		{"json", func(w *bytes.Buffer) error { return WriteJSON(w, d) }, []string{`"over": {`, `"jobs_over": 812`, `"jobs_over": 104`}},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, w := range f.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q", f.name, w)
			}
		}
		if strings.Contains(out, "+1: 3h00m") || strings.Contains(out, "+1: 03:00:00") || strings.Contains(out, "+1: 00:00:00") {
			t.Errorf("%s: a wait shown for the size proved over the target", f.name)
		}
	}
}

// TestHeadlineGrowth: the headline numbers carry the plan's verdict, the
// growth it used and where from, and the order-by date; the plan section
// the growth's sentence.
func TestHeadlineGrowth(t *testing.T) {
	d := fixture()
	g := analysis.GrowthOf([]analysis.MonthDemand{{Month: "2026-09", GPUHours: 1000}, {Month: "2026-10", GPUHours: 1100}, {Month: "2026-11", GPUHours: 1210}}, 0.3, false)
	d.SimPlan.GrowthEstimate, d.SimPlan.Growth = &g, g.Used
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{"| Capacity plan verdict | buy 4 NVIDIA H100 80GB HBM3 |", "| Demand growth planned for | 213.8 % a year, estimated from the site's own months (95 % interval", "| Order GPUs by | 2027-04-01 (the target is missed from 2027-07) |", "Demand growth estimated from the site's own history: 213.8 % a year"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q", w)
		}
	}
}
