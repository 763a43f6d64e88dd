package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// plantedMonths are n months from January 2026 of GPU-hours a day
// growing by g a year, with multiplicative noise of sd (log scale): each
// month's total is its days times its daily demand.
func plantedMonths(n int, g, sd float64, seed uint64) []MonthDemand {
	r := rand.New(rand.NewPCG(seed, 36))
	var out []MonthDemand
	for i := range n {
		m := time.Date(2026, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC)
		days := m.AddDate(0, 1, 0).Sub(m).Hours() / 24
		h := 330 * days * math.Pow(1+g, float64(i)/12) * math.Exp(sd*r.NormFloat64())
		out = append(out, MonthDemand{Month: m.Format("2006-01"), GPUHours: h})
	}
	return out
}

// TestEstimateGrowthPerDay: the same demand a day from January to
// April is no trend, though February's total is 10 % below January's.
func TestEstimateGrowthPerDay(t *testing.T) {
	a, lo, hi, ok := EstimateGrowth(plantedMonths(4, 0, 0, 1))
	if !ok || math.Abs(a) > 1e-9 || math.Abs(lo) > 1e-6 || math.Abs(hi) > 1e-6 {
		t.Errorf("flat demand a day: %v [%v, %v] ok %v, want 0", a, lo, hi, ok)
	}
}

func TestEstimateGrowthPlanted(t *testing.T) {
	// Exact trend: the estimate is the planted rate, the interval a point.
	a, lo, hi, ok := EstimateGrowth(plantedMonths(6, 0.5, 0, 1))
	if !ok || math.Abs(a-0.5) > 1e-9 || math.Abs(lo-0.5) > 1e-6 || math.Abs(hi-0.5) > 1e-6 {
		t.Errorf("noiseless 50 %%: %v [%v, %v] ok %v", a, lo, hi, ok)
	}
	// Noisy months: the 95 % interval holds the planted rate in about 95 %
	// of draws, and the estimate is near it on average.
	in, sum := 0, 0.0
	const draws = 400
	for s := range draws {
		a, lo, hi, ok := EstimateGrowth(plantedMonths(8, 0.3, 0.05, uint64(s+2)))
		if !ok {
			t.Fatal("8 months: no estimate")
		}
		sum += a
		if lo <= 0.3 && 0.3 <= hi {
			in++
		}
	}
	if cover := float64(in) / draws; cover < 0.9 || cover > 0.99 {
		t.Errorf("the 95 %% interval held the planted 30 %% in %.0f %% of draws", 100*cover)
	}
	if mean := sum / draws; math.Abs(mean-0.3) > 0.05 {
		t.Errorf("mean estimate %.3f, planted 0.3", mean)
	}
}

func TestGrowthOf(t *testing.T) {
	few := plantedMonths(2, 0.5, 0, 1)
	g := GrowthOf(few, 0.3, false)
	if g.Source != "default" || g.Used != 0.3 || g.Estimated || !strings.Contains(g.Text, "2 whole months") || !strings.Contains(g.Text, "at least 3 needed") {
		t.Errorf("two months: %+v", g)
	}
	three := plantedMonths(3, 0.5, 0, 1)
	g = GrowthOf(three, 0.3, false)
	if g.Source != "history" || math.Abs(g.Used-0.5) > 1e-9 || !strings.Contains(g.Text, "from 3 whole months") || !strings.Contains(g.Text, "2026-01 to 2026-03") {
		t.Errorf("three months: %+v", g)
	}
	g = GrowthOf(three, 0.1, true)
	if g.Source != "configured" || g.Used != 0.1 || !g.Estimated || !strings.Contains(g.Text, "as configured") || !strings.Contains(g.Text, "site's own trend is 50") {
		t.Errorf("configured: %+v", g)
	}
}

func TestGrowthSetByFile(t *testing.T) {
	c, err := ParseConfig([]byte("[plan]\ngrowth = 0.1\n"), "x.toml")
	if err != nil || !c.Plan.GrowthSet || c.Plan.Growth != 0.1 {
		t.Errorf("growth set: %+v %v", c.Plan, err)
	}
	c, err = ParseConfig([]byte("[plan]\nseeds = 3\n"), "x.toml")
	if err != nil || c.Plan.GrowthSet {
		t.Errorf("growth not set: %+v %v", c.Plan, err)
	}
}

