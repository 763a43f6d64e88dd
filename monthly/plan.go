package monthly

import (
	"context"
	"fmt"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
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
	// Query is the window, and the cluster asked for ("": the one of the
	// window's jobs, as ClusterSource.Bind chooses); AnalyseAndPlan binds
	// the cluster and decides Lean.
	Query  Query
	Config analysis.Config
	Plan   analysis.PlanParams
	// StartProgress, when not nil, is called as the queue replay starts;
	// the replay reports to what it returns, and calls stop at its end.
	StartProgress func() (update func(capacity.PlanProgress), stop func())
}

// AnalyseAndPlan binds the cluster p.Query asks for (src.Bind), reads
// its jobs in p.Query's window, analyses them with p.Config and makes the
// simulated plan with p.Plan: what gpuprof plan and recommend answer. The
// plan replays every user's jobs: for a reader who sees only their own
// (src.Reader), it is not simulated, and says so. A replay that fails is
// an error (the report, by contrast, goes on without it: Plan).
func AnalyseAndPlan(ctx context.Context, src ClusterSource, p PlanParams) (Planned, error) {
	var out Planned
	q, c, r := p.Query, p.Config, src.Reader()
	b, err := src.Bind(ctx, q.Window, q.Cluster)
	if err != nil {
		return out, err
	}
	q.Cluster, q.Jobs = b.Cluster, b.Jobs
	if out.Input, err = readForPlan(ctx, src, q, r.Admin, c, nil); err != nil {
		return out, err
	}
	if out.Findings, err = analysis.Analyse(out.Input, c); err != nil {
		return out, err
	}
	notAdmin := fmt.Sprintf("the plan replays every user's jobs: it is for root and admin_group (%s sees only their own)", termtext.Clean(r.User))
	out.Sim, err = simulate(out.Input, &out.Findings, b.WhatIf, p.Plan, c, r.Admin, notAdmin, p.StartProgress)
	return out, err
}

// readForPlan reads q from src once for an analysis and its plan. The
// queue replay reads node lists, node counts and pending reasons, which
// the lean read leaves out: q is read in full only when the replay will
// run (for an admin, and a window the replay budget can take even at its
// least), else lean. The window is counted once (unless q.Jobs says it
// was), and the count sizes the input. each is Source.Input's.
func readForPlan(ctx context.Context, src Source, q Query, admin bool, c analysis.Config, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	if q.Jobs == 0 {
		if n, err := src.Count(ctx, q); err == nil {
			q.Jobs = n
		}
	}
	if !admin || !c.Plan.Replayable(q.Jobs) {
		q.Lean = true
	}
	return src.Input(ctx, q, each)
}

// simulate makes the plan of in's findings with pp: for a reader who is
// not an admin it is not simulated, and notAdmin says why; else the
// queue replay runs (it sets each recommendation's simulated effect),
// telling its progress to what startProgress returns.
func simulate(in analysis.Input, findings *analysis.Findings, wp capacity.WhatIfParams, pp analysis.PlanParams, c analysis.Config, admin bool, notAdmin string, startProgress func() (func(capacity.PlanProgress), func())) (capacity.SimPlan, error) {
	if !admin {
		sp := capacity.NotSimulatedPlan(*findings, pp, c, notAdmin)
		sp.Conf = in.Conf
		return sp, nil
	}
	var update func(capacity.PlanProgress)
	stop := func() {}
	if startProgress != nil {
		update, stop = startProgress()
	}
	defer stop()
	sp, err := capacity.SimulatePlan(in, findings, capacity.SimPlanParams{WhatIf: wp, Plan: pp, Progress: update}, c)
	if capacity.CannotReplay(err) {
		// The replay cannot be built from this input: the findings stand,
		// each effect "not simulated" with the reason.
		sp = capacity.NotSimulatedPlan(*findings, pp, c, "the queue replay could not be built: "+termtext.Clean(err.Error()))
		sp.Conf = in.Conf
		return sp, nil
	}
	return sp, err
}
