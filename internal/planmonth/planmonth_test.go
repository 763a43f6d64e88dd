package planmonth

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

var update = flag.Bool("update", false, "rewrite testdata/plan-3000.json from this code (only with a reason in the commit: it holds the plan made before issue #27's speed work)")

func planJSON(t *testing.T, s Shape, procs int) []byte {
	t.Helper()
	in, wp, err := Month(s)
	if err != nil {
		t.Fatal(err)
	}
	c := analysis.DefaultConfig()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	sp, err := analysis.SimulatePlan(in, &f, analysis.SimPlanParams{WhatIf: wp, Plan: c.Plan.Params()}, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(struct {
		Recommendations []analysis.Recommendation `json:"recommendations"`
		Simulated       analysis.SimPlan          `json:"simulated"`
	}{f.Recommendations, sp}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestPlanGolden: the whole plan of a 3,000-job month on 24 GPUs (two
// models, two partitions, multifactor; the default configuration: 5 seeds,
// 30 % growth) is byte-identical with GOMAXPROCS=1 and 4, and to the plan
// made before issue #27's speed work (testdata/plan-3000.json, from
// commit 35df12b).
func TestPlanGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("about 100 replays, twice")
	}
	s := Shape{Jobs: 3000, GPUs: 24, Occupancy: 0.7, Seed: 1}
	one := planJSON(t, s, 1)
	path := filepath.Join("testdata", "plan-3000.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, one, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if four := planJSON(t, s, 4); !bytes.Equal(one, four) {
		t.Error("the plan differs between GOMAXPROCS=1 and 4")
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, want) {
		t.Errorf("the plan differs from the golden one (%s); diff it with the JSON of go run ./internal/benchplan -jobs 3000 -gpus 24 -out FILE", path)
	}
}

// TestMonthShape: the month has the jobs, the GPUs and about the
// occupancy asked for, every job ran, and the same seed gives the same
// month.
func TestMonthShape(t *testing.T) {
	s := Shape{Jobs: 2000, GPUs: 32, Occupancy: 0.6, Seed: 3}
	in, wp, err := Month(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Jobs) != s.Jobs || len(in.Nodes) != 4 || len(wp.Sched.Partitions) != 2 || wp.Sched.PriorityType != "priority/multifactor" {
		t.Fatalf("%d jobs, %d nodes, %d partitions, %s", len(in.Jobs), len(in.Nodes), len(wp.Sched.Partitions), wp.Sched.PriorityType)
	}
	var gpuSec float64
	for _, j := range in.Jobs {
		if j.State != "COMPLETED" || j.Start.Before(j.Eligible) || j.NodeList == "" {
			t.Fatalf("job %s: %s, start %s before eligible %s, on %q", j.ID, j.State, j.Start, j.Eligible, j.NodeList)
		}
		gpuSec += float64(j.ReqGPUs) * j.End.Sub(j.Start).Seconds()
	}
	occ := gpuSec / (float64(s.GPUs) * month.Seconds())
	if occ < 0.45 || occ > 0.75 {
		t.Errorf("occupancy %.2f, asked for %.2f", occ, s.Occupancy)
	}
	again, _, _ := Month(s)
	for i := range in.Jobs {
		if in.Jobs[i].Start != again.Jobs[i].Start || in.Jobs[i].NodeList != again.Jobs[i].NodeList {
			t.Fatalf("job %d differs between two makes of one seed", i)
		}
	}
}
