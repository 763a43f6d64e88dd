package monthly

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/store"
)

// TestAnalyseAndPlan: the cluster is bound, the window counted once and
// read once, lean for a reader who is not an admin (no replay will read
// node lists), sized by the count; the findings are the analysis's; for
// a reader who is not an admin the plan is not simulated, says so in
// plan's words, and no progress starts.
func TestAnalyseAndPlan(t *testing.T) {
	w := month(2026, 11)
	src := &fakeSource{jobs: map[string][]analysis.Job{"2026-11": {gpuJob("1", "ann", "bio", w.From), gpuJob("2", "bob", "chem", w.From)}}}
	c := analysis.DefaultConfig()
	prog := &progress{}
	p := PlanParams{
		Ask:    Ask{Cluster: "Lab", Window: w, WithSeries: true},
		Config: c, Plan: c.Plan.Params(), Progress: prog,
	}
	sc := jobsource.NewScope(store.Caller{UID: 1001, User: "ann\x1b[31m"}, "", "", src)
	pd, err := AnalyseAndPlan(context.Background(), sc, p)
	if err != nil {
		t.Fatal(err)
	}
	started := prog.started > 0
	want := jobsource.Query{Cluster: "lab", Window: w, WithSeries: true}
	read := jobsource.Query{Cluster: "lab", Window: w, WithSeries: true, Lean: true, Jobs: 2}
	if !slices.Equal(src.bound, []string{"Lab"}) || len(src.counts) != 1 || src.counts[0] != want || len(src.queries) != 1 || src.queries[0] != read {
		t.Errorf("bound %v, counted %+v, read %+v; want Lab bound, %+v counted and %+v read", src.bound, src.counts, src.queries, want, read)
	}
	if len(pd.Input.Jobs) != 2 {
		t.Errorf("input %d jobs, want 2", len(pd.Input.Jobs))
	}
	if pd.Sim.Simulated || pd.Sim.Verdict.Code != capacity.VerdictNotSimulated || started ||
		!strings.Contains(pd.Sim.Verdict.Text, "it is for root and admin_group only (ann") || strings.ContainsRune(pd.Sim.Verdict.Text, 0x1b) {
		t.Errorf("plan for a non-admin = %+v (progress started %v), want not simulated in plan's words, the user sanitised, no progress", pd.Sim.Verdict, started)
	}
}

// TestSimulateBadInput: a replay that cannot be built (a node of 18,500
// GPUs, as the bench month's profiles once made of every UUID a node
// reported) takes nothing down: the recommendations stay, each effect
// "not simulated" with the reason (issue #38).
func TestSimulateBadInput(t *testing.T) {
	w := month(2026, 11)
	c := analysis.DefaultConfig()
	var jobs []analysis.Job
	for i := range 80 {
		jobs = append(jobs, gpuJob(strconv.Itoa(i+1), "ann", "bio", w.From.Add(time.Duration(i)*time.Hour)))
	}
	in := analysis.Input{Window: w, Now: w.To, Jobs: jobs,
		Nodes: []analysis.Node{{Name: "gpu01", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 18500, Partitions: []string{"gpu"}}}}
	in.Inventory = analysis.InventoryOf(&in)
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	f.Recommendations = append(f.Recommendations, analysis.Recommendation{ID: "qos-cap", Kind: "qos", Title: "cap"})
	admin := jobsource.NewScope(store.Caller{Admin: true}, "", "", &fakeSource{})
	sp, err := simulate(in, &f, admin, c.Plan.Params(), c, nil)
	if err != nil {
		t.Fatalf("simulate: %v, want the plan not simulated", err)
	}
	if sp.Simulated || !strings.Contains(sp.NotSimulated, "18500 GPUs") || len(f.Recommendations) != 1 {
		t.Fatalf("plan %+v, %d recommendations", sp.Verdict, len(f.Recommendations))
	}
	e := f.Recommendations[0].Simulated
	if e == nil || e.Outcome != analysis.EffectNotSimulated || !strings.Contains(e.Text, "could not be built") {
		t.Errorf("effect %+v, want not simulated with the reason", e)
	}
}

