package capacity

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpuprof/gpuprof/internal/present"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/queuesim"
)

// SimPlanParams are the simulated plan's inputs besides the jobs, the
// findings and the configuration.
type SimPlanParams struct {
	// WhatIf is the cluster and scheduler as a what-if takes them; its
	// Changes, Growth, Months and Seeds are the plan's own.
	WhatIf WhatIfParams
	// Plan is the growth, the horizon and the new demand (the [plan]
	// section's, or the flags').
	Plan analysis.PlanParams
	// Progress, when not nil, is called as the replays are counted, from
	// the goroutine that called SimulatePlan, and once at the end with
	// Final set (PlanProgress). It must not call back into the plan.
	Progress func(PlanProgress)
	// FullReplays runs every replay to its end: none stops once it has
	// proved the target missed (plan_stop.go). The answers are the same;
	// it is for checking that, and for measuring what stopping saves.
	FullReplays bool
	// NoLoadBound tries every purchase size from 1, without the offered
	// load's lower bound (plan_bound.go): for checking the bound.
	NoLoadBound bool
	// Bisect makes the purchase search double upwards and bisect
	// whatever the seeds: tests compare it with the search of a plan of
	// one seed (plan_search.go).
	Bisect bool
}

// SimPlan is the capacity plan made on the queue replay (docs/whatif.md):
// layer first, then expand. It calibrates the replay of today's cluster
// against what happened; replays each recommendation to measure its
// effect; applies those that help (they cost nothing); with them, finds
// per GPU model the smallest purchase that keeps every partition and
// model under the target wait at the horizon; finds the month in which
// growth breaks the target without a purchase, and the order-by date
// before it; prices buying against renting when prices are configured.
// Its Verdict is the one answer every output prints.
type SimPlan struct {
	Simulated bool `json:"simulated"`
	// NotSimulated says why there is no replay (too little data, no
	// cluster, the replay budget), when Simulated is false.
	NotSimulated  string  `json:"not_simulated,omitempty"`
	TargetP95Wait float64 `json:"target_p95_wait_s"`
	Growth        float64 `json:"growth"`
	// ModelGrowth is the growth per year of the GPU models whose own
	// trend the horizon applied to their jobs instead of Growth
	// (analysis.PlanParams.ModelGrowth); absent: Growth for all.
	ModelGrowth    map[string]float64 `json:"model_growth,omitempty"`
	Months         int                `json:"horizon_months"`
	NewDemand      float64            `json:"new_demand"`
	LeadTimeMonths int                `json:"lead_time_months"`
	Seeds          int                `json:"seeds"`
	// Window is the period replayed; ClusterSource and Assumed as in a
	// what-if.
	Window        analysis.Window `json:"window"`
	ClusterSource string          `json:"cluster_source,omitempty"`
	Assumed       []string        `json:"assumed"`
	// Conf is the cluster planned for and the Slurm configuration bound
	// to it; Inventory the GPU inventory the plan compares with, and
	// where it came from (Input.Conf, Input.Inventory).
	Conf      analysis.ConfUse   `json:"conf"`
	Inventory analysis.Inventory `json:"inventory"`
	// Jobs are the jobs today's replay took and left out (with why); when
	// it could take none, the plan is not simulated and they say why.
	Jobs        SimJobs      `json:"jobs"`
	Calibration *Calibration `json:"calibration,omitempty"`
	// CalibrationError is the largest difference, over partitions with
	// enough jobs, between the replayed and the observed p95 wait
	// (seconds): the error bar every simulated wait carries.
	CalibrationError float64 `json:"calibration_error_s"`
	// Today is today's cluster and rules at today's load; Horizon the
	// same at the horizon's load.
	Today   *Scenario `json:"today,omitempty"`
	Horizon *Scenario `json:"horizon,omitempty"`
	// Effects are the recommendations' replayed effects, in their order.
	Effects []analysis.Effect `json:"effects"`
	// Free are the ids of the recommendations that help and are applied
	// before any purchase; WithFree is the horizon with them.
	Free     []string  `json:"free"`
	WithFree *Scenario `json:"with_free,omitempty"`
	// Models is the purchase search per GPU model; Purchase what it
	// found, and WithPurchase the horizon with the free changes and it.
	Models       []ModelPlan `json:"models"`
	Purchase     []Purchase  `json:"purchase"`
	WithPurchase *Scenario   `json:"with_purchase,omitempty"`
	// Timeline is when growth breaks the target with the free changes and
	// no purchase.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Costs compare buying the purchase with renting its work, per model
	// with a price.
	Costs   []Cost  `json:"costs"`
	Verdict Verdict `json:"verdict"`
	// GrowthEstimate, when the caller read the site's months (the
	// report), is where Growth came from: the site's own trend or the
	// configured value, said so.
	GrowthEstimate *analysis.GrowthEstimate `json:"growth_estimate,omitempty"`
	// Replays counts the seeded replays run; ReplayedJobs their jobs;
	// Steps the scheduler steps they took (events, and jobs the backfill
	// cycles planned), the work plan.step_budget caps.
	Replays      int `json:"replays"`
	ReplayedJobs int `json:"replayed_jobs"`
	Steps        int `json:"steps"`
}

// ModelPlan is the purchase search for one GPU model at the horizon, with
// the free changes (and the purchases of the models searched before it)
// applied.
type ModelPlan struct {
	Model    string `json:"model"`
	GPUs     int    `json:"gpus"`
	NodeGPUs int    `json:"node_gpus"` // GPUs per added node, as the model's first node
	// Curve is the model's p95 wait (and the worst partition's) against
	// the GPUs added, at every count the search tried.
	Curve []CurvePoint `json:"curve"`
	// Needed is the smallest purchase that meets the target: 0 when the
	// model meets it already, −1 when no purchase up to plan.max_purchase
	// does (Why says more).
	Needed int    `json:"needed"`
	Why    string `json:"why,omitempty"`
	// LoadBound, when above 1, is the size below which no purchase can
	// meet the target, from the offered load (plan_bound.go): those
	// sizes were not replayed; LoadBoundWhy says why.
	LoadBound    int    `json:"load_bound,omitempty"`
	LoadBoundWhy string `json:"load_bound_why,omitempty"`
}

