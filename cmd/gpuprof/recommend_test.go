package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

const testH100 = "NVIDIA H100 80GB HBM3"

// fillSmallJobs writes n finished one-GPU jobs of 2 h on two 4×H100 nodes,
// each peaking at 6 GiB of 80 at 15 % utilisation and asking for 3 h:
// small, quiet work that shards fit. Both halves are stored: the profile
// the agent writes and the scheduler's record.
// smallJobsSince is where fillSmallJobs's jobs begin: --since it
// analyses their own span.
const smallJobsSince = "2026-11-01T00:00:00Z"

func fillSmallJobs(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	uid := os.Getuid() // a non-root run sees only its own jobs
	users := []string{"sam", "sue", "sid"}
	for i := range n {
		node := fmt.Sprintf("gpu%02d", 1+i%2)
		start := base.Add(time.Duration(i) * 3 * time.Hour / 2)
		end := start.Add(2 * time.Hour)
		id := fmt.Sprint(1000 + i)
		hist := make([]uint32, 101)
		hist[15] = 120
		g := profile.GPU{
			UUID: fmt.Sprintf("GPU-%s-%d", node, (i/2)%4), SlurmIndex: (i / 2) % 4, Minor: (i / 2) % 4,
			Model: testH100, MemoryTotal: 80 << 30,
			Samples: 120, UtilSum: 15 * 120, UtilMax: 15, UtilHist: hist,
			MemSamples: 120, MemPeak: 6 << 30, MemActive: 120, ProcSamples: 120,
			FirstSample: start, LastSample: end,
		}
		p := profile.Job{
			Key:  profile.Key{Cluster: "c1", JobID: id, Node: node},
			User: users[i%3], UID: uid, Account: "nlp", Partition: "gpu",
			Start: start, End: end, Status: profile.StatusFinished, Source: profile.SourceAgent,
			ExitKnown: true, SampleInterval: time.Minute, LastSample: end,
			GPUs: []profile.GPU{g},
		}
		if err := db.PutJob(ctx, p); err != nil {
			t.Fatalf("PutJob: %v", err)
		}
		r := slurmext.JobRecord{
			Cluster: "c1", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1,
			Name: "eval", User: users[i%3], UID: uid, Account: "nlp", Partition: "gpu",
			State: "COMPLETED", CancelledBy: -1,
			Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start, End: end,
			TimeLimit: 3 * time.Hour, ReqGPUs: 1,
		}
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatalf("PutSchedJob: %v", err)
		}
	}
	return path
}

// runCLI runs the gpuprof command line against a database and returns
// standard output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	// An explicit, empty configuration file keeps the host's out of the test.
	cfg := filepath.Join(t.TempDir(), "gpuprof.toml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	root.SetArgs(append([]string{"--config", cfg}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestRecommendCommand(t *testing.T) {
	// --since: the data's own span (5 days, too short to plan on), not
	// the default window (the last complete month with jobs: all of
	// November, TestDefaultWindowOneRule).
	db := fillSmallJobs(t, 80)

	human, err := runCLI(t, "--db", db, "recommend", "--since", smallJobsSince)
	if err != nil {
		t.Fatalf("recommend: %v", err)
	}
	for _, want := range []string{
		"Recommendations from 80 jobs (80 with GPU readings) on 2 GPU nodes.",
		"Share h100 GPUs", "Change: ", "Why:", "Expected effect: not simulated (not enough data: 5-00:30:00 of data (at least 7-00:00:00 needed, plan.min_window)).",
		"Rationale: ", "Confidence: ",
		"gres.conf:", "NodeName=gpu01 Name=shard Count=",
		"slurm.conf:", "PartitionName=shared Nodes=gpu01,gpu02 ",
		"Rules that found nothing to change:", "Plan verdict (gpuprof plan has the whole plan): Not enough data to plan",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("human output lacks %q:\n%s", want, human)
		}
	}

	emit, err := runCLI(t, "--db", db, "recommend", "--since", smallJobsSince, "--emit", "slurm")
	if err != nil {
		t.Fatalf("recommend --emit slurm: %v", err)
	}
	for _, want := range []string{
		"# sacctmgr: ", "sacctmgr -i add qos gpu-shared\n",
		"# gres.conf: ", "NodeName=gpu02 Name=shard Count=",
		"GresTypes=gpu,shard\n",
	} {
		if !strings.Contains(emit, want) {
			t.Errorf("--emit slurm lacks %q:\n%s", want, emit)
		}
	}
	// --emit slurm is exactly analysis.EmitSlurm of the same analysis: the
	// text e2e's TestRecommendationsAcceptedBySlurm applies to a real Slurm.
	if want := analysis.EmitSlurm(analyseDB(t, db).Recommendations); emit != want {
		t.Errorf("--emit slurm printed\n%s\nwant analysis.EmitSlurm's\n%s", emit, want)
	}

	js, err := runCLI(t, "--db", db, "recommend", "--since", smallJobsSince, "--json")
	if err != nil {
		t.Fatalf("recommend --json: %v", err)
	}
	var back struct {
		Nodes []struct {
			Name string `json:"name"`
			GPUs int    `json:"gpus"`
		} `json:"nodes"`
		Recommendations []struct {
			Kind   string `json:"kind"`
			Config []struct {
				Target string `json:"target"`
				Text   string `json:"text"`
			} `json:"config"`
		} `json:"recommendations"`
		NoChange []struct {
			Rule string `json:"rule"`
		} `json:"no_change"`
	}
	if err := json.Unmarshal([]byte(js), &back); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js)
	}
	if len(back.Nodes) != 2 || back.Nodes[0].Name != "gpu01" || back.Nodes[0].GPUs != 4 {
		t.Errorf("nodes = %+v, want gpu01 and gpu02 with 4 GPUs each", back.Nodes)
	}
	shards := false
	for _, r := range back.Recommendations {
		if r.Kind == "gpu_shards" && len(r.Config) > 0 {
			shards = true
		}
	}
	if !shards {
		t.Errorf("JSON has no gpu_shards recommendation with configuration:\n%s", js)
	}
	if back.NoChange == nil {
		t.Errorf("no_change missing from the JSON:\n%s", js)
	}
}

