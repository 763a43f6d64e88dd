package queuesim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// randomReplay draws a cluster, its settings and a month of jobs: nodes
// of 1–8 GPUs of up to two types, some with shards, one to three
// partitions over random nodes (some with MaxTime, tiers, factors), QOS
// limits, jobs of whole GPUs, shards or several nodes, with and without
// limits, cancels and jobs running at the start, at a load from half the
// cluster to three times it (overloaded: thousands pending), under
// priority/basic or multifactor (fair tree too) and backfill settings
// that reach their bounds (bf_max_job_test, bf_max_job_part/user, a short
// bf_window).
func randomReplay(seed uint64) (Cluster, Priority, Scheduler, []Job, Options) {
	rng := rand.New(rand.NewPCG(seed, 77))
	types := []string{"", "a100", "h100"}
	var c Cluster
	for i := range 1 + rng.IntN(10) {
		n := Node{Name: fmt.Sprint("n", i), Type: types[rng.IntN(3)], GPUs: []int{1, 2, 4, 8, 8}[rng.IntN(5)]}
		if rng.IntN(5) == 0 {
			n.ShardsPerGPU = []int{2, 4, 7}[rng.IntN(3)]
		}
		c.Nodes = append(c.Nodes, n)
	}
	for p := range 1 + rng.IntN(3) {
		part := Partition{Name: fmt.Sprint("p", p), PriorityTier: rng.IntN(2), PriorityFactor: rng.IntN(3)}
		for n := range c.Nodes {
			if p == 0 || rng.IntN(2) == 0 {
				part.Nodes = append(part.Nodes, n)
			}
		}
		if rng.IntN(3) == 0 {
			part.MaxTime = time.Duration(2+rng.IntN(20)) * time.Hour
		}
		c.Partitions = append(c.Partitions, part)
	}
	for range rng.IntN(3) {
		c.QOS = append(c.QOS, QOS{Priority: rng.IntN(100), MaxGPUsPerUser: rng.IntN(3) * 4, MaxJobsPerUser: rng.IntN(3) * 3, GrpGPUs: rng.IntN(2) * 12})
	}
	gpus := 0
	for _, n := range c.Nodes {
		gpus += n.GPUs
	}
	n := 200 + rng.IntN(1300)
	load := 0.5 + 2.5*rng.Float64()
	window := 3 * 86400.0
	meanGPUs := 2.0
	meanRun := load * float64(gpus) * window / (float64(n) * meanGPUs)
	jobs := make([]Job, n)
	for i := range jobs {
		r := rng.ExpFloat64()*meanRun + 1
		j := Job{
			Arrival: time.Duration(rng.Float64()*window) * sec, Order: int64(i),
			Run: time.Duration(r) * sec, QOS: rng.IntN(len(c.QOS)+1) - 1,
			User: rng.IntN(12), Account: rng.IntN(4), Nodes: 1, GPUs: 1 + rng.IntN(3),
		}
		switch rng.IntN(10) {
		case 0:
			j.GPUs = 4 + rng.IntN(5)
		case 1:
			j.GPUs, j.Shards = 0, 1+rng.IntN(4)
		case 2:
			j.Nodes = 2 + rng.IntN(2)
		}
		if rng.IntN(8) != 0 {
			j.Limit = time.Duration(r*(1+2*rng.Float64())+float64(rng.IntN(600))) * sec
		}
		if rng.IntN(4) == 0 {
			j.Limit = time.Duration(1+rng.IntN(8)) * time.Hour // round limits: shapes repeat
			j.Run = min(j.Run, j.Limit)
		}
		if rng.IntN(6) == 0 {
			j.Type = types[1+rng.IntN(2)]
		}
		j.Partitions = []int{rng.IntN(len(c.Partitions))}
		if len(c.Partitions) > 1 && rng.IntN(3) == 0 {
			j.Partitions = append(j.Partitions, (j.Partitions[0]+1)%len(c.Partitions))
		}
		if rng.IntN(15) == 0 {
			j.Cancels, j.Cancel = true, j.Arrival+time.Duration(rng.IntN(20000))*sec
		}
		if i < 10 && rng.IntN(2) == 0 {
			j.Running, j.Started, j.Arrival = true, -time.Duration(rng.IntN(3600))*sec, 0
		}
		jobs[i] = j
	}
	pr := DefaultPriority()
	if rng.IntN(2) == 0 {
		pr.Multifactor, pr.WeightAge, pr.WeightFairshare, pr.WeightPartition, pr.WeightQOS = true, 1000, 2000, 500, 300
		pr.FairTree = rng.IntN(2) == 0
	}
	sc := DefaultScheduler()
	sc.BfMaxJobTest = []int{500, 500, 50, 10}[rng.IntN(4)]
	if rng.IntN(4) == 0 {
		sc.BfMaxJobPart, sc.BfMaxJobUser = rng.IntN(40), rng.IntN(20)
	}
	if rng.IntN(3) == 0 {
		sc.BfWindow = time.Duration(1+rng.IntN(6)) * time.Hour
	}
	sc.BfResolution = []time.Duration{time.Minute, time.Minute, 5 * time.Minute, time.Second}[rng.IntN(4)]
	sc.ClockOffset = time.Duration(rng.IntN(60)) * sec
	return c, pr, sc, jobs, Options{Seed: rng.Uint64()}
}

