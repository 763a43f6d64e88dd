package capacity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// twoModelMonth is a quiet month on 16 A100 and 16 H100 (two nodes of 8
// each, one partition): 20 jobs a day ask for each type, 1–2 h each, so
// that growth adds jobs without a queue and the horizon's jobs per model
// are its demand.
func twoModelMonth(t testing.TB) analysis.Input {
	r := rand.New(rand.NewPCG(36, 1))
	var pjs []plantedJob
	users := []string{"ana", "bo", "cy", "di"}
	everyDay(func(d time.Time) {
		for _, typ := range []string{"a100", "h100"} {
			for range 20 {
				run := minutes(r, 60, 120)
				pjs = append(pjs, plantedJob{at: d.Add(minutes(r, 0, 24*60-200)), run: run, limit: 2 * run, gpus: 1, typ: typ,
					user: users[r.IntN(len(users))], util: 70, vramFrac: 0.5})
			}
		}
	})
	nodes := append(gpuNodes("a", a100, 2, 8), gpuNodes("h", h100, 2, 8)...)
	return recordMonth(t, nodes, pjs)
}

// modelMonths are six whole months (2026-06 to 2026-11) of GPU-hours per
// model: each model's hours grow by its rate a year from its first
// month, with ±1 % of noise; a model with from > 0 holds GPU-hours only
// from that month on.
func modelMonths(rates map[string]float64, from map[string]int) []analysis.MonthDemand {
	r := rand.New(rand.NewPCG(36, 2))
	var out []analysis.MonthDemand
	for k := range 6 {
		start := time.Date(2026, time.Month(6+k), 1, 0, 0, 0, 0, time.UTC)
		days := start.AddDate(0, 1, 0).Sub(start).Hours() / 24
		m := analysis.MonthDemand{Month: start.Format("2006-01"), Models: map[string]float64{}}
		for _, name := range []string{a100, h100} {
			if k < from[name] {
				continue
			}
			h := 900 * days * math.Pow(1+rates[name], float64(k)/12) * (1 + 0.02*(r.Float64()-0.5))
			m.Models[name] = h
			m.GPUHours += h
		}
		out = append(out, m)
	}
	return out
}

// horizonRatio is each model's jobs at the horizon over today's (the
// median over the seeds), from the plan's scenarios.
func horizonRatio(t *testing.T, sp SimPlan) map[string]float64 {
	t.Helper()
	if sp.Today == nil || sp.Horizon == nil {
		t.Fatalf("plan not simulated: %s", sp.NotSimulated)
	}
	out := map[string]float64{}
	for _, h := range sp.Horizon.Models {
		for _, d := range sp.Today.Models {
			if d.Name == h.Name && d.Jobs.Median > 0 {
				out[h.Name] = h.Jobs.Median / d.Jobs.Median
			}
		}
	}
	return out
}

// TestPlanGrowthPerModel (issue #36): months in which the A100s' demand
// grows 50 % a year and the H100s' is flat give each model its own
// trend; the plan's horizon (12 months) replays 1.5 times today's A100
// jobs and today's H100 jobs, not the cluster's figure (about 23 %) for
// both. With only two months of H100 hours the H100s fall back to the
// cluster's figure, and the sentence says so; --growth (configured)
// grows both by it.
func TestPlanGrowthPerModel(t *testing.T) {
	in := twoModelMonth(t)
	c := planConfig(2)
	plan := func(g analysis.GrowthEstimate) SimPlan {
		t.Helper()
		_, sp := simulate(t, in, c, analysis.PlanParams{Growth: g.Used, Months: 12, ModelGrowth: analysis.ModelGrowthUsed(g.Models)})
		return sp
	}
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

	g := analysis.GrowthOf(modelMonths(map[string]float64{a100: 0.5, h100: 0}, nil), 0.3, false)
	if g.Source != "history" || len(g.Models) != 2 || g.Models[0].Source != "model" || g.Models[1].Source != "model" ||
		!near(g.Models[0].Used, 0.5, 0.05) || !near(g.Models[1].Used, 0, 0.03) || near(g.Used, 0.5, 0.1) || near(g.Used, 0, 0.1) {
		t.Fatalf("estimate %+v", g)
	}
	ratio := horizonRatio(t, plan(g))
	t.Logf("growth: cluster %.3f, A100 %.3f, H100 %.3f; horizon / today jobs %v", g.Used, g.Models[0].Used, g.Models[1].Used, ratio)
	if !near(ratio[a100], 1+g.Models[0].Used, 0.02) || !near(ratio[h100], 1+g.Models[1].Used, 0.02) {
		t.Errorf("horizon / today jobs %v, want A100 %.3f and H100 %.3f (their own trends; the cluster's is %.3f)",
			ratio, 1+g.Models[0].Used, 1+g.Models[1].Used, 1+g.Used)
	}

	few := analysis.GrowthOf(modelMonths(map[string]float64{a100: 0.5, h100: 0}, map[string]int{h100: 4}), 0.3, false)
	if h := few.Models[1]; h.Model != h100 || h.Source != "cluster" || h.Reason != "few_months" || h.Used != few.Used ||
		!strings.Contains(few.Text, fmt.Sprintf("%s %s, the cluster's figure: 2 whole months", h100, present.Percent(few.Used))) {
		t.Fatalf("H100 with two months: %+v\n%s", h, few.Text)
	}
	if few.Models[0].Source != "model" {
		t.Fatalf("A100 with six months: %+v", few.Models[0])
	}
	ratio = horizonRatio(t, plan(few))
	t.Logf("two months of H100: cluster %.3f, A100 %.3f; horizon / today jobs %v", few.Used, few.Models[0].Used, ratio)
	if !near(ratio[a100], 1+few.Models[0].Used, 0.02) || !near(ratio[h100], 1+few.Used, 0.02) {
		t.Errorf("two months of H100: horizon / today jobs %v, want A100 %.3f (own) and H100 %.3f (the cluster's)",
			ratio, 1+few.Models[0].Used, 1+few.Used)
	}

	set := analysis.GrowthOf(modelMonths(map[string]float64{a100: 0.5, h100: 0}, nil), 0.1, true)
	ratio = horizonRatio(t, plan(set))
	if !near(ratio[a100], 1.1, 0.02) || !near(ratio[h100], 1.1, 0.02) {
		t.Errorf("configured 10 %%: horizon / today jobs %v, want 1.1 for both", ratio)
	}
}
