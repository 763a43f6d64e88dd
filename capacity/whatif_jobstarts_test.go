package capacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestWhatIfJobStarts: with JobStarts each replayed job is listed in
// submission order with its real start and its start in every seed's run,
// today and with the changes. On one node of one GPU, three 10-minute jobs
// submitted together start one after another; with a second node of two
// GPUs added they all start at once.
func TestWhatIfJobStarts(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	in := analysis.Input{Window: analysis.Window{From: from, To: from.Add(2 * time.Hour)},
		Nodes: []analysis.Node{{Name: "n1", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 1, Partitions: []string{"gpu"}}}}
	run := 10 * time.Minute
	at := from.Add(time.Minute)
	// Ids out of submission order: the list follows Submit, not the id.
	for k, id := range []string{"12", "10", "11"} {
		sub := at.Add(time.Duration(k) * time.Second)
		start := at.Add(time.Duration(k) * run)
		in.Jobs = append(in.Jobs, analysis.Job{ID: id, User: fmt.Sprint("u", k), Partition: "gpu", State: "COMPLETED",
			Submit: sub, Eligible: sub, Start: start, End: start.Add(run), TimeLimit: time.Hour,
			ReqGPUs: 1, NodeCount: 1, NodeList: "n1"})
	}
	p := WhatIfParams{Seeds: 2, JobStarts: true,
		Changes: []analysis.Change{{Kind: analysis.ChangeAdd, Count: 2, Model: "H100", Spec: "2xH100"}}}
	w, err := RunWhatIf(in, p)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got []JobStart, want []float64) {
		t.Helper()
		if len(got) != 3 {
			t.Fatalf("%s: %d job starts, want 3: %+v", name, len(got), got)
		}
		for k, js := range got {
			wantID := []string{"12", "10", "11"}[k]
			arrival := 60 + float64(k)
			real := 60 + float64(k)*run.Seconds()
			if js.JobID != wantID || js.Partition != "gpu" || js.Arrival != arrival || js.Real == nil || *js.Real != real || len(js.Replayed) != 2 {
				t.Errorf("%s: job %d = %+v, want job %s in gpu, arrival %.0f, real start %.0f, two seeds", name, k, js, wantID, arrival, real)
				continue
			}
			for s, st := range js.Replayed {
				if st == nil || *st != want[k] || js.Ran[s] != "gpu" {
					t.Errorf("%s: job %s seed %d started at %s in %q, want %.0f in gpu", name, js.JobID, s+1, fmtStart(st), js.Ran[s], want[k])
				}
			}
		}
	}
	check("today", w.Baseline.JobStarts, []float64{60, 660, 1260})
	if w.Changed == nil {
		t.Fatal("no changed scenario")
	}
	check("with 2xH100 added", w.Changed.JobStarts, []float64{60, 61, 62})

	// Without the flag, no list; with growth, refused.
	p.JobStarts = false
	if w, err := RunWhatIf(in, p); err != nil || w.Baseline.JobStarts != nil || w.Changed.JobStarts != nil {
		t.Errorf("without JobStarts: err %v, lists %d and %d, want none", err, len(w.Baseline.JobStarts), len(w.Changed.JobStarts))
	}
	p.JobStarts, p.Growth, p.Months = true, 0.3, 12
	if _, err := RunWhatIf(in, p); err == nil {
		t.Error("JobStarts with growth: no error, want a refusal (the copies are no recorded job)")
	}
}

func fmtStart(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%.0f", *v)
}
