package queuesim

import (
	"testing"
	"time"
)

// TestBackfillBounds: bf_max_job_part and bf_max_job_user on a queue small
// enough to work out by hand. One node of 4 GPUs, one partition, FIFO,
// backfill cycles at 0, 30, 60 s…, on their grid:
//
//	A  user 0, 3 GPUs, arrives 0, runs 1000 s (limit 1000): starts at 0
//	   and is planned to end at 1000 (start + limit, exactly).
//	B  user 0, 4 GPUs, arrives 1, limit 1000: waits for A; the main
//	   scheduler stops at it (one partition), the backfill books the
//	   node for it from 1000 rounded down to bf_resolution, 960. It
//	   starts when A ends, at 1000, to 2000.
//	C  user 0, 1 GPU, arrives 2, runs 100 s: fits in the free GPU before
//	   B's booking.
//	D  user 1, 1 GPU, arrives 3, runs 100 s: likewise.
//
// No bound: the cycle at 30 tests B, C, D: C starts at 30 (ends 130), D
// finds no GPU. No cycle runs while nothing changes; C's end at 130 is
// between two ticks, the main scheduler stops at B, and the next cycle,
// on its grid at 150, starts D.
// bf_max_job_part=1: each cycle tests B alone; C and D start only after B,
// at 2000 (the main scheduler, in queue order).
// bf_max_job_user=1: B is user 0's job of the cycle, C is skipped, D
// (user 1) starts at 30; C starts at 2000.
// bf_max_job_user=1 with bf_max_job_test=2: C, skipped, does not count,
// so the cycle still reaches D (B and D are its two tests): the same.
func TestBackfillBounds(t *testing.T) {
	c := Cluster{
		Nodes:      []Node{{Name: "n0", Type: "a100", GPUs: 4}},
		Partitions: []Partition{{Name: "gpu", Nodes: []int{0}}},
	}
	job := func(at, run, limit time.Duration, user, gpus int) Job {
		return Job{Arrival: at, Order: int64(at / sec), Run: run, Limit: limit, Partitions: []int{0}, QOS: -1, User: user, Nodes: 1, GPUs: gpus}
	}
	jobs := []Job{
		job(0, 1000*sec, 1000*sec, 0, 3),
		job(1*sec, 1000*sec, 1000*sec, 0, 4),
		job(2*sec, 100*sec, 100*sec, 0, 1),
		job(3*sec, 100*sec, 100*sec, 1, 1),
	}
	for _, tc := range []struct {
		name                string
		part, user, maxTest int
		want                []time.Duration // starts of A, B, C, D
		backfilled          []bool
	}{
		{name: "no bound", want: []time.Duration{0, 1000 * sec, 30 * sec, 150 * sec}, backfilled: []bool{false, false, true, true}},
		{name: "bf_max_job_part=1", part: 1, want: []time.Duration{0, 1000 * sec, 2000 * sec, 2000 * sec}, backfilled: []bool{false, false, false, false}},
		{name: "bf_max_job_user=1", user: 1, want: []time.Duration{0, 1000 * sec, 2000 * sec, 30 * sec}, backfilled: []bool{false, false, false, true}},
		{name: "bf_max_job_user=1 bf_max_job_test=2", user: 1, maxTest: 2, want: []time.Duration{0, 1000 * sec, 2000 * sec, 30 * sec}, backfilled: []bool{false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := DefaultScheduler()
			sc.BfPhase, sc.BfPhaseKnown = 0, true
			sc.BfMaxJobPart, sc.BfMaxJobUser = tc.part, tc.user
			if tc.maxTest > 0 {
				sc.BfMaxJobTest = tc.maxTest
			}
			r, err := Run(c, DefaultPriority(), sc, jobs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, jr := range r.Jobs {
				if jr.Outcome != Ran || jr.Start != tc.want[i] || jr.Backfilled != tc.backfilled[i] {
					t.Errorf("job %c: %s at %s (backfilled %t), want ran at %s (backfilled %t)", 'A'+i, jr.Outcome, jr.Start, jr.Backfilled, tc.want[i], tc.backfilled[i])
				}
			}
		})
	}
}

// TestBackfillBoundsRefused: a negative bound is an error, not "no limit".
func TestBackfillBoundsRefused(t *testing.T) {
	sc := DefaultScheduler()
	sc.BfMaxJobUser = -1
	_, err := Run(Cluster{}, DefaultPriority(), sc, nil, Options{})
	if err == nil {
		t.Fatal("bf_max_job_user -1 accepted")
	}
}
