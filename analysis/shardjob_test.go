package analysis

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// shardProfile is a --gres=shard:2 job alone on its H100, as the node's
// profile records it: one GPU, quiet (utilisation 3 %), 2 GiB of its
// 80 GiB memory, 6 hours. The shard count arrives the way a collector or
// a node database gives it to the analysis: in the profile's JSON
// ("shards", "alloc_known"), so that a build that ignores it reads a
// one-GPU job.
func shardProfile(t *testing.T, shards int) profile.Job {
	t.Helper()
	start := t0
	g := profile.NewGPU(gpu.Device{UUID: "GPU-s", Name: h100, MemoryTotal: card}, 0, start, time.Minute, 100)
	for i := range 360 {
		g.Observe(profile.Reading{Time: start.Add(time.Duration(i+1) * time.Minute), Util: gpu.Some(uint32(3)),
			MemUsed: gpu.Some(2 * gib), Processes: 1}, time.Minute)
	}
	p := profile.Job{Key: profile.Key{Cluster: "c1", JobID: "77", Node: "gpu01"}, User: "ada", Start: start,
		Status: profile.StatusRunning, GPUs: []profile.GPU{g}}
	p.Finish(start.Add(6 * time.Hour))
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["shards"], m["alloc_known"] = shards, true
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	var out profile.Job
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShardJobJudgedAsShards (issue #38): a shard:2 job alone on its GPU,
// known only from its node's profile (no scheduler record yet), is a
// shard job on every page: Shown says 2 shards of 1 GPU, and its hints
// never tell it to ask for --gres=shard:1 as if it held the GPU whole,
// nor for a smaller whole GPU. The same profile with the allocation read
// as whole GPUs (shards 0) still gets the shard hint: the rule is the
// allocation, not the quiet GPU.
func TestShardJobJudgedAsShards(t *testing.T) {
	c := DefaultConfig()
	types := GPUTypes([]Node{{Name: "gpu01", GPUModel: h100, GPUs: 4, MemoryTotal: card},
		{Name: "l401", GPUModel: "NVIDIA L4", GPUs: 4, MemoryTotal: 24 * gib}})

	j := FromView(nil, []profile.Job{shardProfile(t, 2)})
	if j.ReqShards != 2 {
		t.Errorf("ReqShards = %d, want the profile's 2", j.ReqShards)
	}
	m := Measure(j, c)
	if s := m.Shown(); s.Shards != 2 || s.GPUs != 1 {
		t.Errorf("Shown = %+v, want 2 shards of 1 GPU", s)
	}
	for _, h := range Hints(j, c, types) {
		if h.Rule == HintShard || h.Rule == HintSmallerGPU || strings.Contains(h.Option, "shard:1") || strings.Contains(h.Why, "whole GPU") {
			t.Errorf("a shard:2 job got the whole-GPU hint %+v", h)
		}
	}

	whole := FromView(nil, []profile.Job{shardProfile(t, 0)})
	mw := Measure(whole, c)
	if whole.ReqShards != 0 || mw.Shown().Shards != 0 {
		t.Errorf("a whole-GPU allocation reads as shards: %d", whole.ReqShards)
	}
	hs := Hints(whole, c, types)
	if !slices.ContainsFunc(hs, func(h Hint) bool { return h.Rule == HintShard }) {
		t.Errorf("the same job on a whole GPU lost its shard hint: %+v", hs)
	}
}
