package queuesim

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

const sec = time.Second

// exactFIFOMulti computes a strict FIFO queue on c GPUs outside the
// simulator: each job in submission order starts at the first time, not
// before its arrival nor the previous job's start, when its GPUs are free.
func exactFIFOMulti(jobs []Job, c int) []time.Duration {
	type run struct{ end, gpus int64 }
	var running []run
	starts := make([]time.Duration, len(jobs))
	last := int64(0)
	for i, j := range jobs {
		t := max(int64(j.Arrival/sec), last)
		for {
			used := int64(0)
			next := int64(never)
			for _, r := range running {
				if r.end > t {
					used += r.gpus
					next = min(next, r.end)
				}
			}
			if used+int64(j.GPUs) <= int64(c) {
				break
			}
			t = next
		}
		last = t
		running = append(running, run{t + int64(j.Run/sec), int64(j.GPUs)})
		starts[i] = time.Duration(t) * sec
	}
	return starts
}

// TestReplayFIFOExact: a month of jobs of 1–4 GPUs, replayed FIFO on
// fewer and more GPUs, starts each job exactly when a FIFO computation
// outside the simulator says.
func TestReplayFIFOExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var jobs []Job
	for i, at := 0, 0.0; at < 30*86400; i++ {
		at += rng.ExpFloat64() * 600
		jobs = append(jobs, Job{
			Arrival: time.Duration(at) * sec, Order: int64(i), Run: time.Duration(60+rng.IntN(7200)) * sec,
			Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: 1 + rng.IntN(4),
		})
	}
	for _, c := range []int{4, 6, 8, 16} {
		r, err := Run(fifoCluster(c), DefaultPriority(), fifoScheduler(), jobs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := exactFIFOMulti(jobs, c)
		bad := 0
		for i := range jobs {
			if r.Jobs[i].Start != want[i] {
				if bad++; bad <= 3 {
					t.Errorf("%d GPUs: job %d starts at %s, exact FIFO %s", c, i, r.Jobs[i].Start, want[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d GPUs: %d of %d jobs differ", c, bad, len(jobs))
		}
	}
}

func job(arrival, run, limit int, gpus int) Job {
	return Job{Arrival: time.Duration(arrival) * sec, Order: int64(arrival), Run: time.Duration(run) * sec,
		Limit: time.Duration(limit) * sec, Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: gpus}
}

func run(t *testing.T, c Cluster, pr Priority, sc Scheduler, jobs []Job) []JobResult {
	t.Helper()
	r, err := Run(c, pr, sc, jobs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Jobs
}

func starts(rs []JobResult) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = -1
		if r.Outcome == Ran {
			out[i] = int(r.Start / sec)
		}
	}
	return out
}

func bfScheduler() Scheduler {
	sc := DefaultScheduler()
	sc.BfPhaseKnown = true // cycles at 0, 30, 60, …
	return sc
}

// TestBackfill: on 4 GPUs, A holds 2 until 100 (limit 120); B wants all 4
// and is planned at 120; C (2 GPUs, limit 60) fits before that and starts
// in the first backfill cycle, at 30; E (limit 180) would delay B and
// waits for it; without backfill C waits for B too.
func TestBackfill(t *testing.T) {
	jobs := []Job{
		job(0, 100, 120, 2), // A
		job(1, 50, 100, 4),  // B
		job(2, 30, 60, 2),   // C
		job(3, 30, 180, 2),  // E
	}
	got := starts(run(t, fifoCluster(4), DefaultPriority(), bfScheduler(), jobs))
	if want := []int{0, 100, 30, 150}; !reflect.DeepEqual(got, want) {
		t.Errorf("with backfill: starts %v, want %v", got, want)
	}
	got = starts(run(t, fifoCluster(4), DefaultPriority(), fifoScheduler(), jobs))
	if want := []int{0, 100, 150, 150}; !reflect.DeepEqual(got, want) {
		t.Errorf("without backfill: starts %v, want %v", got, want)
	}
}

// TestBackfillConservative: a job planned in a cycle keeps its plan
// against the later ones of that cycle: C takes the one free GPU, and D,
// whose limit would delay B, waits for B.
func TestBackfillConservative(t *testing.T) {
	jobs := []Job{
		job(0, 100, 120, 3), // A: 3 of 4 GPUs until 100 (planned 120)
		job(1, 50, 60, 4),   // B: all 4, planned at 120
		job(2, 50, 60, 1),   // C: 1 GPU, limit 60: fits now (30..90 < 120)
		job(3, 50, 240, 1),  // D: 1 GPU, limit 240: would delay B
	}
	got := starts(run(t, fifoCluster(4), DefaultPriority(), bfScheduler(), jobs))
	// A ends at 100, C at 80: B starts at 100; D after B, at 150.
	if want := []int{0, 100, 30, 150}; !reflect.DeepEqual(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
}

func TestTypedGPUs(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "a", Type: "a100", GPUs: 4}, {Name: "h", Type: "h100", GPUs: 1}},
		Partitions: []Partition{{Name: "gpu", Nodes: []int{0, 1}}},
	}
	h1, h2, any := job(0, 100, 0, 1), job(1, 100, 0, 1), job(2, 100, 0, 1)
	h1.Type, h2.Type = "h100", "h100"
	never := job(3, 10, 0, 1)
	never.Type = "l40s"
	rs := run(t, c, DefaultPriority(), fifoScheduler(), []Job{h1, h2, any, never})
	if got := starts(rs); got[0] != 0 || got[1] != 100 || got[2] != 100 {
		// any waits behind h2 in FIFO: the partition is blocked by it.
		t.Errorf("starts %v, want h100 jobs at 0 and 100 (only one H100), the untyped one behind them", got)
	}
	if rs[0].Node != 1 || rs[1].Node != 1 {
		t.Errorf("h100 jobs ran on nodes %d and %d, want 1", rs[0].Node, rs[1].Node)
	}
	if rs[3].Outcome != Unrunnable {
		t.Errorf("job asking for a type no node has: %v, want unrunnable", rs[3].Outcome)
	}
	sc := bfScheduler()
	if got := starts(run(t, c, DefaultPriority(), sc, []Job{h1, h2, any})); got[2] != 30 {
		t.Errorf("with backfill the untyped job starts at %d, want 30 (an A100 is free and it delays no one)", got[2])
	}
}

func TestMultiNode(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "n1", GPUs: 4}, {Name: "n2", GPUs: 4}, {Name: "n3", GPUs: 4}},
		Partitions: []Partition{{Name: "gpu", Nodes: []int{0, 1, 2}}},
	}
	a, b := job(0, 100, 0, 4), job(0, 200, 0, 2)
	b.Order = 1
	big := job(10, 50, 0, 4)
	big.Nodes, big.Order = 2, 2
	rs := run(t, c, DefaultPriority(), fifoScheduler(), []Job{a, b, big})
	// n3 is free, but the job needs two whole nodes: n1 frees at 100.
	if got := starts(rs); got[2] != 100 {
		t.Errorf("2-node job starts at %d, want 100", got[2])
	}
	if too := (Job{Partitions: []int{0}, QOS: -1, Nodes: 4, GPUs: 1, Run: sec}); run(t, c, DefaultPriority(), fifoScheduler(), []Job{too})[0].Outcome != Unrunnable {
		t.Error("a 4-node job on 3 nodes is not unrunnable")
	}
}

