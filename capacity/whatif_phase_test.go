package capacity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// queueReplayJobs are the 44 jobs of one real run of e2e's
// TestWhatIfReplaysRealQueue, as sacct gave them (stop 53's failure
// repeated on 2026-12-07, its data kept): id, submit, start and end in
// seconds from the window's start, GPUs, time limit in minutes. One node
// of 4 GPUs, priority/basic, sched/backfill with Slurm's defaults, four
// bursts. Job 5 (2 GPUs, 1 minute) fitted a backfill beside job 1 from
// 2 s on, but Slurm ran no backfill cycle until job 4's end started it
// at 21 s.
var queueReplayJobs = [][6]int{
	{1, 2, 4, 10, 2, 2}, {2, 2, 10, 15, 3, 2}, {3, 2, 10, 13, 1, 2}, {4, 2, 15, 21, 4, 1}, {5, 2, 21, 25, 2, 1},
	{6, 2, 21, 26, 1, 1}, {7, 2, 25, 30, 2, 1}, {8, 2, 30, 32, 3, 1}, {9, 2, 32, 38, 2, 1}, {10, 2, 32, 35, 2, 3},
	{11, 2, 35, 37, 2, 3}, {12, 23, 37, 42, 1, 2}, {13, 23, 37, 39, 1, 2}, {14, 23, 38, 42, 1, 1}, {15, 23, 38, 43, 1, 2},
	{16, 23, 42, 48, 2, 1}, {17, 23, 43, 48, 2, 2}, {18, 23, 48, 54, 2, 2}, {19, 23, 54, 57, 4, 3}, {20, 23, 57, 61, 1, 1},
	{21, 23, 57, 60, 1, 2}, {22, 23, 57, 62, 1, 3}, {23, 38, 60, 65, 2, 3}, {24, 38, 62, 67, 2, 2}, {25, 38, 67, 73, 3, 2},
	{26, 38, 73, 77, 2, 1}, {27, 38, 77, 82, 3, 3}, {28, 38, 82, 85, 2, 2}, {29, 38, 82, 88, 2, 1}, {30, 38, 85, 90, 2, 1},
	{31, 38, 90, 95, 3, 1}, {32, 38, 95, 99, 2, 2}, {33, 38, 95, 100, 2, 2}, {34, 59, 99, 103, 2, 2}, {35, 59, 100, 103, 2, 1},
	{36, 59, 103, 106, 2, 1}, {37, 59, 103, 107, 1, 3}, {38, 59, 103, 109, 1, 3}, {39, 59, 106, 112, 2, 3}, {40, 59, 109, 116, 2, 2},
	{41, 59, 113, 119, 2, 3}, {42, 59, 116, 119, 2, 2}, {43, 59, 119, 125, 3, 2}, {44, 59, 119, 121, 1, 3},
}

func queueReplayInput() analysis.Input {
	from := time.Date(2026, 12, 7, 19, 26, 38, 0, time.UTC)
	in := analysis.Input{Window: analysis.Window{From: from, To: from.Add(127 * time.Second)},
		Nodes: []analysis.Node{{Name: "localhost", GPUModel: "gpu", GPUs: 4, Partitions: []string{"gpu"}}}}
	at := func(s int) time.Time { return from.Add(time.Duration(s) * time.Second) }
	for _, j := range queueReplayJobs {
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(j[0]), User: "root", Account: "e2e1", Partition: "gpu", State: "COMPLETED",
			Submit: at(j[1]), Eligible: at(j[1]), Start: at(j[2]), End: at(j[3]), TimeLimit: time.Duration(j[5]) * time.Minute,
			ReqGPUs: j[4], NodeCount: 1, NodeList: "localhost"})
	}
	return in
}

