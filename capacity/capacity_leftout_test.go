package capacity

import (
	"fmt"
	"github.com/gpuprof/gpuprof/slurmext"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestPlantedLeftOut ("What must be shown" 5 of issue #26): the healthy
// month, whose plan is "no change", with jobs the cluster can never start
// of each kind. Each is counted with its reason in the plan, and the
// verdict is not no_change: it says which jobs could not run and why.
func TestPlantedLeftOut(t *testing.T) {
	in := healthyMonth(t)
	in.Jobs = append(in.Jobs, leftOutJobs(monthFrom)...)
	c := planConfig(2)
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	// slurm.conf's partition gpu, MaxTime 2 days: partition old is not in
	// the cluster (without slurm.conf the partitions are the jobs' own).
	var wp WhatIfParams
	wp.Sched, wp.SchedKnown = slurmConfGPU()
	// slurm.conf's nodes, without shards: the shard jobs have none to run
	// on (a node of unknown count would be given the assumed shards per
	// GPU, raised by their 46: TestReplayAssumesShardsOfUnknownNodes).
	for _, n := range in.Nodes {
		wp.SlurmNodes = append(wp.SlurmNodes, slurmext.NodeGres{Name: n.Name, GPUs: n.GPUs})
	}
	sp, err := SimulatePlan(in, &f, SimPlanParams{WhatIf: wp, Plan: analysis.PlanParams{Growth: 0.3, Months: 12}}, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(describe(f, sp))
	checkPlan(t, "healthy with left-out jobs", f, sp)
	if sp.Verdict.Code == VerdictNoChange {
		t.Errorf("verdict no_change with %d jobs that could not run", sp.Jobs.LeftOut)
	}
	if sp.Verdict.Code != VerdictLeftOut || sp.Verdict.Binding != BindingCluster {
		t.Errorf("verdict %s (%s), want %s (%s)", sp.Verdict.Code, sp.Verdict.Binding, VerdictLeftOut, BindingCluster)
	}
	if sp.Today == nil || sp.Today.Jobs.LeftOut != 11 || sp.Jobs.LeftOut != 11 {
		t.Fatalf("plan's left-out jobs %+v: want 11", sp.Jobs)
	}
	for _, tc := range []struct {
		kind string
		jobs int
	}{{LeftOutPartition, 3}, {LeftOutGPUType, 2}, {LeftOutShards, 2}, {LeftOutGPUs, 2}, {LeftOutNodes, 1}, {LeftOutTimeLimit, 1}} {
		if r := reasonOf(t, sp.Jobs, tc.kind); r.Jobs != tc.jobs {
			t.Errorf("%s: %d jobs, want %d", tc.kind, r.Jobs, tc.jobs)
		}
	}
	// What each reason's jobs need, in the JSON's fields and in the
	// purchase rows' words: not "none needed" (issue #38).
	for _, tc := range []struct {
		kind, need  string
		asked, have int
		hardware    bool
	}{
		{LeftOutGPUs, "a node of 6 GPUs in partition gpu", 6, 4, true},
		{LeftOutNodes, "5 nodes with room for their GPUs in partition gpu", 5, 0, true},
		{LeftOutGPUType, "a node with GPUs of type v100 in partition gpu", 0, 0, true},
		{LeftOutShards, "GPUs of 46 shards each in partition gpu", 46, 0, true},
		{LeftOutTimeLimit, "partition gpu's MaxTime raised to", 72 * 3600, 48 * 3600, false},
		{LeftOutPartition, "partition old, which the cluster's configuration lacks", 0, 0, false},
	} {
		r := reasonOf(t, sp.Jobs, tc.kind)
		if !strings.HasPrefix(r.Need, tc.need) || r.Asked != tc.asked || r.Hardware != tc.hardware || (tc.have != 0 && r.Have != tc.have) {
			t.Errorf("%s: need %q, asked %d, have %d, hardware %v; want %q, %d, %d, %v", tc.kind, r.Need, r.Asked, r.Have, r.Hardware, tc.need, tc.asked, tc.have, tc.hardware)
		}
		if tc.kind != LeftOutPartition && r.Partition != "gpu" {
			t.Errorf("%s: partition %q, want gpu", tc.kind, r.Partition)
		}
	}
	if buy := sp.Jobs.NoPurchaseWords(); strings.Contains(buy, "none needed") || !strings.Contains(buy, "the 11 jobs left out need partition old, which the cluster's configuration lacks (3 jobs)") ||
		!strings.Contains(buy, "and 3 more reasons") {
		t.Errorf("purchase row: %q", buy)
	}
	for _, want := range []string{"11 of", `partition "old" not in the cluster`, "no GPU of partition gpu has shards", `GPU type "v100"`,
		"more GPUs on one node (up to 6)", "more nodes (up to 5)", "MaxTime"} {
		if !strings.Contains(sp.Verdict.Text, want) {
			t.Errorf("verdict %q does not say %q", sp.Verdict.Text, want)
		}
	}

	// Every job left out: the plan is not simulated, and says why.
	for i := range in.Jobs {
		in.Jobs[i].Partition = "old"
	}
	sp, err = SimulatePlan(in, &f, SimPlanParams{WhatIf: wp, Plan: analysis.PlanParams{}}, c)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Simulated || sp.Verdict.Code != VerdictLeftOut || !strings.Contains(sp.Verdict.Text, `partition "old" not in the cluster`) {
		t.Errorf("every job left out: simulated %v, verdict %s %q", sp.Simulated, sp.Verdict.Code, sp.Verdict.Text)
	}
}

// TestPlantedLeftOutShare: a buy verdict whose replay left out more than
// LeftOutMaxShare of the GPU-hours says so in its sentence.
func TestPlantedLeftOutShare(t *testing.T) {
	in := shortOfH100(t, 8)
	r := rand.New(rand.NewPCG(26, 6))
	for k := range 6 {
		at := monthFrom.Add(time.Duration(r.IntN(28*24)) * time.Hour)
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(95000 + k), User: "big", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(3 * time.Hour), TimeLimit: 4 * time.Hour,
			ReqGPUs: 8, NodeCount: 1, NodeList: "elsewhere"})
	}
	f, sp := simulate(t, in, planConfig(2), analysis.PlanParams{})
	t.Log(describe(f, sp))
	checkPlan(t, "short of H100 with 8-GPU jobs", f, sp)
	if sp.Jobs.LeftOutShare <= LeftOutMaxShare {
		t.Fatalf("left-out share %.3f, want above %.2f for this test", sp.Jobs.LeftOutShare, LeftOutMaxShare)
	}
	if !strings.Contains(sp.Verdict.Text, "left out") || !strings.Contains(sp.Verdict.Text, "of their GPU-hours") {
		t.Errorf("verdict %s %q does not say that the replay left out %.0f %% of the GPU-hours", sp.Verdict.Code, sp.Verdict.Text, 100*sp.Jobs.LeftOutShare)
	}
}

// TestEffectLeavingJobsOutHarms: a change under which some jobs could
// never start (a per-user cap below what they ask for) takes their waits
// out of its numbers; it is harmful, and says which jobs, never "helps".
func TestEffectLeavingJobsOutHarms(t *testing.T) {
	in := shortOfH100(t, 8)
	for k := range 4 {
		at := monthFrom.Add(time.Duration(24*(k+1)) * time.Hour)
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(97000 + k), User: "wide", Partition: "gpu", QOS: "normal", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(time.Hour), TimeLimit: 2 * time.Hour, ReqGPUs: 4, NodeCount: 1, NodeList: "a0"})
	}
	c := planConfig(2)
	pl := &planner{in: in, params: analysis.PlanParams{}, budget: c.Plan.ReplayBudget, stepBudget: c.Plan.StepBudget, cache: map[string]*evalResult{}}
	if err := pl.start(&c.Plan, 1); err != nil {
		t.Fatal(err)
	}
	rec := analysis.Recommendation{ID: "R1", Kind: analysis.RecUserLimits, Replay: &analysis.ReplaySpec{Changes: []analysis.Change{analysis.QOSChange("normal", 2, 0, 0)}, GroupName: "all GPU jobs"}}
	e := pl.effect(&rec, 0)
	t.Log(e.Text)
	if e.Outcome != analysis.EffectHarms || !strings.Contains(e.Text, "4 more jobs could never start") || !strings.Contains(e.Text, "QOS normal") {
		t.Errorf("outcome %s, %q: want harmful, naming the 4 jobs the cap leaves unable to start", e.Outcome, e.Text)
	}
}
