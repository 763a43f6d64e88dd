package capacity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
)

// shardJobs are n jobs of 12 shards each on one GPU of partition gpu,
// 2 hours each, a day apart: more than the 8 per GPU assumed, so the
// data raises the assumption to 12 (analysis.ShardsPerGPU).
func shardJobs(from time.Time, n int) []analysis.Job {
	var out []analysis.Job
	for k := range n {
		at := from.Add(time.Duration(24*(k+1)) * time.Hour)
		out = append(out, analysis.Job{ID: fmt.Sprint(95000 + k), User: "sh", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(2 * time.Hour), TimeLimit: 3 * time.Hour,
			ReqShards: 12, NodeCount: 1, NodeList: "h0"})
	}
	return out
}

// TestReplayAssumesShardsOfUnknownNodes (issue #38): nodes whose shard
// count no slurm.conf gives get, in the replay, the shards per GPU the
// analysis counts shard jobs by — the assumption raised by the data (a
// job held 12 of one GPU) — and the replay says so; the shard jobs run
// instead of being left out for "no shards". A slurm.conf that gives the
// nodes no shards still leaves them out: a known 0 is not unknown.
func TestReplayAssumesShardsOfUnknownNodes(t *testing.T) {
	in := plantedQueue()
	in.Jobs = append(in.Jobs, shardJobs(in.Window.From, 3)...)

	w, err := RunWhatIf(in, WhatIfParams{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(w.Assumed, "\n")
	if !strings.Contains(said, "12 shards per GPU assumed on 4 nodes whose shard count is in no slurm.conf") ||
		!strings.Contains(said, "raised from 8: a job held 12 shards of one GPU") {
		t.Errorf("assumptions %q do not say the shards assumed and why", w.Assumed)
	}
	for _, r := range w.Jobs.LeftOutReasons {
		if r.Kind == LeftOutShards {
			t.Errorf("shard jobs left out: %+v", r)
		}
	}

	var p WhatIfParams
	p.Seeds = 1
	for _, n := range in.Nodes {
		p.SlurmNodes = append(p.SlurmNodes, slurmext.NodeGres{Name: n.Name, GPUs: n.GPUs})
	}
	w, err = RunWhatIf(in, p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(w.Assumed, "\n"), "shards per GPU assumed") {
		t.Errorf("shards assumed on nodes slurm.conf gives none: %q", w.Assumed)
	}
	if r := reasonOf(t, w.Jobs, LeftOutShards); r.Jobs != 3 {
		t.Errorf("left out for shards: %+v, want the 3 shard jobs", r)
	}
}
