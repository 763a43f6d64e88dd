package capacity

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// budgetPlan is the plan of the random multifactor golden month with a
// step budget, made with GOMAXPROCS procs, and its JSON.
func budgetPlan(t *testing.T, stepBudget, procs int, progress func(PlanProgress)) (SimPlan, []byte) {
	t.Helper()
	gm := goldenMonths[3]
	in := gm.month(t)
	c := planConfig(3)
	if stepBudget > 0 {
		c.Plan.StepBudget = stepBudget
	}
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	sp, err := SimulatePlan(in, &f, SimPlanParams{WhatIf: multifactorConf(in), Plan: gm.pp, Progress: progress}, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(struct {
		Recommendations []analysis.Recommendation `json:"recommendations"`
		Simulated       SimPlan                   `json:"simulated"`
	}{f.Recommendations, sp})
	if err != nil {
		t.Fatal(err)
	}
	return sp, b
}

// TestStepBudgetStopsAlike: a plan that plan.step_budget stops, stops at
// the same replay with 1 and 4 workers — the budget is charged in the
// plan's order, not in the order the parallel replays end — and says so
// the same way.
func TestStepBudgetStopsAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a planted month three times")
	}
	full, _ := budgetPlan(t, 0, 1, nil)
	if full.NotSimulated != "" || full.Steps == 0 {
		t.Fatalf("the whole plan: %q, %d steps", full.NotSimulated, full.Steps)
	}
	budget := full.Steps / 2
	t.Logf("the whole plan: %d replays, %d steps", full.Replays, full.Steps)
	one, oneJSON := budgetPlan(t, budget, 1, nil)
	four, fourJSON := budgetPlan(t, budget, 4, nil)
	if !strings.Contains(one.NotSimulated, "plan.step_budget") {
		t.Fatalf("with half the steps (%d): not simulated %q, want the step budget named", budget, one.NotSimulated)
	}
	t.Logf("with %d steps: %d replays, %d steps; %s", budget, one.Replays, one.Steps, one.NotSimulated)
	if one.Replays >= full.Replays || one.Steps < budget {
		t.Errorf("stopped after %d replays and %d steps; the whole plan takes %d and %d, the budget is %d", one.Replays, one.Steps, full.Replays, full.Steps, budget)
	}
	if one.Replays != four.Replays || one.Steps != four.Steps || !bytes.Equal(oneJSON, fourJSON) {
		t.Errorf("stopped after %d replays, %d steps with 1 worker and %d, %d with 4:\n%s", one.Replays, one.Steps, four.Replays, four.Steps, firstDiff(oneJSON, fourJSON))
	}
}

// TestPlanProgress: the plan reports its replays as they are counted —
// done never falls, never passes planned, and the last report is final
// with done == planned == the plan's replays; a plan the step budget
// stops ends with its stop reported and the replays it ran.
func TestPlanProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a planted month twice")
	}
	check := func(t *testing.T, stepBudget int) {
		var got []PlanProgress
		sp, _ := budgetPlan(t, stepBudget, 4, func(p PlanProgress) { got = append(got, p) })
		if len(got) < 2 {
			t.Fatalf("%d reports, want one per replay and a final one", len(got))
		}
		for i, p := range got {
			if p.Done > p.Planned || p.Done < 0 {
				t.Errorf("report %d: %d done of %d planned", i, p.Done, p.Planned)
			}
			if i > 0 && (p.Done < got[i-1].Done || p.Done > got[i-1].Done+1) {
				t.Errorf("report %d: done %d after %d (want each replay counted once, in turn)", i, p.Done, got[i-1].Done)
			}
			if p.Final != (i == len(got)-1) {
				t.Errorf("report %d of %d: final %v", i, len(got), p.Final)
			}
		}
		last := got[len(got)-1]
		if last.Done != sp.Replays {
			t.Errorf("final report: %d done, the plan ran %d replays", last.Done, sp.Replays)
		}
		stopped := sp.NotSimulated != ""
		if stopped != (stepBudget > 0) {
			t.Fatalf("step budget %d: not simulated %q", stepBudget, sp.NotSimulated)
		}
		if last.Stopped != stopped || !stopped && last.Planned != last.Done {
			t.Errorf("final report %+v; the plan stopped: %v", last, stopped)
		}
	}
	t.Run("whole", func(t *testing.T) { check(t, 0) })
	t.Run("step budget", func(t *testing.T) { check(t, 60000) })
}

// TestCellWords: the verdict that leaves a partition over the target
// after the purchase says why from the partition's jobs per GPU model.
func TestCellWords(t *testing.T) {
	cells := func(p95 ...float64) []Cell {
		var out []Cell
		for i, w := range p95 {
			out = append(out, Cell{Partition: "short", Model: []string{"a100", "h100"}[i], Jobs: analysis.Spread{Median: 10}, WaitP95: analysis.Spread{Median: w}})
		}
		return append(out, Cell{Partition: "gpu", Model: "a100", Jobs: analysis.Spread{Median: 10}, WaitP95: analysis.Spread{Median: 9000}})
	}
	for _, tt := range []struct {
		name, group string
		cells       []Cell
		seeds       int
		want        string
	}{
		{"a model's jobs over", "partition short", cells(1000, 5000), 5, ": its jobs on h100 01:23:20 still wait longer"},
		{"every model's under, medians", "partition short", cells(1000, 3000), 5, "median over 5 seeds"},
		{"one seed", "partition short", cells(1000, 3000), 1, "its rules or job shapes bind"},
		{"a model named", "model h100", cells(1000, 5000), 5, "its rules or job shapes bind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := &SimPlan{TargetP95Wait: 3600, Seeds: tt.seeds, WithPurchase: &Scenario{Cells: tt.cells}}
			if got := cellWords(sp, tt.group); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
}
