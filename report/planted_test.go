package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
)

// October 2026 in UTC, the planted month's window.
var october = analysis.Window{
	From: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
	To:   time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
}

const (
	plantedH100 = "NVIDIA H100 80GB HBM3"
	plantedA100 = "NVIDIA A100-SXM4-40GB"
)

// plantedInput is a fixed month of planted jobs: long training on H100s,
// small quiet evaluation runs (sharing candidates), queued work on A100s,
// a group known only from sacct, failed and timed-out runs and a
// framework that preallocates its GPUs' memory. The inventory is two
// H100 nodes and one A100 node.
func plantedInput() analysis.Input {
	spec := analysis.PlantSpec{
		Cluster: "planted", Start: october.From, Days: 31,
		Groups: []analysis.PlantGroup{
			{Users: []string{"ann", "bob"}, Account: "ml", Name: "train", Jobs: 60,
				Duration: 6 * time.Hour, Jitter: 0.2, LimitFactor: 1.3, Wait: 20 * time.Minute,
				VRAMFrac: 0.6, VRAMJitter: 0.1, Util: 80, UtilJitter: 10, IOWait: 0.02},
			{Users: []string{"sam", "sue"}, Account: "nlp", Name: "eval", Jobs: 80,
				Duration: 2 * time.Hour, Jitter: 0.1, LimitFactor: 3, Wait: 5 * time.Minute,
				VRAMFrac: 0.06, VRAMJitter: 0.02, Util: 10, UtilJitter: 5},
			{Users: []string{"cat"}, Account: "bio", Partition: "a100", Name: "fold", Jobs: 40,
				Model: plantedA100, Card: 40 << 30, GPUs: 2, Duration: 3 * time.Hour, Jitter: 0.3,
				Wait: 2 * time.Hour, VRAMFrac: 0.7, VRAMJitter: 0.2, Util: 45, UtilJitter: 15},
			{Users: []string{"dan"}, Account: "chem", Name: "md_sim", Jobs: 20, GPUs: 2,
				NoGPUData: true, Duration: 10 * time.Hour, Jitter: 0.2, Wait: time.Hour},
			{Users: []string{"eve"}, Account: "ml", Name: "crashy", Jobs: 15, State: "FAILED",
				Duration: 40 * time.Minute, Jitter: 0.5, VRAMFrac: 0.3, Util: 50, UtilJitter: 20},
			{Users: []string{"eve"}, Account: "ml", Name: "longrun", Jobs: 8, State: "TIMEOUT",
				Duration: 12 * time.Hour, LimitFactor: 1, VRAMFrac: 0.5, Util: 60, UtilJitter: 10},
			{Users: []string{"fay"}, Account: "bio", Name: "jax_fit", Jobs: 25,
				Duration: 4 * time.Hour, Jitter: 0.2, Preallocated: true, Util: 35, UtilJitter: 10},
		},
	}
	nodes := []analysis.Node{
		{Name: "gpu01", GPUModel: plantedH100, GPUs: 4, MemoryTotal: 80 << 30, Partitions: []string{"gpu"}},
		{Name: "gpu02", GPUModel: plantedH100, GPUs: 4, MemoryTotal: 80 << 30, Partitions: []string{"gpu"}},
		{Name: "a100-01", GPUModel: plantedA100, GPUs: 4, MemoryTotal: 40 << 30, Partitions: []string{"a100"}},
	}
	return analysis.Input{Jobs: analysis.Plant(spec, 2026), Nodes: nodes}
}

// plantedData runs the real analysis over the planted month and returns
// the report's data next to the analysis outputs it was built from.
func plantedData(t *testing.T) (Data, analysis.Workload, analysis.Findings) {
	t.Helper()
	in := plantedInput()
	c := analysis.DefaultConfig()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	// The simulated plan, as the report command makes it: after Analyse,
	// setting each recommendation's simulated effect.
	pc := c.Plan
	sp, err := capacity.SimulatePlan(in, &f, capacity.SimPlanParams{
		Plan: analysis.PlanParams{Growth: pc.Growth, Months: pc.HorizonMonths, NewDemand: pc.NewDemand, Headroom: pc.Headroom}}, c)
	if err != nil {
		t.Fatal(err)
	}
	f.Jobs = nil
	w := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: october}, c)
	d := Data{
		Title:     "GPU workload report, October 2026",
		Cluster:   "planted",
		Month:     "2026-10",
		Generated: time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC),
		Workload:  w,
		Findings:  f,
		SimPlan:   &sp,
		Earlier: []MonthHeadline{{Month: "2026-09", Headline: analysis.Headline{
			Jobs: 200, GPUJobs: 190, Users: 7, Accounts: 4, AllocatedGPUHours: 1500.25}}},
		Config:  c,
		Sources: Sources{Database: "/var/lib/gpuprof/planted.db"},
		// The planted month has no notices: the tally of none.
		Notices: analysis.NewNoticeTally(october).Summary(),
	}
	return d, w, f
}

