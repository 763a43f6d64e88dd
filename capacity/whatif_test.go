package capacity

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// plantedQueue is a month on 4 H100 and 8 A100 in one partition: H100
// jobs (asking for the type) arrive in a burst every weekday 9–12 h, more
// than 4 H100 can take, so they queue; untyped jobs fit on the A100s.
func plantedQueue() analysis.Input {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	rng := rand.New(rand.NewPCG(11, 11))
	in := analysis.Input{Window: analysis.Window{From: from, To: to}, Now: to.Add(time.Hour)}
	for i := range 2 {
		in.Nodes = append(in.Nodes, analysis.Node{Name: fmt.Sprintf("h%d", i), GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 2, Partitions: []string{"gpu"}})
	}
	for i := range 2 {
		in.Nodes = append(in.Nodes, analysis.Node{Name: fmt.Sprintf("a%d", i), GPUModel: "NVIDIA A100-SXM4-80GB", GPUs: 4, Partitions: []string{"gpu"}})
	}
	id := 0
	add := func(at time.Time, run time.Duration, typ string) {
		id++
		in.Jobs = append(in.Jobs, analysis.Job{
			ID: fmt.Sprint(id), User: fmt.Sprint("u", rng.IntN(6)), Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(run), TimeLimit: 2 * run,
			ReqGPUs: 1, ReqGPUType: typ, NodeCount: 1,
		})
	}
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			continue
		}
		for k := range 12 {
			add(d.Add(9*time.Hour+time.Duration(k)*15*time.Minute), time.Duration(60+rng.IntN(60))*time.Minute, "h100")
		}
		for range 6 {
			add(d.Add(time.Duration(rng.IntN(20))*time.Hour), time.Duration(30+rng.IntN(90))*time.Minute, "")
		}
	}
	return in
}

func p95Of(s Scenario, part string) float64 {
	for _, g := range s.Partitions {
		if g.Name == part {
			return g.WaitP95.Median
		}
	}
	return -1
}

func TestWhatIfPlanted(t *testing.T) {
	in := plantedQueue()
	base := WhatIfParams{Seeds: 3}
	run := func(p WhatIfParams) WhatIf {
		t.Helper()
		w, err := RunWhatIf(in, p)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	today := run(base).Baseline
	t0 := p95Of(today, "gpu")
	if t0 < 1800 {
		t.Fatalf("planted month: p95 wait today %.0f s, want the H100 burst to queue (≥ 30 min)", t0)
	}
	with := func(c ...analysis.Change) float64 {
		p := base
		p.Changes = c
		return p95Of(*run(p).Changed, "gpu")
	}
	h := with(analysis.Change{Kind: analysis.ChangeAdd, Count: 2, Model: "H100", Spec: "2xH100"})
	a := with(analysis.Change{Kind: analysis.ChangeAdd, Count: 2, Model: "a100", Spec: "2xa100"})
	t.Logf("p95 wait in gpu: today %.0f s, +2 H100 %.0f s, +2 A100 %.0f s", t0, h, a)
	if h > 0.5*t0 {
		t.Errorf("adding 2 H100 leaves the p95 wait at %.0f s of %.0f s: want it at least halved", h, t0)
	}
	if a < 0.9*t0 || a > 1.1*t0 {
		t.Errorf("adding 2 A100 moves the p95 wait from %.0f s to %.0f s: want no change (the jobs ask for H100)", t0, a)
	}

	grow := func(g float64) float64 {
		p := base
		p.Growth, p.Months = g, 12
		return p95Of(*run(p).Changed, "gpu")
	}
	g20, g50 := grow(0.2), grow(0.5)
	t.Logf("p95 wait with growth: 20 %% %.0f s, 50 %% %.0f s", g20, g50)
	if !(g50 > g20 && g20 > t0) {
		t.Errorf("p95 wait today %.0f s, +20 %% %.0f s, +50 %% %.0f s: want growing with the growth", t0, g20, g50)
	}
	p := base
	p.Growth, p.Months = 0.3, 12
	if a, b := run(p), run(p); !reflect.DeepEqual(a, b) {
		t.Error("the same inputs and seeds gave different answers")
	}
}

func TestWhatIfCalibration(t *testing.T) {
	// A replay of a FIFO-like month whose recorded starts are what the
	// model gives back must calibrate as good; the same month with every
	// start an hour late must not.
	in := plantedQueue()
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calibration on records that ignore queueing: %+v", w.Calibration)
	if w.Calibration.Reliable {
		t.Error("records that never queued (start = submit) calibrate as reliable against a replay where they queue")
	}
}

func TestMatchModel(t *testing.T) {
	for _, tt := range []struct {
		name, model, typ string
		want             bool
	}{
		{"h100", "NVIDIA H100 80GB HBM3", "", true},
		{"H100", "nvidia h100 80gb hbm3", "", true},
		{"a100", "NVIDIA A100-SXM4-80GB", "", true},
		{"a100", "NVIDIA H100 80GB HBM3", "", false},
		{"h100", "", "h100", true},
		{"l40", "NVIDIA L40S", "", true},
		{"", "NVIDIA L40S", "", false},
	} {
		if got := matchModel(tt.name, tt.model, tt.typ); got != tt.want {
			t.Errorf("matchModel(%q, %q, %q) = %v, want %v", tt.name, tt.model, tt.typ, got, tt.want)
		}
	}
}