func TestRecommendNoJobs(t *testing.T) {
	db := fillSmallJobs(t, 0)
	out, err := runCLI(t, "--db", db, "recommend")
	if err != nil {
		t.Fatalf("recommend: %v", err)
	}
	if !strings.Contains(out, "No change is justified by the data.") {
		t.Errorf("empty database: got\n%s", out)
	}
	js, err := runCLI(t, "--db", db, "recommend", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js, `"recommendations": []`) || !strings.Contains(js, `"nodes": []`) {
		t.Errorf("empty database JSON should have empty lists, got\n%s", js)
	}
}

func TestRecommendFlagErrors(t *testing.T) {
	db := fillSmallJobs(t, 0)
	tests := []struct {
		name string
		args []string
	}{
		{"unknown emit format", []string{"recommend", "--emit", "yaml"}},
		{"emit and json", []string{"recommend", "--emit", "slurm", "--json"}},
		{"bad since", []string{"recommend", "--since", "last tuesday"}},
		{"bad growth", []string{"plan", "--growth", "lots"}},
		{"ambiguous growth", []string{"plan", "--growth", "30"}},
		{"bad horizon", []string{"plan", "--horizon", "12"}},
		{"headroom 100%", []string{"plan", "--headroom", "100%"}},
		{"negative new demand", []string{"plan", "--new-demand", "-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"--db", db}, tt.args...)...)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Errorf("%v: got %v, want a usage error", tt.args, err)
			}
		})
	}
}

func TestPlanCommand(t *testing.T) {
	// --since: the data's own span, as in TestRecommendCommand.
	db := fillSmallJobs(t, 80)
	out, err := runCLI(t, "--db", db, "plan", "--since", smallJobsSince, "--growth", "30%", "--horizon", "12mo", "--new-demand", "2", "--headroom", "20%")
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	for _, want := range []string{
		"Capacity plan: target p95 wait ≤ 01:00:00 in every partition and GPU model; growth 30.0 % a year, horizon 12 months, new demand 2 GPUs, lead time 3 months.",
		"Cross-check by averages (Little's law", "headroom 20.0 %",
		"CLASS", "λ (JOBS/H)", "L = λ·S·GPUS",
		"C_now    = Σ L = ", "C_future = C_now·(1+g)^(T/12) + C_new = ", "·(1+0.30)^(12/12) + 2 = ",
		"Q_safe   = 1 − headroom = 1 − 0.20 = 0.80",
		"G        = ceil(C_future / Q_safe) = ceil(",
		"GPUs now = 8", "Verdict: Not enough data to plan: 5-00:30:00 of data (at least 7-00:00:00 needed, plan.min_window).", "Measured:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}

	js, err := runCLI(t, "--db", db, "plan", "--since", smallJobsSince, "--json", "--growth", "0.5", "--horizon", "18mo")
	if err != nil {
		t.Fatalf("plan --json: %v", err)
	}
	var back struct {
		Plan struct {
			Params struct {
				Growth float64 `json:"growth"`
				Months int     `json:"months"`
			} `json:"params"`
			CNow        float64 `json:"c_now"`
			CFuture     float64 `json:"c_future"`
			GPUsNeeded  int     `json:"gpus_needed"`
			CurrentGPUs int     `json:"current_gpus"`
			Constraint  string  `json:"constraint"`
		} `json:"plan"`
		Simulated struct {
			Verdict struct {
				Code string `json:"code"`
				Text string `json:"text"`
			} `json:"verdict"`
		} `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(js), &back); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js)
	}
	p := back.Plan
	if p.Params.Growth != 0.5 || p.Params.Months != 18 || p.CurrentGPUs != 8 || p.Constraint == "" {
		t.Errorf("plan JSON = %+v, want growth 0.5, 18 months, 8 GPUs now and a constraint", p)
	}
	if v := back.Simulated.Verdict; v.Code == "" || v.Text == "" {
		t.Errorf("plan JSON simulated verdict = %+v, want a code and its words", v)
	}
	// 80 jobs of 2 h on one GPU, one every 1.5 h: C_now is GPU-hours over
	// the period, 160 h / (79·1.5 h + 2 h) = 1.3220…
	if want := 160.0 / (79*1.5 + 2); p.CNow < want-1e-6 || p.CNow > want+1e-6 {
		t.Errorf("c_now = %v, want %v", p.CNow, want)
	}
}

// analyseDB runs the analysis on a database the way the commands do.
func analyseDB(t *testing.T, path string) analysis.Findings {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	views, err := db.ReaderFor(store.System).ListViews(context.Background(), store.ViewFilter{WithSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := analysis.Analyse(inputFromViews(views), analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRecommendNoCodes: the recommendations' prose carries no rule codes
// ("sharing.candidates:", "debug_partition:"); --json has them.
func TestRecommendNoCodes(t *testing.T) {
	out, err := runCLI(t, "--db", fillSmallJobs(t, 80), "recommend")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"sharing.candidates:", "user.shard:", "debug_partition:", "idle_account:"} {
		if strings.Contains(out, code) {
			t.Errorf("output names %q:\n%s", code, out)
		}
	}
}
