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
// the growth's sentence. A trend too uncertain to plan on is shown with
// its interval beside the configured value used.
func TestHeadlineGrowth(t *testing.T) {
	for _, c := range []struct {
		name   string
		months []analysis.MonthDemand
		want   []string
	}{
		// GPU-hours a day 10 % up each month: a clean trend, used.
		{"clean", []analysis.MonthDemand{{Month: "2026-09", GPUHours: 30 * 100}, {Month: "2026-10", GPUHours: 31 * 110}, {Month: "2026-11", GPUHours: 30 * 121}},
			[]string{"| Capacity plan verdict | buy 4 NVIDIA H100 80GB HBM3 |", "| Demand growth planned for | 213.8 % a year, estimated from the site's own months (95 % interval 213.8 % to 213.8 %, 3 months) |",
				"| Order GPUs by | 2027-04-01 (the target is missed from 2027-07) |", "Demand growth estimated from the site's own history: 213.8 % a year"}},
		// Three months' totals 10 % up, but Oct has a day more: too
		// uncertain on three points, the configured 30 % used.
		{"uncertain", []analysis.MonthDemand{{Month: "2026-09", GPUHours: 1000}, {Month: "2026-10", GPUHours: 1100}, {Month: "2026-11", GPUHours: 1210}},
			[]string{"| Demand growth planned for | 30.0 % a year, the configured default: the site's own trend is too uncertain to plan on (estimated ",
				"Demand growth 30.0 % a year, the configured default: the site's own trend is too uncertain to plan on"}},
		// Per GPU model: A100 10 % up each month (its own trend, used),
		// L40S in the last two months only (the cluster's figure, here
		// the configured 30 %: the L40S's arrival makes the cluster's
		// trend too uncertain).
		{"models", []analysis.MonthDemand{{Month: "2026-09", GPUHours: 30 * 100, Models: map[string]float64{"A100": 30 * 100}},
			{Month: "2026-10", GPUHours: 31 * 121, Models: map[string]float64{"A100": 31 * 110, "L40S": 31 * 11}},
			{Month: "2026-11", GPUHours: 30 * 133.1, Models: map[string]float64{"A100": 30 * 121, "L40S": 30 * 12.1}}},
			[]string{"| Demand growth per GPU model | A100 213.8 % (its own trend, 3 months); L40S 30.0 % (the cluster's: 2 of 3 months needed) |",
				"Per GPU model, the horizon grows each model's jobs by its own trend"}},
	} {
		d := fixture()
		g := analysis.GrowthOf(c.months, 0.3, false)
		d.SimPlan.GrowthEstimate, d.SimPlan.Growth = &g, g.Used
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, d); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q\n%s", c.name, w, out)
			}
		}
	}
}
