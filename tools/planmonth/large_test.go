package planmonth

import (
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
