package capacity

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
)

var updatePlanGolden = flag.Bool("update-plan-golden", false, "rewrite testdata/plan-golden/*.json from this code (only for a deliberate change of an answer, its reason and differences in the commit: a speed change must leave them as they are)")

// goldenMonth is one planted month of the golden plans, with its plan
// settings.
type goldenMonth struct {
	name  string
	month func(testing.TB) analysis.Input
	pp    analysis.PlanParams
	wp    WhatIfParams
}

// multifactorConf is a slurm.conf's scheduler settings with fair-share,
// age, partition tiers and a tighter backfill, for the random month.
func multifactorConf(in analysis.Input) WhatIfParams {
	sc := slurmext.DefaultSchedConf()
	sc.PriorityType = "priority/multifactor"
	sc.WeightAge, sc.WeightFairshare, sc.WeightJobSize, sc.WeightPartition = 1000, 10000, 200, 2000
	sc.BfMaxJobTest, sc.BfInterval = 100, time.Minute
	parts := map[string][]string{}
	var order []string
	for _, n := range in.Nodes {
		for _, p := range n.Partitions {
			if _, ok := parts[p]; !ok {
				order = append(order, p)
			}
			parts[p] = append(parts[p], n.Name)
		}
	}
	for i, p := range order {
		sc.Partitions = append(sc.Partitions, slurmext.PartitionConf{Name: p, Nodes: parts[p], MaxTimeUnlimited: true, PriorityTier: 1 + i%2})
	}
	return WhatIfParams{Sched: sc, SchedKnown: true}
}

var goldenMonths = []goldenMonth{
	{name: "short-of-h100", month: func(t testing.TB) analysis.Input { return shortOfH100(t, 6) }, pp: analysis.PlanParams{Growth: 0.3, Months: 12}},
	{name: "behind-training", month: func(t testing.TB) analysis.Input { return stuckBehindTraining(t, 3) }, pp: analysis.PlanParams{Growth: 0.3, Months: 12}},
	{name: "steady-growth", month: func(t testing.TB) analysis.Input { return steadyMonth(t, 50) }, pp: analysis.PlanParams{Growth: 0.8, Months: 12}},
	{name: "random-multifactor", month: func(t testing.TB) analysis.Input {
		r := rand.New(rand.NewPCG(27, 3))
		nodes := randomCluster(r)
		return recordMonth(t, nodes, randomWorkload(r, nodes))
	}, pp: analysis.PlanParams{Growth: 0.5, Months: 12}},
}

// goldenPlanJSON is the month's whole plan (the recommendations with
// their simulated effects, and the simulated plan) as JSON, made with
// GOMAXPROCS procs.
func goldenPlanJSON(t *testing.T, gm goldenMonth, procs int) []byte {
	t.Helper()
	in := gm.month(t)
	wp := gm.wp
	if gm.name == "random-multifactor" {
		wp = multifactorConf(in)
	}
	c := planConfig(3)
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	sp, err := SimulatePlan(in, &f, SimPlanParams{WhatIf: wp, Plan: gm.pp}, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(struct {
		Recommendations []analysis.Recommendation `json:"recommendations"`
		Simulated       SimPlan                   `json:"simulated"`
	}{f.Recommendations, sp}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestPlanGolden: the whole plan of each planted month is byte-identical
// with GOMAXPROCS=1 and GOMAXPROCS=4, and to the plan on file
// (testdata/plan-golden): made from commit 35df12b before issue #27's speed
// work, which left them byte-identical (faster replays, run in parallel),
// and made again only at deliberate changes of an answer (the exact
// breach month, the verdict that agrees with its tables, the replay's
// Slurm grids and Fair Tree), each commit listing what changed.
func TestPlanGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("replays four planted months twice")
	}
	for _, gm := range goldenMonths {
		t.Run(gm.name, func(t *testing.T) {
			one := goldenPlanJSON(t, gm, 1)
			path := filepath.Join("testdata", "plan-golden", gm.name+".json")
			if *updatePlanGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, one, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			four := goldenPlanJSON(t, gm, 4)
			if !bytes.Equal(one, four) {
				t.Errorf("the plan differs between GOMAXPROCS=1 and 4:\n%s", firstDiff(one, four))
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(one, want) {
				t.Errorf("the plan differs from the golden one (%s):\n%s", path, firstDiff(want, one))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts, with context.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return "(equal)"
}