// CurvePoint is one purchase size tried.
type CurvePoint struct {
	Added          int             `json:"added"`
	ModelP95       analysis.Spread `json:"model_p95_s"`
	WorstPartition string          `json:"worst_partition"`
	WorstP95       analysis.Spread `json:"worst_partition_p95_s"`
	// Compared is the wait the search compares with the target: the
	// model's p95, or the p95 of its jobs in one partition when that is
	// longer (ComparedGroup names which). A partition's jobs on the model
	// are what the model's GPUs serve, and in one replay a partition's
	// p95 is at most the worst of its jobs' on each model — while the
	// model's own p95 mixes in other partitions' jobs, which may wait
	// less, so a model could meet the target while a partition on it
	// does not.
	Compared      analysis.Spread `json:"compared_p95_s"`
	ComparedGroup string          `json:"compared_group"`
	// Over, when set, is the bound a replay stopped early proved in
	// place of the waits (plan_stop.go): the p95s above were not
	// computed, and the JSON leaves them out.
	Over *OverBound `json:"over,omitempty"`
}

// MarshalJSON leaves out the waits of a point over the target by a bound:
// they were not computed.
func (c CurvePoint) MarshalJSON() ([]byte, error) {
	type plain CurvePoint
	if c.Over == nil {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		Added         int        `json:"added"`
		ComparedGroup string     `json:"compared_group"`
		Over          *OverBound `json:"over"`
	}{c.Added, c.ComparedGroup, c.Over})
}

// Purchase is GPUs of one model to buy.
type Purchase struct {
	Model string `json:"model"`
	GPUs  int    `json:"gpus"`
}

// Timeline is when growth, with the free changes and no purchase, first
// breaks the target, and when to order so that the GPUs arrive first.
type Timeline struct {
	// SearchedMonths is how far ahead the search looked; BreachMonth the
	// first month past the window's end that misses the target (0: the
	// target is missed already; −1: not within SearchedMonths).
	SearchedMonths int       `json:"searched_months"`
	BreachMonth    int       `json:"breach_month"`
	BreachDate     time.Time `json:"breach_date,omitzero"`
	Group          string    `json:"group,omitempty"` // the first partition or model to miss it
	// P95 is its replayed p95 wait; Over, in its place, the bound a
	// replay stopped early proved (plan_stop.go).
	P95     *analysis.Spread `json:"p95_s,omitempty"`
	Over    *OverBound       `json:"over,omitempty"`
	OrderBy time.Time        `json:"order_by,omitzero"`
	// Late is set when the order-by date is not after the window's end.
	Late bool `json:"late"`
}

// Cost is buying a model's purchase against renting the GPU-hours it
// would do. Owning costs GPUs · (purchase / depreciation years + running
// per year) a year; renting costs the added GPUs' replayed busy hours,
// scaled to a year, at the cloud price. Owning is cheaper above the
// break-even utilisation (purchase / years + running) / (8760 h · cloud
// price per hour).
type Cost struct {
	Model             string  `json:"model"`
	GPUs              int     `json:"gpus"`
	OwnedPerYear      float64 `json:"owned_per_year"`
	Utilisation       float64 `json:"utilisation"` // of the added GPUs, replayed at the horizon
	BusyHoursPerYear  float64 `json:"busy_gpu_hours_per_year"`
	RentPerYear       float64 `json:"rent_per_year"`
	BreakEven         float64 `json:"break_even_utilisation"`
	Cheaper           string  `json:"cheaper"` // "buy" or "rent"
	PurchaseTotal     float64 `json:"purchase_total"`
	DepreciationYears float64 `json:"depreciation_years"`
}

// errBudget means the plan's replays would exceed plan.replay_budget.
var errBudget = errors.New("replay budget spent")

// SimulatePlan makes the simulated capacity plan of in. findings must be
// Analyse's for the same input and configuration: the recommendations
// replayed are theirs, and each gets its Simulated effect set.
func SimulatePlan(in analysis.Input, findings *analysis.Findings, p SimPlanParams, c analysis.Config) (SimPlan, error) {
	if err := c.Validate(); err != nil {
		return SimPlan{}, err
	}
	pc := &c.Plan
	sp := SimPlan{
		TargetP95Wait: pc.TargetP95Wait.D().Seconds(), Growth: p.Plan.Growth, ModelGrowth: p.Plan.ModelGrowth, Months: p.Plan.Months,
		NewDemand: p.Plan.NewDemand, LeadTimeMonths: pc.LeadTimeMonths, Seeds: pc.Seeds,
		Window: findings.Plan.Window, Assumed: []string{}, Effects: []analysis.Effect{}, Free: []string{},
		Conf: in.Conf, Inventory: analysis.InventoryOf(&in),
		Models: []ModelPlan{}, Purchase: []Purchase{}, Costs: []Cost{},
		Jobs: SimJobs{LeftOutWhy: []string{}, LeftOutReasons: []LeftOutReason{}},
	}
	recs := findings.Recommendations
	gpuJobs := 0
	for _, l := range findings.Plan.Classes {
		gpuJobs += l.Jobs
	}
	period := time.Duration(findings.Plan.PeriodHours * float64(time.Hour))
	var short []string
	if period < pc.MinWindow.D() {
		short = append(short, fmt.Sprintf("%s of data (at least %s needed, plan.min_window)", present.Duration(period), present.Duration(pc.MinWindow.D())))
	}
	if gpuJobs < pc.MinJobs {
		short = append(short, fmt.Sprintf("%d GPU %s (at least %d needed, plan.min_jobs)", gpuJobs, present.Plural(gpuJobs, "job", "jobs"), pc.MinJobs))
	}
	if len(short) > 0 {
		sp.NotSimulated = "not enough data: " + strings.Join(short, "; ")
		notSimulated(&sp, recs)
		sp.Verdict = verdictOf(&sp, findings, recs)
		return sp, nil
	}
	pl := &planner{in: in, wp: p.WhatIf, params: p.Plan, cNow: findings.Plan.CNow, target: sp.TargetP95Wait,
		budget: pc.ReplayBudget, stepBudget: pc.StepBudget, cache: map[string]*evalResult{}, progress: p.Progress, fullReplays: p.FullReplays, noLoadBound: p.NoLoadBound, bisect: p.Bisect}
	pl.wp.Changes, pl.wp.Growth, pl.wp.Months = nil, 0, 0
	pl.wp.Target = pc.TargetP95Wait.D()
	pl.wp.ShardsPerGPU = c.Counting.ShardsPerGPU
	err := pl.start(pc, len(recs))
	var nj *NoJobsError
	switch {
	case errors.Is(err, ErrNoCluster):
		sp.NotSimulated = "no inventory: " + err.Error()
	case errors.As(err, &nj) && nj.Jobs.LeftOut > 0:
		// The window has GPU jobs, but the cluster can start none of them.
		sp.Jobs = nj.Jobs
		sp.NotSimulated = leftOutPrefix + strings.Join(nj.Jobs.LeftOutWhy, "; ")
	case errors.Is(err, ErrNoJobs):
		sp.NotSimulated = "not enough data: " + err.Error()
	case errors.Is(err, errBudget):
		sp.NotSimulated = pl.budgetNote()
	case err != nil:
		return sp, err
	}
	if sp.NotSimulated != "" {
		notSimulated(&sp, recs)
		sp.Verdict = verdictOf(&sp, findings, recs)
		return sp, nil
	}
	if err := pl.makePlan(&sp, findings, pc); err != nil {
		if !errors.Is(err, errBudget) {
			return sp, err
		}
		// What was found so far stands; the rest is marked not simulated.
		sp.NotSimulated = pl.budgetNote()
		notSimulated(&sp, recs)
	}
	sp.Replays, sp.ReplayedJobs, sp.Steps = pl.replays, pl.replayed, pl.steps
	pl.report(true, sp.NotSimulated != "")
	sp.Verdict = verdictOf(&sp, findings, recs)
	return sp, nil
}

