package monthly

import (
	"context"
	"fmt"
	"time"

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
	// History asks for the demand growth to be estimated from the
	// cluster's own whole months (PlanGrowth), as the report does,
	// unless Config.Plan.GrowthSet (plan.growth or --growth).
	History bool
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
	var growth *analysis.GrowthEstimate
	if p.History {
		g, err := PlanGrowth(ctx, src, q.Window, q.Cluster, out.Input, p.Plan.Growth, c)
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
	notAdmin := fmt.Sprintf("the plan replays every user's jobs: it is for root and admin_group (%s sees only their own)", termtext.Clean(r.User))
	out.Sim, err = simulate(out.Input, &out.Findings, b.WhatIf, p.Plan, c, r.Admin, notAdmin, p.StartProgress)
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
// (in the window's time zone). in is the plan's input, whose inventory
// and emission factors the months are read with.
func PlanGrowth(ctx context.Context, src Source, w analysis.Window, cluster string, in analysis.Input, configured float64, c analysis.Config) (analysis.GrowthEstimate, error) {
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
	e := readEarlier(ctx, src, after, n, cluster, in.Nodes, in.Carbon, c)
	if e.err != nil {
		return analysis.GrowthEstimate{}, e.err
	}
	if own != nil && len(in.Jobs) > 0 {
		e.demand, e.whole = append(e.demand, *own), append(e.whole, heldWhole(in.Jobs, last, in.Now))
	}
	months := demandMonths(e.demand, e.whole, last.From.Format("2006-01"))
	return analysis.GrowthOf(months, configured, c.Plan.GrowthSet), nil
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
