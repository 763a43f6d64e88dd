package planmonth

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// TestLargeClusterBuysPastOldMax: on a 1,000-GPU month whose demand
// doubles in the year, the default plan finds a purchase of more than 32
// GPUs of a model — the old fixed plan.max_purchase, 3 % of such a
// cluster, hid it ("no purchase of up to 32 GPUs meets the target") —
// and the sizes the offered load rules out are not replayed.
func TestLargeClusterBuysPastOldMax(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a 1,000-GPU month")
	}
	p, err := Plan(Shape{Jobs: 8000, GPUs: 1000, Occupancy: 0.8, Seed: 1}, func(pp *analysis.PlanParams) { pp.Growth = 1 })
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Plan
	t.Logf("verdict %s: %s; %d replays, %d steps", sp.Verdict.Code, sp.Verdict.Text, sp.Replays, sp.Steps)
	most := 0
	for _, m := range sp.Models {
		t.Logf("%s (%d GPUs): needed %d, load bound %d; %s", m.Model, m.GPUs, m.Needed, m.LoadBound, m.Why)
		most = max(most, m.Needed)
	}
	if sp.Verdict.Code != capacity.VerdictBuy || most <= 32 {
		t.Errorf("verdict %s, largest purchase of a model %d: want buy, above 32", sp.Verdict.Code, most)
	}
}

// TestOneSeedSearchFindsBisectionsPurchase: a plan of one seed searches
// its purchase from the largest size down and three ways
// (capacity/plan_search.go); on a busy month it buys what the doubling
// upwards and bisection buy from the same replays, with fewer replays.
func TestOneSeedSearchFindsBisectionsPurchase(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a month twice")
	}
	in, wp, err := Month(Shape{Jobs: 6000, GPUs: 48, Occupancy: 0.8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := analysis.DefaultConfig()
	c.Plan.Seeds = 1
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	plan := func(bisect bool) capacity.SimPlan {
		ff := f
		ff.Recommendations = slices.Clone(f.Recommendations)
		sp, err := capacity.SimulatePlan(in, &ff, capacity.SimPlanParams{WhatIf: wp, Plan: c.Plan.Params(), Bisect: bisect}, c)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	one, bis := plan(false), plan(true)
	if one.Seeds != 1 || len(bis.Purchase) == 0 {
		t.Fatalf("seeds %d, purchase %v: want a one-seed plan that buys", one.Seeds, bis.Purchase)
	}
	for i, m := range bis.Models {
		t.Logf("%s: bisection +%d in %d sizes, one-seed search +%d in %d sizes", m.Model, m.Needed, len(m.Curve), one.Models[i].Needed, len(one.Models[i].Curve))
		if one.Models[i].Needed != m.Needed {
			t.Errorf("%s: the one-seed search buys %d, bisection %d", m.Model, one.Models[i].Needed, m.Needed)
		}
	}
	if one.Verdict.Code != bis.Verdict.Code || one.Verdict.Text != bis.Verdict.Text {
		t.Errorf("verdicts differ:\n%s\n%s", one.Verdict.Text, bis.Verdict.Text)
	}
	// Every number shown is the same: the plan but for the sizes the
	// searches tried and what they cost, and each size both tried.
	strip := func(sp capacity.SimPlan) capacity.SimPlan {
		sp.Models = slices.Clone(sp.Models)
		for i := range sp.Models {
			sp.Models[i].Curve = nil
		}
		sp.Replays, sp.ReplayedJobs, sp.Steps = 0, 0, 0
		return sp
	}
	a, _ := json.Marshal(strip(one))
	b, _ := json.Marshal(strip(bis))
	if string(a) != string(b) {
		t.Errorf("the plans differ beyond the sizes tried:\n%s\n%s", a, b)
	}
	for i, m := range bis.Models {
		for _, p := range m.Curve {
			for _, q := range one.Models[i].Curve {
				x, _ := json.Marshal(p)
				y, _ := json.Marshal(q)
				if p.Added == q.Added && string(x) != string(y) {
					t.Errorf("%s +%d: %s, bisection %s", m.Model, p.Added, y, x)
				}
			}
		}
	}
	t.Logf("replays %d (bisection %d), steps %d (%d)", one.Replays, bis.Replays, one.Steps, bis.Steps)
}
