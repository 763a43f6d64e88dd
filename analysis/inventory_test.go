package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// inventoryRecords are n jobs of gpus GPUs each, all running through the
// whole of March 2026 on nodes x000…: what a cluster of n × gpus GPUs
// holds at once.
func inventoryRecords(n, gpus int) []*slurmext.JobRecord {
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var out []*slurmext.JobRecord
	for i := range n {
		out = append(out, &slurmext.JobRecord{Cluster: "dlrm", JobID: fmt.Sprint(100 + i), State: "COMPLETED",
			Submit: from, Eligible: from, Start: from, End: from.AddDate(0, 1, 0), NodeList: fmt.Sprintf("x%03d", i), NodeCount: 1,
			ReqTRES: fmt.Sprintf("gres/gpu=%d", gpus), ReqGPUs: gpus, Partition: "hn", ArrayTaskID: -1, HetOffset: -1})
	}
	return out
}

// TestInventorySource: the input says where its GPU nodes came from — the
// profiles, the slurm.conf of the answer's cluster (named), both, or
// none — and never a source it did not use.
func TestInventorySource(t *testing.T) {
	march := Window{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}
	conf := []slurmext.NodeGres{{Name: "x000", GPUs: 8}, {Name: "x001", GPUs: 8}}
	prof := []profile.Job{{Key: profile.Key{Cluster: "dlrm", JobID: "100", Node: "x000"}, GPUs: []profile.GPU{{UUID: "GPU-a", Model: "NVIDIA A100"}, {UUID: "GPU-b", Model: "NVIDIA A100"}}}}
	for _, tt := range []struct {
		name     string
		profiles bool
		nodes    []slurmext.NodeGres
		want     string
		gpus     int
	}{
		{name: "nothing", want: InventoryNone},
		{name: "slurm.conf alone", nodes: conf, want: "slurm.conf of cluster dlrm", gpus: 16},
		{name: "profiles alone", profiles: true, want: InventoryProfiles, gpus: 2},
		{name: "both", profiles: true, nodes: conf, want: "profiles and slurm.conf of cluster dlrm", gpus: 16},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := NewInputBuilder()
			b.SetConf(ConfUse{Cluster: "dlrm", SlurmConf: "/srv/dlrm/slurm.conf"}, tt.nodes)
			for _, r := range inventoryRecords(1, 1) {
				var ps []profile.Job
				if tt.profiles {
					ps = prof
				}
				b.Add(r, ps)
			}
			in := b.Input(march, march.To)
			if in.Inventory.Source != tt.want || in.Inventory.GPUs != tt.gpus || in.Inventory.Misfit != "" || in.Conf.Cluster != "dlrm" {
				t.Errorf("inventory %+v, conf %+v; want %q with %d GPUs", in.Inventory, in.Conf, tt.want, tt.gpus)
			}
		})
	}
}

// TestInventoryThatDoesNotFit: an inventory the window's jobs held more
// GPU time than (an occupancy above 100 %) is refused: no nodes, a
// sentence saying so, and every output that would have counted it says
// why instead — no occupancy, no GPUs now, no per-user limit of its
// GPUs, no replay on it (unless --node gives the cluster). One that fits
// exactly is kept.
func TestInventoryThatDoesNotFit(t *testing.T) {
	march := Window{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}
	build := func(confGPUs int) Input {
		b := NewInputBuilder()
		b.SetConf(ConfUse{Cluster: "dlrm"}, []slurmext.NodeGres{{Name: "x000", GPUs: confGPUs}})
		for _, r := range inventoryRecords(60, 1) { // 60 GPUs all month
			b.Add(r, nil)
		}
		return b.Input(march, march.To)
	}
	if in := build(60); in.Inventory.Misfit != "" || len(in.Nodes) != 1 {
		t.Fatalf("60 GPUs for 60 GPUs' work: %+v, want it kept", in.Inventory)
	}
	in := build(4)
	inv := in.Inventory
	if len(in.Nodes) != 0 || inv.Source != InventoryNone || inv.GPUs != 4 ||
		!strings.HasPrefix(inv.Misfit, "the inventory does not fit the jobs: they held 44,640 GPU-hours in the window, more than the 4 GPUs of the inventory (from slurm.conf of cluster dlrm) could hold in it (2,976)") {
		t.Fatalf("4 GPUs for 60 GPUs' work: nodes %v, inventory %+v", in.Nodes, inv)
	}
	c := DefaultConfig()
	w := SummariseWorkload(in, WorkloadParams{Window: march}, c)
	if w.Headline.Occupancy != 0 || w.Headline.CapacityGPUHours != 0 || w.Inventory.Misfit != inv.Misfit {
		t.Errorf("workload headline %+v, inventory %+v: want no occupancy and the misfit", w.Headline, w.Inventory)
	}
	f, err := Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Plan.CurrentGPUs != 0 || f.Plan.Inventory.Misfit == "" || !strings.Contains(f.Plan.CrossCheck, "does not fit the jobs") {
		t.Errorf("plan: %d GPUs now, %+v, %q; want none, and why", f.Plan.CurrentGPUs, f.Plan.Inventory, f.Plan.CrossCheck)
	}
	for _, r := range f.Recommendations {
		if strings.Contains(r.Change, "of 4 GPUs") || strings.Contains(r.Effect, "of 4 GPUs") {
			t.Errorf("recommendation %s counts the 4 GPUs that do not fit: %s", r.Kind, r.Change)
		}
	}
}

// TestInventoryBelowThePeak: jobs cannot hold more GPUs at once than the
// cluster has. Six 1-GPU jobs of an hour each at the same time, in a
// month whose GPU-hours a 4-GPU configuration could hold many times over,
// are refused as a misfit naming the peak and when it was (issue 38,
// item 1: a 3,300-GPU configuration for a window that held 3,412 at once
// gave "held 3,327 of 3300 GPUs"). Six GPUs fit; six jobs one after
// another (one ending in the second the next starts) fit one GPU.
func TestInventoryBelowThePeak(t *testing.T) {
	march := Window{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	build := func(confGPUs int, serial bool) Input {
		b := NewInputBuilder()
		b.SetConf(ConfUse{Cluster: "dlrm"}, []slurmext.NodeGres{{Name: "x000", GPUs: confGPUs}})
		for i, r := range inventoryRecords(6, 1) {
			start := t0
			if serial {
				start = t0.Add(time.Duration(i) * time.Hour)
			}
			r.Submit, r.Eligible, r.Start, r.End = start, start, start, start.Add(time.Hour)
			b.Add(r, nil)
		}
		return b.Input(march, march.To)
	}
	in := build(4, false)
	want := "the inventory does not fit the jobs: they held 6 GPUs at once (2026-03-10T12:00:00Z), more than the 4 GPUs of the inventory (from slurm.conf of cluster dlrm)"
	if in.Inventory.Misfit != want || len(in.Nodes) != 0 || in.Inventory.Source != InventoryNone {
		t.Errorf("4 GPUs for 6 at once: inventory %+v, nodes %v;\nwant the misfit %q", in.Inventory, in.Nodes, want)
	}
	if in := build(6, false); in.Inventory.Misfit != "" || len(in.Nodes) != 1 {
		t.Errorf("6 GPUs for 6 at once: %+v, want it kept", in.Inventory)
	}
	if in := build(1, true); in.Inventory.Misfit != "" || len(in.Nodes) != 1 {
		t.Errorf("1 GPU for 6 jobs one after another: %+v, want it kept", in.Inventory)
	}
}
