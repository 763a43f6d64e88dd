package queuesim

import "slices"

// The backfill plans on a timeline per node: what its running jobs hold
// until their planned ends (start + time limit, exactly) and what earlier
// jobs of the same cycle booked (from their planned start to their end,
// each rounded down to bf_resolution on the wall clock). A booking takes
// its nodes whole, as Slurm 22.05's does: backfill.c keeps its plans in a
// map of node bitmaps (node_space), and a job planned for later removes
// its nodes from every lower job's choice over its booking
// (bit_not(avail_bitmap); _add_reservation), whatever share of them it
// asked for; a lower job may start on such a node's free GPUs only if its
// limit ends before the booking starts. A job that starts in the cycle
// holds only what it asked for (the select plugin sees its allocation). It
// counts in units: a GPU is ShardsPerGPU units on a node with shards (one
// otherwise), a whole GPU takes all of them, a shard one. Which GPU the
// shards sit on is left to the start itself, which checks it exactly.

type span struct {
	from, to int64
	units    int
}

type step struct {
	t     int64
	units int // in use from t to the next step
}

type timeline struct {
	gen   int
	spans []span
	steps []step
	dirty bool
	built bool
}

// add records that units are in use on the node from..to in this cycle:
// spans until the node's steps are first read, then into the steps
// directly (a reservation must not cost a sort of all of them).
func (s *sim) add(n int32, from, to int64, units int) {
	tl := &s.nodes[n].tl
	if tl.gen != s.tlGen {
		tl.gen, tl.spans, tl.dirty = s.tlGen, tl.spans[:0], true
	}
	if tl.dirty {
		tl.spans = append(tl.spans, span{from, to, units})
		return
	}
	i, j := tl.ensure(max(from, s.now)), len(tl.steps)
	if to < never {
		j = tl.ensure(to)
	}
	for k := i; k < j; k++ {
		tl.steps[k].units += units
	}
}

// ensure returns the index of the step at t, splitting the step that
// holds t when there is none (t is never before the first step).
func (tl *timeline) ensure(t int64) int {
	k := stepAt(tl.steps, t)
	if tl.steps[k].t == t {
		return k
	}
	k++
	tl.steps = slices.Insert(tl.steps, k, step{t, tl.steps[k-1].units})
	return k
}

