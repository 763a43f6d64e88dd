package queuesim

import (
	"time"
)

// StopRule ends a replay as soon as a wait target is certain to be
// missed, for a caller that needs only "meets" or "misses" (the capacity
// plan's purchase and breach-month searches). Jobs fall in groups (a
// partition, or a partition's jobs on one GPU model: the caller says);
// a group's count is the jobs of it known to wait longer than Wait:
// those started after waiting longer, and those still pending that have
// already waited longer (a job's wait only grows while it pends). The
// replay stops once a group's count reaches its Limit. With Limit[g] =
// N − ⌈0.95·N⌉ + 1 for any N at least the number of waits the group's
// answer will hold, the group's nearest-rank p95 wait is then certain to
// exceed Wait (docs/whatif.md, "Stopping an overloaded replay").
type StopRule struct {
	// Wait is the target: a job counts once its wait exceeds it.
	Wait time.Duration
	// Counted[i] is set for the jobs whose waits the answer holds: those
	// that arrived in the window, not those running at its start.
	Counted []bool
	// Pending[i] is the group job i counts in wherever it starts, when
	// that is known before it starts (−1 when not): only such a job is
	// counted while still pending, and only when it cannot leave the
	// queue unstarted (no Cancel).
	Pending []int32
	// Started[p·len(Cluster.Nodes)+n] is the group of a job that starts
	// in partition p with node n its first node (−1: none).
	Started []int32
	// Limit[g] is the count at which group g's p95 is certain to exceed
	// Wait.
	Limit []int
}

// Stopped is what a replay stopped by its StopRule proved.
type Stopped struct {
	// At is when it stopped (offset from the replay's start).
	At time.Duration
	// Over[g] is group g's count when it stopped; at least one reached
	// its Limit.
	Over []int
}

// stopState is a StopRule during the replay.
type stopState struct {
	rule    *StopRule
	wait    float64 // seconds
	over    []int
	crossed []bool // counted while pending
	next    int    // position in sim.arrivals of the next job to check
	done    bool
}

func newStopState(r *StopRule, jobs int) (*stopState, error) {
	if len(r.Counted) != jobs || len(r.Pending) != jobs {
		return nil, badf("stop rule: %d counted and %d pending flags for %d jobs", len(r.Counted), len(r.Pending), jobs)
	}
	for _, g := range r.Pending {
		if int(g) >= len(r.Limit) {
			return nil, badf("stop rule: group %d of %d", g, len(r.Limit))
		}
	}
	for _, g := range r.Started {
		if int(g) >= len(r.Limit) {
			return nil, badf("stop rule: group %d of %d", g, len(r.Limit))
		}
	}
	return &stopState{rule: r, wait: r.Wait.Seconds(), over: make([]int, len(r.Limit)), crossed: make([]bool, jobs)}, nil
}

// started counts job ji as it starts in partition p on first node n.
func (s *sim) stopStarted(ji, p, n int32) {
	st := s.stop
	if st == nil || !st.rule.Counted[ji] || st.crossed[ji] {
		return
	}
	k := int(p)*len(s.nodes) + int(n)
	if k >= len(st.rule.Started) {
		return
	}
	g := st.rule.Started[k]
	// The wait as the caller reduces it: the start, whole seconds, less
	// the arrival as given.
	if w := (time.Duration(s.now)*time.Second - s.in[ji].Arrival).Seconds(); g >= 0 && w > st.wait {
		st.over[g]++
		if st.over[g] >= st.rule.Limit[g] {
			st.done = true
		}
	}
}

// stopCheck counts the pending jobs that have waited longer than the
// target by now, and reports whether the replay may stop.
func (s *sim) stopCheck() bool {
	st := s.stop
	if st == nil {
		return false
	}
	for ; st.next < len(s.arrivals); st.next++ {
		ji := s.arrivals[st.next]
		j := &s.js[ji]
		// A pending job starts at now or later: its wait is at least
		// now − arrival; the arrival is rounded to whole seconds here,
		// so half a second is kept in hand.
		if float64(s.now-j.arrival)-0.5 <= st.wait {
			break
		}
		g := st.rule.Pending[ji]
		if j.status != stPending || !st.rule.Counted[ji] || g < 0 || j.cancel != never {
			continue
		}
		st.crossed[ji] = true
		st.over[g]++
		if st.over[g] >= st.rule.Limit[g] {
			st.done = true
		}
	}
	return st.done
}
