package main

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// showJob is a fixture job for show: its scheduler record and, per GPU, a
// stream of readings fed through profile.GPU.Observe as the agent does.
type showJob struct {
	id, name, state string
	gres            string // ReqTRES
	gpus            int
	util, memGiB    func(i int) (uint32, bool)
	shared          bool
	xids            []uint64
	minutes         int
	cpus            int                // AllocCPUS; 0: unknown
	usage           slurmext.HostUsage // sacct's CPU and host-memory accounting
	notices         []profile.Notice   // decided on the node, saved with the profile
	// activity is what GPM measured at minute i (false: no reading, as on
	// a GPU without GPM).
	activity func(i int) (gpu.Activity, bool)
	// utilOf, when set, is GPU k's utilisation at minute i, in place of
	// util (the same on every GPU).
	utilOf func(k, i int) (uint32, bool)
	// node, model and cardGiB place the job on another node and GPU
	// model than gpu01's H100s (80 GiB).
	node, model string
	cardGiB     uint64
}

// showDB writes jobs through the real store, with fixed times, and
// returns its path.
func showDB(t *testing.T, jobs ...showJob) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "show.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Date(2026, 11, 3, 13, 0, 0, 0, time.UTC)
	for n, j := range jobs {
		begin := start.Add(time.Duration(n) * 24 * time.Hour)
		end := begin.Add(time.Duration(j.minutes) * time.Minute)
		node, model, cardGiB := cmp.Or(j.node, "gpu01"), cmp.Or(j.model, "NVIDIA H100 80GB HBM3"), cmp.Or(j.cardGiB, 80)
		p := profile.Job{
			Key:  profile.Key{Cluster: "lab", JobID: j.id, Node: node},
			User: "alice", UID: 1001, Account: "vision", Partition: "gpu",
			Start: begin, Status: profile.StatusRunning, Source: profile.SourceAgent,
			SampleInterval: time.Minute, Driver: "550.54.15", CUDADriver: "12.4",
		}
		for k := range j.gpus {
			d := gpu.Device{UUID: "GPU-" + j.id + "-" + string(rune('a'+k)), Minor: k, Name: model, MemoryTotal: cardGiB << 30}
			g := profile.NewGPU(d, k, begin, time.Minute, 0)
			energy := uint64(0)
			for i := range j.minutes {
				r := profile.Reading{Time: begin.Add(time.Duration(i) * time.Minute), TempC: gpu.Some(uint32(40 + i%30)), Shared: j.shared}
				u, ok := uint32(0), false
				if j.utilOf != nil {
					u, ok = j.utilOf(k, i)
				} else {
					u, ok = j.util(i)
				}
				if ok {
					r.Util = gpu.Some(u)
				}
				if j.activity != nil {
					if a, ok := j.activity(i); ok {
						r.Activity, r.ActivityScope = gpu.Some(a), profile.ActivityScopeGPU
					}
				}
				if m, ok := j.memGiB(i); ok {
					r.MemUsed = gpu.Some(uint64(m) << 30)
					if m > 0 {
						r.Processes = 1
					}
				}
				energy += 60 * 300_000 // 300 W for a minute, in mJ
				r.EnergyMJ = gpu.Some(energy)
				r.PowerMW = gpu.Some(uint32(300_000))
				g.Observe(r, time.Minute)
			}
			for i, x := range j.xids {
				g.AddXID(x, begin.Add(time.Duration(i+1)*time.Minute))
			}
			p.GPUs = append(p.GPUs, g)
		}
		p.LastSample = end
		p.ExitKnown = true
		p.Notices = j.notices
		p.Finish(end)
		if err := db.PutJob(ctx, p); err != nil {
			t.Fatal(err)
		}
		r := slurmext.JobRecord{
			Cluster: "lab", JobID: j.id, DisplayID: j.id, ArrayTaskID: -1, HetOffset: -1,
			Name: j.name, User: "alice", UID: 1001, Account: "vision", Partition: "gpu", QOS: "normal",
			State: slurmext.JobState(j.state), CancelledBy: -1, NodeList: node,
			Submit: begin.Add(-90 * time.Second), Eligible: begin.Add(-90 * time.Second), Start: begin, End: end,
			TimeLimit: 24 * time.Hour, ReqTRES: j.gres, AllocTRES: j.gres, Source: "sacct",
			CPUs: j.cpus, Usage: j.usage,
		}
		r.ReqGPUs, r.ReqGPUType, r.ReqShards = slurmext.GPUsFromTRES(r.ReqTRES)
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func steady(v uint32) func(int) (uint32, bool) { return func(int) (uint32, bool) { return v, true } }

// gpm is a GPM reading of a minute: SM, tensor and DRAM activity.
func gpm(sm, tensor, dram float64) gpu.Activity {
	return gpu.Activity{Interval: time.Minute, SM: gpu.Some(sm), Tensor: gpu.Some(tensor), DRAM: gpu.Some(dram)}
}

// TestShowGolden: show's text and JSON of a 2-GPU training job, a shard
// job, an idle allocation, a job Slurm killed for host memory (OOM) and
// an idle job with a sent notice and one held back by the daily cap,
// against golden files (go test ./cmd/gpuprof -run ShowGolden -update
// rewrites them). Times are in UTC so that the files hold on any host.
func TestShowGolden(t *testing.T) {
	t.Setenv("TZ", "UTC")
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	day5 := time.Date(2026, 11, 7, 13, 0, 0, 0, time.UTC) // the fifth job's start (see showDB)
	db := showDB(t,
		// 7001 has sacct's accounting: 2-02:24:00 of CPU time in 5 h on
		// 16 CPUs (3-08:00:00 of core time) is 63 %; 12.4 GiB of 128 GiB.
		showJob{id: "7001", name: "train_resnet50", state: "COMPLETED", gres: "billing=8,cpu=16,gres/gpu=2,mem=128G,node=1", gpus: 2, minutes: 300,
			util: func(i int) (uint32, bool) { return uint32(80 + i%15), true }, memGiB: steady(61), cpus: 16,
			activity: func(i int) (gpu.Activity, bool) { return gpm(float64(70+i%15), 55, 25), i > 0 },
			usage: slurmext.HostUsage{TotalCPU: 50*time.Hour + 24*time.Minute, TotalCPUValid: true,
				MemPeak: 12<<30 + 410<<20, MemPeakValid: true, ReqMem: 128 << 30, ReqMemValid: true}},
		showJob{id: "7002", name: "notebook-small", state: "COMPLETED", gres: "billing=1,cpu=2,gres/shard=1,mem=16G,node=1", gpus: 1, minutes: 120, shared: true,
			util: func(i int) (uint32, bool) { return uint32(10 + i%10), true }, memGiB: steady(6),
			activity: func(i int) (gpu.Activity, bool) { return gpm(40, 0, 10), i > 0 }},
		showJob{id: "7003", name: "forgotten-session", state: "TIMEOUT", gres: "billing=4,cpu=4,gres/gpu=1,mem=32G,node=1", gpus: 1, minutes: 240,
			util: steady(0), memGiB: steady(0)},
		// 7004 has a memory peak and no CPU time (its steps' TotalCPU
		// malformed, say); the request comes from ReqTRES.
		showJob{id: "7004", name: "preprocess\x1b[31m\r\nBcc: x", state: "OUT_OF_MEMORY", gres: "billing=4,cpu=8,gres/gpu=1,mem=32G,node=1", gpus: 1, minutes: 45,
			cpus: 8, usage: slurmext.HostUsage{MemPeak: 32 << 30, MemPeakValid: true},
			util: func(i int) (uint32, bool) { return uint32(30 + i%40), i%9 != 4 }, memGiB: func(i int) (uint32, bool) { return uint32(10 + i), true },
			xids: []uint64{31, 31, 43}},
		// 7005 asked for two GPUs and used neither: the agent sent the
		// unused-GPUs notice, then held the idle-job one back (the
		// user's daily cap), in the words and options notice.Describe
		// and the agent's cap record.
		showJob{id: "7005", name: "idle-pair", state: "COMPLETED", gres: "billing=8,cpu=8,gres/gpu=2,mem=64G,node=1", gpus: 2, minutes: 180,
			util: steady(0), memGiB: steady(0), notices: []profile.Notice{
				{Rule: profile.RuleUnusedGPUs, Time: day5.Add(45 * time.Minute), Since: day5.Add(15 * time.Minute), GPUs: []int{1},
					Recipient: "alice@example.org", Status: profile.NoticeSent,
					Evidence: "2 GPUs allocated, only one used; 1 idle for 00:30:00 (since 2026-11-07T13:15:00): GPU 1: no process, utilisation 0 %, memory 0 B",
					Fix:      "--gres=gpu:1"},
				{Rule: profile.RuleIdleJob, Time: day5.Add(90 * time.Minute), Since: day5, GPUs: []int{0, 1},
					Status:   profile.NoticeCapped,
					Evidence: "all 2 GPUs of the job idle for 01:30:00 (since 2026-11-07T13:00:00): GPU 0: no process, utilisation 0 %, memory 0 B; GPU 1: no process, utilisation 0 %, memory 0 B; no GPU work since the job started",
					Detail:   "3 notices sent to alice today from gpu01 (daily_cap 3)"},
			}},
		// 7006 is busy by the duty cycle (16 %) and not by its SMs
		// (0.02 %): a loop of tiny kernels, as measured on an H200
		// (docs/real-gpu.md). Its GPU failed twice (hardware XIDs).
		showJob{id: "7006", name: "tiny-kernels", state: "COMPLETED", gres: "billing=4,cpu=4,gres/gpu=1,mem=32G,node=1", gpus: 1, minutes: 60,
			util: steady(16), memGiB: steady(2), xids: []uint64{79, 48, 48},
			activity: func(i int) (gpu.Activity, bool) { return gpm(0.02, 0, 0.01), i > 0 }},
	)
	for _, id := range []string{"7001", "7002", "7003", "7004", "7005", "7006"} {
		t.Run(id, func(t *testing.T) {
			out, err := runCLI(t, "show", "--db", db, id)
			if err != nil {
				t.Fatalf("show %s: %v\n%s", id, err, out)
			}
			if strings.Contains(out, "\x1b") || strings.Contains(out, "\r") {
				t.Errorf("show %s lets a control character through:\n%q", id, out)
			}
			golden.RequireEqual(t, []byte(out))
		})
		t.Run(id+"_json", func(t *testing.T) {
			out, err := runCLI(t, "show", "--db", db, "--json", id)
			if err != nil {
				t.Fatalf("show --json %s: %v", id, err)
			}
			var v []cliview.JobJSON
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 || len(v[0].GPUs) == 0 {
				t.Fatalf("show --json %s: %v, %d jobs", id, err, len(v))
			}
			summary, _ := json.MarshalIndent(v[0].GPUs, "", "  ")
			golden.RequireEqual(t, summary)
		})
	}
	// --json carries the notices of each profile as the store keeps them,
	// oldest first.
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
		showJob{id: "7101", name: "small-eval", state: "COMPLETED", gres: gres, gpus: 1, minutes: 120,
			util: steady(8), memGiB: steady(6)},
		showJob{id: "7102", name: "infer", state: "COMPLETED", gres: gres, gpus: 1, minutes: 60,
			util: steady(70), memGiB: steady(20), node: "gpu02", model: "NVIDIA L4", cardGiB: 24},
		showJob{id: "7103", name: "big-eval", state: "COMPLETED", gres: gres, gpus: 1, minutes: 120,
			util: steady(8), memGiB: steady(30)},
		showJob{id: "7104", name: "finetune", state: "COMPLETED", gres: gres, gpus: 1, minutes: 60,
			util: steady(70), memGiB: steady(30), node: "gpu03", model: "NVIDIA A100-PCIE-40GB", cardGiB: 40},
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
		showJob{id: "7101", name: "a", state: "COMPLETED", gres: "cpu=4,gres/gpu=1,mem=8G,node=1", gpus: 1, minutes: 60, cpus: 4,
			util: steady(50), memGiB: steady(4),
			usage: slurmext.HostUsage{TotalCPU: 3 * time.Hour, TotalCPUValid: true, MemPeak: 6 << 30, MemPeakValid: true, ReqMem: 8 << 30, ReqMemValid: true}},
		showJob{id: "7102", name: "b", state: "COMPLETED", gres: "cpu=4,gres/gpu=1,node=1", gpus: 1, minutes: 60,
			util: steady(50), memGiB: steady(4)},
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
		showJob{id: "7101", state: "COMPLETED", gpus: 2, minutes: 10, util: steady(90), memGiB: steady(10),
			activity: func(i int) (gpu.Activity, bool) { return gpm(92.4, 89.7, 15.7), true }},
		showJob{id: "7102", state: "COMPLETED", gpus: 1, minutes: 10, util: steady(20), memGiB: steady(5), shared: true,
			activity: func(i int) (gpu.Activity, bool) { return gpm(40, 0, 10), true }},
		showJob{id: "7103", state: "COMPLETED", gpus: 1, minutes: 10, util: steady(50), memGiB: steady(5)},
		showJob{id: "7104", state: "COMPLETED", gpus: 1, minutes: 10, util: steady(16), memGiB: steady(1),
			activity: func(i int) (gpu.Activity, bool) { return gpm(0.02, 0, 0.01), true }},
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