// The planted month must exercise what the golden files are meant to pin:
// two GPU models, a group without GPU data, lost GPU-hours, preallocated
// GPUs and at least one recommendation with configuration lines.
func TestPlantedSetup(t *testing.T) {
	_, w, f := plantedData(t)
	if len(w.Models) < 2 {
		t.Errorf("models = %+v, want the H100 and the A100", w.Models)
	}
	if f.Summary.WithoutGPUData == 0 || f.Summary.WithGPUData == 0 {
		t.Errorf("with/without GPU data = %d/%d, want both", f.Summary.WithGPUData, f.Summary.WithoutGPUData)
	}
	if len(w.Lost) < 2 || w.LostGPUHours <= 0 {
		t.Errorf("lost = %+v, want FAILED and TIMEOUT", w.Lost)
	}
	prealloc := 0
	for _, m := range w.Models {
		prealloc += m.Preallocated
	}
	if prealloc == 0 {
		t.Error("no preallocated GPU counted")
	}
	lines := 0
	for _, r := range f.Recommendations {
		lines += len(r.Config)
	}
	if len(f.Recommendations) == 0 || lines == 0 {
		t.Errorf("recommendations = %d with %d config lines, want some of each", len(f.Recommendations), lines)
	}
	if f.Plan.Constraint == "" || f.Plan.Constraint == analysis.ConstraintNoData {
		t.Errorf("cross-check constraint %q, want one from data", f.Plan.Constraint)
	}
	d, _, _ := plantedData(t)
	if sp := d.SimPlan; sp == nil || !sp.Simulated || sp.Verdict.Text == "" || len(sp.Effects) != len(f.Recommendations) {
		t.Errorf("planted month's simulated plan = %+v, want a replayed plan with one effect per recommendation", sp)
	}
}

func TestPlantedGolden(t *testing.T) {
	d, _, _ := plantedData(t)
	out := renderAll(t, d)
	golden(t, "planted.md.golden", out["md"])
	golden(t, "planted.json.golden", out["json"])
	// The analysis is deterministic: a second run renders the same bytes.
	d2, _, _ := plantedData(t)
	if again := renderAll(t, d2); again["md"] != out["md"] || again["json"] != out["json"] {
		t.Error("two runs over the same planted month render differently")
	}
}

// plantedDist is analysis.Dist as the JSON report writes it.
type plantedDist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Max  float64 `json:"max"`
}