// planner runs the replays of one plan, each configuration once.
type planner struct {
	in       analysis.Input
	wp       WhatIfParams
	params   analysis.PlanParams
	cNow     float64
	target   float64
	seeds    int
	budget   int
	replays  int
	replayed int
	need     int // replayed jobs the budget check asked for last
	// steps are the scheduler steps the replays took; stepBudget caps
	// them (a replay already started runs to its end).
	steps, stepBudget int
	base              *evalResult
	cache             map[string]*evalResult
	// progress is the caller's (SimPlanParams.Progress); planned the
	// replays the plan is estimated to take.
	progress func(PlanProgress)
	planned  int
	// fullReplays, noLoadBound and bisect are SimPlanParams'.
	fullReplays, noLoadBound, bisect bool
}

// evalResult is a configuration's replays, as later steps read them: the
// Scenario, and the cluster's nodes and partitions; the replay and its
// runs only where an effect's subsets or the calibration read them
// (evalReq.keep), so that a plan of many configurations does not hold
// every run of every one.
type evalResult struct {
	sc    Scenario
	nodes []SimNode
	parts []SimPart
	r     *replay
	runs  []*queuesim.Result
	// over is set when the configuration's replays stopped early: its
	// scope's target is missed by this bound, and sc holds no waits.
	over  *OverBound
	scope *stopScope
}

// start replays today's cluster, choosing the seeds so that the whole
// plan fits the budget.
func (pl *planner) start(pc *analysis.PlanConfig, recs int) error {
	r, err := newReplay(pl.in, pl.wp, nil)
	if err != nil {
		return err
	}
	// The later replays run their backfill cycles when today's do.
	pl.wp.todaysPhase = r.fitted()
	models := map[string]int{}
	for _, n := range r.simNodes {
		models[n.Model] += n.GPUs
	}
	most := 0
	for _, gpus := range models {
		most = max(most, maxPurchaseOf(pc.MaxPurchase, gpus))
	}
	// The replays a plan takes: today and the horizon, one per
	// recommendation and for them together, a doubling and bisecting
	// purchase search per model, and the timeline's months (every one up
	// to the first that misses: at most all of them), each at no more
	// than the load of the timeline's last month.
	search := 2*int(math.Ceil(math.Log2(float64(most)+1))) + 1
	months := pl.timelineMonths()
	evals := 3 + recs + len(models)*search + months + 1
	factor := math.Max(1, pl.maxFactor(months))
	pl.seeds = pc.Seeds
	for pl.seeds > 1 && float64(len(r.jobs)*pl.seeds*evals)*factor > float64(pl.budget) {
		pl.seeds--
	}
	// The least a plan takes (today, the horizon, the free changes, one
	// size per model, the timeline's two ends) must fit, or nothing runs.
	if least := float64(len(r.jobs)*(5+len(models))) * factor; least > float64(pl.budget) {
		pl.need = int(least)
		return errBudget
	}
	pl.planned = pl.seeds * evals
	o := pl.evalAll([]evalReq{{m: 0, keep: true, r: r}}, nil)[0]
	pl.base = o.e
	return o.err
}

// timelineMonths is how far the timeline looks for the month growth
// breaks the target: twice the horizon, at least 24 months, at most 120.
func (pl *planner) timelineMonths() int { return min(max(2*pl.params.Months, 24), 120) }

func (pl *planner) budgetNote() string {
	if pl.stepBudget > 0 && pl.steps >= pl.stepBudget {
		return fmt.Sprintf("the replays took %d scheduler steps, past plan.step_budget (%d): the queue is too deep to plan within it; raise it, or plan from a shorter window", pl.steps, pl.stepBudget)
	}
	return fmt.Sprintf("the replays would exceed plan.replay_budget (%d replayed jobs; %d spent, %d more asked for): raise it, or plan from a shorter window",
		pl.budget+pl.replayed, pl.replayed, pl.need)
}

