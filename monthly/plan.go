package monthly

import (
	"context"
	"fmt"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/termtext"
)

// Planned is an analysis with its simulated plan: the input (with what a
// replay reads), the findings, whose recommendations carry their
// simulated effects, and the plan.
type Planned struct {
	Input    analysis.Input
	Findings analysis.Findings
	Sim      capacity.SimPlan
}

// PlanParams are what AnalyseAndPlan reads and how it plans.
type PlanParams struct {
	// Query is the cluster and window; AnalyseAndPlan decides Lean.
	Query  Query
	Config analysis.Config
	Plan   analysis.PlanParams
	// WhatIf are the cluster's slurm.conf nodes and scheduler for the
	// replay.
	WhatIf capacity.WhatIfParams
	// Admin says the reader may read every user's jobs; only then is the
	// plan simulated. User names the reader when it is not.
	Admin bool
	User  string
	// StartProgress, when not nil, is called as the queue replay starts;
	// the replay reports to what it returns, and calls stop at its end.
	StartProgress func() (update func(capacity.PlanProgress), stop func())
}

// AnalyseAndPlan reads the jobs p.Query selects from src, analyses them
// with p.Config and makes the simulated plan with p.Plan: what gpuprof
// plan and recommend answer. The plan replays every user's jobs: for a
// caller who sees only their own, it is not simulated, and says so. A
// replay that fails is an error (the report, by contrast, goes on
// without it: Plan).
func AnalyseAndPlan(ctx context.Context, src Source, p PlanParams) (Planned, error) {
	var out Planned
	q, c := p.Query, p.Config
	// The replay reads node lists, node counts and pending reasons, which
	// the lean read leaves out; a window too large for the replay budget
	// even at its least is not replayed, so it keeps the lean read's speed.
	if n, err := src.Count(ctx, q); err == nil && !c.Plan.Replayable(n) {
		q.Lean = true
	}
	var err error
	if out.Input, err = src.Input(ctx, q, nil); err != nil {
		return out, err
	}
	if out.Findings, err = analysis.Analyse(out.Input, c); err != nil {
		return out, err
	}
	if !p.Admin {
		out.Sim = capacity.NotSimulatedPlan(out.Findings, p.Plan, c,
			fmt.Sprintf("the plan replays every user's jobs: it is for root and admin_group (%s sees only their own)", termtext.Clean(p.User)))
		out.Sim.Conf = out.Input.Conf
		return out, nil
	}
	var update func(capacity.PlanProgress)
	stop := func() {}
	if p.StartProgress != nil {
		update, stop = p.StartProgress()
	}
	defer stop()
	out.Sim, err = capacity.SimulatePlan(out.Input, &out.Findings, capacity.SimPlanParams{WhatIf: p.WhatIf, Plan: p.Plan, Progress: update}, c)
	return out, err
}