// plantedJSON is the part of the JSON report that TestPlantedNumbers
// checks, decoded by the documented field names (docs/json.md).
type plantedJSON struct {
	Schema  string   `json:"schema"`
	Month   string   `json:"month"`
	Missing []string `json:"missing"`
	Sources struct {
		Jobs           int `json:"jobs"`
		GPUJobs        int `json:"gpu_jobs"`
		WithGPUData    int `json:"with_gpu_data"`
		WithoutGPUData int `json:"without_gpu_data"`
	} `json:"sources"`
	Workload struct {
		Headline struct {
			Jobs              int         `json:"jobs"`
			GPUJobs           int         `json:"gpu_jobs"`
			Users             int         `json:"users"`
			Accounts          int         `json:"accounts"`
			AllocatedGPUHours float64     `json:"allocated_gpu_hours"`
			MeasuredGPUHours  float64     `json:"measured_gpu_hours"`
			UsedGPUHours      float64     `json:"used_gpu_hours"`
			Utilisation       float64     `json:"utilisation"`
			Coverage          float64     `json:"coverage"`
			IdleGPUHours      float64     `json:"idle_gpu_hours"`
			VRAMPeakFrac      plantedDist `json:"vram_peak_frac"`
			VRAMHeadroom      float64     `json:"vram_headroom"`
			CapacityGPUHours  float64     `json:"capacity_gpu_hours"`
			Occupancy         float64     `json:"occupancy"`
		} `json:"headline"`
		Models []struct {
			Model        string  `json:"model"`
			GPUHours     float64 `json:"gpu_hours"`
			Preallocated int     `json:"preallocated"`
		} `json:"models"`
		Users []struct {
			Name     string  `json:"name"`
			GPUHours float64 `json:"gpu_hours"`
		} `json:"users"`
		Lost []struct {
			State    string  `json:"state"`
			Jobs     int     `json:"jobs"`
			GPUHours float64 `json:"gpu_hours"`
		} `json:"lost"`
		LostGPUHours float64 `json:"lost_gpu_hours"`
	} `json:"workload"`
	Summary struct {
		GPUHours float64 `json:"gpu_hours"`
		ByClass  []struct {
			Class    string  `json:"class"`
			Jobs     int     `json:"jobs"`
			GPUHours float64 `json:"gpu_hours"`
		} `json:"by_class"`
		Partitions []struct {
			Partition string      `json:"partition"`
			Jobs      int         `json:"jobs"`
			GPUHours  float64     `json:"gpu_hours"`
			Wait      plantedDist `json:"wait_s"`
			Run       plantedDist `json:"run_s"`
		} `json:"partitions"`
	} `json:"summary"`
	ProfilesTotal   int `json:"profiles_total"`
	Recommendations []struct {
		ID         string  `json:"id"`
		Kind       string  `json:"kind"`
		Confidence float64 `json:"confidence"`
		Config     []struct {
			Target string `json:"target"`
			Text   string `json:"text"`
		} `json:"config"`
	} `json:"recommendations"`
	Plan struct {
		CNow        float64 `json:"c_now"`
		CFuture     float64 `json:"c_future"`
		GPUsNeeded  int     `json:"gpus_needed"`
		CurrentGPUs int     `json:"current_gpus"`
		Constraint  string  `json:"constraint"`
	} `json:"plan"`
	Earlier []struct {
		Month    string `json:"month"`
		Headline struct {
			AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
		} `json:"headline"`
	} `json:"earlier"`
}

