package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/tools/planmonth"
)

// busyMonth is a planmonth month of the given shape analysed, planned with
// the default plan on its own scheduler settings, and summarised as the
// report command does.
func busyMonth(t *testing.T, s planmonth.Shape) Data {
	t.Helper()
	p, err := planmonth.Plan(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, f, sp, c := p.Input, p.Findings, p.Plan, analysis.DefaultConfig()
	f.Jobs = nil
	w := analysis.Window{From: planmonth.From, To: planmonth.From.AddDate(0, 1, 0)}
	return Data{
		Month: w.From.Format("2006-01"), Generated: w.To.Add(24 * time.Hour), Findings: f, Config: c, SimPlan: &sp,
		Workload: analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: w, TopN: 10}, c),
	}
}

// TestBusyPlantedMonthReport: the report of a busy planted month (4,000
// jobs on 48 GPUs at 80 % occupancy, the default plan with its growth)
// puts the purchase verdict, the growth planned for and the order-by date
// in its headline (issue #36), and its purchase chart has a point at every
// size the search tried, one x per size, under the target's dashed line.
func TestBusyPlantedMonthReport(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a planted month (about 10 s)")
	}
	d := busyMonth(t, planmonth.Shape{Jobs: 4000, GPUs: 48, Occupancy: 0.8, Seed: 1})
	sp := d.SimPlan
	if sp.Verdict.Code != capacity.VerdictBuy || len(sp.Purchase) == 0 || sp.Timeline == nil {
		t.Fatalf("verdict %s (%s), timeline %v: want a purchase with its timeline", sp.Verdict.Code, sp.Verdict.Text, sp.Timeline)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	head := md[strings.Index(md, "Headline numbers"):]
	head = head[:strings.Index(head[1:], "\n## ")+1]
	var buy []string
	for _, p := range sp.Purchase {
		buy = append(buy, fmt.Sprintf("%d %s", p.GPUs, p.Model))
	}
	order := "| Order GPUs by | " + sp.Timeline.OrderBy.Format("2006-01-02")
	if sp.Timeline.Late {
		order = "| Order GPUs by | now (the target is missed by " + sp.Timeline.BreachDate.Format("2006-01") + ")"
	}
	for _, want := range []string{"| Capacity plan verdict | buy " + strings.Join(buy, " and ") + " |", "| Demand growth planned for | ", order} {
		if !strings.Contains(head, want) {
			t.Errorf("headline lacks %q:\n%s", want, head)
		}
	}

	c := renderCharts(t, d)[chartPlan]
	svg := string(c.SVG)
	if svg == "" {
		t.Fatalf("no purchase chart: %s", c.Empty)
	}
	floor := xLabelY(t, svg, "GPUs of the model added")
	sizes := map[int]bool{}
	var all []float64
	for k, m := range sp.Models {
		var want []int
		for _, p := range m.Curve {
			// A computed wait beyond the axis' end (planChartCut times
			// the target) is a triangle at the top, as a bound is.
			if p.Over == nil && comparedP95(p).Median <= planChartCut*sp.TargetP95Wait {
				want = append(want, p.Added)
				sizes[p.Added] = true
			}
		}
		xs := svgCircles(t, svg, "2.5", hexOf(palette6[k]), floor)
		all = append(all, xs...)
		if len(xs) != len(want) || distinct(xs) != len(want) {
			t.Errorf("%s: %d points at %d x positions, want the %d sizes with a computed wait %v", m.Model, len(xs), distinct(xs), len(want), want)
		}
		t.Logf("%s: sizes tried %v (needed %d)", m.Model, want, m.Needed)
	}
	if distinct(all) != len(sizes) {
		t.Errorf("points at %d x positions, want one per size with a computed wait (%d)", distinct(all), len(sizes))
	}
	if !strings.Contains(html.UnescapeString(svg), "target: p95 ≤ "+wait(sp.TargetP95Wait)) || !strings.Contains(svg, "stroke-dasharray:6,3") {
		t.Error("purchase chart has no target line")
	}
}
