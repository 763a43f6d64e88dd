package capacity

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// placementMonth is issue #26's item 7 in small: one partition gpu on
// two GPU models, the P100 nodes first (p0, p1: 4 GPUs each) and the G2
// nodes after them (g0, g1: 4 each), and a month of one-GPU jobs of 2 h,
// one every 3 hours, that ask for no GPU type — except the first typed,
// which ask for "p100". The replay fills nodes in order, so every job
// runs on a P100 and the G2s take none: where an untyped job ran is the
// replay's placement, not a demand for a model.
func placementMonth(typed int) analysis.Input {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	in := analysis.Input{Window: analysis.Window{From: from, To: to}, Now: to.Add(time.Hour)}
	for _, n := range []struct{ name, model string }{{"p0", "P100"}, {"p1", "P100"}, {"g0", "G2"}, {"g1", "G2"}} {
		in.Nodes = append(in.Nodes, analysis.Node{Name: n.name, GPUModel: n.model, GPUs: 4, Partitions: []string{"gpu"}})
	}
	for k := 0; ; k++ {
		at := from.Add(time.Duration(3*k) * time.Hour)
		if !at.Add(2 * time.Hour).Before(to) {
			break
		}
		j := analysis.Job{ID: fmt.Sprint(1000 + k), User: fmt.Sprint("u", k%4), Account: "lab", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(2 * time.Hour), TimeLimit: 4 * time.Hour,
			ReqGPUs: 1, NodeCount: 1, NodeList: "p0"}
		if k < typed {
			j.ReqGPUType = "p100"
		}
		in.Jobs = append(in.Jobs, j)
	}
	return in
}

func modelGroupOf(t *testing.T, s Scenario, model string) analysis.Group {
	t.Helper()
	for _, g := range s.Models {
		if g.Name == model {
			return g
		}
	}
	t.Fatalf("no model %s in %+v", model, s.Models)
	return analysis.Group{}
}