// TestPlantedNumbers decodes the JSON report of the planted month and
// checks its numbers are the analysis' own, so the report can never
// compute a number differently from analysis.Analyse and
// analysis.SummariseWorkload.
func TestPlantedNumbers(t *testing.T) {
	d, w, f := plantedData(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var got plantedJSON
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	eq := func(name string, got, want float64) {
		t.Helper()
		if math.IsNaN(want) || math.IsInf(want, 0) || math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("%s = %v, analysis says %v", name, got, want)
		}
	}
	eqInt := func(name string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, analysis says %d", name, got, want)
		}
	}
	eqDist := func(name string, got plantedDist, want analysis.Dist) {
		t.Helper()
		eqInt(name+".n", got.N, want.N)
		eq(name+".mean", got.Mean, want.Mean)
		eq(name+".p50", got.P50, want.P50)
		eq(name+".p95", got.P95, want.P95)
		eq(name+".max", got.Max, want.Max)
	}

	if got.Schema != Schema || got.Month != "2026-10" {
		t.Errorf("schema %q month %q", got.Schema, got.Month)
	}
	h, wh := got.Workload.Headline, w.Headline
	eqInt("jobs", h.Jobs, wh.Jobs)
	eqInt("gpu_jobs", h.GPUJobs, wh.GPUJobs)
	eqInt("users", h.Users, wh.Users)
	eqInt("accounts", h.Accounts, wh.Accounts)
	eq("allocated_gpu_hours", h.AllocatedGPUHours, wh.AllocatedGPUHours)
	eq("measured_gpu_hours", h.MeasuredGPUHours, wh.MeasuredGPUHours)
	eq("used_gpu_hours", h.UsedGPUHours, wh.UsedGPUHours)
	eq("utilisation", h.Utilisation, wh.Utilisation)
	eq("coverage", h.Coverage, wh.Coverage)
	eq("idle_gpu_hours", h.IdleGPUHours, wh.IdleGPUHours)
	eqDist("vram_peak_frac", h.VRAMPeakFrac, wh.VRAMPeakFrac)
	eq("vram_headroom", h.VRAMHeadroom, wh.VRAMHeadroom)
	eq("capacity_gpu_hours", h.CapacityGPUHours, wh.CapacityGPUHours)
	eq("occupancy", h.Occupancy, wh.Occupancy)
	// The planted month has real numbers, not zeros passed through.
	if wh.AllocatedGPUHours <= 0 || wh.UsedGPUHours <= 0 || wh.Utilisation <= 0 || wh.CapacityGPUHours <= 0 {
		t.Errorf("setup: headline %+v has zeros", wh)
	}

	eqInt("sources.jobs", got.Sources.Jobs, f.Summary.Jobs)
	eqInt("sources.gpu_jobs", got.Sources.GPUJobs, f.Summary.GPUJobs)
	eqInt("sources.with_gpu_data", got.Sources.WithGPUData, f.Summary.WithGPUData)
	eqInt("sources.without_gpu_data", got.Sources.WithoutGPUData, f.Summary.WithoutGPUData)

	if len(got.Workload.Models) != len(w.Models) {
		t.Fatalf("%d models, analysis has %d", len(got.Workload.Models), len(w.Models))
	}
	for i, m := range w.Models {
		g := got.Workload.Models[i]
		if g.Model != m.Model {
			t.Errorf("model %d = %q, analysis has %q", i, g.Model, m.Model)
		}
		eq("models."+m.Model+".gpu_hours", g.GPUHours, m.GPUHours)
		eqInt("models."+m.Model+".preallocated", g.Preallocated, m.Preallocated)
	}
	if len(got.Workload.Users) != len(w.Users) {
		t.Fatalf("%d users, analysis has %d", len(got.Workload.Users), len(w.Users))
	}
	for i, u := range w.Users {
		g := got.Workload.Users[i]
		if g.Name != u.Name {
			t.Errorf("user %d = %q, analysis has %q", i, g.Name, u.Name)
		}
		eq("users."+u.Name+".gpu_hours", g.GPUHours, u.GPUHours)
	}

	eq("lost_gpu_hours", got.Workload.LostGPUHours, w.LostGPUHours)
	if len(got.Workload.Lost) != len(w.Lost) {
		t.Fatalf("lost = %+v, analysis has %+v", got.Workload.Lost, w.Lost)
	}
	for i, l := range w.Lost {
		g := got.Workload.Lost[i]
		if g.State != string(l.State) {
			t.Errorf("lost %d = %q, analysis has %q", i, g.State, l.State)
		}
		eqInt("lost."+string(l.State)+".jobs", g.Jobs, l.Jobs)
		eq("lost."+string(l.State)+".gpu_hours", g.GPUHours, l.GPUHours)
	}

	eq("summary.gpu_hours", got.Summary.GPUHours, f.Summary.GPUHours)
	if len(got.Summary.ByClass) != len(f.Summary.ByClass) {
		t.Fatalf("%d classes, analysis has %d", len(got.Summary.ByClass), len(f.Summary.ByClass))
	}
	for i, c := range f.Summary.ByClass {
		g := got.Summary.ByClass[i]
		if g.Class != c.Class.String() {
			t.Errorf("class %d = %q, analysis has %q", i, g.Class, c.Class)
		}
		eqInt("by_class."+g.Class+".jobs", g.Jobs, c.Jobs)
		eq("by_class."+g.Class+".gpu_hours", g.GPUHours, c.GPUHours)
	}
	if len(got.Summary.Partitions) != len(f.Summary.Partitions) || len(f.Summary.Partitions) < 2 {
		t.Fatalf("partitions = %+v, analysis has %d (want at least 2)", got.Summary.Partitions, len(f.Summary.Partitions))
	}
	for i, p := range f.Summary.Partitions {
		g := got.Summary.Partitions[i]
		if g.Partition != p.Partition {
			t.Errorf("partition %d = %q, analysis has %q", i, g.Partition, p.Partition)
		}
		eqInt("partition "+p.Partition+" jobs", g.Jobs, p.Jobs)
		eq("partition "+p.Partition+" gpu_hours", g.GPUHours, p.GPUHours)
		eqDist("partition "+p.Partition+" wait_s", g.Wait, p.Wait)
		eqDist("partition "+p.Partition+" run_s", g.Run, p.Run)
		if p.Wait.N == 0 || p.Wait.P95 <= 0 || p.Run.P50 <= 0 {
			t.Errorf("setup: partition %q has no waits or runs: %+v", p.Partition, p)
		}
	}

	eqInt("profiles_total", got.ProfilesTotal, len(f.Profiles))
	if len(got.Recommendations) != len(f.Recommendations) {
		t.Fatalf("%d recommendations, analysis has %d", len(got.Recommendations), len(f.Recommendations))
	}
	for i, r := range f.Recommendations {
		g := got.Recommendations[i]
		if g.ID != r.ID || g.Kind != r.Kind {
			t.Errorf("recommendation %d = %s/%s, analysis has %s/%s", i, g.ID, g.Kind, r.ID, r.Kind)
		}
		eq("recommendation "+r.ID+" confidence", g.Confidence, r.Confidence)
		if len(g.Config) != len(r.Config) {
			t.Errorf("recommendation %s: %d config lines, analysis has %d", r.ID, len(g.Config), len(r.Config))
			continue
		}
		for k, l := range r.Config {
			if g.Config[k].Target != l.Target || g.Config[k].Text != l.Text {
				t.Errorf("recommendation %s line %d = %+v, analysis has %+v", r.ID, k, g.Config[k], l)
			}
		}
	}

	p := f.Plan
	if got.Plan.Constraint != p.Constraint {
		t.Errorf("plan verdict %q, analysis has %q", got.Plan.Constraint, p.Constraint)
	}
	eqInt("plan.gpus_needed", got.Plan.GPUsNeeded, p.GPUsNeeded)
	eqInt("plan.current_gpus", got.Plan.CurrentGPUs, p.CurrentGPUs)
	eq("plan.c_now", got.Plan.CNow, p.CNow)
	eq("plan.c_future", got.Plan.CFuture, p.CFuture)

	if len(got.Earlier) != 1 || got.Earlier[0].Month != "2026-09" {
		t.Fatalf("earlier = %+v", got.Earlier)
	}
	eq("earlier allocated", got.Earlier[0].Headline.AllocatedGPUHours, d.Earlier[0].Headline.AllocatedGPUHours)
	for _, m := range got.Missing {
		if m == missingNoGPUData || m == missingNoJobs || m == missingNoEarlier || m == missingNoCapacity {
			t.Errorf("missing lists %q for a month that has it", m)
		}
	}
}