// GrowthWords is the growth the horizon applies: "30 %", or with the
// models that grow by their own trend, "23 % (A100 50 %, H100 2 %, by
// their own trends)".
func (sp *SimPlan) GrowthWords() string {
	s := present.Share(sp.Growth)
	if len(sp.ModelGrowth) == 0 {
		return s
	}
	names := slices.Sorted(maps.Keys(sp.ModelGrowth))
	parts := make([]string, len(names))
	for i, m := range names {
		parts[i] = m + " " + present.Share(sp.ModelGrowth[m])
	}
	return s + " (" + strings.Join(parts, ", ") + ", by " + present.Plural(len(names), "its", "their") + " own " + present.Plural(len(names), "trend", "trends") + ")"
}

// factor is the load at month m: (1+g)^(m/12), plus the new demand
// phased in linearly to the horizon as a share of today's.
func (pl *planner) factor(m int) float64 { return pl.factorOf(pl.params.Growth, m) }

// factorOf is factor with the growth g per year.
func (pl *planner) factorOf(g float64, m int) float64 {
	f := math.Pow(1+g, float64(m)/12)
	if pl.params.NewDemand > 0 && pl.cNow > 0 && m > 0 {
		phase := 1.0
		if pl.params.Months > 0 {
			phase = math.Min(1, float64(m)/float64(pl.params.Months))
		}
		f += pl.params.NewDemand / pl.cNow * phase
	}
	return f
}

// maxFactor is the largest load factor of any job at month m (the
// cluster's or a model's own growth): what the budgets are charged by.
func (pl *planner) maxFactor(m int) float64 {
	f := pl.factor(m)
	for _, g := range pl.params.ModelGrowth {
		f = math.Max(f, pl.factorOf(g, m))
	}
	return f
}

// scaled is r's jobs at month m's load for seed s: each job scaled by
// the growth of its GPU model where the model has its own
// (params.ModelGrowth, jobFactors), else by the cluster's.
func (pl *planner) scaled(r *replay, m int, s int) []queuesim.Job {
	if len(pl.params.ModelGrowth) > 0 {
		if fs := r.jobFactors(pl.params.ModelGrowth, func(g float64) float64 { return pl.factorOf(g, m) }, pl.factor(m)); fs != nil {
			return queuesim.ScaleEach(r.jobs, fs, r.span, r.hourOffset, uint64(s+1))
		}
	}
	if f := pl.factor(m); f != 1 {
		return queuesim.Scale(r.jobs, f, r.span, r.hourOffset, uint64(s+1))
	}
	return r.jobs
}

// eval replays the changes at month m's load, once per configuration.
func (pl *planner) eval(changes []analysis.Change, m int) (*evalResult, error) {
	o := pl.evalAll([]evalReq{{changes: changes, m: m}}, nil)[0]
	return o.e, o.err
}

// worst returns the partition or model furthest over the target (or
// nearest under it) and its p95 wait; groups without jobs are left out,
// and so are models no job needed (Group.PlacedOnly): where the replay
// placed jobs that could run elsewhere says nothing of a model, and their
// waits count in their partitions.
func worst(sc Scenario, partitionsOnly bool) (string, analysis.Spread) {
	name, p95 := "", analysis.Spread{}
	best := -1.0
	groups := sc.Partitions
	if !partitionsOnly {
		groups = append(slices.Clone(groups), sc.Models...)
	}
	for i, g := range groups {
		if g.Jobs.Median < 1 || i >= len(sc.Partitions) && g.PlacedOnly() {
			continue
		}
		if g.WaitP95.Median > best {
			kind := "partition "
			if i >= len(sc.Partitions) {
				kind = "model "
			}
			name, p95, best = kind+g.Name, g.WaitP95, g.WaitP95.Median
		}
	}
	return name, p95
}

func (pl *planner) meets(sc Scenario) bool {
	_, p95 := worst(sc, false)
	return p95.Median <= pl.target
}