// replay runs the jobs through the simulator, on the reference path (every
// backfill test searched, every node scanned) or not, and returns the
// result, how many searches the dominance bound answered and how many
// nodes the duration bound passed over.
func replay(t *testing.T, c Cluster, pr Priority, sc Scheduler, jobs []Job, o Options, reference bool) (*Result, int, int) {
	t.Helper()
	s, err := newSim(c, pr, sc, jobs, o)
	if err != nil {
		t.Fatal(err)
	}
	s.reference = reference
	s.loop()
	return s.result(), s.bounded, s.durBounded
}

// TestDominanceBoundChangesNothing: on random clusters, settings and
// months, many of them overloaded, the replay with the backfill's
// dominance bound and duration bound gives every job the same outcome,
// start, partition and node, and the same counts, as the reference path
// that searches every job on every node; and each bound answered in most
// of them, so the test compares something. (A duration bound recorded
// 600 s too late fails it.)
func TestDominanceBoundChangesNothing(t *testing.T) {
	runs := 120
	if testing.Short() {
		runs = 30
	}
	answered, total, durAnswered, durTotal := 0, 0, 0, 0
	for seed := range uint64(runs) {
		c, pr, sc, jobs, o := randomReplay(seed + 1)
		want, _, _ := replay(t, c, pr, sc, jobs, o, true)
		got, bounded, durBounded := replay(t, c, pr, sc, jobs, o, false)
		sameReplay(t, seed+1, got, want)
		total += bounded
		if bounded > 0 {
			answered++
		}
		durTotal += durBounded
		if durBounded > 0 {
			durAnswered++
		}
	}
	if answered < runs/2 {
		t.Errorf("the bound answered searches in %d of %d replays (%d in all): want at least half", answered, runs, total)
	}
	if durAnswered < runs/2 {
		t.Errorf("the duration bound passed over nodes in %d of %d replays (%d in all): want at least half", durAnswered, runs, durTotal)
	}
	t.Logf("the bound answered %d searches, in %d of %d replays; the duration bound passed over %d nodes, in %d", total, answered, runs, durTotal, durAnswered)
}

// sameReplay reports each difference between two replays of one random
// month: the counts, and the first job whose outcome, start, partition or
// node differs.
func sameReplay(t *testing.T, seed uint64, got, want *Result) {
	t.Helper()
	if !reflect.DeepEqual(got.Stats, want.Stats) {
		t.Errorf("seed %d: stats %+v, want %+v", seed, got.Stats, want.Stats)
	}
	for i := range want.Jobs {
		if !reflect.DeepEqual(got.Jobs[i], want.Jobs[i]) {
			t.Errorf("seed %d: job %d: %+v, want %+v", seed, i, got.Jobs[i], want.Jobs[i])
			return
		}
	}
}
