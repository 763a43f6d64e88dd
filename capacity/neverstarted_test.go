package capacity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
)

// neverStartedMonth is a day on one node of 4 GPUs: GPU jobs that ran
// (one of them cancelled while it ran), and GPU jobs cancelled while
// pending in the shapes sacct gives them (Start = End with no nodes, the
// cancel time before or after the job became eligible; Start unknown).
func neverStartedMonth() (in analysis.Input, ran, cancelledRunning, never int) {
	from := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	in = analysis.Input{Window: analysis.Window{From: from, To: from.Add(24 * time.Hour)}, Now: from.Add(24 * time.Hour),
		Nodes: []analysis.Node{{Name: "n1", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 4, Partitions: []string{"gpu"}}}}
	id := 0
	add := func(j analysis.Job) {
		id++
		j.ID, j.User, j.Partition, j.ReqGPUs, j.TimeLimit = fmt.Sprint(id), "alice", "gpu", 1, 2*time.Hour
		if j.Submit.IsZero() {
			j.Submit = j.Eligible
		}
		in.Jobs = append(in.Jobs, j)
	}
	for k := range 40 {
		at := from.Add(time.Duration(k) * 30 * time.Minute)
		add(analysis.Job{State: "COMPLETED", Eligible: at, Start: at, End: at.Add(20 * time.Minute), NodeList: "n1", NodeCount: 1})
		ran++
	}
	for k := range 5 {
		at := from.Add(time.Duration(k)*time.Hour + 10*time.Minute)
		add(analysis.Job{State: "CANCELLED", Eligible: at, Start: at, End: at.Add(5 * time.Minute), NodeList: "n1", NodeCount: 1})
		ran++
		cancelledRunning++
	}
	for k := range 12 {
		at := from.Add(time.Duration(k)*time.Hour + 15*time.Minute)
		// sacct: Start = End = the cancel time, NodeList "None assigned".
		add(analysis.Job{State: "CANCELLED", Submit: at, Eligible: at, Start: at.Add(10 * time.Minute), End: at.Add(10 * time.Minute), NodeCount: 1})
		never++
	}
	for k := range 4 {
		at := from.Add(time.Duration(k)*time.Hour + 20*time.Minute)
		// --begin=now+1hour, cancelled before it was eligible.
		add(analysis.Job{State: "CANCELLED", Submit: at, Eligible: at.Add(time.Hour), Start: at.Add(time.Minute), End: at.Add(time.Minute), NodeCount: 1})
		never++
	}
	for k := range 3 {
		at := from.Add(time.Duration(k)*time.Hour + 25*time.Minute)
		add(analysis.Job{State: "CANCELLED", Eligible: at, End: at.Add(2 * time.Minute), NodeCount: 1}) // Start None
		never++
	}
	return in, ran, cancelledRunning, never
}

