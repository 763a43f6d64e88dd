package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/internal/jobfixture"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// showDB writes jobs (jobfixture.Build) through the real store and
// returns its path.
func showDB(t *testing.T, jobs ...jobfixture.Job) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "show.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, b := range jobfixture.Build(jobs...) {
		if err := db.PutJob(ctx, b.Profile); err != nil {
			t.Fatal(err)
		}
		if err := db.PutSchedJob(ctx, b.Sched); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestShowThroughStore: gpuprof show prints of each of show's fixture
// jobs, written through the store and read back, what its renderer
// prints of the job as built (cliview.Show, whose goldens are
// cliview/testdata/TestShowGolden), and --json carries the same GPUs
// and each profile's notices as the store keeps them, oldest first.
func TestShowThroughStore(t *testing.T) {
	t.Setenv("TZ", "UTC")
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	jobs := jobfixture.ShowJobs()
	db := showDB(t, jobs...)
	c := analysis.DefaultConfig()
	for _, b := range jobfixture.Build(jobs...) {
		id := b.Sched.JobID
		v := store.JobView{Cluster: b.Sched.Cluster, JobID: id, Sched: &b.Sched, Profiles: []profile.Job{b.Profile}}
		t.Run(id, func(t *testing.T) {
			out, err := runCLI(t, "show", "--db", db, id)
			if err != nil {
				t.Fatalf("show %s: %v\n%s", id, err, out)
			}
			ref, _ := slurmext.ParseJobRef(id)
			var want bytes.Buffer
			cliview.Show(&want, ref, []store.JobView{v}, c, cliview.ShowCarbon{}, func(string) []analysis.GPUType { return nil }, time.Now())
			if out != want.String() {
				t.Errorf("show %s through the store:\n%s\nthe renderer of the job as built:\n%s", id, out, want.String())
			}
		})
		t.Run(id+"_json", func(t *testing.T) {
			out, err := runCLI(t, "show", "--db", db, "--json", id)
			if err != nil {
				t.Fatalf("show --json %s: %v", id, err)
			}
			var got []cliview.JobJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 || len(got[0].GPUs) == 0 {
				t.Fatalf("show --json %s: %v, %d jobs", id, err, len(got))
			}
			want := cliview.JobsJSON([]store.JobView{v}, c, time.Now())
			g, _ := json.Marshal(got[0].GPUs)
			w, _ := json.Marshal(want[0].GPUs)
			if !bytes.Equal(g, w) {
				t.Errorf("show --json %s GPUs through the store:\n%s\nas built:\n%s", id, g, w)
			}
		})
	}
	// --json carries the notices of each profile as the store keeps them,
	// oldest first.
	day5 := jobfixture.Start.Add(4 * 24 * time.Hour) // the fifth job's start
	out, err := runCLI(t, "show", "--db", db, "--json", "7005")
	if err != nil {
		t.Fatalf("show --json 7005: %v", err)
	}
	var v []struct {
		Profiles []struct {
			Node    string           `json:"node"`
			Notices []profile.Notice `json:"notices"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 || len(v[0].Profiles) != 1 {
		t.Fatalf("show --json 7005: %v, %+v", err, v)
	}
	got := v[0].Profiles[0].Notices
	if len(got) != 2 || got[0].Rule != profile.RuleUnusedGPUs || got[0].Status != profile.NoticeSent ||
		got[1].Rule != profile.RuleIdleJob || got[1].Status != profile.NoticeCapped || got[1].Detail == "" ||
		!got[0].Time.Equal(day5.Add(45*time.Minute)) {
		t.Errorf("show --json 7005 notices = %+v, want the sent unused_gpus notice, then the capped idle_job one", got)
	}
}

// TestShowSmallerGPUType: show names a smaller GPU type of the cluster
// for a whole-GPU job that barely used its H100 and whose memory peak
// fits a smaller card with the sharing rule's margin: the smallest that
// fits, from the GPUs the cluster's profiles saw (an L4 and an A100
// 40 GB beside the H100s). 7101 (6 GiB) also fits a shard: both, the
// shard first; 7103 (30 GiB) fits no shard and no L4: the A100. Goldens
// under testdata/ (-update rewrites them).
func TestShowSmallerGPUType(t *testing.T) {
	t.Setenv("TZ", "UTC")
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	gres := "billing=4,cpu=4,gres/gpu=1,mem=32G,node=1"
	db := showDB(t,
		jobfixture.Job{ID: "7101", Name: "small-eval", State: "COMPLETED", Gres: gres, GPUs: 1, Minutes: 120,
			Util: jobfixture.Steady(8), MemGiB: jobfixture.Steady(6)},
		jobfixture.Job{ID: "7102", Name: "infer", State: "COMPLETED", Gres: gres, GPUs: 1, Minutes: 60,
			Util: jobfixture.Steady(70), MemGiB: jobfixture.Steady(20), Node: "gpu02", Model: "NVIDIA L4", CardGiB: 24},
		jobfixture.Job{ID: "7103", Name: "big-eval", State: "COMPLETED", Gres: gres, GPUs: 1, Minutes: 120,
			Util: jobfixture.Steady(8), MemGiB: jobfixture.Steady(30)},
		jobfixture.Job{ID: "7104", Name: "finetune", State: "COMPLETED", Gres: gres, GPUs: 1, Minutes: 60,
			Util: jobfixture.Steady(70), MemGiB: jobfixture.Steady(30), Node: "gpu03", Model: "NVIDIA A100-PCIE-40GB", CardGiB: 40},
	)
	// The inventory is the GPUs of the month before the newest job
	// (inventoryWindow), whatever the clock says.
	for _, tt := range []struct{ id, want string }{
		{"7101", "#SBATCH --gres=gpu:l4:1"},
		{"7103", "#SBATCH --gres=gpu:a100:1"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			out, err := runCLI(t, "show", "--db", db, tt.id)
			if err != nil {
				t.Fatalf("show %s: %v\n%s", tt.id, err, out)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("show %s does not say %q:\n%s", tt.id, tt.want, out)
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// show --json carries sacct's accounting as the store has it, in the
// scheduler record: total CPU time, memory peak and request where
// imported, nothing where not (unknown, not 0).
func TestShowJSONHostUsage(t *testing.T) {
	db := showDB(t,
		jobfixture.Job{ID: "7101", Name: "a", State: "COMPLETED", Gres: "cpu=4,gres/gpu=1,mem=8G,node=1", GPUs: 1, Minutes: 60, CPUs: 4,
			Util: jobfixture.Steady(50), MemGiB: jobfixture.Steady(4),
			Usage: slurmext.HostUsage{TotalCPU: 3 * time.Hour, TotalCPUValid: true, MemPeak: 6 << 30, MemPeakValid: true, ReqMem: 8 << 30, ReqMemValid: true}},
		jobfixture.Job{ID: "7102", Name: "b", State: "COMPLETED", Gres: "cpu=4,gres/gpu=1,node=1", GPUs: 1, Minutes: 60,
			Util: jobfixture.Steady(50), MemGiB: jobfixture.Steady(4)},
	)
	for id, want := range map[string]slurmext.HostUsage{
		"7101": {TotalCPU: 3 * time.Hour, TotalCPUValid: true, MemPeak: 6 << 30, MemPeakValid: true, ReqMem: 8 << 30, ReqMemValid: true},
		"7102": {},
	} {
		out, err := runCLI(t, "show", "--db", db, "--json", id)
		if err != nil {
			t.Fatalf("show --json %s: %v", id, err)
		}
		var v []struct {
			Sched map[string]json.RawMessage `json:"sched"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 {
			t.Fatalf("show --json %s: %v", id, err)
		}
		raw, has := v[0].Sched["usage"]
		if want == (slurmext.HostUsage{}) {
			if has {
				t.Errorf("job %s: usage %s, want none (unknown)", id, raw)
			}
			continue
		}
		var got slurmext.HostUsage
		if err := json.Unmarshal(raw, &got); err != nil || got != want {
			t.Errorf("job %s: usage %s (%v), want %+v", id, raw, err, want)
		}
	}
}

// TestJobsActivityColumns: jobs --format's GPM columns: the mean over a
// job's GPUs with a reading, as UTIL (issue #30: one convention per
// table), "*" for a shared GPU's (the device's), "-" unknown, and small
// values kept (0.02 %, not 0).
func TestJobsActivityColumns(t *testing.T) {
	db := showDB(t,
		jobfixture.Job{ID: "7101", State: "COMPLETED", GPUs: 2, Minutes: 10, Util: jobfixture.Steady(90), MemGiB: jobfixture.Steady(10),
			Activity: func(i int) (gpu.Activity, bool) { return jobfixture.GPM(92.4, 89.7, 15.7), true }},
		jobfixture.Job{ID: "7102", State: "COMPLETED", GPUs: 1, Minutes: 10, Util: jobfixture.Steady(20), MemGiB: jobfixture.Steady(5), Shared: true,
			Activity: func(i int) (gpu.Activity, bool) { return jobfixture.GPM(40, 0, 10), true }},
		jobfixture.Job{ID: "7103", State: "COMPLETED", GPUs: 1, Minutes: 10, Util: jobfixture.Steady(50), MemGiB: jobfixture.Steady(5)},
		jobfixture.Job{ID: "7104", State: "COMPLETED", GPUs: 1, Minutes: 10, Util: jobfixture.Steady(16), MemGiB: jobfixture.Steady(1),
			Activity: func(i int) (gpu.Activity, bool) { return jobfixture.GPM(0.02, 0, 0.01), true }},
	)
	out, err := runCLI(t, "jobs", "--db", db, "--format=jobid,util,sm,tensor,dram")
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	want := `JOBID UTIL     SM TENSOR   DRAM
7104  16 % 0.02 %    0 % 0.01 %
7103  50 %      -      -      -
7102  20 %  40 %*   0 %*  10 %*
7101  90 %   92 %   90 %   16 %
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