// makePlan fills sp with the simulated plan: the calibration, each
// recommendation's effect alone, the free changes kept together, the
// smallest purchase per model and the growth timeline. It stays one
// function: the steps run in that order on one planner, each step's
// scenario is the next one's start, and the base's replays are released
// between them to bound memory.
func (pl *planner) makePlan(sp *SimPlan, findings *analysis.Findings, pc *analysis.PlanConfig) error {
	base := pl.base
	sp.Simulated, sp.Seeds = true, pl.seeds
	sp.Window, sp.ClusterSource = base.r.window, base.r.source
	sp.Assumed = slices.Clone(base.r.assumed)
	sp.Jobs = base.r.counts
	cal := base.r.calibrate(base.runs[0])
	sp.Calibration = &cal
	for _, p := range cal.Partitions {
		if p.Jobs >= calibMinJobs || len(cal.Partitions) == 1 {
			sp.CalibrationError = math.Max(sp.CalibrationError, math.Abs(p.SimulatedP95-p.ObservedP95))
		}
	}
	sp.Today = &base.sc
	h := pl.params.Months

	// The horizon and (1) each recommendation alone, at today's load:
	// replayed together, charged in that order.
	recs := findings.Recommendations
	effects := make([]analysis.Effect, len(recs))
	reqs := []evalReq{{m: h}}
	var which []int
	for i := range recs {
		if effects[i] = effectWhy(&recs[i]); effects[i].Why == "" {
			reqs = append(reqs, evalReq{changes: recs[i].Replay.Changes, keep: true})
			which = append(which, i)
		}
	}
	// With no recommendation replayed no change is free, so the
	// timeline (3), with the free changes and no purchase, needs nothing
	// from the steps between: with one seed its months join this batch,
	// on the worker the horizon's one replay leaves idle, charged right
	// after it — where today meets the target (else month 0, today's, is
	// the breach, and every month replayed beside the horizon would be
	// thrown away). With several seeds, a breach decided on whole runs'
	// medians cuts no month short, and the months replayed past it
	// while the horizon runs cost more than the idle worker saves.
	var ts *timelineScan
	nh := len(reqs)
	if len(which) == 0 && stepWidth(pl.seeds) > 1 && pl.meets(base.sc) {
		ts = pl.newTimelineScan(nil, pl.timelineMonths(), sp.Window.To, pc.LeadTimeMonths)
		reqs = append(reqs, ts.reqs...)
	}
	var hz *evalResult
	var kept []*evalResult
	outs := pl.evalAll(reqs, func(k int, o evalOut) bool {
		if k == 0 {
			hz = o.e
			return o.err != nil
		}
		if k >= nh {
			return ts.read(k-nh, o)
		}
		effects[which[k-1]] = pl.effectOf(&recs[which[k-1]], o, sp.CalibrationError)
		if o.e != nil && o.e != pl.base {
			kept = append(kept, o.e)
		}
		return false
	})
	if outs[0].err != nil {
		return outs[0].err
	}
	// The effects' replays and runs, and today's, are read no more.
	for _, e := range kept {
		e.r, e.runs = nil, nil
	}
	base.r, base.runs = nil, nil
	sp.Horizon = &hz.sc
	if ts != nil && ts.err != nil {
		return ts.err
	}
	// The free changes: those that help, added one at a time at the
	// horizon's load, each kept only if the worst wait with it is not
	// materially longer than without (two changes that each help may
	// not help together). A MIG layout is the alternative to shards of
	// the same model: left out where those were kept.
	var free []analysis.Change
	freeModels := map[string]bool{}
	wf := hz
	for i := range recs {
		e := &effects[i]
		if e.Outcome != analysis.EffectHelps || recs[i].Kind == analysis.RecMIG && freeModels[migModel(&recs[i])] {
			continue
		}
		cand := append(slices.Clone(free), recs[i].Replay.Changes...)
		next, err := pl.eval(cand, h)
		if err != nil {
			return err
		}
		_, before := worst(wf.sc, false)
		_, after := worst(next.sc, false)
		if after.Median > before.Median+math.Max(effectMinAbs, effectMinShare*before.Median) {
			e.Text = strings.TrimSuffix(e.Text, ".") + fmt.Sprintf(": it helps alone, but with %s at the horizon the worst replayed p95 wait would be %s instead of %s; not applied in the plan.",
				present.List(sp.Free), present.Seconds(after.Median), present.Seconds(before.Median))
			e.Outcome = analysis.EffectAloneOnly
			continue
		}
		free, wf = cand, next
		sp.Free = append(sp.Free, recs[i].ID)
		if recs[i].Kind == analysis.RecShards {
			freeModels[migModel(&recs[i])] = true
		}
	}
	for i := range recs {
		recs[i].Simulated = &effects[i]
		sp.Effects = append(sp.Effects, effects[i])
	}
	sp.WithFree = &wf.sc

	// (2) With them, the smallest purchase per model at the horizon.
	models := slices.Clone(wf.sc.Models)
	slices.SortStableFunc(models, func(a, b analysis.Group) int { return cmp.Compare(b.WaitP95.Median, a.WaitP95.Median) })
	bought := slices.Clone(free)
	for _, g := range models {
		mp, add, err := pl.searchModel(g, bought, pc.MaxPurchase, wf)
		if err != nil {
			return err
		}
		sp.Models = append(sp.Models, mp)
		if mp.Needed > 0 {
			sp.Purchase = append(sp.Purchase, Purchase{Model: g.Name, GPUs: mp.Needed})
			bought = append(bought, add...)
		}
	}
	if len(sp.Purchase) > 0 {
		wp, err := pl.eval(bought, h)
		if err != nil {
			return err
		}
		sp.WithPurchase = &wp.sc
		sp.Costs = costs(sp.Purchase, wp.sc, pc)
	}

	// (3) With the free changes and no purchase: when growth breaks it.
	if ts == nil {
		tl, err := pl.timeline(free, pl.timelineMonths(), sp.Window.To, pc.LeadTimeMonths)
		if err != nil {
			return err
		}
		sp.Timeline = tl
		return nil
	}
	if ts.err != nil {
		return ts.err
	}
	sp.Timeline = ts.tl
	return nil
}

// migModel is the model a sharing recommendation is about: the first
// shard change's.
func migModel(r *analysis.Recommendation) string {
	if r.Replay == nil {
		return ""
	}
	for _, c := range r.Replay.Changes {
		if c.Kind == analysis.ChangeShards {
			return c.Model
		}
	}
	return ""
}

// Thresholds of an effect: a change helps when the p95 or the mean wait
// of its jobs falls by more than max(effectMinAbs, effectMinShare of it),
// and harms when the mean wait of all GPU jobs rises by as much.
const (
	effectMinAbs   = 60.0 // seconds
	effectMinShare = 0.1
)

func material(from, to float64) bool {
	return from-to > math.Max(effectMinAbs, effectMinShare*from)
}

// effect replays one recommendation at today's load against today's rules.
func (pl *planner) effect(r *analysis.Recommendation, calErr float64) analysis.Effect {
	e := effectWhy(r)
	if e.Why != "" {
		return e
	}
	o := pl.evalAll([]evalReq{{changes: r.Replay.Changes, keep: true}}, nil)[0]
	return pl.effectOf(r, o, calErr)
}

// effectWhy is a recommendation's effect when it cannot be replayed (Why
// says why), or its start.
func effectWhy(r *analysis.Recommendation) analysis.Effect {
	e := analysis.Effect{ID: r.ID, Kind: r.Kind, Outcome: analysis.EffectNotSimulated}
	switch {
	case r.Replay == nil:
		e.Why = "the replay has no model of this change"
	case r.Replay.Why != "":
		e.Why = r.Replay.Why
	}
	if e.Why != "" {
		e.Text = "Expected effect: not simulated (" + e.Why + ")."
	}
	return e
}