// TestPlanGrowthAgreesWithReport: the plan of a month and the report of
// it estimate the demand growth from the same whole months, by one rule,
// to the same figure (in all and per GPU model); a plan whose window
// ends within the next month reads the same months; a last month held
// in part ends the run for both (the configured value, said so); noisy
// months give a trend too uncertain to plan on, and both use the
// configured value (said so); a growth set in the configuration is used
// by both.
func TestPlanGrowthAgreesWithReport(t *testing.T) {
	jobs := map[string][]analysis.Job{}
	for k, n := range []int{100, 112, 118, 135, 150} {
		w := month(2026, time.Month(7+k))
		key := w.From.Format("2006-01")
		for i := range n {
			jobs[key] = append(jobs[key], gpuJob(fmt.Sprintf("%d-%d", k, i), "ann", "bio", w.From.Add(time.Hour+time.Duration(i)*time.Minute)))
		}
	}
	plan := func(t *testing.T, w analysis.Window, c analysis.Config) analysis.GrowthEstimate {
		t.Helper()
		pd, err := AnalyseAndPlan(context.Background(), annOf(&fakeSource{jobs: jobs}, ""), PlanParams{Ask: Ask{Cluster: "lab", Window: w}, Config: c, Plan: c.Plan.Params(), History: true})
		if err != nil {
			t.Fatal(err)
		}
		if pd.Sim.GrowthEstimate == nil || pd.Sim.Growth != pd.Sim.GrowthEstimate.Used || pd.Findings.Plan.Params.Growth != pd.Sim.GrowthEstimate.Used {
			t.Fatalf("plan growth %v, Little's law %v, estimate %+v: want the estimate's in both", pd.Sim.Growth, pd.Findings.Plan.Params.Growth, pd.Sim.GrowthEstimate)
		}
		if want := analysis.ModelGrowthUsed(pd.Sim.GrowthEstimate.Models); !reflect.DeepEqual(pd.Sim.ModelGrowth, want) {
			t.Fatalf("plan's per-model growth %v, the estimate's %v", pd.Sim.ModelGrowth, want)
		}
		return *pd.Sim.GrowthEstimate
	}
	rep := func(t *testing.T, w analysis.Window, c analysis.Config) analysis.GrowthEstimate {
		t.Helper()
		d, err := Build(context.Background(), annOf(&fakeSource{jobs: jobs}, "lab"), Params{Window: w, Top: 10, Compare: CompareMonths, Config: c})
		if err != nil {
			t.Fatal(err)
		}
		if want := analysis.ModelGrowthUsed(d.SimPlan.GrowthEstimate.Models); !reflect.DeepEqual(d.SimPlan.ModelGrowth, want) {
			t.Fatalf("report's per-model growth %v, the estimate's %v", d.SimPlan.ModelGrowth, want)
		}
		return *d.SimPlan.GrowthEstimate
	}
	nov := month(2026, 11)
	r := rep(t, nov, analysis.DefaultConfig())
	if r.Source != "history" || r.Reason != "trend" || !r.Usable || len(r.Months) != 5 || r.Months[0].Month != "2026-07" || len(r.Models) != 1 || r.Models[0].Source != "model" || r.Models[0].Used != r.Models[0].Annual {
		t.Fatalf("report: %+v, want the trend of July to November, and H100's own, used", r)
	}
	for _, w := range []analysis.Window{nov, {From: nov.To, To: nov.To.Add(10 * 24 * time.Hour)}} {
		if p := plan(t, w, analysis.DefaultConfig()); !reflect.DeepEqual(p, r) {
			t.Errorf("plan of %v: %+v\nreport: %+v", w, p, r)
		}
	}

	// November held in part (its first job on the 3rd): both fall back.
	part := jobs["2026-11"]
	jobs["2026-11"] = slices.Clone(part[50:])
	for i := range jobs["2026-11"] {
		jobs["2026-11"][i].Submit = nov.From.Add(50 * time.Hour)
	}
	r, p := rep(t, nov, analysis.DefaultConfig()), plan(t, nov, analysis.DefaultConfig())
	if r.Source != "default" || r.Used != 0.3 || !strings.Contains(r.Text, "0 whole months") || !reflect.DeepEqual(p, r) {
		t.Errorf("November in part: report %+v, plan %+v", r, p)
	}
	jobs["2026-11"] = part

	// Noisy months (GPU-hours up and down by a third): the trend is too
	// uncertain to plan on, and both plan and report use the configured
	// value and say so, with the estimate and its interval.
	clean := jobs
	jobs = map[string][]analysis.Job{}
	for k, key := range []string{"2026-07", "2026-08", "2026-09", "2026-10", "2026-11"} {
		n := []int{100, 150, 90, 160, 110}[k]
		jobs[key] = slices.Clone(clean[key][:min(n, len(clean[key]))])
		for i := len(jobs[key]); i < n; i++ {
			jobs[key] = append(jobs[key], gpuJob(fmt.Sprintf("n%d-%d", k, i), "ann", "bio", jobs[key][0].Submit.Add(time.Duration(i)*time.Minute)))
		}
	}
	r, p = rep(t, nov, analysis.DefaultConfig()), plan(t, nov, analysis.DefaultConfig())
	if r.Source != "default" || r.Reason != "too_uncertain" || r.Usable || !r.Estimated || r.Used != 0.3 ||
		!strings.Contains(r.Text, "too uncertain to plan on") || !reflect.DeepEqual(p, r) {
		t.Errorf("noisy months: report %+v\nplan %+v\nwant both the configured 30 %%, said too uncertain", r, p)
	}
	jobs = clean

	c, err := analysis.ParseConfig([]byte("[plan]\ngrowth = 0.1\n"), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	r, p = rep(t, nov, c), plan(t, nov, c)
	if r.Source != "configured" || p.Used != 0.1 || !reflect.DeepEqual(p, r) {
		t.Errorf("configured: report %+v, plan %+v", r, p)
	}
}
