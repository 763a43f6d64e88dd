package capacity

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
)

// leftOutJobs are recorded jobs that the planted cluster (h0, h1: 2 H100
// each, 16 shards on h0; a0, a1: 4 A100 each; partition gpu, MaxTime 2
// days when slurm.conf gives it) can never start, each kind with its own
// count: 3 in a partition it does not have, 2 asking for a GPU type no
// node has, 2 for more shards than a GPU has, 2 for more GPUs than a node
// has, 1 for more nodes than the partition has, 1 for a limit above
// MaxTime. They ran elsewhere, 2 hours each.
func leftOutJobs(from time.Time) []analysis.Job {
	var out []analysis.Job
	id := 90000
	add := func(n int, f func(j *analysis.Job)) {
		for k := range n {
			id++
			at := from.Add(time.Duration(24*(k+1)) * time.Hour)
			j := analysis.Job{ID: fmt.Sprint(id), User: "lo", Partition: "gpu", State: "COMPLETED",
				Submit: at, Eligible: at, Start: at, End: at.Add(2 * time.Hour), TimeLimit: 3 * time.Hour,
				ReqGPUs: 1, NodeCount: 1, NodeList: "elsewhere"}
			f(&j)
			out = append(out, j)
		}
	}
	add(3, func(j *analysis.Job) { j.Partition = "old" })
	add(2, func(j *analysis.Job) { j.ReqGPUType = "v100" })
	add(2, func(j *analysis.Job) { j.ReqGPUs, j.ReqShards = 0, 46 })
	add(2, func(j *analysis.Job) { j.ReqGPUs = 6 })
	add(1, func(j *analysis.Job) { j.ReqGPUs, j.NodeCount = 5, 5 })
	add(1, func(j *analysis.Job) { j.TimeLimit = 72 * time.Hour })
	return out
}

// withLeftOut is plantedQueue with the left-out jobs, and 16 shards on h0.
func withLeftOut() analysis.Input {
	in := plantedQueue()
	in.Nodes[0].Shards = 16
	in.Jobs = append(in.Jobs, leftOutJobs(in.Window.From)...)
	return in
}

// slurmConfGPU is slurm.conf's partition gpu on every node, MaxTime 2 days.
func slurmConfGPU() (slurmext.SchedConf, bool) {
	sc := slurmext.DefaultSchedConf()
	sc.Partitions = []slurmext.PartitionConf{{Name: "gpu", AllNodes: true, MaxTime: 48 * time.Hour, PriorityTier: 1}}
	return sc, true
}

func reasonOf(t *testing.T, s SimJobs, kind string) LeftOutReason {
	t.Helper()
	var got LeftOutReason
	n := 0
	for _, r := range s.LeftOutReasons {
		if r.Kind == kind {
			got = r
			n++
		}
	}
	if n != 1 {
		t.Fatalf("left-out reasons of kind %s: %d, want 1 (%+v)", kind, n, s.LeftOutReasons)
	}
	return got
}

// TestWhatIfLeftOutCounted: every job the replay cannot take is counted
// with its reason, in the answer's jobs and in each scenario's, and its
// GPU-hours are counted as a share of the window's.
func TestWhatIfLeftOutCounted(t *testing.T) {
	in := withLeftOut()
	p := WhatIfParams{Seeds: 2}
	p.Sched, p.SchedKnown = slurmConfGPU()
	w, err := RunWhatIf(in, p)
	if err != nil {
		t.Fatal(err)
	}
	j := w.Jobs
	t.Logf("jobs %+v", j)
	if j.LeftOut != 11 || j.Replayed != len(in.Jobs)-11 {
		t.Errorf("left out %d, replayed %d of %d: want 11 left out, the rest replayed", j.LeftOut, j.Replayed, len(in.Jobs))
	}
	for _, tc := range []struct {
		kind  string
		jobs  int
		words []string
	}{
		{LeftOutPartition, 3, []string{`partition "old"`, "not in the cluster"}},
		{LeftOutGPUType, 2, []string{`"v100"`, "partition gpu"}},
		{LeftOutShards, 2, []string{"46", "8", "partition gpu"}},
		{LeftOutGPUs, 2, []string{"6", "4", "partition gpu"}},
		{LeftOutNodes, 1, []string{"5", "4", "partition gpu"}},
		{LeftOutTimeLimit, 1, []string{"3-00:00:00", "2-00:00:00", "partition gpu"}},
	} {
		r := reasonOf(t, j, tc.kind)
		if r.Jobs != tc.jobs || len(r.JobIDs) != tc.jobs {
			t.Errorf("%s: %d jobs (ids %v), want %d", tc.kind, r.Jobs, r.JobIDs, tc.jobs)
		}
		for _, word := range tc.words {
			if !strings.Contains(r.Text, word) {
				t.Errorf("%s: %q does not say %q", tc.kind, r.Text, word)
			}
		}
		// Each ran 2 hours: 1 GPU, 6 GPUs, 46 of 8 shards (all of a
		// GPU: the analysis counts shards held ÷ shards per GPU, at
		// most the GPUs recorded), 5 GPUs.
		if r.GPUHours <= 0 {
			t.Errorf("%s: %.1f GPU-hours, want what they held", tc.kind, r.GPUHours)
		}
	}
	if len(j.LeftOutWhy) != 6 {
		t.Errorf("left_out_why %q: want one line per reason", j.LeftOutWhy)
	}
	if j.GPUHours <= j.LeftOutGPUHours || j.LeftOutShare <= 0 || j.LeftOutShare >= 1 {
		t.Errorf("GPU-hours %.1f, left out %.1f (share %.3f)", j.GPUHours, j.LeftOutGPUHours, j.LeftOutShare)
	}
	if w.Baseline.Jobs.LeftOut != 11 {
		t.Errorf("today's scenario: %d left out, want 11", w.Baseline.Jobs.LeftOut)
	}
	if !strings.Contains(j.LeftOutWords(), "11 of") {
		t.Errorf("left-out words %q", j.LeftOutWords())
	}
}

