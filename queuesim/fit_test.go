package queuesim

import (
	"slices"
	"testing"
	"time"
)

// TestCheckFit: every reason a job can never start, named with the
// partition that came closest and what it has; the simulator marks the
// same jobs Unrunnable with the same reason.
func TestCheckFit(t *testing.T) {
	c := Cluster{
		Nodes: []Node{
			{Name: "a0", Type: "a100", GPUs: 4}, {Name: "a1", Type: "a100", GPUs: 4},
			{Name: "h0", Type: "h100", GPUs: 8, ShardsPerGPU: 8},
			{Name: "s0", GPUs: 2},
		},
		Partitions: []Partition{
			{Name: "gpu", Nodes: []int{0, 1, 2}, MaxTime: 24 * time.Hour},
			{Name: "short", Nodes: []int{3}, MaxTime: time.Hour},
		},
		QOS: []QOS{{Name: "capped", MaxGPUsPerUser: 4}, {Name: "grp", GrpGPUs: 6}},
	}
	mk := func(f func(j *Job)) Job {
		j := Job{Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: 1, Run: time.Minute}
		f(&j)
		return j
	}
	for _, tc := range []struct {
		name string
		job  Job
		want Unfit
	}{
		{"fits", mk(func(j *Job) {}), Unfit{Kind: Fits, Partition: 0}},
		{"fits in the second partition", mk(func(j *Job) { j.Partitions = []int{1, 0}; j.GPUs = 3 }), Unfit{Kind: Fits, Partition: 0}},
		{"type no node has", mk(func(j *Job) { j.Type = "l40s" }), Unfit{Kind: UnfitType, Partition: 0}},
		{"more shards than a GPU has", mk(func(j *Job) { j.GPUs, j.Shards = 0, 46 }), Unfit{Kind: UnfitShards, Partition: 0, Have: 8}},
		{"shards, but no GPU of the type has shards", mk(func(j *Job) { j.GPUs, j.Shards, j.Type = 0, 1, "a100" }), Unfit{Kind: UnfitShards, Partition: 0, Have: 0}},
		{"more GPUs than a node has", mk(func(j *Job) { j.GPUs, j.Type = 6, "a100" }), Unfit{Kind: UnfitGPUs, Partition: 0, Have: 4}},
		{"more nodes than the partition has", mk(func(j *Job) { j.Nodes, j.GPUs, j.Type = 3, 4, "a100" }), Unfit{Kind: UnfitNodes, Partition: 0, Have: 2}},
		{"limit above MaxTime", mk(func(j *Job) { j.Partitions, j.Limit = []int{1}, 2*time.Hour }), Unfit{Kind: UnfitTimeLimit, Partition: 1, Have: 3600}},
		{"QOS per user", mk(func(j *Job) { j.QOS, j.GPUs = 0, 6 }), Unfit{Kind: UnfitQOS, Partition: -1, Have: 4}},
		{"QOS group", mk(func(j *Job) { j.QOS, j.GPUs, j.Nodes = 1, 4, 2 }), Unfit{Kind: UnfitQOS, Partition: -1, Have: 6}},
		{"no partition", mk(func(j *Job) { j.Partitions = nil }), Unfit{Kind: UnfitPartition, Partition: -1}},
		// Of several partitions, the one that came closest names the
		// reason: short lacks the time for it, gpu only a node as large.
		{"closest of two", mk(func(j *Job) { j.Partitions, j.GPUs, j.Limit = []int{1, 0}, 10, 2*time.Hour }),
			Unfit{Kind: UnfitGPUs, Partition: 0, Have: 8}},
		{"first of two as close", mk(func(j *Job) { j.Partitions, j.Type = []int{1, 0}, "l40s" }),
			Unfit{Kind: UnfitType, Partition: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckFit(&c, &tc.job)
			if got != tc.want {
				t.Errorf("CheckFit = %+v (%s), want %+v (%s)", got, got.Kind, tc.want, tc.want.Kind)
			}
			if len(tc.job.Partitions) == 0 {
				return
			}
			rs := run(t, c, DefaultPriority(), fifoScheduler(), []Job{tc.job})
			switch {
			case tc.want.Kind == Fits && rs[0].Outcome != Ran:
				t.Errorf("replayed: %v, want ran", rs[0].Outcome)
			case tc.want.Kind != Fits && (rs[0].Outcome != Unrunnable || rs[0].Unfit != tc.want):
				t.Errorf("replayed: %v %+v, want unrunnable %+v", rs[0].Outcome, rs[0].Unfit, tc.want)
			}
		})
	}
}

// TestHolders: the nodes a job could ever run on are those of its
// partitions whose MaxTime admits its limit, of its GPU type, with GPUs
// (or shards per GPU) enough for its share, each once — the nodes
// CheckFit counts; a job no node holds has none.
func TestHolders(t *testing.T) {
	c := Cluster{
		Nodes: []Node{
			{Name: "p0", GPUs: 4}, {Name: "p1", GPUs: 4},
			{Name: "g0", Type: "g2", GPUs: 2, ShardsPerGPU: 8},
			{Name: "s0", GPUs: 1},
		},
		Partitions: []Partition{
			{Name: "gpu", Nodes: []int{0, 1, 2}, MaxTime: 24 * time.Hour},
			{Name: "short", Nodes: []int{3, 0}, MaxTime: time.Hour},
		},
	}
	mk := func(f func(j *Job)) Job {
		j := Job{Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: 1, Run: time.Minute}
		f(&j)
		return j
	}
	for _, tc := range []struct {
		name string
		job  Job
		want []int
	}{
		{"untyped: every node of the partition", mk(func(j *Job) {}), []int{0, 1, 2}},
		{"typed: its type only", mk(func(j *Job) { j.Type = "g2" }), []int{2}},
		{"too many GPUs for g0", mk(func(j *Job) { j.GPUs = 3 }), []int{0, 1}},
		{"shards: nodes with enough per GPU", mk(func(j *Job) { j.GPUs, j.Shards = 0, 4 }), []int{2}},
		{"two partitions, a node once", mk(func(j *Job) { j.Partitions = []int{0, 1} }), []int{0, 1, 2, 3}},
		{"a limit above short's MaxTime", mk(func(j *Job) { j.Partitions, j.Limit = []int{1, 0}, 2*time.Hour }), []int{0, 1, 2}},
		{"none", mk(func(j *Job) { j.Type = "h100" }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Holders(&c, &tc.job, nil)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Holders = %v, want %v", got, tc.want)
			}
		})
	}
}
