package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// runningDB holds one job that runs on gpu01 with one GPU in use and no
// scheduler record (jobcomp writes it at the end): what the agent has
// from the prolog.
func runningDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "running.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now().Add(-30 * time.Minute).Truncate(time.Second)
	p := profile.Job{
		Key:  profile.Key{Cluster: "lab", JobID: "8101", Node: "gpu01"},
		User: "alice", UID: 1001, Account: "vision", Partition: "gpu-long",
		Start: start, Status: profile.StatusRunning, Source: profile.SourceAgent, SampleInterval: time.Minute,
	}
	g := profile.NewGPU(gpu.Device{UUID: "GPU-8101-a", Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}, 0, start, time.Minute, 0)
	for i := range 30 {
		g.Observe(profile.Reading{Time: start.Add(time.Duration(i) * time.Minute), Util: gpu.Some(uint32(70)),
			MemUsed: gpu.Some(uint64(20) << 30), Processes: 1}, time.Minute)
	}
	p.GPUs = []profile.GPU{g}
	p.LastSample = start.Add(29 * time.Minute)
	if err := db.PutJob(ctx, p); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunningJobShowsSlurmFacts: a job that runs, with no scheduler record
// yet, is RUNNING in its partition with the GPU Slurm gave it, in jobs,
// jobs --json, show and show --json — not "-", "running" or 0 GPUs.
func TestRunningJobShowsSlurmFacts(t *testing.T) {
	db := runningDB(t)

	out, err := runCLI(t, "jobs", "--db", db)
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^8101 +- +alice +vision +gpu-long +RUNNING .* 1/1 `).MatchString(out) {
		t.Errorf("jobs: want job 8101 RUNNING in gpu-long with GPUS 1/1:\n%s", out)
	}

	for _, args := range [][]string{{"jobs", "--json"}, {"show", "--json", "8101"}} {
		out, err := runCLI(t, append(args, "--db", db)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var v []cliview.JobJSON
		if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 {
			t.Fatalf("%v: %v, %d jobs\n%s", args, err, len(v), out)
		}
		j := v[0]
		if j.State == nil || *j.State != "RUNNING" || j.Sched != nil || j.Running == nil ||
			j.Running.Partition != "gpu-long" || j.Running.ReqGPUs != 1 || j.Running.User != "alice" ||
			j.GPUsRequested == nil || *j.GPUsRequested != 1 {
			t.Errorf("%v: state %v sched %v running %+v gpus_requested %v; want RUNNING, no sched, running in gpu-long with 1 GPU",
				args, j.State, j.Sched, j.Running, j.GPUsRequested)
		}
	}

	out, err = runCLI(t, "show", "--db", db, "8101")
	if err != nil {
		t.Fatalf("show: %v\n%s", err, out)
	}
	for _, want := range []string{"State      RUNNING", "Partition gpu-long", "GPUs allocated 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "No scheduler view") {
		t.Errorf("show says a running job has no scheduler view:\n%s", out)
	}
}

// TestRunningJobElapsedToNow: a running job's elapsed time counts from
// its start to the read time, as squeue's TIME does, not to its last
// reading (29 minutes in: the readings are a minute apart), in jobs,
// jobs --json and show.
func TestRunningJobElapsedToNow(t *testing.T) {
	db := runningDB(t) // started 30 minutes ago, last reading at 29

	out, err := runCLI(t, "jobs", "--db", db, "--format", "jobid,elapsed")
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^8101 +00:30:0\d$`).MatchString(out) {
		t.Errorf("jobs: want ELAPSED 00:30:0x (start to now), not the last reading's 00:29:00:\n%s", out)
	}
	out, err = runCLI(t, "jobs", "--json", "--db", db)
	if err != nil {
		t.Fatalf("jobs --json: %v", err)
	}
	var v []cliview.JobJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 {
		t.Fatalf("jobs --json: %v\n%s", err, out)
	}
	if e := v[0].ElapsedSeconds; e == nil || *e < 1800 || *e > 1830 {
		t.Errorf("jobs --json: elapsed_seconds %v, want 1800–1830", e)
	}
	out, err = runCLI(t, "show", "8101", "--db", db)
	if err != nil {
		t.Fatalf("show: %v", err)
	}
	if !regexp.MustCompile(`ran 00:30:0\d\n`).MatchString(out) {
		t.Errorf("show: want the node line's ran 00:30:0x:\n%s", out)
	}
}
