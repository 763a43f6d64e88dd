package queuesim

import (
	"time"
)

// StopRule ends a replay as soon as a wait target is certain to be
// missed, for a caller that needs only "meets" or "misses" (the capacity
// plan's purchase and breach-month searches). Jobs fall in groups (a
// partition, or a partition's jobs on one GPU model: the caller says),
// and a group's answer is the nearest-rank p95 of the waits of the jobs
// that started in it. During the replay each group keeps two counts:
// Over, the jobs of it known to wait longer than Wait (started in it
// after waiting longer, or still pending with only it to start in and
// already waited longer — a job's wait only grows while it pends), and
// Under, the jobs that may still enter it with a wait of at most Wait
// (every job listed in it, less those that started elsewhere, those that
// entered it over the target, and those still pending that have already
// waited longer: they can enter it only over the target). The group's
// p95 is certain to exceed Wait once Over ≥ P95Limit(Over + Under)
// (docs/whatif.md, "Stopping an overloaded replay"), and the replay
// stops there.
type StopRule struct {
	// Wait is the target: a job counts once its wait exceeds it.
	Wait time.Duration
	// Counted[i] is set for the jobs whose waits the answer holds: those
	// that arrived in the window, not those running at its start.
	Counted []bool
	// Groups is the number of groups.
	Groups int
	// In[Of[i]:Of[i+1]] are the groups counted job i may enter, wherever
	// it starts: every group it can start in (a group it starts in
	// outside this list is a caller's error and breaks the proof). Of has
	// one entry more than the jobs.
	Of []int32
	In []int32
	// Pending[i] is the group job i counts in wherever it starts, when
	// that is known before it starts (−1 when not): only such a job is
	// counted in Over while still pending, and only when it cannot leave
	// the queue unstarted (no Cancel). Its list is that group alone.
	Pending []int32
	// Started[p·len(Cluster.Nodes)+n] is the group of a job that starts
	// in partition p with node n its first node (−1: none).
	Started []int32
}

// P95Limit is the count of waits over a target at which the nearest-rank
// p95 of n waits is over it: n − ⌈0.95·n⌉ + 1. It never falls as n
// grows, and grows by at most 1 with each wait added.
func P95Limit(n int) int {
	rank := (95*n + 99) / 100
	return n - rank + 1
}

// Stopped is what a replay stopped by its StopRule proved.
type Stopped struct {
	// At is when it stopped (offset from the replay's start).
	At time.Duration
	// Over[g] is group g's count of jobs known over the target when it
	// stopped; Proved[g] is set for each group whose p95 was then certain
	// to exceed it (at least one).
	Over   []int
	Proved []bool
}

// Job states of the stop rule.
const (
	stopLive    = iota // not started, not yet over the target
	stopCrossed        // pending past the target, may enter several groups
	stopOver           // pending past the target, counted in its group
	stopDone           // started
)

// stopState is a StopRule during the replay.
type stopState struct {
	rule   *StopRule
	wait   float64 // seconds
	over   []int
	under  []int
	proved []bool
	state  []uint8
	next   int // position in sim.arrivals of the next job to check
	done   bool
}

func newStopState(r *StopRule, jobs int) (*stopState, error) {
	if len(r.Counted) != jobs || len(r.Pending) != jobs || len(r.Of) != jobs+1 {
		return nil, badf("stop rule: %d counted flags, %d pending groups and %d list offsets for %d jobs", len(r.Counted), len(r.Pending), len(r.Of), jobs)
	}
	if r.Of[0] != 0 || int(r.Of[jobs]) != len(r.In) {
		return nil, badf("stop rule: lists %d..%d of %d", r.Of[0], r.Of[jobs], len(r.In))
	}
	st := &stopState{rule: r, wait: r.Wait.Seconds(), over: make([]int, r.Groups), under: make([]int, r.Groups),
		proved: make([]bool, r.Groups), state: make([]uint8, jobs)}
	for i := range jobs {
		if r.Of[i+1] < r.Of[i] {
			return nil, badf("stop rule: job %d's list ends before it starts", i)
		}
		if g := r.Pending[i]; g >= 0 && (r.Of[i+1]-r.Of[i] != 1 || r.In[r.Of[i]] != g) {
			return nil, badf("stop rule: job %d pending in group %d, not its list alone", i, g)
		}
		if !r.Counted[i] {
			continue
		}
		for _, g := range r.In[r.Of[i]:r.Of[i+1]] {
			if g < 0 || int(g) >= r.Groups {
				return nil, badf("stop rule: group %d of %d", g, r.Groups)
			}
			st.under[g]++
		}
	}
	for _, g := range r.Started {
		if int(g) >= r.Groups {
			return nil, badf("stop rule: group %d of %d", g, r.Groups)
		}
	}
	return st, nil
}

// check marks group g proved when its p95 is certain to exceed the
// target: even were every job that may still enter it to do so within
// the target, fewer than ⌈0.95·n⌉ of its n waits would be.
func (st *stopState) check(g int32) {
	if !st.proved[g] && st.over[g] > 0 && st.over[g] >= P95Limit(st.over[g]+st.under[g]) {
		st.proved[g] = true
		st.done = true
	}
}

// leave takes job ji out of the Under count of every group it was listed
// in but keep (−1: all), and checks them.
func (st *stopState) leave(ji int32, keep int32) {
	r := st.rule
	for _, g := range r.In[r.Of[ji]:r.Of[ji+1]] {
		if g != keep {
			st.under[g]--
			st.check(g)
		}
	}
}

// stopStarted counts job ji as it starts in partition p on first node n.
func (s *sim) stopStarted(ji, p, n int32) {
	st := s.stop
	if st == nil || !st.rule.Counted[ji] {
		return
	}
	g := int32(-1)
	if k := int(p)*len(s.nodes) + int(n); k < len(st.rule.Started) {
		g = st.rule.Started[k]
	}
	// The wait as the caller reduces it: the start, whole seconds, less
	// the arrival as given.
	over := (time.Duration(s.now)*time.Second - s.in[ji].Arrival).Seconds() > st.wait
	was := st.state[ji]
	st.state[ji] = stopDone
	switch was {
	case stopOver: // counted already, in the group it starts in
		return
	case stopLive:
		keep := int32(-1)
		if !over {
			keep = g // an Under of the group it entered
		}
		st.leave(ji, keep)
	}
	if over && g >= 0 {
		st.over[g]++
		st.check(g)
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
		if j.status != stPending || !st.rule.Counted[ji] || st.state[ji] != stopLive {
			continue
		}
		// Wherever it starts, it enters over the target: it is no
		// group's Under any more.
		if g := st.rule.Pending[ji]; g >= 0 && j.cancel == never {
			st.state[ji] = stopOver
			st.under[g]--
			st.over[g]++
			st.check(g)
			continue
		}
		st.state[ji] = stopCrossed
		st.leave(ji, -1)
	}
	return st.done
}