func TestShards(t *testing.T) {
	c := Cluster{Nodes: []Node{{Name: "n", GPUs: 1, ShardsPerGPU: 8}}, Partitions: []Partition{{Name: "gpu", Nodes: []int{0}}}}
	s1, s2, whole, s3 := job(0, 100, 0, 0), job(1, 100, 0, 0), job(2, 10, 0, 1), job(3, 10, 0, 0)
	s1.Shards, s2.Shards, s3.Shards = 4, 4, 2
	got := starts(run(t, c, DefaultPriority(), fifoScheduler(), []Job{s1, s2, whole, s3}))
	// Two 4-shard jobs share the GPU; the whole-GPU job waits for both; the
	// last shard job waits behind it (FIFO).
	if want := []int{0, 1, 101, 111}; !reflect.DeepEqual(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
}

func TestCancelRunningAndMaxTime(t *testing.T) {
	c := Cluster{Nodes: []Node{{Name: "n", GPUs: 2}}, Partitions: []Partition{{Name: "gpu", Nodes: []int{0}, MaxTime: time.Hour}}}
	running := Job{Running: true, Started: -50 * sec, Run: 150 * sec, Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: 2, Pinned: []int{0}}
	cancelled := job(10, 10, 0, 1)
	cancelled.Cancels, cancelled.Cancel = true, 60*sec
	long := job(20, 10, 7200, 1)
	next := job(30, 10, 0, 2)
	rs := run(t, c, DefaultPriority(), fifoScheduler(), []Job{running, cancelled, long, next})
	if rs[0].Outcome != Ran || rs[0].Start != -50*sec || rs[0].End != 100*sec {
		t.Errorf("running job: %+v, want its real start -50s and end 100s", rs[0])
	}
	if rs[1].Outcome != Cancelled || rs[1].End != 60*sec {
		t.Errorf("cancelled job: %+v, want cancelled at 60s", rs[1])
	}
	if rs[2].Outcome != Unrunnable {
		t.Errorf("job with a limit above MaxTime: %v, want unrunnable", rs[2].Outcome)
	}
	if rs[3].Start != 100*sec {
		t.Errorf("next job starts at %s, want 100s (when the running job ends)", rs[3].Start)
	}
}

func TestQOSLimitDoesNotBlock(t *testing.T) {
	c := fifoCluster(4)
	c.QOS = []QOS{{Name: "normal", MaxGPUsPerUser: 2}}
	a, b, other := job(0, 100, 0, 2), job(1, 100, 0, 2), job(2, 100, 0, 2)
	a.QOS, b.QOS, other.QOS = 0, 0, 0
	other.User = 1
	got := starts(run(t, c, DefaultPriority(), fifoScheduler(), []Job{a, b, other}))
	// b waits for a (per-user limit) without blocking the other user's job.
	if want := []int{0, 100, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
}

func TestPriorityTierAndFairshare(t *testing.T) {
	c := Cluster{Nodes: []Node{{Name: "n", GPUs: 1}}, Partitions: []Partition{
		{Name: "low", Nodes: []int{0}, PriorityTier: 1}, {Name: "high", Nodes: []int{0}, PriorityTier: 2}}}
	first, low, high := job(0, 100, 0, 1), job(1, 10, 0, 1), job(2, 10, 0, 1)
	high.Partitions = []int{1}
	if got := starts(run(t, c, DefaultPriority(), fifoScheduler(), []Job{first, low, high})); got[2] != 100 || got[1] != 110 {
		t.Errorf("starts %v: want the higher tier's job first, at 100", got)
	}

	// Fair-share: user 0 ran for a long time; when the GPU frees, user 1's
	// later job goes before user 0's earlier one.
	pr := DefaultPriority()
	pr.Multifactor, pr.WeightFairshare = true, 1000
	heavy, again, light := job(0, 3600, 0, 1), job(10, 10, 0, 1), job(20, 10, 0, 1)
	light.User = 1
	c = fifoCluster(1)
	if got := starts(run(t, c, pr, fifoScheduler(), []Job{heavy, again, light})); got[2] != 3600 || got[1] != 3610 {
		t.Errorf("starts %v: want the light user's job first when the GPU frees, at 3600", got)
	}
}

func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var jobs []Job
	for i := range 3000 {
		j := job(i*20+rng.IntN(20), 60+rng.IntN(3000), 3600, 1+rng.IntN(2))
		j.User = rng.IntN(5)
		jobs = append(jobs, j)
	}
	pr := DefaultPriority()
	pr.Multifactor, pr.WeightAge, pr.WeightFairshare = true, 1000, 1000
	sc := DefaultScheduler()
	a, _ := Run(fifoCluster(4), pr, sc, jobs, Options{Seed: 42})
	b, _ := Run(fifoCluster(4), pr, sc, jobs, Options{Seed: 42})
	if !reflect.DeepEqual(a, b) {
		t.Error("same inputs and seed, different results")
	}
	s1, s2 := Scale(jobs, 1.5, 20*3000*sec, 0, 9), Scale(jobs, 1.5, 20*3000*sec, 0, 9)
	if !reflect.DeepEqual(s1, s2) || len(s1) != 4500 {
		t.Errorf("Scale(1.5): %d jobs, deterministic %v; want 4500, true", len(s1), reflect.DeepEqual(s1, s2))
	}
}

func TestBadInput(t *testing.T) {
	c := fifoCluster(1)
	for name, j := range map[string]Job{
		"no partition":  {Nodes: 1, QOS: -1},
		"bad partition": {Nodes: 1, QOS: -1, Partitions: []int{3}},
		"zero nodes":    {QOS: -1, Partitions: []int{0}},
		"bad qos":       {Nodes: 1, QOS: 2, Partitions: []int{0}},
		"both":          {Nodes: 1, QOS: -1, Partitions: []int{0}, GPUs: 1, Shards: 1},
		"negative run":  {Nodes: 1, QOS: -1, Partitions: []int{0}, Run: -sec},
	} {
		if _, err := Run(c, DefaultPriority(), DefaultScheduler(), []Job{j}, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