// TestWhatIfPlacementIsNotDemand: per model, the jobs that could run on
// that model only (its demand) are told from those that could run on
// another as well (placed by the replay); a model with no demand of its
// own is placement only, whatever its rows say.
func TestWhatIfPlacementIsNotDemand(t *testing.T) {
	in := placementMonth(0)
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := w.Jobs.Replayed
	p100, g2 := modelGroupOf(t, w.Baseline, "P100"), modelGroupOf(t, w.Baseline, "G2")
	if p100.Jobs.Median != float64(n) || g2.Jobs.Median != 0 {
		t.Fatalf("setup: P100 ran %.0f, G2 %.0f of %d jobs: want first fit to put them all on the P100s", p100.Jobs.Median, g2.Jobs.Median, n)
	}
	for _, g := range []analysis.Group{p100, g2} {
		if g.Demand != 0 || g.Placeable != n || !g.PlacedOnly() {
			t.Errorf("model %s: demand %d, placeable %d, placed only %v: want 0, %d, true (no job asked for a type)", g.Name, g.Demand, g.Placeable, g.PlacedOnly(), n)
		}
	}
	for _, g := range w.Baseline.Partitions {
		if g.Demand != 0 || g.Placeable != 0 {
			t.Errorf("partition %s carries a model's demand: %d, %d", g.Name, g.Demand, g.Placeable)
		}
	}

	in = placementMonth(3)
	w, err = RunWhatIf(in, WhatIfParams{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	n = w.Jobs.Replayed
	p100, g2 = modelGroupOf(t, w.Baseline, "P100"), modelGroupOf(t, w.Baseline, "G2")
	if p100.Demand != 3 || p100.Placeable != n-3 || p100.PlacedOnly() {
		t.Errorf("P100 with 3 jobs asking for p100: demand %d, placeable %d, placed only %v; want 3, %d, false", p100.Demand, p100.Placeable, p100.PlacedOnly(), n-3)
	}
	if g2.Demand != 0 || g2.Placeable != n-3 || !g2.PlacedOnly() {
		t.Errorf("G2: demand %d, placeable %d, placed only %v; want 0, %d, true", g2.Demand, g2.Placeable, g2.PlacedOnly(), n-3)
	}
}

// TestWhatIfChangeOfPlacedModel: --remove and --add of a model whose GPUs
// take only untyped jobs say so (the change moves jobs between models, it
// answers nothing about a demand for the model), and a change of a model
// jobs asked for does not; each change says in words what it did.
func TestWhatIfChangeOfPlacedModel(t *testing.T) {
	in := placementMonth(3)
	for _, tc := range []struct {
		change    analysis.Change
		words     string
		placement []string // what the one sentence says; nil: no sentence
	}{
		{analysis.Change{Kind: analysis.ChangeRemove, Count: 8, Model: "G2", Spec: "8xG2"}, "8xG2 removed",
			[]string{"--remove 8xG2", "no job asked for G2", "placed by the replay", "node order"}},
		{analysis.Change{Kind: analysis.ChangeAdd, Count: 4, Model: "G2", Spec: "4xG2"}, "4xG2 added",
			[]string{"--add 4xG2", "no job asked for G2", "placed by the replay"}},
		{analysis.Change{Kind: analysis.ChangeRemove, Count: 4, Model: "P100", Spec: "4xP100"}, "4xP100 removed", nil},
		{analysis.Change{Kind: analysis.ChangeAdd, Count: 4, Model: "P100", Partition: "gpu", Spec: "4xP100:gpu"}, "4xP100 added to partition gpu", nil},
	} {
		t.Run(tc.change.Spec, func(t *testing.T) {
			w, err := RunWhatIf(in, WhatIfParams{Seeds: 1, Changes: []analysis.Change{tc.change}})
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Changes) != 1 || w.Changes[0].Words != tc.words {
				t.Errorf("change words %+v, want %q", w.Changes, tc.words)
			}
			if tc.placement == nil {
				if len(w.Placement) != 0 {
					t.Errorf("placement %q for a model jobs asked for", w.Placement)
				}
				return
			}
			if len(w.Placement) != 1 {
				t.Fatalf("placement %q, want one sentence", w.Placement)
			}
			for _, want := range tc.placement {
				if !strings.Contains(w.Placement[0], want) {
					t.Errorf("placement %q does not say %q", w.Placement[0], want)
				}
			}
		})
	}
	// A new partition says whether it is new; a changed one that it
	// changed.
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 1, Changes: []analysis.Change{
		{Kind: analysis.ChangePartition, PartitionConf: analysis.PartitionChange("debug", in.Nodes, time.Hour, 2, false).PartitionConf,
			PartitionSet: map[string]bool{"nodes": true, "maxtime": true, "prioritytier": true}, Spec: "debug:Nodes=p0,MaxTime=1:00:00,PriorityTier=2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Changes[0].Words; got != "partition debug added (Nodes=p0,MaxTime=1:00:00,PriorityTier=2)" {
		t.Errorf("new partition's words %q", got)
	}
}

// TestWorstIsNotAPlacement: a model whose jobs the replay only placed
// there is never the worst group a verdict names; a model with jobs that
// need it is.
func TestWorstIsNotAPlacement(t *testing.T) {
	sc := Scenario{
		Partitions: []analysis.Group{{Name: "gpu", Jobs: analysis.Spread{Median: 100}, WaitP95: analysis.Spread{Median: 60}}},
		Models: []analysis.Group{
			{Name: "P100", Jobs: analysis.Spread{Median: 80}, WaitP95: analysis.Spread{Median: 30}, Placeable: 100},
			{Name: "G2", Jobs: analysis.Spread{Median: 20}, WaitP95: analysis.Spread{Median: 300}, Placeable: 100},
		},
	}
	if name, p := worst(sc, false); name != "partition gpu" || p.Median != 60 {
		t.Errorf("worst = %s %.0f s, want partition gpu 60 s: G2's jobs are placed there by the replay", name, p.Median)
	}
	sc.Models[1].Demand = 5
	if name, p := worst(sc, false); name != "model G2" || p.Median != 300 {
		t.Errorf("worst = %s %.0f s, want model G2 300 s: 5 jobs need G2", name, p.Median)
	}
}

// TestPlanOnPlacedModels: a plan on untyped jobs that overload a
// partition of two models (4 P100 first, 4 G2 after them) never names a
// model as the worst group, and a purchase of either model says that no
// job asked for it: the jobs could run on both, and the replay placed
// them.
func TestPlanOnPlacedModels(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 7))
	var pjs []plantedJob
	users := []string{"ana", "bo", "cy", "di"}
	weekdays(func(d time.Time) {
		for k := range 24 {
			run := minutes(r, 60, 120)
			pjs = append(pjs, plantedJob{at: d.Add(9*time.Hour + time.Duration(k)*6*time.Minute), run: run, limit: 2 * run, gpus: 1,
				user: users[r.IntN(len(users))], util: 70 + 20*r.Float64(), vramFrac: 0.5})
		}
	})
	nodes := append(gpuNodes("p", "P100", 1, 4), gpuNodes("g", "G2", 1, 4)...)
	in := recordMonth(t, nodes, pjs)
	f, sp := simulate(t, in, planConfig(2), analysis.PlanParams{})
	t.Log(describe(f, sp))
	if sp.Today == nil {
		t.Fatalf("not simulated: %s", sp.NotSimulated)
	}
	for _, g := range sp.Today.Models {
		if !g.PlacedOnly() {
			t.Errorf("model %s: demand %d, placeable %d: want placed only (no job asked for a type)", g.Name, g.Demand, g.Placeable)
		}
	}
	all := sp.Verdict.Text + " " + strings.Join(sp.Verdict.Evidence, " ")
	for _, m := range []string{"model P100", "model G2"} {
		if strings.Contains(all, m) {
			t.Errorf("the verdict names %s, a model the replay placed jobs on:\n%s", m, all)
		}
	}
	if tl := sp.Timeline; tl != nil && strings.HasPrefix(tl.Group, "model ") {
		t.Errorf("the timeline's first group to miss the target is %s", tl.Group)
	}
	if len(sp.Purchase) == 0 {
		t.Fatalf("setup: no purchase (verdict %s): want the burst to need GPUs", sp.Verdict.Code)
	}
	if !strings.Contains(all, sp.Purchase[0].Model+": no job asked for it") {
		t.Errorf("the purchase of %s does not say that no job asked for it:\n%s", sp.Purchase[0].Model, all)
	}
}

