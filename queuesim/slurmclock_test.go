package queuesim

import (
	"testing"
	"time"
)

// TestMainPassBlocksNodes: one node of 4 GPUs in two partitions, urgent
// (higher PriorityTier) and gpu, no backfill. A (gpu, 2 GPUs) starts at
// 0 and runs 100 s; U (urgent, 4 GPUs) arrives at 1 and cannot start;
// G (gpu, 1 GPU) arrives at 2. As in Slurm's job_scheduler.c, U's
// failure holds its partition's nodes for the rest of the pass, so G does
// not start on the node's free GPUs: U starts when A ends (100, runs 50),
// G after it (150). Blocking the partition alone would start G at 2.
func TestMainPassBlocksNodes(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "n0", Type: "a100", GPUs: 4}},
		Partitions: []Partition{{Name: "gpu", Nodes: []int{0}, PriorityTier: 1}, {Name: "urgent", Nodes: []int{0}, PriorityTier: 2}},
	}
	job := func(at, run time.Duration, part, gpus int) Job {
		return Job{Arrival: at, Order: int64(at / sec), Run: run, Limit: 2 * run, Partitions: []int{part}, QOS: -1, Nodes: 1, GPUs: gpus}
	}
	jobs := []Job{job(0, 100*sec, 0, 2), job(1*sec, 50*sec, 1, 4), job(2*sec, 10*sec, 0, 1)}
	sc := DefaultScheduler()
	sc.Backfill = false
	r, err := Run(c, DefaultPriority(), sc, jobs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{0, 100 * sec, 150 * sec} {
		if jr := r.Jobs[i]; jr.Outcome != Ran || jr.Start != want {
			t.Errorf("job %d: %s at %s, want ran at %s", i, jr.Outcome, jr.Start, want)
		}
	}
}

// TestBackfillBookingOnWallClock: one node of 2 GPUs, backfill cycles at
// 0, 30, 60 s… A (1 GPU, limit 100) runs from 0 to 100; B (2 GPUs, limit
// 120, runs 120) is planned at 100 (A's start + limit, exactly) and books
// the node from 100 rounded down to bf_resolution (60 s) on the wall
// clock. C (1 GPU, limit 50) arrives at 2; the cycle at 30 tests it for
// 30–80. With the window's start on the minute (offset 0), B's booking
// starts at 60 and C does not fit: it starts after B, at 220. With the
// start 30 s past the minute, the booking starts at 90 and C starts at 30.
func TestBackfillBookingOnWallClock(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "n0", Type: "a100", GPUs: 2}},
		Partitions: []Partition{{Name: "gpu", Nodes: []int{0}}},
	}
	job := func(at, run, limit time.Duration, gpus int) Job {
		return Job{Arrival: at, Order: int64(at / sec), Run: run, Limit: limit, Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: gpus}
	}
	jobs := []Job{job(0, 100*sec, 100*sec, 1), job(1*sec, 120*sec, 120*sec, 2), job(2*sec, 50*sec, 50*sec, 1)}
	for _, tc := range []struct {
		offset time.Duration
		wantC  time.Duration
	}{{0, 220 * sec}, {30 * sec, 30 * sec}} {
		sc := DefaultScheduler()
		sc.BfPhase, sc.BfPhaseKnown = 0, true
		sc.ClockOffset = tc.offset
		r, err := Run(c, DefaultPriority(), sc, jobs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if jr := r.Jobs[2]; jr.Outcome != Ran || jr.Start != tc.wantC {
			t.Errorf("offset %s: C %s at %s, want ran at %s", tc.offset, jr.Outcome, jr.Start, tc.wantC)
		}
		if jr := r.Jobs[1]; jr.Start != 100*sec {
			t.Errorf("offset %s: B at %s, want 100s", tc.offset, jr.Start)
		}
	}
}

// TestBackfillBooksWholeNodes: one node of 4 GPUs, one partition,
// backfill cycles at 0, 30, 60 s… A (3 GPUs, limit 120) runs from 0; B
// (2 GPUs, limit 60) cannot start and is planned at 120, where it books
// the node — whole, as backfill.c's node_space does, not its 2 GPUs. C
// (1 GPU, limit 100) would fit beside B's 2 GPUs from 30 to 130, but its
// limit reaches into B's booking, so it does not start in the cycle at 30:
// it starts with B when A ends (120). D (1 GPU, limit 80, runs 50) ends
// before the booking and starts at 30. Booking B's GPUs only would start
// C at 30 and leave D no GPU until A ends.
func TestBackfillBooksWholeNodes(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "n0", Type: "a100", GPUs: 4}},
		Partitions: []Partition{{Name: "gpu", Nodes: []int{0}}},
	}
	job := func(at, run, limit time.Duration, gpus int) Job {
		return Job{Arrival: at, Order: int64(at / sec), Run: run, Limit: limit, Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: gpus}
	}
	jobs := []Job{job(0, 120*sec, 120*sec, 3), job(1*sec, 60*sec, 60*sec, 2), job(2*sec, 100*sec, 100*sec, 1), job(3*sec, 50*sec, 80*sec, 1)}
	sc := DefaultScheduler()
	sc.BfPhase, sc.BfPhaseKnown = 0, true
	r, err := Run(c, DefaultPriority(), sc, jobs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{0, 120 * sec, 120 * sec, 30 * sec} {
		if jr := r.Jobs[i]; jr.Outcome != Ran || jr.Start != want {
			t.Errorf("job %c: %s at %s, want ran at %s", 'A'+i, jr.Outcome, jr.Start, want)
		}
	}
}