// TestNeverStartedCountsNowhere: GPU jobs cancelled while pending are not
// "cancelled after they started", hold no GPU time, are not started on any
// day, and the queue replay's calibration does not compare them.
func TestNeverStartedCountsNowhere(t *testing.T) {
	in, ran, cancelledRunning, never := neverStartedMonth()
	c := analysis.DefaultConfig()
	w := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: in.Window}, c)
	if w.Cancelled.Jobs != cancelledRunning {
		t.Errorf("cancelled after they started: %d jobs, want %d", w.Cancelled.Jobs, cancelledRunning)
	}
	started := 0
	for _, d := range w.Daily {
		started += d.JobsStarted
	}
	if started != ran {
		t.Errorf("jobs_started %d, want the %d that ran (not the %d cancelled while pending)", started, ran, never)
	}
	wantHours := 40*20.0/60 + 5*5.0/60
	if d := w.Headline.AllocatedGPUHours - wantHours; d > 1e-9 || d < -1e-9 {
		t.Errorf("allocated %.4f GPU-hours, want %.4f", w.Headline.AllocatedGPUHours, wantHours)
	}
	if w.Headline.GPUWait.N != ran {
		t.Errorf("%d GPU waits, want the %d of jobs that ran", w.Headline.GPUWait.N, ran)
	}

	wi, err := RunWhatIf(in, WhatIfParams{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if wi.Calibration.Jobs > ran {
		t.Errorf("calibration compares %d jobs; at most the %d that ran", wi.Calibration.Jobs, ran)
	}
}

// TestEndedPendingLeavesTheReplayQueue: a job that never started and ended
// in a final state other than CANCELLED (its deadline passed, a federated
// sibling revoked it, its nodes failed to boot) left the queue at its end;
// the replay takes it out at the same time, as it does a job cancelled
// while pending, instead of running its full limit as if it still waited.
func TestEndedPendingLeavesTheReplayQueue(t *testing.T) {
	in, _, _, _ := neverStartedMonth()
	from := in.Window.From
	at := from.Add(3 * time.Hour)
	ended := map[string]slurmext.JobState{}
	for k, st := range []slurmext.JobState{slurmext.StateDeadline, slurmext.StateRevoked, slurmext.StateBootFail} {
		id := fmt.Sprint("ended-", k)
		ended[id] = st
		// sacct: Start = End = when it left the queue, no nodes.
		in.Jobs = append(in.Jobs, analysis.Job{ID: id, User: "bob", Partition: "gpu", ReqGPUs: 1, TimeLimit: 2 * time.Hour,
			State: st, Submit: at, Eligible: at, Start: at.Add(30 * time.Minute), End: at.Add(30 * time.Minute), NodeCount: 1})
	}
	// Still pending at the window's end: no end, not final.
	in.Jobs = append(in.Jobs, analysis.Job{ID: "pending", User: "bob", Partition: "gpu", ReqGPUs: 1, TimeLimit: 2 * time.Hour,
		State: slurmext.StatePending, Submit: at, Eligible: at, NodeCount: 1})
	r, err := newReplay(in, WhatIfParams{Seeds: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for i, j := range r.ref {
		q := r.jobs[i]
		switch {
		case ended[j.ID] != "":
			seen++
			if !q.Cancels || q.Cancel != 3*time.Hour+30*time.Minute {
				t.Errorf("%s never started: Cancels %v at %v, want it to leave the queue at its end, %v",
					j.State, q.Cancels, q.Cancel, 3*time.Hour+30*time.Minute)
			}
		case j.ID == "pending":
			seen++
			if q.Cancels || q.Run != 2*time.Hour {
				t.Errorf("still pending: Cancels %v, run %v; want no cancel and its 2h limit", q.Cancels, q.Run)
			}
		}
	}
	if seen != len(ended)+1 {
		t.Fatalf("%d of the %d jobs replayed", seen, len(ended)+1)
	}
	for _, a := range r.assumed {
		if strings.Contains(a, "still pending") && !strings.HasPrefix(a, "1 ") {
			t.Errorf("assumption %q: only the pending job is still pending", a)
		}
	}
}

// TestFairTreeRootUserCountedOnce: Fair Tree counts the cluster's root
// user association (account root, user root, which slurmdbd creates with
// every cluster) beside the replay's associations; where root's own jobs
// under the root account are replayed, that association is among them
// and is not counted a second time.
func TestFairTreeRootUserCountedOnce(t *testing.T) {
	in, _, _, _ := neverStartedMonth()
	at := in.Window.From.Add(2 * time.Hour)
	for _, j := range []analysis.Job{
		{ID: "as-alice", User: "alice", Account: "root"},
		{ID: "as-root", User: "root", Account: "physics"},
	} {
		j.Partition, j.ReqGPUs, j.TimeLimit, j.State, j.NodeCount = "gpu", 1, time.Hour, slurmext.StateCompleted, 1
		j.Submit, j.Eligible, j.Start, j.End = at, at, at, at.Add(10*time.Minute)
		in.Jobs = append(in.Jobs, j)
	}
	roots := func(in analysis.Input) int {
		t.Helper()
		r, err := newReplay(in, multifactorConf(in), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !r.prio.FairTree {
			t.Fatal("multifactor without NO_FAIR_TREE: want Fair Tree")
		}
		return r.prio.RootUsers
	}
	if n := roots(in); n != 1 {
		t.Errorf("no job of root's under the root account: %d root users beside the replay's, want 1", n)
	}
	j := in.Jobs[len(in.Jobs)-1]
	j.ID, j.Account = "root-own", "root"
	in.Jobs = append(in.Jobs, j)
	if n := roots(in); n != 0 {
		t.Errorf("root's own jobs under the root account replayed: %d root users besides, want 0 (counted once)", n)
	}
}
