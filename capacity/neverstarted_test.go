package capacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
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