// effectOf is a recommendation's effect from the replay of its changes
// at today's load (kept with its runs).
func (pl *planner) effectOf(r *analysis.Recommendation, o evalOut, calErr float64) analysis.Effect {
	e := effectWhy(r)
	ch, err := o.e, o.err
	if err != nil {
		e.Why = "the replay could not apply it: " + err.Error()
		if errors.Is(err, errBudget) {
			e.Why = "the replay budget was spent"
		}
		e.Text = "Expected effect: not simulated (" + e.Why + ")."
		return e
	}
	base := pl.base
	e.Simulated, e.Group = true, r.Replay.GroupName
	e.Before = base.r.subset(r.Replay.GroupName, base.runs, r.Replay.Group)
	e.After = ch.r.subset(r.Replay.GroupName, ch.runs, r.Replay.Group)
	e.AllFrom = base.r.subset("all GPU jobs", base.runs, nil)
	e.AllTo = ch.r.subset("all GPU jobs", ch.runs, nil)
	e.Jobs = int(e.Before.Jobs.Median)
	b, a := e.Before, e.After
	helps := material(b.WaitP95.Median, a.WaitP95.Median) || material(b.WaitMean.Median, a.WaitMean.Median)
	// A change that leaves jobs unable to start takes their waits out of
	// its numbers: it never helps, whatever the others' waits do.
	more := ch.sc.Jobs.LeftOut - base.r.counts.LeftOut
	harms := more > 0 || material(e.AllTo.WaitMean.Median, e.AllFrom.WaitMean.Median)
	switch {
	case harms:
		e.Outcome = analysis.EffectHarms
	case helps:
		e.Outcome = analysis.EffectHelps
	default:
		e.Outcome = analysis.EffectNone
	}
	text := fmt.Sprintf("Expected effect (simulated): p95 wait of %s %s → %s (p10–p90 %s–%s; calibration error ±%s); mean wait of all GPU jobs %s → %s",
		e.Group, present.Seconds(b.WaitP95.Median), present.Seconds(a.WaitP95.Median), present.Seconds(a.WaitP95.P10), present.Seconds(a.WaitP95.P90),
		present.Seconds(calErr), present.Seconds(e.AllFrom.WaitMean.Median), present.Seconds(e.AllTo.WaitMean.Median))
	switch {
	case more > 0:
		text += fmt.Sprintf(": harmful, %d more %s could never start with it (%s); not applied in the plan",
			more, present.Plural(more, "job", "jobs"), strings.Join(ch.sc.Jobs.LeftOutWhy, "; "))
	case e.Outcome == analysis.EffectHarms:
		text += ": harmful, the queue as a whole waits longer; not applied in the plan"
	case e.Outcome == analysis.EffectNone:
		text += ": no material change in waits; not counted in the plan"
	}
	e.Text = text + "."
	return e
}

