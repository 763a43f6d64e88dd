package monthly

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/report"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Progress shows a long queue replay's progress (cliview.PlanProgressOn
// on a terminal): Start is called as the replay starts; the replay
// reports to update and calls stop at its end.
type Progress interface {
	Start() (update func(capacity.PlanProgress), stop func())
}

// Params are a report's settings.
type Params struct {
	Window  analysis.Window // the month
	Cluster string
	Title   string // "": "GPU workload report, <Month YYYY>"
	Top     int    // users and accounts listed by name
	Compare int    // earlier months compared, at most
	// Anonymize replaces user and account names throughout.
	Anonymize bool
	Config    analysis.Config
	// Carbon are the emission factors (nil: none).
	Carbon *analysis.Carbon
	// Progress, when not nil, shows the queue replay's progress.
	Progress Progress
	// Now is the clock (nil: time.Now): the report's generation time.
	Now func() time.Time
	// Latest asks Reports for the last complete month with jobs at or
	// before Window, not Window itself (no --month): DefaultWindow's rule.
	Latest bool
	// Rule says how Window was chosen (Reports sets it).
	Rule analysis.WindowRule
}

// Build makes the report of p's month from sc, a scope bound to its
// cluster (jobsource.Scope.Bind): who reads (the plan is simulated only
// for an admin; a reader scoped to their own jobs is said in the
// sources), the cluster, its Slurm configuration and, when counted, how
// many jobs of it the month holds are the scope's.
func Build(ctx context.Context, sc jobsource.Scope, p Params) (report.Data, error) {
	w, c := p.Window, p.Config
	// The memory floor (service detection, VRAM need) needs the series.
	tally := analysis.NewNoticeTally(w)
	in, err := readForPlan(ctx, sc, jobsource.Query{Cluster: sc.Cluster, Window: w, WithSeries: true, Jobs: sc.Jobs}, p.Rule, c, tally.Add)
	if err != nil {
		return report.Data{}, err
	}
	// The freed GPU time is bounded by the GPUs the cluster has.
	inventory := 0
	for _, n := range in.Nodes {
		inventory += n.GPUs
	}
	tally.CapGPUs(inventory)
	notices := tally.Summary()
	in.Carbon = p.Carbon

	// Three things at once, on two cores: this month's analysis and its
	// simulated plan, its workload summary and the earlier months'
	// headlines (which read the database). All three only read in.
	params := analysis.WorkloadParams{Window: w, TopN: p.Top}
	// The earlier months (--compare) come first: the plan's growth is
	// estimated from them and this month, on the figures of the report's
	// months table.
	var (
		wg      sync.WaitGroup
		wl      analysis.Workload
		earlier earlierMonths
	)
	wg.Go(func() { wl = analysis.SummariseWorkload(in, params, c) })
	wg.Go(func() {
		earlier = readEarlier(ctx, sc, w, p.Compare, in.Nodes, in.Carbon, c)
	})
	wg.Wait()
	if earlier.err != nil {
		return report.Data{}, earlier.err
	}
	// The report's own month counts toward the trend only when held
	// whole, by the rule of the earlier months.
	own := monthDemand(w, wl.Headline.AllocatedGPUHours, wl.Models)
	months := demandMonths(append(slices.Clone(earlier.demand), own), append(slices.Clone(earlier.whole), heldWhole(in.Jobs, w, in.Now)), own.Month)
	growth := analysis.GrowthOf(months, c.Plan.Growth, c.Plan.GrowthSet)
	c.Plan.Growth, c.Plan.ModelGrowth = growth.Used, analysis.ModelGrowthUsed(growth.Models)
	findings, err := analysis.Analyse(in, c)
	if err != nil {
		return report.Data{}, err
	}
	// After Analyse, before the findings go into the report: the plan
	// sets each recommendation's simulated effect.
	sim := Plan(in, &findings, sc, c, p.Progress)
	sim.GrowthEstimate = &growth
	findings.Jobs = nil
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	d := report.Data{
		Title:     p.Title,
		Month:     w.From.Format("2006-01"),
		Generated: now(),
		Workload:  wl,
		Findings:  findings,
		SimPlan:   &sim,
		Earlier:   earlier.months,
		Config:    c,
		Sources:   sourcesOf(originOf(sc), in),
		Cluster:   sc.Cluster,
		Notices:   notices,
	}
	if d.Title == "" {
		d.Title = "GPU workload report, " + w.From.Format("January 2006")
	}
	if p.Anonymize {
		users, accounts := namesOf(in.Jobs)
		users, accounts = append(users, earlier.users...), append(accounts, earlier.accounts...)
		report.Anonymize(&d, users, accounts)
	}
	return d, nil
}