// TestPlanBuysNoModelOnPlacementAlone: with the target between the
// partition's p95 wait (23m) and that of the G2s, which took only the
// untyped jobs the P100s could not (24m), the partition meets the target:
// nothing is bought, and the purchase table agrees with the verdict.
func TestPlanBuysNoModelOnPlacementAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 7))
	var pjs []plantedJob
	users := []string{"ana", "bo", "cy", "di"}
	weekdays(func(d time.Time) {
		for k := range 14 {
			run := minutes(r, 60, 120)
			pjs = append(pjs, plantedJob{at: d.Add(9*time.Hour + time.Duration(k)*10*time.Minute), run: run, limit: 2 * run, gpus: 1,
				user: users[r.IntN(len(users))], util: 70 + 20*r.Float64(), vramFrac: 0.5})
		}
	})
	in := recordMonth(t, append(gpuNodes("p", "P100", 1, 4), gpuNodes("g", "G2", 1, 4)...), pjs)
	c := planConfig(2)
	c.Plan.TargetP95Wait = analysis.Duration(1410 * time.Second)
	f, sp := simulate(t, in, c, analysis.PlanParams{})
	t.Log(describe(f, sp))
	g2 := modelGroupOf(t, *sp.Horizon, "G2")
	if !g2.PlacedOnly() || g2.WaitP95.Median <= 1410 || p95Of(*sp.Horizon, "gpu") > 1410 {
		t.Fatalf("setup: G2 placed only %v, p95 %.0f s, partition gpu %.0f s: want G2 over the 1410 s target, the partition under it",
			g2.PlacedOnly(), g2.WaitP95.Median, p95Of(*sp.Horizon, "gpu"))
	}
	if len(sp.Purchase) > 0 || sp.Verdict.Code == VerdictBuy {
		t.Errorf("purchase %+v, verdict %s: want none, the partition meets the target", sp.Purchase, sp.Verdict.Code)
	}
	for _, m := range sp.Models {
		if m.Needed != 0 {
			t.Errorf("model %s: needed %d (%s), want 0", m.Model, m.Needed, m.Why)
		}
	}
}
