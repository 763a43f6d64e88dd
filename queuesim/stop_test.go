package queuesim

import (
	"slices"
	"testing"
	"time"
)

// TestStopDecidesWhenCertain: a partition of one 4-GPU node holds ten
// 6-hour jobs that can run nowhere else, and 400 short jobs may run
// there or in a large second partition, where they all start at once.
// The first partition's p95 wait is far over an hour, but its ten jobs
// are far fewer than the limit of a bound fixed before the replay on
// every job that may run there (P95Limit(410) = 21): only jobs that can
// still enter the group within the target may hold the proof back, so
// the replay stops within hours of a 60-hour replay, proved on fewer
// jobs than that bound — and the replay run to its end agrees.
func TestStopDecidesWhenCertain(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "a", GPUs: 4}, {Name: "b", GPUs: 64}, {Name: "c", GPUs: 64}},
		Partitions: []Partition{{Name: "small", Nodes: []int{0}}, {Name: "big", Nodes: []int{1, 2}}},
	}
	var jobs []Job
	for i := range 10 {
		jobs = append(jobs, Job{Arrival: time.Duration(i) * time.Minute, Order: int64(len(jobs)), Run: 6 * time.Hour,
			Partitions: []int{0}, QOS: -1, User: 0, Nodes: 1, GPUs: 4})
	}
	for i := range 400 {
		jobs = append(jobs, Job{Arrival: time.Duration(i) * 10 * time.Second, Order: int64(len(jobs)), Run: 5 * time.Minute,
			Partitions: []int{1, 0}, QOS: -1, User: 1 + i%4, Nodes: 1, GPUs: 1})
	}
	target := time.Hour
	rule := &StopRule{Wait: target, Counted: make([]bool, len(jobs)), Pending: make([]int32, len(jobs)),
		Started: make([]int32, 2*len(c.Nodes)), Groups: 2, Of: make([]int32, len(jobs)+1)}
	listed := []int{0, 0}
	for i, j := range jobs {
		rule.Of[i] = int32(len(rule.In))
		rule.Counted[i] = true
		rule.Pending[i] = -1
		for _, p := range j.Partitions {
			rule.In = append(rule.In, int32(p))
			listed[p]++
		}
		if len(j.Partitions) == 1 {
			rule.Pending[i] = int32(j.Partitions[0])
		}
	}
	rule.Of[len(jobs)] = int32(len(rule.In))
	for p := range 2 {
		for n := range c.Nodes {
			rule.Started[p*len(c.Nodes)+n] = int32(p)
		}
	}
	res, err := Run(c, Priority{}, Scheduler{}, jobs, Options{Seed: 1, Stop: rule})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Run(c, Priority{}, Scheduler{}, jobs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var waits []float64
	for i, jr := range full.Jobs {
		if jr.Outcome == Ran && jr.Partition == 0 {
			waits = append(waits, (jr.Start - jobs[i].Arrival).Seconds())
		}
	}
	slices.Sort(waits)
	over := 0
	for _, w := range waits {
		if w > target.Seconds() {
			over++
		}
	}
	if over < P95Limit(len(waits)) {
		t.Fatalf("the whole replay's small partition has %d of %d waits over the target: not over it", over, len(waits))
	}
	if res.Stopped == nil || !res.Stopped.Proved[0] {
		t.Fatalf("the replay did not stop with the small partition proved over the target (full replay: %d of %d waits over it)", over, len(waits))
	}
	if n := res.Stopped.Over[0]; n >= P95Limit(listed[0]) || n > over {
		t.Errorf("proved on %d jobs over the target: want fewer than a fixed bound's %d, at most the whole replay's %d", n, P95Limit(listed[0]), over)
	}
	if res.Stopped.At > 6*time.Hour || res.Stats.Events >= full.Stats.Events {
		t.Errorf("stopped at %s after %d events; the whole replay takes %d", res.Stopped.At, res.Stats.Events, full.Stats.Events)
	}
	t.Logf("stopped at %s, %d jobs over, %d events of %d", res.Stopped.At, res.Stopped.Over[0], res.Stats.Events, full.Stats.Events)
}