// Plan makes the month's simulated capacity plan with the [plan] section
// of c on sc's cluster (simulate; the replay's progress shown by
// progress). The replay reads every user's jobs: for a caller who sees
// only their own it is not simulated, and says so. A replay that fails
// does not stop the report: the plan, and each recommendation's effect,
// say why there is no replay.
func Plan(in analysis.Input, findings *analysis.Findings, sc jobsource.Scope, c analysis.Config, progress Progress) capacity.SimPlan {
	pp := c.Plan.Params()
	sp, err := simulate(in, findings, sc, pp, c, progress)
	if err != nil {
		for i := range findings.Recommendations {
			findings.Recommendations[i].Simulated = nil
		}
		sp = capacity.NotSimulatedPlan(*findings, pp, c, "the queue replay failed: "+err.Error())
		sp.Conf = in.Conf
		return sp
	}
	return sp
}

// earlierMonths are the headlines of the months before the report's, with
// the names in them (for Anonymize).
type earlierMonths struct {
	months []report.MonthHeadline
	// whole says, per month, whether the database holds it whole: its
	// first job was submitted before the month's first day ended (a
	// database started within a month holds part of it).
	whole []bool
	// demand is each month's GPU-hours, in all and per GPU model, as
	// the months table shows them: what the trend is estimated from.
	demand          []analysis.MonthDemand
	users, accounts []string
	err             error
}

// readEarlier reads up to compare months before w, oldest first, and
// keeps the headline of each that has jobs. nodes is this month's
// inventory and carbon its emission factors, so occupancy and CO2e are on
// the same footing.
func readEarlier(ctx context.Context, sc jobsource.Scope, w analysis.Window, compare int, nodes []analysis.Node, carbon *analysis.Carbon, c analysis.Config) (e earlierMonths) {
	for k := compare; k >= 1; k-- {
		ew := analysis.Window{From: w.From.AddDate(0, -k, 0), To: w.From.AddDate(0, -k+1, 0)}
		// Lean: the analysis reads no TRES text, node list or reason.
		in, err := sc.Input(ctx, jobsource.Query{Cluster: sc.Cluster, Window: ew, Lean: true}, nil)
		if err != nil {
			e.err = fmt.Errorf("month %s: %w", ew.From.Format("2006-01"), err)
			return e
		}
		if len(in.Jobs) == 0 {
			continue
		}
		in.Nodes, in.Carbon = nodes, carbon
		ewl := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: ew, TopN: 1}, c)
		e.months = append(e.months, report.MonthHeadline{Month: ew.From.Format("2006-01"), Headline: ewl.Headline, LostGPUHours: ewl.LostGPUHours})
		e.whole = append(e.whole, heldWhole(in.Jobs, ew, in.Now))
		e.demand = append(e.demand, monthDemand(ew, ewl.Headline.AllocatedGPUHours, ewl.Models))
		u, a := namesOf(in.Jobs)
		e.users, e.accounts = append(e.users, u...), append(e.accounts, a...)
	}
	return e
}

// wholeSlack is how late a month's first job may be submitted for the
// month to count as held whole.
const wholeSlack = 24 * time.Hour

// CompareMonths is how many months before the report's the report
// compares by default (--compare), and how many before the plan's last
// month the plan reads to estimate the demand trend: both estimate it
// from the same months.
const CompareMonths = 6

// heldWhole is the one rule for whether the database holds the month w
// whole, given the jobs read for it: the month has ended (now, the
// input's clock, is not before its end; a zero clock is taken as past
// it) and its first job was submitted before its first day ended (a
// database started within a month holds part of it).
func heldWhole(jobs []analysis.Job, w analysis.Window, now time.Time) bool {
	if len(jobs) == 0 || (!now.IsZero() && now.Before(w.To)) {
		return false
	}
	first := jobs[0].Submit
	for _, j := range jobs {
		if j.Submit.Before(first) {
			first = j.Submit
		}
	}
	return first.Before(w.From.Add(wholeSlack))
}

// monthDemand is the month w's demand as the months table shows it:
// its allocated GPU-hours and the GPU models' shares of them.
func monthDemand(w analysis.Window, gpuHours float64, models []analysis.ModelUsage) analysis.MonthDemand {
	d := analysis.MonthDemand{Month: w.From.Format("2006-01"), GPUHours: gpuHours}
	for _, m := range models {
		if m.Model != "" && m.GPUHours > 0 {
			if d.Models == nil {
				d.Models = map[string]float64{}
			}
			d.Models[m.Model] += m.GPUHours
		}
	}
	return d
}

// demandMonths is the one rule for the months the demand trend is
// estimated from, the report's and the plan's alike: of months (those
// with jobs, oldest first, whole[i] saying whether months[i] is held
// whole), the consecutive run of whole months ending with the month
// last; a month without jobs, or held in part, ends the run, and so
// does a last month that is not whole (the run is then empty).
func demandMonths(months []analysis.MonthDemand, whole []bool, last string) []analysis.MonthDemand {
	var out []analysis.MonthDemand
	want, err := time.Parse("2006-01", last)
	if err != nil {
		return nil
	}
	for i := len(months) - 1; i >= 0; i-- {
		if months[i].Month > last {
			continue
		}
		if months[i].Month != want.Format("2006-01") || !whole[i] {
			break
		}
		out = append(out, months[i])
		want = want.AddDate(0, -1, 0)
	}
	slices.Reverse(out)
	return out
}