// searchModel finds the smallest purchase of g's model that brings the
// model's p95 wait at the horizon under the target, on top of the changes
// given: doubling, then bisecting between the last miss and the first hit
// (narrow); with one seed the doubling's sizes from the largest down, two
// side by side, and each bisection step's next midpoint run ahead.
// A model no job needed (Group.PlacedOnly) is searched on the waits that
// count for it, as worst does: the worst p95 of the partitions it is in,
// where the jobs the replay placed on it count; its curve shows that wait.
//
// It stays one function: req and point are closures over the model's
// partitions, node size and curve, which the doubling and the bisection
// both use, and the curve records every size either tried.
func (pl *planner) searchModel(g analysis.Group, changes []analysis.Change, maxGPUs int, wf *evalResult) (ModelPlan, []analysis.Change, error) {
	mp := ModelPlan{Model: g.Name, GPUs: g.GPUs, Curve: []CurvePoint{}}
	for _, n := range wf.nodes {
		if n.Model == g.Name && !n.Added {
			mp.NodeGPUs = n.GPUs
			break
		}
	}
	mp.NodeGPUs = max(mp.NodeGPUs, 1)
	var parts []string
	if g.PlacedOnly() {
		for _, p := range wf.parts {
			if slices.ContainsFunc(wf.nodes, func(n SimNode) bool { return n.Model == g.Name && slices.Contains(p.Nodes, n.Name) }) {
				parts = append(parts, p.Name)
			}
		}
	}
	// Every size but none may stop once it proves the target missed for
	// the jobs the search compares: the model's in each partition, or
	// its partitions' for a model no job needed.
	scope := &stopScope{model: g.Name}
	if parts != nil {
		scope = &stopScope{parts: parts}
	}
	req := func(k int) evalReq {
		q := evalReq{changes: append(slices.Clone(changes), addChanges(g.Name, k, mp.NodeGPUs)...), m: pl.params.Months}
		if k > 0 {
			q.stop = scope
		}
		return q
	}
	point := func(k int, e *evalResult) analysis.Group {
		var mg analysis.Group
		if e.over != nil {
			// Over the target by the bound the replays proved; no wait
			// was computed.
			mp.Curve = append(mp.Curve, CurvePoint{Added: k, Over: e.over, ComparedGroup: e.over.Group})
			mg.Jobs.Median = 1
			mg.WaitP95 = analysis.Spread{Median: math.Inf(1), P10: math.Inf(1), P90: math.Inf(1)}
			return mg
		}
		partName := ""
		for _, x := range e.sc.Models {
			if x.Name == g.Name {
				mg = x
			}
		}
		if parts != nil {
			// Its partitions' worst wait; its jobs are theirs.
			in := Scenario{}
			for _, x := range e.sc.Partitions {
				if slices.Contains(parts, x.Name) {
					in.Partitions = append(in.Partitions, x)
				}
			}
			partName, mg.WaitP95 = worst(in, true)
		}
		cmp, cmpName := mg.WaitP95, "model "+g.Name
		if parts != nil {
			cmpName = partName
		} else {
			for _, c := range e.sc.Cells {
				if c.Model == g.Name && c.Jobs.Median >= 1 && c.WaitP95.Median > cmp.Median {
					cmp, cmpName = c.WaitP95, "partition "+c.Partition+" on "+g.Name
				}
			}
		}
		wn, wp := worst(e.sc, true)
		mp.Curve = append(mp.Curve, CurvePoint{Added: k, ModelP95: mg.WaitP95, WorstPartition: strings.TrimPrefix(wn, "partition "), WorstP95: wp,
			Compared: cmp, ComparedGroup: cmpName})
		// The search compares that wait with the target.
		mg.WaitP95 = cmp
		return mg
	}
	defer func() {
		slices.SortFunc(mp.Curve, func(a, b CurvePoint) int { return a.Added - b.Added })
	}()
	// None, then doubling from the load's lower bound up to the largest
	// size (plan.max_purchase, else doubling the model): replayed
	// together, up to the first size that meets the target (or one that
	// ends the search). Sizes below the bound provably miss it: not
	// replayed.
	configured := maxGPUs
	maxGPUs = maxPurchaseOf(configured, g.GPUs)
	base, why, err := pl.loadBound(g.Name, scope, req)
	if err != nil {
		return mp, nil, err
	}
	if base > 1 {
		mp.LoadBound, mp.LoadBoundWhy = base, why
	}
	if base > maxGPUs {
		mp.Needed = -1
		mp.Why = fmt.Sprintf("%s; the search goes up to +%d (%s)", why, maxGPUs, maxWords(configured, maxGPUs, g.GPUs))
		pl.evalAll([]evalReq{req(0)}, func(_ int, o evalOut) bool {
			if o.err == nil {
				point(0, o.e)
			}
			err = o.err
			return true
		})
		return mp, nil, err
	}
	sizes := []int{0}
	for k := max(base, 1); ; k *= 2 {
		k = min(k, maxGPUs)
		sizes = append(sizes, k)
		if k == maxGPUs {
			break
		}
	}
	width := stepWidth(pl.seeds)
	if pl.bisect {
		width = 1
	}
	// batch is the batch of the doubling's sizes ks, taken in their
	// order: none first; with one seed, the sizes from the largest down.
	batch := func(ks []int) []evalReq {
		reqs := make([]evalReq, len(ks))
		for i, k := range ks {
			reqs[i] = req(k)
		}
		return reqs
	}
	first := sizes
	if width > 1 {
		first = sizes[:1]
	}
	groups := make([]analysis.Group, 0, len(sizes))
	pl.evalAll(batch(first), func(i int, o evalOut) bool {
		if err = o.err; err != nil {
			return true
		}
		mg := point(sizes[i], o.e)
		groups = append(groups, mg)
		if i == 0 {
			return mg.WaitP95.Median <= pl.target || mg.Jobs.Median < 1 || mg.FullHours.Median <= 0
		}
		return mg.WaitP95.Median <= pl.target
	})
	if err != nil {
		return mp, nil, err
	}
	g0 := groups[0]
	if g0.WaitP95.Median <= pl.target || g0.Jobs.Median < 1 {
		return mp, nil, nil
	}
	if g0.FullHours.Median <= 0 {
		mp.Needed = -1
		mp.Why = fmt.Sprintf("its jobs wait (p95 %s) while some of its GPUs are free at every moment: limits, reservations or job shapes, not capacity", present.Seconds(g0.WaitP95.Median))
		return mp, nil, nil
	}
	// noneMeets is the answer when the largest size, k, misses too.
	noneMeets := func(k int, mg analysis.Group) {
		mp.Needed = -1
		whose := ""
		if c := mp.Curve[len(mp.Curve)-1].ComparedGroup; strings.HasPrefix(c, "partition ") && strings.Contains(c, " on ") {
			whose = " for the jobs of " + strings.TrimSuffix(c, " on "+g.Name) + " on it"
		}
		wait := present.Seconds(mg.WaitP95.Median)
		if b := mp.Curve[len(mp.Curve)-1].Over; b != nil {
			wait = b.String()
		}
		mp.Why = fmt.Sprintf("%d more GPUs still leave a p95 wait of %s%s (%s)", k, wait, whose, maxWords(configured, maxGPUs, g.GPUs))
	}
	lo, hi := max(base-1, 0), 0
	if width == 1 {
		for i, mg := range groups[1:] {
			k := sizes[i+1]
			if mg.WaitP95.Median <= pl.target {
				hi = k
				break
			}
			lo = k
			if k == maxGPUs {
				noneMeets(k, mg)
				return mp, nil, nil
			}
		}
	} else {
		// With one seed the doubling's sizes are replayed from the
		// largest down, width at a time, up to the first that misses:
		// the bracket (the last miss, the first hit) is the one the
		// sizes taken upwards give where they meet the target from one
		// size on, for fewer replays when the answer is large — the
		// sizes far below it run long before they prove a miss, those
		// above it are quick.
		missed := false
		for j := len(sizes) - 1; j >= 1 && !missed; j -= width {
			var ks []int
			for i := j; i >= max(1, j-width+1); i-- {
				ks = append(ks, sizes[i])
			}
			var last analysis.Group
			pl.evalAll(batch(ks), func(i int, o evalOut) bool {
				if err = o.err; err != nil {
					return true
				}
				last = point(ks[i], o.e)
				if last.WaitP95.Median <= pl.target {
					hi = ks[i]
					return false
				}
				lo, missed = ks[i], true
				return true
			})
			if err != nil {
				return mp, nil, err
			}
			if lo == maxGPUs {
				noneMeets(lo, last)
				return mp, nil, nil
			}
		}
	}
	// Then bisected between them (plan_search.go), with one seed the
	// next midpoint replayed beside each, up to the first that meets the
	// target.
	hi, err = narrow(lo, hi, width > 1, func(ks []int) ([]bool, error) {
		reqs := make([]evalReq, len(ks))
		for i, k := range ks {
			reqs[i] = req(k)
		}
		var met []bool
		var err error
		pl.evalAll(reqs, func(i int, o evalOut) bool {
			if err = o.err; err != nil {
				return true
			}
			met = append(met, point(ks[i], o.e).WaitP95.Median <= pl.target)
			return met[i]
		})
		return met, err
	})
	if err != nil {
		return mp, nil, err
	}
	mp.Needed = hi
	return mp, addChanges(g.Name, hi, mp.NodeGPUs), nil
}

// addChanges adds k GPUs of model as nodes of nodeGPUs (the last one
// smaller), into the partitions that have the model.
func addChanges(model string, k, nodeGPUs int) []analysis.Change {
	var out []analysis.Change
	for i := 0; k > 0; i++ {
		n := min(k, nodeGPUs)
		out = append(out, analysis.Change{Kind: analysis.ChangeAdd, Count: n, Model: model, Spec: fmt.Sprintf("%dx%s#%d", n, model, i)})
		k -= n
	}
	return out
}