// TestGrowthByModel: two models planted with their own trends are each
// recovered within their interval and used; a model with fewer than
// three trailing months has no trend and gets the cluster's figure,
// said; GPUs without a model have no entry; a configured figure is used
// for every model.
func TestGrowthByModel(t *testing.T) {
	a := plantedMonths(6, 0.5, 0.02, 7)
	b := plantedMonths(6, 0.1, 0.02, 8)
	var months []MonthDemand
	for i := range a {
		m := MonthDemand{Month: a[i].Month, Models: map[string]float64{"A100": a[i].GPUHours, "H100": b[i].GPUHours, "": 50}}
		if i >= 4 {
			m.Models["L40S"] = 100
		}
		m.GPUHours = a[i].GPUHours + b[i].GPUHours + 50 + m.Models["L40S"]
		months = append(months, m)
	}
	got := GrowthByModel(months)
	if len(got) != 3 || got[0].Model != "A100" || got[1].Model != "H100" || got[2].Model != "L40S" {
		t.Fatalf("models %+v, want A100, H100 and L40S", got)
	}
	for i, want := range []float64{0.5, 0.1} {
		g := got[i]
		if !g.Estimated || g.Months != 6 || g.From != "2026-01" || g.To != "2026-06" || g.Low > want || g.High < want || math.Abs(g.Annual-want) > 0.1 {
			t.Errorf("%s: %+v, planted %v", g.Model, g, want)
		}
	}
	if l := got[2]; l.Estimated || l.Months != 2 || l.From != "2026-05" || l.To != "2026-06" {
		t.Errorf("L40S: %+v, want 2 months 2026-05 to 2026-06, no trend", l)
	}
	e := GrowthOf(months, 0.3, false)
	if len(e.Models) != 3 {
		t.Fatalf("estimate %+v", e)
	}
	used := ModelGrowthUsed(e.Models)
	for i, m := range e.Models[:2] {
		if m.Source != "model" || m.Reason != "trend" || m.Used != m.Annual || used[m.Model] != m.Annual {
			t.Errorf("model %d: %+v (used %v), want its own trend used", i, m, used)
		}
	}
	if l := e.Models[2]; l.Source != "cluster" || l.Reason != "few_months" || l.Used != e.Used {
		t.Errorf("L40S: %+v, want the cluster's %v (few months)", l, e.Used)
	}
	if _, ok := used["L40S"]; ok || len(used) != 2 {
		t.Errorf("used %v, want A100 and H100 only", used)
	}
	for _, w := range []string{"A100 " + present.Percent(got[0].Annual) + " a year", "its own trend", "L40S " + present.Percent(e.Used) + ", the cluster's figure: 2 whole months"} {
		if !strings.Contains(e.Text, w) {
			t.Errorf("text lacks %q: %s", w, e.Text)
		}
	}
	c := GrowthOf(months, 0.2, true)
	if ModelGrowthUsed(c.Models) != nil || !strings.Contains(c.Text, "every model's jobs grow by the configured 20.0 %") {
		t.Errorf("configured: %+v", c)
	}
	for _, m := range c.Models {
		if m.Used != 0.2 || m.Source != "cluster" || m.Reason != "set" {
			t.Errorf("configured: %+v, want 20 %% set", m)
		}
	}
}

// TestGrowthUsable: months about a clean trend give an estimate that is
// planned on; noisy months, or the demo's four months (−94 % to +699 %),
// one that is not: the configured value is used and the sentence says
// why, with the estimate and its interval.
func TestGrowthUsable(t *testing.T) {
	if GrowthUsable(-0.938, 6.987) || !GrowthUsable(1.962, 3.332) || GrowthUsable(0, 0.6) || !GrowthUsable(0, 0.45) || GrowthUsable(-1, 0) {
		t.Error("GrowthUsable: want the demo's interval refused, 196 %–333 % and 0 %–45 % kept, 0 %–60 % refused, a low end of −100 % refused")
	}
	clean := GrowthOf(plantedMonths(5, 0.5, 0.02, 3), 0.3, false)
	if clean.Source != "history" || clean.Reason != "trend" || !clean.Usable || clean.Used != clean.Annual || clean.Low > 0.5 || clean.High < 0.5 {
		t.Errorf("clean trend: %+v, want the estimate used", clean)
	}
	noisy := GrowthOf(plantedMonths(4, 0.3, 0.2, 3), 0.3, false)
	if noisy.Source != "default" || noisy.Reason != "too_uncertain" || noisy.Usable || !noisy.Estimated || noisy.Used != 0.3 ||
		!strings.Contains(noisy.Text, "Demand growth 30.0 % a year, the configured default") ||
		!strings.Contains(noisy.Text, "too uncertain to plan on") ||
		!strings.Contains(noisy.Text, present.Percent(noisy.Annual)+" a year (95 % interval "+present.Percent(noisy.Low)+" to "+present.Percent(noisy.High)+")") ||
		!strings.Contains(noisy.Text, "2026-01 to 2026-04") {
		t.Errorf("noisy months: %+v, want the configured 30 %% used and the estimate said with its interval", noisy)
	}
	t.Logf("noisy: %s", noisy.Text)
	// A set growth is used either way; the sentence still says the trend
	// is too uncertain.
	set := GrowthOf(plantedMonths(4, 0.3, 0.2, 3), 0.1, true)
	if set.Source != "configured" || set.Reason != "set" || set.Used != 0.1 || !strings.Contains(set.Text, "too uncertain to plan on") {
		t.Errorf("set: %+v", set)
	}
	few := GrowthOf(plantedMonths(2, 0.3, 0, 3), 0.3, false)
	if few.Reason != "few_months" || few.Usable {
		t.Errorf("two months: %+v", few)
	}
}
