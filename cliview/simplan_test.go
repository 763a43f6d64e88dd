package cliview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/capacity"
)

// TestSimPlanNoRecommendation: a replayed plan without a recommendation
// keeps its section 1, saying there was none to replay, as the report does
// (issue #38: the CLI skipped from its verdict to section 2).
func TestSimPlanNoRecommendation(t *testing.T) {
	sp := capacity.SimPlan{Simulated: true, Months: 12, Seeds: 3}
	var b bytes.Buffer
	WriteSimPlan(&b, sp, nil)
	out := b.String()
	one, two := strings.Index(out, "\n1. Policy changes: no recommendation to replay"), strings.Index(out, "\n2. Purchase")
	if one < 0 || two < 0 || one > two {
		t.Errorf("sections 1 and 2 not in order, section 1 saying there was nothing to replay:\n%s", out)
	}
}

// TestSimPlanLeftOutPurchase: while jobs were left out of the replay (they
// ask for nodes the cluster lacks), a model whose replayed jobs need no
// more GPUs does not say "none needed" (issue #38).
func TestSimPlanLeftOutPurchase(t *testing.T) {
	sp := capacity.SimPlan{Simulated: true, Months: 12, Seeds: 3, Models: []capacity.ModelPlan{{Model: "A100", GPUs: 8}}}
	sp.Jobs.LeftOut = 3
	var b bytes.Buffer
	WriteSimPlan(&b, sp, nil)
	if out := b.String(); strings.Contains(out, "none needed") || !strings.Contains(out, "none for the jobs replayed; the 3 jobs left out need nodes the cluster lacks") {
		t.Errorf("purchase row with jobs left out:\n%s", out)
	}
	// With the reasons: what the jobs need, named.
	sp.Jobs.LeftOutReasons = []capacity.LeftOutReason{{Kind: capacity.LeftOutGPUs, Jobs: 3, Need: "a node of 8 GPUs of type a100 in partition gpu", Hardware: true}}
	b.Reset()
	WriteSimPlan(&b, sp, nil)
	if out := b.String(); !strings.Contains(out, "the 3 jobs left out need a node of 8 GPUs of type a100 in partition gpu (3 jobs)") {
		t.Errorf("purchase row with a reason:\n%s", out)
	}
	sp.Jobs.LeftOutReasons = nil
	sp.Jobs.LeftOut = 0
	b.Reset()
	WriteSimPlan(&b, sp, nil)
	if !strings.Contains(b.String(), "none needed") {
		t.Errorf("purchase row with no job left out:\n%s", b.String())
	}
}

// TestSimPlanCosts: the buy-or-rent table writes its amounts and busy
// hours in the presenter's forms (present.Amount, present.GPUHours), as
// the report's section 4 does, not as bare %.0f (issue #41).
func TestSimPlanCosts(t *testing.T) {
	sp := capacity.SimPlan{Simulated: true, Months: 12, Seeds: 3, Costs: []capacity.Cost{{
		Model: "A100", GPUs: 4, OwnedPerYear: 123456.4, Utilisation: 0.5, BusyHoursPerYear: 17520,
		RentPerYear: 52560, BreakEven: 0.7, Cheaper: "rent", DepreciationYears: 4,
	}}}
	var b bytes.Buffer
	WriteSimPlan(&b, sp, nil)
	out := b.String()
	for _, want := range []string{"123,456", "17,520", "52,560", "50.0 %", "70.0 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("costs table lacks %q:\n%s", want, out)
		}
	}
}
