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

// misfitMonth is the month of analysis's TestInventoryThatDoesNotFit: 60
// one-GPU jobs, each running through the whole of March 2026 on a node of
// its own, and a slurm.conf of cluster dlrm whose one node has 4 GPUs —
// an inventory that does not fit the jobs, which the input refuses.
func misfitMonth() analysis.Input {
	march := analysis.Window{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}
	b := analysis.NewInputBuilder()
	b.SetConf(analysis.ConfUse{Cluster: "dlrm"}, []slurmext.NodeGres{{Name: "x000", GPUs: 4}})
	for i := range 60 {
		b.Add(&slurmext.JobRecord{Cluster: "dlrm", JobID: fmt.Sprint(100 + i), State: "COMPLETED", Submit: march.From, Eligible: march.From,
			Start: march.From, End: march.To, NodeList: fmt.Sprintf("x%03d", i), NodeCount: 1,
			ReqTRES: "gres/gpu=1", ReqGPUs: 1, Partition: "hn", ArrayTaskID: -1, HetOffset: -1}, nil)
	}
	return b.Input(march, march.To)
}

// TestWhatIfOnInventoryThatDoesNotFit: the what-if and the plan refuse
// the inventory the input refused, saying why; --node gives the cluster.
func TestWhatIfOnInventoryThatDoesNotFit(t *testing.T) {
	in := misfitMonth()
	if in.Inventory.Misfit == "" || len(in.Nodes) != 0 {
		t.Fatalf("4 GPUs for 60 GPUs' work: nodes %v, inventory %+v; want it refused", in.Nodes, in.Inventory)
	}
	c := analysis.DefaultConfig()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunWhatIf(in, WhatIfParams{Seeds: 1, SlurmNodes: []slurmext.NodeGres{{Name: "x000", GPUs: 4}}})
	var nc *NoClusterError
	if !errors.As(err, &nc) || !errors.Is(err, ErrNoCluster) || !strings.Contains(err.Error(), "does not fit the jobs") {
		t.Errorf("whatif on the refused inventory's slurm.conf: %v, want no cluster, saying why", err)
	}
	sp, err := SimulatePlan(in, &f, SimPlanParams{WhatIf: WhatIfParams{SlurmNodes: []slurmext.NodeGres{{Name: "x000", GPUs: 4}}}, Plan: c.Plan.Params()}, c)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Verdict.Code != VerdictNoInventory || !strings.Contains(sp.Verdict.Text, "does not fit the jobs") || sp.Inventory.Misfit == "" {
		t.Errorf("plan verdict %+v, inventory %+v; want no_inventory saying why", sp.Verdict, sp.Inventory)
	}
	// --node gives the cluster, and says what it replaced.
	wi, err := RunWhatIf(in, WhatIfParams{Seeds: 1, FlagNodes: []analysis.Node{{Name: "x000", GPUModel: "gpu", GPUs: 8}, {Name: "x001", GPUModel: "gpu", GPUs: 8},
		{Name: "x002", GPUModel: "gpu", GPUs: 8}, {Name: "x003", GPUModel: "gpu", GPUs: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	if wi.ClusterSource != analysis.InventoryFlags || !strings.Contains(strings.Join(wi.Assumed, "; "), "in place of an inventory that does not fit the jobs") || wi.Jobs.Replayed != 60 {
		t.Errorf("whatif --node: source %q, assumed %q, %d replayed", wi.ClusterSource, wi.Assumed, wi.Jobs.Replayed)
	}
}

// TestWhatIfNodeFlagIsTheCluster: --node is the cluster when given, not
// only when nothing else is (it was ignored silently when profiles or
// slurm.conf gave nodes); slurm.conf's partitions take the --node nodes
// (those naming a partition, in it; the others in every one).
func TestWhatIfNodeFlagIsTheCluster(t *testing.T) {
	in := plantedQueue()
	sc := slurmext.DefaultSchedConf()
	sc.Partitions = []slurmext.PartitionConf{{Name: "gpu", Nodes: []string{"h0", "h1", "a0", "a1"}, MaxTime: 48 * time.Hour, PriorityTier: 1}}
	known := true
	flags := []analysis.Node{{Name: "f1", GPUModel: "h100", GPUs: 8}, {Name: "f2", GPUModel: "a100", GPUs: 8, Partitions: []string{"gpu"}}, {Name: "f3", GPUModel: "a100", GPUs: 8, Partitions: []string{"other"}}}
	w, err := RunWhatIf(in, WhatIfParams{Seeds: 1, Sched: sc, SchedKnown: known, FlagNodes: flags})
	if err != nil {
		t.Fatal(err)
	}
	if w.ClusterSource != analysis.InventoryFlags || len(w.Nodes) != 3 || w.Nodes[0].Name != "f1" {
		t.Fatalf("cluster %q %+v, want the --node nodes", w.ClusterSource, w.Nodes)
	}
	if !strings.Contains(strings.Join(w.Assumed, "; "), "the cluster as --node gives it, in place of the inventory from") {
		t.Errorf("assumed %q, want what --node replaced", w.Assumed)
	}
	for _, p := range w.Partitions {
		if p.Name == "gpu" && strings.Join(p.Nodes, ",") != "f1,f2" {
			t.Errorf("partition gpu on %v, want f1 (no partition named) and f2", p.Nodes)
		}
	}
}