// monthsBack is how many complete months LastWithJobs searches.
const monthsBack = 36

// LastWithJobs walks back from the month w (the last complete one) to
// the first that has jobs of cluster the caller may see, at most
// monthsBack months; an error names the months searched when none has.
func LastWithJobs(ctx context.Context, sc jobsource.Scope, w analysis.Window, cluster string) (analysis.Window, error) {
	m, found, err := lastWithJobs(ctx, sc, w, cluster)
	if err != nil || found {
		return m, err
	}
	return w, fmt.Errorf("no jobs in the %d complete months up to %s: nothing to report (choose a month with --month)",
		monthsBack, w.From.Format("2006-01"))
}

// lastWithJobs is LastWithJobs, found false when no month has jobs.
func lastWithJobs(ctx context.Context, sc jobsource.Scope, w analysis.Window, cluster string) (analysis.Window, bool, error) {
	for k := range monthsBack {
		m := analysis.Window{From: w.From.AddDate(0, -k, 0), To: w.From.AddDate(0, -k+1, 0)}
		n, err := sc.Count(ctx, jobsource.Query{Cluster: cluster, Window: m})
		if err != nil {
			return w, false, err
		}
		if n > 0 {
			return m, true, nil
		}
	}
	return w, false, nil
}

// DefaultWindow is the one rule for the window analysed when none is
// given (no --month, --since or --until), the same for gpuprof report,
// plan, recommend, whatif and profiles, so that one database gives one
// window and one "of data" figure in all of them: the last complete
// calendar month (in now's zone) with jobs of cluster the caller may
// see, the month the report reports (LastWithJobs); when none of the
// last 36 complete months has jobs (a database started this month), the
// data's span: the open window, which the analysis counts from the
// earliest start to the latest time in the data, not after now. The rule
// travels with the window (analysis.Input.WindowRule) so that every
// output says which it was.
func DefaultWindow(ctx context.Context, sc jobsource.Scope, now time.Time, cluster string) (analysis.Window, analysis.WindowRule, error) {
	last, err := ParseMonth("", now, now.Location())
	if err != nil {
		return analysis.Window{}, analysis.WindowGiven, err
	}
	return defaultFrom(ctx, sc, last, cluster)
}

// defaultFrom is DefaultWindow from the month last, the last complete one.
func defaultFrom(ctx context.Context, sc jobsource.Scope, last analysis.Window, cluster string) (analysis.Window, analysis.WindowRule, error) {
	m, found, err := lastWithJobs(ctx, sc, last, slurmext.NormalClusterName(cluster))
	switch {
	case err != nil:
		return analysis.Window{}, analysis.WindowGiven, err
	case found:
		return m, analysis.WindowLastMonth, nil
	}
	return analysis.Window{}, analysis.WindowDataSpan, nil
}

// namesOf returns every user and account name in jobs, for Anonymize.
func namesOf(jobs []analysis.Job) (users, accounts []string) {
	seenU, seenA := map[string]bool{}, map[string]bool{}
	for i := range jobs {
		if u := jobs[i].User; u != "" && !seenU[u] {
			seenU[u] = true
			users = append(users, u)
		}
		if a := jobs[i].Account; a != "" && !seenA[a] {
			seenA[a] = true
			accounts = append(accounts, a)
		}
	}
	return users, accounts
}

// sourcesOf adds to s, where the report's jobs came from, what the
// input says of the slurm.conf and the GPU inventory.
func sourcesOf(s report.Sources, in analysis.Input) report.Sources {
	if in.Conf.NotUsed != "" {
		s.Notes = append(s.Notes, in.Conf.NotUsed)
	}
	inv := in.Inventory
	switch {
	case inv.Misfit != "":
		s.Notes = append(s.Notes, "no GPU inventory: "+inv.Misfit+"; capacity and occupancy are unknown")
	case len(in.Nodes) == 0:
		s.Notes = append(s.Notes, "no GPU inventory: no node sent a GPU profile this month and no slurm.conf of the cluster gives its GPU nodes, so capacity and occupancy are unknown")
	case inv.Source == analysis.InventoryProfiles:
		s.Notes = append(s.Notes, fmt.Sprintf("GPU inventory from the profiles: %s, %s (%s; a node that ran no profiled job is not counted)", present.Count(inv.Nodes, "node", "nodes"), present.Count(inv.GPUs, "GPU", "GPUs"), analysis.ProfilesCount))
	default:
		s.Notes = append(s.Notes, fmt.Sprintf("GPU inventory from %s: %s, %s", inv.Source, present.Count(inv.Nodes, "node", "nodes"), present.Count(inv.GPUs, "GPU", "GPUs")))
	}
	return s
}
