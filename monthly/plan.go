package monthly

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/jobsource"
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
	// Ask is the window and the cluster asked for (Bound binds them).
	Ask    Ask
	Config analysis.Config
	Plan   analysis.PlanParams
	// Progress, when not nil, shows the queue replay's progress.
	Progress Progress
	// History asks for the demand growth to be estimated from the
	// cluster's own whole months (PlanGrowth), as the report does,
	// unless Config.Plan.GrowthSet (plan.growth or --growth).
	History bool
}

// AnalyseAndPlan reads the jobs p.Ask asks for (Bound: the window, by
// default the last complete month with jobs, of one cluster with its own
// Slurm configuration), analyses them with p.Config and makes the
// simulated plan with p.Plan: what gpuprof plan and recommend answer. The
// plan replays every user's jobs: for a caller who sees only their own
// (sc.Caller), it is not simulated, and says so. A replay that fails is
// an error (the report, by contrast, goes on without it: Plan).
func AnalyseAndPlan(ctx context.Context, sc jobsource.Scope, p PlanParams) (Planned, error) {
	var out Planned
	c := p.Config
	sc, q, rule, err := Bound(ctx, sc, p.Ask)
	if err != nil {
		return out, err
	}
	if out.Input, err = readForPlan(ctx, sc, q, rule, c, nil); err != nil {
		return out, err
	}
	var growth *analysis.GrowthEstimate
	if p.History {
		g, err := PlanGrowth(ctx, sc, q.Window, out.Input, p.Plan.Growth, c)
		if err != nil {
			return out, err
		}
		c.Plan.Growth, p.Plan.Growth, growth = g.Used, g.Used, &g
		// Each model whose own trend is usable grows by it at the
		// horizon (analysis.ModelGrowthOf), as in the report.
		c.Plan.ModelGrowth = analysis.ModelGrowthUsed(g.Models)
		p.Plan.ModelGrowth = c.Plan.ModelGrowth
	}
	if out.Findings, err = analysis.Analyse(out.Input, c); err != nil {
		return out, err
	}
	out.Sim, err = simulate(out.Input, &out.Findings, sc, p.Plan, c, p.Progress)
	out.Sim.GrowthEstimate = growth
	return out, err
}

// PlanGrowth is the demand growth a plan of the window w uses, with
// where it came from: the trend of the cluster's whole months (the
// months table's rule, demandMonths) when there are at least
// analysis.MinGrowthMonths and c.Plan.GrowthSet is not set, else
// configured (the value given, from plan.growth or --growth). The
// months are the calendar months that end by w's end: the last of them
// and CompareMonths before it, as the report of that month reads them
// (in the window's time zone), of sc's cluster. in is the plan's input,
// whose inventory and emission factors the months are read with.
func PlanGrowth(ctx context.Context, sc jobsource.Scope, w analysis.Window, in analysis.Input, configured float64, c analysis.Config) (analysis.GrowthEstimate, error) {
	end := w.To
	lastEnd := time.Date(end.Year(), end.Month(), 1, 0, 0, 0, 0, end.Location())
	last := analysis.Window{From: lastEnd.AddDate(0, -1, 0), To: lastEnd}
	var own *analysis.MonthDemand
	after, n := analysis.Window{From: lastEnd, To: lastEnd.AddDate(0, 1, 0)}, CompareMonths+1
	if in.Window == last {
		// The plan's window is the last month: its input is summarised
		// as the report summarises its own month, not read again.
		wl := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: last, TopN: 1}, c)
		d := monthDemand(last, wl.Headline.AllocatedGPUHours, wl.Models)
		own, after, n = &d, last, CompareMonths
	}
	e := readEarlier(ctx, sc, after, n, in.Nodes, in.Carbon, c)
	if e.err != nil {
		return analysis.GrowthEstimate{}, e.err
	}
	if own != nil && len(in.Jobs) > 0 {
		e.demand, e.whole = append(e.demand, *own), append(e.whole, heldWhole(in.Jobs, last, in.Now))
	}
	months := demandMonths(e.demand, e.whole, last.From.Format("2006-01"))
	return analysis.GrowthOf(months, configured, c.Plan.GrowthSet), nil
}

// readForPlan reads q from sc once for an analysis and its plan. The
// queue replay reads node lists, node counts and pending reasons, which
// the lean read leaves out: q is read in full only when the replay will
// run (for an admin, and a window the replay budget can take even at its
// least), else lean. The window is counted once (unless q.Jobs says it
// was), and the count sizes the input, whose window rule is rule. each is
// Scope.Input's.
func readForPlan(ctx context.Context, sc jobsource.Scope, q jobsource.Query, rule analysis.WindowRule, c analysis.Config, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	if q.Jobs == 0 {
		if n, err := sc.Count(ctx, q); err == nil {
			q.Jobs = n
		}
	}
	if !sc.Caller.Admin || !c.Plan.Replayable(q.Jobs) {
		q.Lean = true
	}
	in, err := sc.Input(ctx, q, each)
	in.WindowRule = rule
	return in, err
}

// notAdmin is why a replay of every user's jobs is not run for sc's
// caller (store.Caller.RequireAdmin's one sentence), nil for an admin.
func notAdmin(sc jobsource.Scope) error {
	return sc.Caller.RequireAdmin("the plan replays every user's jobs")
}

// simulate makes the plan of in's findings with pp on sc's cluster: for
// a caller who is not an admin it is not simulated, and says why
// (notAdmin); else the queue replay runs (it sets each recommendation's
// simulated effect), its progress shown by progress.
func simulate(in analysis.Input, findings *analysis.Findings, sc jobsource.Scope, pp analysis.PlanParams, c analysis.Config, progress Progress) (capacity.SimPlan, error) {
	if err := notAdmin(sc); err != nil {
		sp := capacity.NotSimulatedPlan(*findings, pp, c, err.Error())
		sp.Conf = in.Conf
		return sp, nil
	}
	var update func(capacity.PlanProgress)
	stop := func() {}
	if progress != nil {
		update, stop = progress.Start()
	}
	defer stop()
	sp, err := capacity.SimulatePlan(in, findings, capacity.SimPlanParams{WhatIf: sc.Conf.WhatIf(), Plan: pp, Progress: update}, c)
	if capacity.CannotReplay(err) {
		// The replay cannot be built from this input: the findings stand,
		// each effect "not simulated" with the reason.
		sp = capacity.NotSimulatedPlan(*findings, pp, c, "the queue replay could not be built: "+termtext.Clean(err.Error()))
		sp.Conf = in.Conf
		return sp, nil
	}
	return sp, err
}