// stepAt returns the index of the last step at or before t (st[0].t ≤ t).
func stepAt(st []step, t int64) int {
	lo, hi := 0, len(st) // st[lo].t ≤ t < st[hi].t
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if st[m].t <= t {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// steps returns the node's use over time from now on: sorted, the first
// at now.
func (s *sim) steps(n int32) []step {
	tl := &s.nodes[n].tl
	if tl.gen != s.tlGen {
		return nil
	}
	if !tl.dirty {
		return tl.steps
	}
	st := tl.steps[:0]
	st = append(st, step{t: s.now})
	for _, sp := range tl.spans {
		st = append(st, step{sp.from, sp.units})
		if sp.to < never {
			st = append(st, step{sp.to, -sp.units})
		}
	}
	slices.SortFunc(st, func(a, b step) int { return cmpInt(a.t, b.t) })
	// Running sums, one step per distinct time.
	out, sum := st[:0], 0
	for _, e := range st {
		sum += e.units
		if len(out) > 0 && out[len(out)-1].t == e.t {
			out[len(out)-1].units = sum
			continue
		}
		out = append(out, step{e.t, sum})
	}
	tl.steps, tl.dirty = out, false
	return out
}

// earliestOn returns the earliest time from start (now, or a time before
// which the node is known to have no room) at which the node has units
// free for dur, or never when that is after limit (≥ start). It also
// returns the first time from start at which the units are free at all
// (for however short), or, when there is none up to limit, a time up to
// which they are not.
// When it returns never, s.noStartBefore is a time (> limit) before
// which the node has no start for units and dur.
func (s *sim) earliestOn(n int32, units int, dur, limit, start int64) (t, fit int64) {
	cp := s.nodes[n].cap
	st := s.steps(n)
	c, fit := start, int64(-1)
	k := 0
	if start > s.now && len(st) > 1 {
		// The step holding start: the last that begins at or before it.
		k = stepAt(st, start)
	}
	for ; k < len(st); k++ {
		e := st[k]
		end := int64(never)
		if k+1 < len(st) {
			end = st[k+1].t
		}
		if end <= c {
			continue
		}
		if e.units+units > cp {
			c = end
			if c > limit {
				if fit < 0 {
					fit = c
				}
				s.noStartBefore = c
				return never, fit
			}
			continue
		}
		if fit < 0 {
			fit = c
		}
		if end-c >= dur || end >= never {
			return c, fit
		}
	}
	s.noStartBefore = c
	return c, c
}

// freeFrom returns a time before which the node has not had units free
// at any moment of this cycle's timeline (the cycle only adds use, so it
// stays true), and whether the node keeps such times for units.
func (s *sim) freeFrom(n int32, units int) (int64, bool) {
	if units >= freeStride {
		return s.now, false
	}
	if f := s.freeAt[units*s.nodeCount+int(n)]; f.gen == s.tlGen {
		return max(f.t, s.now), true
	}
	return s.now, true
}

// startFrom returns a time before which the node has no start for units
// free for dur in this cycle: a start found (or a bound proved) for
// them for a duration no longer than dur. A longer duration starts no
// earlier, and the cycle only adds use, so it stays true (the duration
// bound, docs/whatif.md).
func (s *sim) startFrom(n int32, units int, dur int64) int64 {
	if s.reference || units >= freeStride {
		return s.now
	}
	if f := s.startAt[units*s.nodeCount+int(n)]; f.gen == s.tlGen && f.dur <= dur {
		return f.t
	}
	return s.now
}

// startFound records that the node has no start for units free for dur
// before t in this cycle; it keeps the mark of the shorter duration, or
// of the later time for the same one.
func (s *sim) startFound(n int32, units int, dur, t int64) {
	if s.reference || units >= freeStride {
		return
	}
	f := &s.startAt[units*s.nodeCount+int(n)]
	if f.gen != s.tlGen || dur < f.dur || dur == f.dur && t > f.t {
		*f = startMark{s.tlGen, dur, t}
	}
}

// startMark is startAt's entry: in cycle gen, no start before t for a
// duration of dur or longer.
type startMark struct {
	gen    int
	dur, t int64
}

// freeStride bounds the units per node whose freeFrom times are kept.
const freeStride = 65

type freeMark struct {
	gen int
	t   int64
}

// freeDuring reports whether the node has units free from c for dur.
func (s *sim) freeDuring(n int32, units int, c, dur int64) bool {
	cp := s.nodes[n].cap
	st := s.steps(n)
	for k, e := range st {
		end := int64(never)
		if k+1 < len(st) {
			end = st[k+1].t
		}
		if end <= c {
			continue
		}
		if e.t >= c+dur && dur < never {
			break
		}
		if e.units+units > cp {
			return false
		}
	}
	return true
}

// units is what the job takes on a node, in the node's units.
func (s *sim) units(in *Job, n int32) int {
	if in.Shards > 0 {
		return in.Shards
	}
	return in.GPUs * s.nodes[n].upg
}

// fitsShape reports whether the node could ever hold the job's share.
func (s *sim) fitsShape(j *jstate, in *Job, n int32) bool {
	ns := &s.nodes[n]
	if !s.typeMatches(j.typ, ns) {
		return false
	}
	if in.Shards > 0 {
		return ns.spg >= in.Shards
	}
	return ns.gpus >= in.GPUs
}

// candidates returns the partition's nodes, in its order, that could
// ever hold the job's share, kept per request shape.
func (s *sim) candidates(ji, p int32) []int32 {
	j, in := &s.js[ji], &s.in[ji]
	m := &s.memo[int(j.shape)*len(s.parts)+int(p)]
	if !m.candKnown {
		m.candKnown = true
		for _, n := range s.parts[p].nodes {
			if s.fitsShape(j, in, n) {
				m.cand = append(m.cand, n)
				m.candUnits = append(m.candUnits, int32(s.units(in, n)))
			}
		}
	}
	return m.cand
}

// plannedEnd is when the backfill expects a job started at start to end:
// start + its limit (or its partition's MaxTime), exactly, as Slurm 22.05's
// backfill takes a running job's end (at least a second from now).
func (s *sim) plannedEnd(j *jstate, p int32, start int64) int64 {
	lim := j.limit
	if lim >= never {
		lim = s.parts[p].maxTime
	}
	if lim >= never {
		return never
	}
	return max(start+lim, s.now+1)
}

// bfDur is how long a backfill cycle tests a pending job for in the
// partition: its limit (or the partition's MaxTime), exactly.
func (s *sim) bfDur(j *jstate, p int32) int64 {
	return s.plannedEnd(j, p, s.now) - s.now
}

// booking is what a cycle books for a job planned to start at t > now
// and end at end: as backfill.c does, from t to end each rounded down to
// bf_resolution on the wall clock (Scheduler.ClockOffset), at least one
// bf_resolution, never before now. A job starting now books [now, end).
func (s *sim) booking(t, end int64) (int64, int64) {
	if t <= s.now {
		return t, end
	}
	res := max(s.bfRes, 1)
	off := s.clockOff
	from := max((t+off)/res*res-off, s.now)
	if end < never {
		end = max((end+off)/res*res-off, from+res)
	}
	return from, end
}

// backfill is one cycle of conservative backfill: pending jobs in priority
// order, at most bf_max_job_test, each planned at the earliest time its
// limit fits around the running jobs and the plans made before it in this
// cycle; a job planned to start now starts, one planned within bf_window
// holds its plan for the rest of the cycle.
//
// Only a job that fits now on the cycle's free resources (findNow, the
// QOS allowing) can start in it: the cycle only takes resources and QOS
// room, and a plan only delays. So the cycle plans the jobs up to the last
// such one and no further — what the later ones would reserve could only
// delay jobs after them, none of which can start — and, when there is
// none, builds no timeline at all. As it plans, a job whose nodes free now
// are planned for by jobs before it can no longer start (viable), and the
// last job that can moves up. The jobs it does not plan still count
// as tested (Stats.BackfillTested), as Slurm's own loop would test them.
//
// It stays one function: the cycle's queue, its candidates and the witness
// are state of one cycle, and the planning loop's early stop at the last
// job that can still start reads all three; the pieces with a name of
// their own (bfAdmit, earliest, booking, viable) are already apart.
func (s *sim) backfill() {
	s.stats.BackfillPasses++
	s.bfQueue, s.bfParts = s.bfQueue[:0], s.bfParts[:0]
	bounded := s.sc.BfMaxJobPart > 0 || s.sc.BfMaxJobUser > 0
	if bounded {
		clear(s.bfPartN)
		clear(s.bfUserN)
	}
	s.bfCands = s.bfCands[:0]
	if !bounded && s.freeAll == 0 && s.wholeOnly {
		// No GPU free and every job needs one: none can start, none is
		// planned; they are counted.
		n := 0
		for _, ji := range s.pending {
			if n == s.sc.BfMaxJobTest {
				break
			}
			if s.js[ji].status == stPending {
				n++
			}
		}
		s.stats.BackfillTested += n
		s.compact()
		return
	}
	for _, ji := range s.pending {
		if s.js[ji].status != stPending {
			continue
		}
		if len(s.bfQueue) >= s.sc.BfMaxJobTest {
			break
		}
		parts := s.js[ji].parts
		if bounded {
			if parts = s.bfAdmit(ji); parts == 0 {
				continue
			}
		}
		if s.couldStartNow(ji, parts) {
			s.bfCands = append(s.bfCands, int32(len(s.bfQueue)))
		}
		s.bfQueue = append(s.bfQueue, ji)
		s.bfParts = append(s.bfParts, parts)
	}
	s.stats.BackfillTested += len(s.bfQueue)
	if len(s.bfCands) == 0 {
		s.compact()
		return
	}
	s.tlGen++
	s.bfHorizon = s.now + secs(s.sc.BfWindow)
	s.buildTimelines()
	horizon := s.bfHorizon
	var nodes []int32
	// The last job that may still start, and the nodes free for it now
	// (its witness), checked again only when a plan lands on them.
	ci, checked := len(s.bfCands)-1, false
	for k, ji := range s.bfQueue {
		for !checked || s.witnessHit {
			if ci < 0 || int(s.bfCands[ci]) < k {
				break
			}
			if int(s.bfCands[ci]) == k || s.viable(int(s.bfCands[ci])) {
				checked = true
				break
			}
			ci--
		}
		if ci < 0 || int(s.bfCands[ci]) < k {
			break
		}
		j := &s.js[ji]
		if !s.qosAllows(ji) {
			continue
		}
		best, bestPart := int64(never), int32(-1)
		for _, p := range s.in[ji].Partitions {
			if s.bfParts[k]&(1<<uint(p)) == 0 {
				continue
			}
			dur := s.bfDur(j, int32(p))
			t, picked := s.earliest(ji, int32(p), dur, min(horizon, best-1))
			if t < best {
				best, bestPart = t, int32(p)
				nodes = append(nodes[:0], picked...)
			}
		}
		if best > horizon {
			continue
		}
		in := &s.in[ji]
		if best == s.now && s.placeable(ji, nodes) {
			s.place(ji, bestPart, nodes, true)
		}
		from, end := s.booking(best, s.plannedEnd(j, bestPart, best))
		for _, n := range nodes {
			u := s.units(in, n)
			if best > s.now {
				u = s.nodes[n].cap // the node, whole
			}
			s.add(n, from, end, u)
			if from < s.witEnd && slices.Contains(s.witness, n) {
				s.witnessHit = true
			}
		}
	}
	s.compact()
}

// viable reports whether the cycle's k-th job could still start now: in
// one of its partitions, nodes enough are free on the timeline from now
// for its planned duration. The timelines only gain use in a cycle, so
// once it is not, it never is again. When it is, the nodes found are its
// witness: while no plan lands on them before the end of that duration,
// it still is.
func (s *sim) viable(k int) bool {
	ji := s.bfQueue[k]
	j, in := &s.js[ji], &s.in[ji]
	s.witnessHit = false
	for _, p := range in.Partitions {
		if s.bfParts[k]&(1<<uint(p)) == 0 {
			continue
		}
		dur := s.bfDur(j, int32(p))
		s.witness = s.witness[:0]
		for _, n := range s.candidates(ji, int32(p)) {
			u := s.units(in, n)
			if lb, _ := s.freeFrom(n, u); lb > s.now {
				continue
			}
			if s.freeDuring(n, u, s.now, dur) {
				s.witness = append(s.witness, n)
				if len(s.witness) == in.Nodes {
					s.witEnd = s.now + dur
					return true
				}
			}
		}
	}
	s.witness = s.witness[:0]
	return false
}

// bfAdmit applies bf_max_job_user and bf_max_job_part to the next job of
// the cycle: it returns the partitions (mask) the job is tested in, 0 when
// it is skipped, and counts it when it is not.
func (s *sim) bfAdmit(ji int32) uint64 {
	parts, u := s.js[ji].parts, s.in[ji].User
	if lim := s.sc.BfMaxJobUser; lim > 0 && s.bfUserN[u] >= lim {
		return 0
	}
	if lim := s.sc.BfMaxJobPart; lim > 0 {
		for p := range s.parts {
			if parts&(1<<uint(p)) != 0 && s.bfPartN[p] >= lim {
				parts &^= 1 << uint(p)
			}
		}
		if parts == 0 {
			return 0
		}
		for p := range s.parts {
			if parts&(1<<uint(p)) != 0 {
				s.bfPartN[p]++
			}
		}
	}
	s.bfUserN[u]++
	return parts
}

// couldStartNow reports whether the job fits now in one of the
// partitions (mask) and its QOS lets it start: what a backfill start
// needs at the least.
func (s *sim) couldStartNow(ji int32, parts uint64) bool {
	if !s.qosAllows(ji) {
		return false
	}
	shape := int(s.js[ji].shape) * len(s.parts)
	for _, p := range s.in[ji].Partitions {
		if parts&(1<<uint(p)) == 0 {
			continue
		}
		// Nothing starts or ends while the cycle picks its jobs: one
		// answer per shape and partition, stamped with the cycle's number.
		fits := &s.fitsNow[shape+p]
		if *fits>>1 != s.stats.BackfillPasses {
			ok := false
			if in := &s.in[ji]; in.Nodes == 1 && in.Shards == 0 && in.GPUs > 0 {
				ok = s.mostFreeWhole(int32(p), s.js[ji].typ) >= in.GPUs
				if s.checkFits {
					_, want := s.findNow(ji, int32(p))
					s.fitsChecks++
					if ok != want {
						s.fitsDiffs++
					}
				}
			} else {
				_, ok = s.findNow(ji, int32(p))
			}
			*fits = s.stats.BackfillPasses << 1
			if ok {
				*fits |= 1
			}
		}
		if *fits&1 == 1 {
			return true
		}
	}
	return false
}

// mostFreeWhole returns the most whole GPUs free now on one node of the
// partition of GPU type id typ (any type when typ < 0): a single-node
// request of whole GPUs fits now (findNow) exactly when it asks for no
// more. One reading of the partition's nodes per backfill cycle answers
// every such request; nothing starts or ends while the cycle picks its
// jobs.
func (s *sim) mostFreeWhole(p, typ int32) int {
	ps := &s.parts[p]
	anyType := len(s.freeType)
	if ps.freeGen != s.stats.BackfillPasses || len(ps.mostFree) != anyType+1 {
		ps.freeGen = s.stats.BackfillPasses
		if len(ps.mostFree) != anyType+1 {
			ps.mostFree = make([]int, anyType+1)
		}
		clear(ps.mostFree)
		for _, n := range ps.nodes {
			ns := &s.nodes[n]
			ps.mostFree[ns.typ] = max(ps.mostFree[ns.typ], ns.freeWhole)
			ps.mostFree[anyType] = max(ps.mostFree[anyType], ns.freeWhole)
		}
	}
	if typ < 0 {
		return ps.mostFree[anyType]
	}
	return ps.mostFree[typ]
}

// placeable reports whether the job fits now, exactly, on the nodes.
func (s *sim) placeable(ji int32, nodes []int32) bool {
	for _, n := range nodes {
		if !s.fitsNodeNow(&s.js[ji], &s.in[ji], int(n)) {
			return false
		}
	}
	return true
}

// memo is what a backfill cycle found for one request shape (GPU type,
// GPUs or shards, nodes, time limit) in one partition: the earliest start
// t on nodes, or, when t is never, that there is none before lb. Within a
// cycle the timelines only gain use, so a start that was not free before
// is not free later: t (or lb) stays a lower bound on the shape's earliest
// start for the rest of the cycle. And while the nodes found are still
// free from t for the shape's planned duration, t on those nodes is again
// the answer the full search gives: no node before them in the
// partition's order, nor any earlier time, can have become free.
type memo struct {
	gen   int
	t, lb int64
	nodes []int32
	// The partition's nodes that fit the shape at all, for the replay,
	// and the units the shape takes on each.
	cand      []int32
	candUnits []int32
	candKnown bool
}

// earliest returns the earliest time (≤ limit) at which the partition has
// nodes for the job for dur, and those nodes; never when there is none.
func (s *sim) earliest(ji, p int32, dur, limit int64) (int64, []int32) {
	if limit < s.now {
		// Only when a start now was already found in another
		// partition: nothing here can be earlier.
		return never, nil
	}
	j, in := &s.js[ji], &s.in[ji]
	m := &s.memo[int(j.shape)*len(s.parts)+int(p)]
	from := s.now
	if m.gen == s.tlGen {
		if m.t < never {
			if m.t > limit {
				return never, nil
			}
			if s.stillFree(in, m.nodes, m.t, dur) {
				return m.t, append(s.pick[:0], m.nodes...)
			}
			from = m.t
		} else {
			if m.lb > limit {
				return never, nil
			}
			from = m.lb
		}
	}
	if limit <= s.bfHorizon && s.noStartInWindow(j.shape, p, dur) {
		m.gen, m.t, m.lb = s.tlGen, never, max(from, limit+1)
		s.bounded++
		return never, nil
	}
	t, nodes := s.search(ji, p, dur, limit, from)
	m.gen, m.t = s.tlGen, t
	if t < never {
		m.nodes = append(m.nodes[:0], nodes...)
	} else {
		m.lb = max(from, limit+1)
		if limit >= s.bfHorizon {
			s.noStartFound(j.shape, p, dur)
		}
	}
	return t, nodes
}

// The dominance bound. A job asks for a level of its class (GPUs, or
// shards, on each of its nodes; the class is its GPU type, its node count
// and whether it asks for shards) for a duration. One that asks for more
// of the same class, for longer, in the same partition, cannot start
// before the lesser one could: it fits on fewer nodes (fitsShape), and a
// node free for its units during [c, c+dur) is free then for fewer units
// during a shorter span. Within a cycle the timelines only gain use, so
// once a search found no start up to the end of bf_window for a level
// and duration, no job of the class in that partition at that level or
// above, for that duration or longer, has one for the rest of the cycle:
// earliest answers never for it without the search, which would have
// answered the same. In an overloaded cycle about a quarter of the jobs
// tested are answered so (docs/benchmarks.md).

// noStartInWindow reports whether the cycle has already proved that the
// shape has no start in the partition for dur up to the end of
// bf_window.
func (s *sim) noStartInWindow(shape, p int32, dur int64) bool {
	if s.reference {
		return false
	}
	e := s.noStart[s.domSlot(shape, p)]
	return e.gen == s.tlGen && e.dur <= dur
}

// noStartFound records that the shape has no start in the partition for
// dur up to the end of bf_window: for its level and, so that one look
// answers, for every level of its class above it.
func (s *sim) noStartFound(shape, p int32, dur int64) {
	if s.reference {
		return
	}
	c := s.domClass[shape]
	base := int(s.domBase[c]) + int(p)*len(s.domLevels[c])
	for l := int(s.domLevel[shape]); l < len(s.domLevels[c]); l++ {
		e := &s.noStart[base+l]
		if e.gen != s.tlGen || dur < e.dur {
			*e = noStartMark{s.tlGen, dur}
		}
	}
}

// domSlot is the index of the shape's class, partition and level in
// sim.noStart.
func (s *sim) domSlot(shape, p int32) int {
	c := s.domClass[shape]
	return int(s.domBase[c]) + int(p)*len(s.domLevels[c]) + int(s.domLevel[shape])
}

// noStartMark is the shortest duration of a class, partition and level
// (and, as noStartFound records it, of the levels of the class below it)
// that has no start up to the end of bf_window in cycle gen.
type noStartMark struct {
	gen int
	dur int64
}

// stillFree reports whether every node has the job's units free from t
// for dur.
func (s *sim) stillFree(in *Job, nodes []int32, t, dur int64) bool {
	for _, n := range nodes {
		if !s.freeDuring(n, s.units(in, n), t, dur) {
			return false
		}
	}
	return true
}

// search is earliest's full search, from a time (≤ limit) before which
// no start can be.
func (s *sim) search(ji, p int32, dur, limit, from int64) (int64, []int32) {
	in := &s.in[ji]
	s.pick = s.pick[:0]
	cand := s.candidates(ji, p)
	if in.Nodes == 1 {
		units := s.memo[int(s.js[ji].shape)*len(s.parts)+int(p)].candUnits
		if s.directSearch || len(cand) < s.orderFrom {
			return s.searchDirect(cand, units, dur, limit, from)
		}
		if !s.checkSearch {
			return s.searchOrdered(ji, p, cand, units, dur, limit, from)
		}
		t, nodes := s.searchOrdered(ji, p, cand, units, dur, limit, from)
		got := slices.Clone(nodes)
		dt, dnodes := s.searchDirect(cand, units, dur, limit, from)
		s.searchChecks++
		if dt != t || !slices.Equal(dnodes, got) {
			s.searchDiffs++
		}
		return dt, dnodes
	}
	// Several nodes at once: try from, then each time a node's use
	// changes, for the first time enough nodes are free together.
	cands := append(s.cands[:0], from)
	for _, n := range cand {
		for _, e := range s.steps(n) {
			if e.t > from && e.t <= limit {
				cands = append(cands, e.t)
			}
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	s.cands = cands
	for _, c := range cands {
		s.pick = s.pick[:0]
		for _, n := range cand {
			if s.freeDuring(n, s.units(in, n), c, dur) {
				s.pick = append(s.pick, n)
				if len(s.pick) == in.Nodes {
					return c, s.pick
				}
			}
		}
	}
	return never, nil
}

// The single-node search in order. Most nodes of a busy cycle are passed
// over by their freeFrom bound (on 1,000 GPUs, nine in ten of the nodes
// read: docs/benchmarks.md), yet the direct search still reads each one.
// So per single-node request (GPU type, GPUs or shards: shapes that
// differ only in their limit share it) and partition, a cycle keeps the
// candidate nodes sorted by their freeFrom bound as last read — a time
// before which the node had not the request's units free, which only
// grows within the cycle, so a key read earlier is still a bound. The
// search reads the nodes in that order and stops at the first whose key
// is past the best start found (or the limit): every node after it starts
// later. The answer is the direct search's: the earliest start, and of
// the nodes starting then the first in the partition's order (a node
// whose key equals the best start is read only when it comes before the
// best node in that order).

// nodeOrder is one request's candidate nodes in a partition, sorted by
// key, in cycle gen. An entry is a node's key, as seconds after the
// cycle's now, above its index in the candidate list (orderBits): one
// integer, so that the sort compares integers. A node whose key is past
// the end of bf_window leaves the order: no search of the cycle looks
// past that end (earliest's limit), so none reads it again.
type nodeOrder struct {
	gen int
	ent []uint64
}

// orderBits holds a candidate's index in an order's entry: a partition of
// more nodes than that is searched directly.
const orderBits = 20

// searchOrdered is search for a single node, reading the candidates in
// the order of their bounds (above).
func (s *sim) searchOrdered(ji, p int32, cand, units []int32, dur, limit, from int64) (int64, []int32) {
	if len(cand) >= 1<<orderBits || limit > s.bfHorizon {
		return s.searchDirect(cand, units, dur, limit, from)
	}
	o := &s.orders[int(s.orderOf[s.js[ji].shape])*len(s.parts)+int(p)]
	if o.gen != s.tlGen {
		s.startOrder(o, cand, units)
	}
	const idx = 1<<orderBits - 1
	best, bi := int64(never), int32(len(cand))
	k, w := 0, 0 // entries read, and kept in the order
	for ; k < len(o.ent); k++ {
		i := int32(o.ent[k] & idx)
		if s.now+int64(o.ent[k]>>orderBits) > min(limit, best) {
			break // every node from here on starts later
		}
		t, lb := s.startOn(cand[i], int(units[i]), i < bi, dur, limit, best, from)
		if lb <= s.bfHorizon {
			o.ent[w] = uint64(lb-s.now)<<orderBits | uint64(i)
			w++
		}
		if t < never {
			best, bi = t, i
		}
	}
	o.ent = s.resort(o.ent, w, k)
	if bi == int32(len(cand)) {
		return never, nil
	}
	return best, append(s.pick[:0], cand[bi])
}

// startOrder makes the order's first entries of a cycle: each candidate
// keyed by the first time its timeline, as it stands, has the request's
// units free (recorded as its freeFrom bound too), sorted. The nodes free
// now (key 0) come in the candidates' order, already sorted, ahead of the
// rest: only the rest is sorted.
func (s *sim) startOrder(o *nodeOrder, cand, units []int32) {
	o.gen, o.ent = s.tlGen, o.ent[:0]
	s.merge = s.merge[:0]
	for i, n := range cand {
		u := int(units[i])
		lb, kept := s.freeFrom(n, u)
		if t := s.firstFree(n, u, lb); t > lb {
			lb = t
			if kept {
				s.freeAt[u*s.nodeCount+int(n)] = freeMark{s.tlGen, t}
			}
		}
		switch {
		case lb <= s.now:
			o.ent = append(o.ent, uint64(i))
		case lb <= s.bfHorizon:
			s.merge = append(s.merge, uint64(lb-s.now)<<orderBits|uint64(i))
		}
	}
	slices.Sort(s.merge)
	o.ent = append(o.ent, s.merge...)
}

// firstFree returns the first time from from on at which the node's
// timeline has units free, never when it has not.
func (s *sim) firstFree(n int32, units int, from int64) int64 {
	st := s.steps(n)
	if len(st) == 0 {
		return from
	}
	cp := s.nodes[n].cap
	for k := stepAt(st, from); k < len(st); k++ {
		if st[k].units+units <= cp {
			return max(st[k].t, from)
		}
	}
	return never
}

// startOn is searchOrdered's look at one node: its earliest start for
// units and dur if that is up to limit and before best (or at it, when
// tie: the node comes before the best one in the partition's order),
// never otherwise;
// and the node's freeFrom bound after the look.
func (s *sim) startOn(n int32, u int, tie bool, dur, limit, best, from int64) (t, lb int64) {
	lb, kept := s.freeFrom(n, u)
	lim := min(limit, best)
	if !tie {
		lim = min(limit, best-1)
	}
	start := max(from, lb)
	if start > lim {
		return never, lb
	}
	dlb := s.startFrom(n, u, dur)
	if dlb > lim {
		s.durBounded++
		return never, lb
	}
	start = max(start, dlb)
	t, fit := s.earliestOn(n, u, dur, lim, start)
	if !kept {
		return t, lb
	}
	if start == lb {
		s.freeAt[u*s.nodeCount+int(n)] = freeMark{s.tlGen, fit}
		lb = max(fit, s.now)
	}
	e := t
	if t >= never {
		e = s.noStartBefore
	}
	s.startFound(n, u, dur, e)
	return t, lb
}

// resort restores an order's sort after a search read its first k
// entries and kept the first w of them with new keys (each key only
// grew): those sorted, then merged with the rest, which stays where it
// is once they are placed. It returns the order, shorter by the entries
// not kept.
func (s *sim) resort(ent []uint64, w, k int) []uint64 {
	head, rest := ent[:w], ent[k:]
	slices.Sort(head)
	if len(rest) == 0 || w == 0 || head[w-1] <= rest[0] {
		if w < k {
			n := copy(ent[w:], rest)
			return ent[:w+n]
		}
		return ent
	}
	s.merge = append(s.merge[:0], head...)
	h, r, at := 0, k, 0
	for h < len(s.merge) && r < len(ent) {
		if ent[r] < s.merge[h] {
			ent[at] = ent[r]
			r++
		} else {
			ent[at] = s.merge[h]
			h++
		}
		at++
	}
	at += copy(ent[at:], s.merge[h:])
	if r < len(ent) {
		at += copy(ent[at:], ent[r:])
	}
	return ent[:at]
}

// searchDirect is search for a single node: every candidate node in the
// partition's order, each passed over when its bounds are past the best
// start found so far. The ordered search (searchOrdered) gives the same
// answer; this one stays as the reference the test compares it with.
func (s *sim) searchDirect(cand, units []int32, dur, limit, from int64) (int64, []int32) {
	best, node := int64(never), int32(-1)
	for i, n := range cand {
		u := int(units[i])
		lim := min(limit, best-1)
		lb, kept := s.freeFrom(n, u)
		if lb > lim {
			continue // e_n ≥ lb: no start here before best
		}
		start := max(from, lb)
		dlb := s.startFrom(n, u, dur)
		if dlb > lim {
			s.durBounded++
			continue // e_n ≥ dlb: no start here before best
		}
		if dlb > start {
			start = dlb
		}
		t, fit := s.earliestOn(n, u, dur, lim, start)
		if kept && start == lb {
			s.freeAt[u*s.nodeCount+int(n)] = freeMark{s.tlGen, fit}
		}
		if kept {
			// from and dlb are lower bounds on this node's start
			// for dur: what the scan found is its start, or a
			// bound past lim.
			e := t
			if t >= never {
				e = s.noStartBefore
			}
			s.startFound(n, u, dur, e)
		}
		if t < best {
			best, node = t, n
			if t == from {
				break
			}
		}
	}
	if node < 0 {
		return never, nil
	}
	return best, append(s.pick, node)
}

// buildTimelines starts the cycle's timelines from the running jobs: on
// each node, all they hold now, less each one's units from its planned
// end on.
func (s *sim) buildTimelines() {
	for _, ri := range s.running {
		j := &s.js[ri]
		end := s.plannedEnd(j, j.part, j.start)
		in := &s.in[ri]
		if j.multi != nil {
			for _, v := range j.multi {
				s.addRunning(v>>8, end, s.units(in, v>>8))
			}
		} else {
			s.addRunning(j.node, end, s.units(in, j.node))
		}
	}
	for _, ri := range s.running {
		j := &s.js[ri]
		if j.multi != nil {
			for _, v := range j.multi {
				s.nodes[v>>8].tl.finish()
			}
		} else {
			s.nodes[j.node].tl.finish()
		}
	}
}

// addRunning adds a running job's units until end to the node's
// timeline being built: steps[0] holds the total in use now, the rest the
// releases, unsorted until finish.
func (s *sim) addRunning(n int32, end int64, units int) {
	tl := &s.nodes[n].tl
	if tl.gen != s.tlGen {
		tl.gen, tl.dirty, tl.built = s.tlGen, false, false
		tl.steps = append(tl.steps[:0], step{t: s.now})
	}
	tl.steps[0].units += units
	if end < never {
		tl.steps = append(tl.steps, step{end, units})
	}
}

// finish sorts the releases (a few per node: insertion sort) and turns
// them into running totals.
func (tl *timeline) finish() {
	if tl.built {
		return
	}
	tl.built = true
	st := tl.steps
	for i := 2; i < len(st); i++ {
		for k := i; k > 1 && st[k].t < st[k-1].t; k-- {
			st[k], st[k-1] = st[k-1], st[k]
		}
	}
	out, sum := st[:1], st[0].units
	for _, e := range st[1:] {
		sum -= e.units
		if out[len(out)-1].t == e.t {
			out[len(out)-1].units = sum
			continue
		}
		out = append(out, step{e.t, sum})
	}
	tl.steps = out
}