// TestWhatIfRemoveLeavesJobsOut: removing GPUs so that some jobs no
// longer fit on any node leaves them out of the changed replay, counted
// there with the reason; today's replay has them.
func TestWhatIfRemoveLeavesJobsOut(t *testing.T) {
	in := plantedQueue()
	for k := range 5 {
		at := in.Window.From.Add(time.Duration(48*(k+1)) * time.Hour)
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(80000 + k), User: "wide", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(3 * time.Hour), TimeLimit: 4 * time.Hour,
			ReqGPUs: 4, NodeCount: 1, NodeList: "a0"})
	}
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 2, Changes: []analysis.Change{{Kind: analysis.ChangeRemove, Count: 6, Model: "a100", Spec: "6xa100"}}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Jobs.LeftOut != 0 || w.Baseline.Jobs.LeftOut != 0 {
		t.Errorf("today: %d left out, want none", w.Jobs.LeftOut)
	}
	c := w.Changed.Jobs
	t.Logf("changed: %+v", c)
	if c.LeftOut != 5 || c.Replayed != w.Jobs.Replayed-5 {
		t.Fatalf("with 6 A100 removed: %d left out, %d replayed of %d: want the 5 four-GPU jobs left out", c.LeftOut, c.Replayed, w.Jobs.Replayed)
	}
	r := reasonOf(t, c, LeftOutGPUs)
	if r.Jobs != 5 || !strings.Contains(r.Text, "(2)") {
		t.Errorf("reason %+v: want 5 jobs asking for 4 GPUs of a node, the largest node left having 2", r)
	}
	if c.LeftOutShare <= 0 {
		t.Errorf("left-out share %.3f, want their GPU-hours' share", c.LeftOutShare)
	}
}

// TestWhatIfNoJobLeft: a window whose every GPU job is left out is an
// error that says why, not "no GPU job in the window".
func TestWhatIfNoJobLeft(t *testing.T) {
	in := plantedQueue()
	for i := range in.Jobs {
		in.Jobs[i].Partition = "hn"
	}
	p := WhatIfParams{Seeds: 1}
	p.Sched, p.SchedKnown = slurmConfGPU()
	_, err := RunWhatIf(in, p)
	if !errors.Is(err, ErrNoJobs) {
		t.Fatalf("err = %v, want ErrNoJobs", err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{fmt.Sprint(len(in.Jobs)), `partition "hn" not in the cluster`, "left out"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	// A change that leaves no job that can start says so too.
	in = plantedQueue()
	_, err = RunWhatIf(in, WhatIfParams{Seeds: 1, Changes: []analysis.Change{
		{Kind: analysis.ChangeRemove, Count: 4, Model: "h100", Spec: "4xh100"}, {Kind: analysis.ChangeRemove, Count: 8, Model: "a100", Spec: "8xa100"}}})
	if !errors.Is(err, ErrNoJobs) || !strings.Contains(err.Error(), "left out") || !strings.Contains(err.Error(), "with the changes") {
		t.Errorf("every GPU removed: err = %v, want ErrNoJobs saying the changes leave every job out", err)
	}
}

// TestWhatIfCountsProfileOnlyJobs: a job known only from its GPU profiles
// (its jobcomp record never came, no sacct import) has no request or
// submit time to replay; it is left out counted, with its GPU-hours, not
// dropped unsaid.
func TestWhatIfCountsProfileOnlyJobs(t *testing.T) {
	in := plantedQueue()
	at := in.Window.From.Add(30 * time.Hour)
	in.Jobs = append(in.Jobs, analysis.Job{ID: "95001", User: "ghost", Start: at, End: at.Add(2 * time.Hour), NodeList: "h0",
		GPUs: []analysis.GPU{{Node: "h0", UUID: "GPU-x", UtilMean: 50, UtilMeanValid: true}}, HasGPUData: true})
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if w.Jobs.LeftOut != 1 {
		t.Errorf("left out %d, want the profile-only job", w.Jobs.LeftOut)
	}
	r := reasonOf(t, w.Jobs, LeftOutNoRecord)
	if r.Jobs != 1 || len(r.JobIDs) != 1 || r.JobIDs[0] != "95001" || r.GPUHours <= 0 {
		t.Errorf("no-record reason %+v, want job 95001 with its GPU-hours", r)
	}
}
