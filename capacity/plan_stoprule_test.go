package capacity

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/queuesim"
)

// TestStopRuleKeyedAsDirect: stopRule finds each request's groups once
// (holdKey) and reads partitions' nodes from a table; on random clusters
// of two models and three partitions (MaxTime among them) and jobs of
// every shape (types, shards, one to three partitions, limits), its rule
// is the one the direct per-job rule (Holders, then each node's
// partitions) gives, for each scope. A key that left out what decides
// the holders (the limit, say) fails it.
func TestStopRuleKeyedAsDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 7))
	models := []string{"NVIDIA A100", "NVIDIA H100"}
	for trial := range 30 {
		r := &replay{span: 48 * time.Hour}
		for n := range 2 + rng.IntN(10) {
			m := rng.IntN(2)
			node := queuesim.Node{Name: fmt.Sprint("n", n), Type: []string{"a100", "h100"}[m], GPUs: []int{2, 4, 8}[rng.IntN(3)]}
			if rng.IntN(4) == 0 {
				node.ShardsPerGPU = 1 + rng.IntN(4)
			}
			r.cluster.Nodes = append(r.cluster.Nodes, node)
			r.simNodes = append(r.simNodes, SimNode{Name: node.Name, Model: models[m]})
		}
		for p := range 3 {
			part := queuesim.Partition{Name: fmt.Sprint("p", p)}
			if p > 0 {
				part.MaxTime = time.Duration(2+rng.IntN(6)) * time.Hour
			}
			for n := range r.cluster.Nodes {
				if p == 0 || rng.IntN(2) == 0 {
					part.Nodes = append(part.Nodes, n)
				}
			}
			r.cluster.Partitions = append(r.cluster.Partitions, part)
			r.simParts = append(r.simParts, SimPart{Name: part.Name})
		}
		var jobs []queuesim.Job
		for i := range 300 {
			j := queuesim.Job{Arrival: time.Duration(rng.Int64N(int64(60 * time.Hour))), Order: int64(i), Nodes: 1, GPUs: 1 + rng.IntN(8),
				Limit: time.Duration(1+rng.IntN(8)) * time.Hour, QOS: -1, Partitions: []int{rng.IntN(3)}}
			if rng.IntN(5) == 0 {
				j.GPUs, j.Shards = 0, 1+rng.IntN(4)
			}
			if rng.IntN(3) == 0 {
				j.Type = []string{"a100", "h100"}[rng.IntN(2)]
			}
			for range rng.IntN(3) {
				if p := rng.IntN(3); !slices.Contains(j.Partitions, p) {
					j.Partitions = append(j.Partitions, p)
				}
			}
			j.Running = rng.IntN(20) == 0
			jobs = append(jobs, j)
		}
		for _, scope := range []*stopScope{{}, {model: models[0]}, {model: models[1]}, {parts: []string{"p1", "p2"}}} {
			got := r.stopRule(scope, jobs, 3600)
			want := directStopRule(r, scope, jobs, 3600)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, scope %+v: the keyed rule differs from the direct one", trial, *scope)
			}
		}
	}
}

// directStopRule is stopRule as it was before the keys: each job's
// holders found, and each holder looked up in the partition's nodes.
func directStopRule(r *replay, scope *stopScope, jobs []queuesim.Job, target float64) *queuesim.StopRule {
	rule := r.stopRule(scope, nil, target) // Started and the sizes
	rule.Counted, rule.Pending, rule.Of = make([]bool, len(jobs)), make([]int32, len(jobs)), make([]int32, len(jobs)+1)
	rule.In = nil
	inScope := func(p int) bool { return scope.parts == nil || slices.Contains(scope.parts, r.simParts[p].Name) }
	var hold []int
	for i := range jobs {
		q := &jobs[i]
		rule.Pending[i] = -1
		rule.Of[i] = int32(len(rule.In))
		if q.Running || q.Arrival < 0 || q.Arrival >= r.span {
			continue
		}
		rule.Counted[i] = true
		if scope.model != "" {
			hold = queuesim.Holders(&r.cluster, q, hold[:0])
		}
		for _, p := range q.Partitions {
			if !inScope(p) {
				continue
			}
			only, some := true, scope.model == ""
			if scope.model != "" {
				for _, n := range hold {
					if slices.Contains(r.cluster.Partitions[p].Nodes, n) {
						if r.simNodes[n].Model == scope.model {
							some = true
						} else {
							only = false
						}
					}
				}
			}
			if !some {
				continue
			}
			rule.In = append(rule.In, int32(p))
			if len(q.Partitions) == 1 && only {
				rule.Pending[i] = int32(p)
			}
		}
	}
	rule.Of[len(jobs)] = int32(len(rule.In))
	return rule
}