// The Markdown shows the analysis' headline numbers in the report's
// number format.
func TestPlantedMarkdownNumbers(t *testing.T) {
	d, w, f := plantedData(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	h := w.Headline
	for _, want := range []string{
		"| GPU-hours allocated | " + present.GPUHours(h.AllocatedGPUHours) + " |",
		"| GPU-hours used | " + present.GPUHours(h.UsedGPUHours) + " |",
		"| Utilisation (GPU-hour weighted) | " + present.Percent(h.Utilisation) + " |",
		"| GPU-hours lost (failed, timed out, preempted, …; not cancelled) | " + present.GPUHours(w.LostGPUHours) + " |",
		"GPUs needed (keeping " + present.Percent(f.Plan.Params.Headroom) + " free) | " + present.Int(f.Plan.GPUsNeeded) + " |",
		"| 2026-09 | 200 | 1,500 | — | — | — | — | 0.0 | unknown |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// The formatter itself: one decimal below 1,000, thousands separators.
	if h.AllocatedGPUHours >= 1000 && !strings.Contains(present.GPUHours(h.AllocatedGPUHours), ",") {
		t.Errorf("hours(%v) = %q, want thousands separators", h.AllocatedGPUHours, present.GPUHours(h.AllocatedGPUHours))
	}
	for _, p := range f.Summary.Partitions {
		w50, w95 := distCells(p.Wait, present.Seconds)
		if !strings.Contains(md, "| "+partitionName(p.Partition)+" | "+present.Int(p.Jobs)+" | "+present.GPUHours(p.GPUHours)+" | "+present.Int(p.Wait.N)+" | "+w50+" | "+w95+" |") {
			t.Errorf("Markdown lacks partition %q's row with waits %s / %s", p.Partition, w50, w95)
		}
	}
	for _, r := range f.Recommendations {
		for _, l := range r.Config {
			if !strings.Contains(md, l.Text) {
				t.Errorf("Markdown lacks config line %q", l.Text)
			}
		}
	}
}