// TestWhatIfFitsBackfillPhase: no start of the real queue shows when its
// backfill cycles ran, so the replay fits their phase to the real starts
// (fitPhase) and says so. Every seed then starts job 5 within 5 s of its
// real start and every job within 10 s of its own; with a phase drawn per
// seed, two of three seeds backfilled job 5 about 17 s early and the jobs
// behind it early with it (97.7 % within 10 s).
func TestWhatIfFitsBackfillPhase(t *testing.T) {
	w, err := RunWhatIf(queueReplayInput(), WhatIfParams{Seeds: 3, JobStarts: true})
	if err != nil {
		t.Fatal(err)
	}
	fitted := false
	for _, a := range w.Assumed {
		fitted = fitted || strings.Contains(a, "of 10 phases tried, the one whose replay starts the jobs nearest their real starts")
	}
	if !fitted {
		t.Errorf("assumed %q: no fitted backfill phase said", w.Assumed)
	}
	c := w.Calibration
	if c.Jobs != len(queueReplayJobs) || c.Within10s != 1 {
		t.Errorf("calibration: %d jobs, %.1f %% within 10 s (mean error %.1f s), want all %d within 10 s",
			c.Jobs, 100*c.Within10s, c.StartMAE, len(queueReplayJobs))
	}
	for _, js := range w.Baseline.JobStarts {
		if js.JobID != "5" {
			continue
		}
		for s, st := range js.Replayed {
			if st == nil || *st < 16 || *st > 26 {
				t.Errorf("job 5, seed %d: replayed start %s, want within 5 s of its real 21", s+1, fmtStart(st))
			}
		}
	}
}

// TestChangedReplayTakesTodaysPhase: a replay with changes does not fit
// a phase of its own against the real starts (its cluster is not the one
// they ran on); it takes today's, so that a change is not compared across
// two phases.
func TestChangedReplayTakesTodaysPhase(t *testing.T) {
	in := queueReplayInput()
	add := []analysis.Change{{Kind: analysis.ChangeAdd, Count: 1, Model: "gpu", Spec: "1xgpu"}}
	base, err := newReplay(in, WhatIfParams{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ph := base.fitted()
	if !ph.fitted {
		t.Fatal("today's replay fitted no phase")
	}
	ch, err := newReplay(in, WhatIfParams{todaysPhase: ph}, add)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.sched.BfPhaseKnown || ch.sched.BfPhase != ph.phase {
		t.Errorf("with 1xgpu added: phase %v (known %v), want today's %v", ch.sched.BfPhase, ch.sched.BfPhaseKnown, ph.phase)
	}
	// Today's replay without changes, built again (the plan's later
	// replays): it takes today's phase and fits none again.
	again, err := newReplay(in, WhatIfParams{todaysPhase: &phaseFit{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.sched.BfPhaseKnown || again.fitted().fitted {
		t.Errorf("today's replay again, today's having fitted none: phase %v known, want it drawn, not fitted again", again.sched.BfPhase)
	}
	alone, err := newReplay(in, WhatIfParams{}, add)
	if err != nil {
		t.Fatal(err)
	}
	if alone.sched.BfPhaseKnown || alone.fitted().fitted {
		t.Errorf("with 1xgpu added and no phase of today's: phase %v known, want none fitted on the changed cluster", alone.sched.BfPhase)
	}
}

// TestWhatIfKeepsDrawnPhaseWhenStartsSayNothing: where no phase moves a
// start (one GPU, jobs one after another, nothing to backfill), the
// replay fits none and says nothing of one.
func TestWhatIfKeepsDrawnPhaseWhenStartsSayNothing(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	in := analysis.Input{Window: analysis.Window{From: from, To: from.Add(time.Hour)},
		Nodes: []analysis.Node{{Name: "n1", GPUModel: "gpu", GPUs: 1, Partitions: []string{"gpu"}}}}
	for k := range 3 {
		sub := from.Add(time.Minute + time.Duration(k)*time.Second)
		start := from.Add(time.Minute + time.Duration(k)*10*time.Minute)
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(k + 1), User: "u", Partition: "gpu", State: "COMPLETED",
			Submit: sub, Eligible: sub, Start: start, End: start.Add(10 * time.Minute), TimeLimit: time.Hour,
			ReqGPUs: 1, NodeCount: 1, NodeList: "n1"})
	}
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range w.Assumed {
		if strings.Contains(a, "backfill cycles at") {
			t.Errorf("assumed %q: a backfill phase where the starts say nothing of it", a)
		}
	}
}