// timeline finds the first month in 0..maxMonths whose load, with the
// changes, misses the target: every month is replayed, in order, up to
// the first miss. Waits are not provably monotone in load for a seed (the
// scaled job sets are nested, but a scheduler has anomalies), so no month
// is stepped over: a bisection could miss a breach that a later month's
// dip hides. The months run in parallel, charged in order; the work past
// the first miss is thrown away.
func (pl *planner) timeline(changes []analysis.Change, maxMonths int, end time.Time, lead int) (*Timeline, error) {
	ts := pl.newTimelineScan(changes, maxMonths, end, lead)
	pl.evalAll(ts.reqs, ts.read)
	if ts.err != nil {
		return nil, ts.err
	}
	return ts.tl, nil
}

// timelineScan is the timeline's months as requests of a batch (the
// timeline's own, or the horizon's when they need nothing from the steps
// between) and the reading of their results in order.
type timelineScan struct {
	pl   *planner
	tl   *Timeline
	reqs []evalReq
	end  time.Time
	lead int
	err  error
}

func (pl *planner) newTimelineScan(changes []analysis.Change, maxMonths int, end time.Time, lead int) *timelineScan {
	maxMonths = min(maxMonths, 120)
	ts := &timelineScan{pl: pl, tl: &Timeline{SearchedMonths: maxMonths, BreachMonth: -1}, reqs: make([]evalReq, maxMonths+1), end: end, lead: lead}
	for m := range ts.reqs {
		ts.reqs[m] = evalReq{changes: changes, m: m, stop: &stopScope{}, scan: true}
	}
	return ts
}

// read takes month m's result, and says whether the scan is over: the
// month misses the target (the breach), or its replay failed (err).
func (ts *timelineScan) read(m int, o evalOut) bool {
	tl := ts.tl
	if ts.err = o.err; ts.err != nil {
		return true
	}
	if b := o.e.over; b != nil {
		tl.Group, tl.Over = b.Group, b
	} else {
		if ts.pl.meets(o.e.sc) {
			return false
		}
		var p95 analysis.Spread
		tl.Group, p95 = worst(o.e.sc, false)
		tl.P95 = &p95
	}
	tl.BreachMonth = m
	// Both dates count months from the window's end: the order-by
	// date is month m − lead, not the breach date less lead months
	// (from a 31st, that would step through a normalised date).
	tl.BreachDate = ts.end.AddDate(0, m, 0)
	tl.OrderBy = ts.end.AddDate(0, m-ts.lead, 0)
	tl.Late = !tl.OrderBy.After(ts.end)
	return true
}

// costs prices each purchase with a configured price.
func costs(purchase []Purchase, sc Scenario, pc *analysis.PlanConfig) []Cost {
	out := []Cost{}
	for _, p := range purchase {
		var g analysis.Group
		for _, x := range sc.Models {
			if x.Name == p.Model {
				g = x
			}
		}
		i := slices.IndexFunc(pc.Prices, func(pr analysis.PriceConfig) bool { return matchModel(pr.Model, p.Model, analysis.GRESType(p.Model)) })
		if i < 0 {
			continue
		}
		out = append(out, costOf(p.Model, p.GPUs, g.AddedOccupancy.Median, pc.Prices[i], pc.DepreciationYears))
	}
	return out
}

// costOf is one model's buy-versus-rent at utilisation u of the GPUs
// bought.
func costOf(model string, gpus int, u float64, pr analysis.PriceConfig, years float64) Cost {
	perGPU := pr.Purchase/years + pr.RunningPerYear
	c := Cost{
		Model: model, GPUs: gpus, OwnedPerYear: float64(gpus) * perGPU, Utilisation: u,
		BusyHoursPerYear: float64(gpus) * u * hoursPerYear, PurchaseTotal: float64(gpus) * pr.Purchase,
		DepreciationYears: years,
	}
	c.RentPerYear = c.BusyHoursPerYear * pr.CloudPerGPUHour
	c.BreakEven = perGPU / (hoursPerYear * pr.CloudPerGPUHour)
	c.Cheaper = "rent"
	if u > c.BreakEven {
		c.Cheaper = "buy"
	}
	return c
}

// hoursPerYear is 365 days.
const hoursPerYear = 8760.0

// NotSimulatedPlan is the plan when no replay may run (a caller who sees
// only their own jobs): why says so, and the verdict is not_simulated.
func NotSimulatedPlan(findings analysis.Findings, p analysis.PlanParams, c analysis.Config, why string) SimPlan {
	sp := SimPlan{
		TargetP95Wait: c.Plan.TargetP95Wait.D().Seconds(), Growth: p.Growth, ModelGrowth: p.ModelGrowth, Months: p.Months, NewDemand: p.NewDemand,
		LeadTimeMonths: c.Plan.LeadTimeMonths, Window: findings.Plan.Window, NotSimulated: why, Assumed: []string{},
		Effects: []analysis.Effect{}, Free: []string{}, Models: []ModelPlan{}, Purchase: []Purchase{}, Costs: []Cost{},
		Jobs:      SimJobs{LeftOutWhy: []string{}, LeftOutReasons: []LeftOutReason{}},
		Inventory: findings.Plan.Inventory,
	}
	notSimulated(&sp, findings.Recommendations)
	sp.Verdict = verdictOf(&sp, &findings, findings.Recommendations)
	return sp
}

// notSimulated gives every recommendation without a replayed effect one
// that says why there is none.
func notSimulated(sp *SimPlan, recs []analysis.Recommendation) {
	for i := range recs {
		if recs[i].Simulated != nil {
			continue
		}
		e := analysis.Effect{ID: recs[i].ID, Kind: recs[i].Kind, Outcome: analysis.EffectNotSimulated, Why: sp.NotSimulated,
			Text: "Expected effect: not simulated (" + sp.NotSimulated + ")."}
		recs[i].Simulated = &e
		sp.Effects = append(sp.Effects, e)
	}
}
