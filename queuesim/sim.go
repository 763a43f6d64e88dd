package queuesim

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// never is a time after every event.
const never = math.MaxInt64 / 4

type status uint8

const (
	stWaiting status = iota // not yet arrived
	stPending
	stRunning
	stDone
)

// jstate is a job during the replay. Times are whole seconds from the
// start of the replay.
type jstate struct {
	arrival, run, limit, cancel int64
	start, end, usageFrom       int64
	order                       int64
	tie                         uint64
	prio                        float64
	gpuEq                       float64 // GPUs held, shards as their share
	typ                         int32   // GPU type id, -1 for any
	tier                        int32
	part                        int32
	node                        int32   // first (or only) node
	multi                       []int32 // node<<8|gpu per node, for jobs on several nodes
	gpu                         int16   // the GPU a single-node shard job's shards are on
	parts                       uint64  // partitions it may run in (mask)
	shape                       int32   // its request shape (sim.memo)
	runIdx                      int32   // position in sim.running
	status                      status
	outcome                     Outcome
	backfilled                  bool
}

type nstate struct {
	typ       int32
	gpus, spg int
	upg, cap  int // backfill units per GPU and per node
	freeWhole int
	// shards per GPU in use, -1 when the GPU is given whole; nil on a
	// node without shards.
	shards []int16
	tl     timeline
}

type pstate struct {
	nodes   []int32
	maxTime int64 // never when unlimited
	tier    int32
	factor  float64
	// mostFree[t]: in backfill cycle freeGen, the most whole GPUs free
	// now on one node of GPU type id t, the last entry on one node of
	// any type (backfill.go's mostFreeWhole).
	mostFree []int
	freeGen  int
}

type qosUse struct{ gpus, jobs int }

type event struct {
	t    int64
	j    int32
	kind uint8 // evEnd before evCancel at the same second
}

const (
	evEnd uint8 = iota
	evCancel
)

type sim struct {
	c     Cluster
	in    []Job
	js    []jstate
	nodes []nstate
	parts []pstate
	qos   []QOS
	pr    Priority
	sc    Scheduler

	now      int64
	arrivals []int32 // job indices by arrival
	pending  []int32 // by priority; entries no longer pending are skipped
	// leftQueue counts the jobs that left pending since the last compact.
	leftQueue int
	running   []int32
	events    []event // binary heap
	freeType  []int   // free whole GPUs per type id
	freeAll   int

	// Per pass: partitions blocked in this main pass.
	gen      int
	blockGen []int
	nodeGen  []int // per node: the main pass whose failed partitions hold it
	inPass   bool  // findNow in a main pass (skips nodeGen's nodes)
	pick     []int32

	qosGrp  []int
	qosUser []qosUse // per QOS and user: QOS·users + user

	// Fair-share usage per user (GPU-seconds, decayed), users seen.
	usage      []float64
	seenUser   []bool
	users      int
	lastCalc   int64
	usageTotal float64
	ft         fairTree // Priority.FairTree's state (priority.go)
	maxPartF   float64
	maxQOSP    float64
	nodeCount  int

	bf      bool
	bfPhase int64
	// wholeOnly: no node has shards and every job asks for whole GPUs,
	// so with none free no job fits.
	wholeOnly bool
	bfRes     int64    // bf_resolution, seconds
	clockOff  int64    // Scheduler.ClockOffset, seconds
	bfQueue   []int32  // the jobs a backfill cycle tests
	bfParts   []uint64 // and the partitions each is tested in
	bfCands   []int32  // positions in bfQueue of the jobs that fit now
	// The nodes free from now until witEnd for the last of bfCands that
	// may still start; witnessHit once a plan lands on one before then.
	witness    []int32
	witEnd     int64
	witnessHit bool
	bfPartN    []int // jobs tested in this cycle per partition
	bfUserN    []int // and per user
	tlGen      int

	fits  map[fitKey]bool
	stats Stats
	// stop is the Options.Stop rule's state (stop.go), nil without one.
	stop *stopState
	// abort is Options.Abort; aborted is set when it ended the loop.
	abort   *atomic.Bool
	aborted bool

	// memo holds, per request shape and partition, the earliest start the
	// current backfill cycle found (backfill.go).
	memo []memo
	// freeAt[u·nodes+n]: before its t, node n had no u units free at any
	// time of the cycle gen (backfill.go's freeFrom).
	freeAt []freeMark
	// startAt[u·nodes+n]: the duration bound (backfill.go's startFrom);
	// noStartBefore is earliestOn's bound when it finds no start.
	startAt       []startMark
	noStartBefore int64
	// fitsNow per shape and partition: the cycle's number<<1 | whether
	// it fits now (backfill.go's couldStartNow).
	fitsNow []int
	cands   []int64 // scratch for the multi-node search
	// The dominance bound (backfill.go): each shape's class and the
	// index of its level among its class's levels (sorted), and per
	// class, partition and level what the cycle proved (noStart).
	domClass  []int32
	domLevel  []int32
	domLevels [][]int32 // per class
	domBase   []int32   // per class: its first slot
	noStart   []noStartMark
	// bfHorizon is the current backfill cycle's end of bf_window.
	bfHorizon int64
	// reference turns the dominance and duration bounds off: the test-only reference
	// path that searches every job (dominance_test.go); bounded counts
	// the searches the bound answered in its place.
	reference bool
	bounded   int
	// durBounded counts the nodes the duration bound passed over.
	durBounded int
	// orders holds, per single-node request (GPU type, GPUs, shards;
	// orderOf per shape) and partition, the cycle's candidate nodes
	// sorted by when each may first have the request's units free
	// (backfill.go's searchOrdered).
	orders  []nodeOrder
	orderOf []int32
	merge   []uint64 // scratch for searchOrdered's re-sort and startOrder
	// directSearch scans every candidate node in the partition's order
	// instead (searchDirect): the test-only path the ordered search is
	// compared with; checkSearch runs both on every single-node search
	// and counts in searchDiffs the searches whose answers differ.
	directSearch, checkSearch bool
	// orderFrom is the fewest candidate nodes searched in order: below
	// it the direct scan is as short, and keeping the order costs more
	// (docs/benchmarks.md: on 30 nodes the plan's CPU +40 % in order).
	// The test searches every list in order (0).
	orderFrom                 int
	searchChecks, searchDiffs int
	// checkFits answers each fits-now question of a backfill cycle that
	// mostFreeWhole answers by findNow too, the test-only check: fitsDiffs
	// counts the answers that differ.
	checkFits             bool
	fitsChecks, fitsDiffs int
}

type fitKey struct {
	part               int
	typ                int32
	nodes, gpus, shard int
	limit              int64
}

// Run replays jobs on the cluster under the priority and scheduler
// settings, and returns what happened to each. Zero settings take Slurm's
// defaults (DefaultPriority, DefaultScheduler). It is deterministic: the
// same inputs and seed give the same result.
func Run(c Cluster, pr Priority, sc Scheduler, jobs []Job, o Options) (*Result, error) {
	s, err := newSim(c, pr, sc, jobs, o)
	if err != nil {
		return nil, err
	}
	s.loop()
	r := s.result()
	r.Aborted = s.aborted
	if s.stop != nil {
		r.Over = s.stop.over
		if s.stop.done {
			r.Stopped = &Stopped{At: time.Duration(s.now) * time.Second, Over: s.stop.over, Proved: s.stop.proved}
		}
	}
	return r, nil
}

// DefaultScheduler returns Slurm 22.05's defaults: sched/backfill,
// bf_interval 30 s, bf_resolution 60 s, bf_window 1 day, bf_max_job_test
// 500, default_queue_depth 100, sched_interval 60 s.
func DefaultScheduler() Scheduler {
	return Scheduler{
		QueueDepth: 100, SchedInterval: time.Minute,
		Backfill: true, BfInterval: 30 * time.Second, BfResolution: time.Minute,
		BfWindow: 24 * time.Hour, BfMaxJobTest: 500,
	}
}

// DefaultPriority returns priority/basic with multifactor's defaults for
// when weights are set: PriorityMaxAge and PriorityDecayHalfLife 7 days,
// PriorityCalcPeriod 5 minutes; for Fair Tree, the cluster's root user
// association beside the replay's (RootUsers 1).
func DefaultPriority() Priority {
	return Priority{MaxAge: 7 * 24 * time.Hour, DecayHalfLife: 7 * 24 * time.Hour, CalcPeriod: 5 * time.Minute, RootUsers: 1}
}

func secs(d time.Duration) int64 { return int64(d.Round(time.Second) / time.Second) }

// newSim checks the inputs and builds a simulation's state: the scheduler
// and priority defaults, the nodes, partitions and jobs, the jobs' shapes
// and the arrival order. It stays one function: each part returns the
// first error in the input it reads, and what one part computes (the GPU
// type ids, the shapes, the largest user id) sizes the tables of the parts
// after it, so it reads top to bottom as the state it builds.
func newSim(c Cluster, pr Priority, sc Scheduler, jobs []Job, o Options) (*sim, error) {
	def, defP := DefaultScheduler(), DefaultPriority()
	setDur := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	setDur(&sc.SchedInterval, def.SchedInterval)
	setDur(&sc.BfInterval, def.BfInterval)
	setDur(&sc.BfResolution, def.BfResolution)
	setDur(&sc.BfWindow, def.BfWindow)
	setDur(&pr.MaxAge, defP.MaxAge)
	setDur(&pr.DecayHalfLife, defP.DecayHalfLife)
	setDur(&pr.CalcPeriod, defP.CalcPeriod)
	if sc.QueueDepth <= 0 {
		sc.QueueDepth = def.QueueDepth
	}
	if sc.BfMaxJobTest <= 0 {
		sc.BfMaxJobTest = def.BfMaxJobTest
	}
	if sc.BfMaxJobPart < 0 || sc.BfMaxJobUser < 0 {
		return nil, badf("bf_max_job_part %d, bf_max_job_user %d: want 0 (no limit) or more", sc.BfMaxJobPart, sc.BfMaxJobUser)
	}
	if len(c.Partitions) > 64 {
		return nil, badf("%d partitions: at most 64", len(c.Partitions))
	}
	s := &sim{c: c, in: jobs, pr: pr, sc: sc, qos: c.QOS, bf: sc.Backfill, fits: map[fitKey]bool{}}
	types := map[string]int32{}
	typeID := func(t string) int32 {
		if id, ok := types[t]; ok {
			return id
		}
		id := int32(len(types))
		types[t] = id
		s.freeType = append(s.freeType, 0)
		return id
	}
	typeID("") // untyped nodes: id 0
	s.nodes = make([]nstate, len(c.Nodes))
	for i, n := range c.Nodes {
		if n.GPUs < 0 || n.GPUs > 255 || n.ShardsPerGPU < 0 || n.ShardsPerGPU > math.MaxInt16 {
			return nil, badf("node %q: %d GPUs, %d shards per GPU", n.Name, n.GPUs, n.ShardsPerGPU)
		}
		ns := &s.nodes[i]
		ns.typ, ns.gpus, ns.spg, ns.freeWhole = typeID(n.Type), n.GPUs, n.ShardsPerGPU, n.GPUs
		ns.upg = max(n.ShardsPerGPU, 1)
		ns.cap = n.GPUs * ns.upg
		if n.ShardsPerGPU > 0 {
			ns.shards = make([]int16, n.GPUs)
		}
		s.freeType[ns.typ] += n.GPUs
		s.freeAll += n.GPUs
	}
	s.nodeCount = len(c.Nodes)
	s.freeAt = make([]freeMark, len(c.Nodes)*freeStride)
	s.startAt = make([]startMark, len(c.Nodes)*freeStride)
	s.parts = make([]pstate, len(c.Partitions))
	s.blockGen = make([]int, len(c.Partitions))
	s.nodeGen = make([]int, len(c.Nodes))
	for i, p := range c.Partitions {
		ps := &s.parts[i]
		for _, n := range p.Nodes {
			if n < 0 || n >= len(c.Nodes) {
				return nil, badf("partition %q: node index %d of %d nodes", p.Name, n, len(c.Nodes))
			}
			ps.nodes = append(ps.nodes, int32(n))
		}
		ps.maxTime = never
		if p.MaxTime > 0 {
			ps.maxTime = secs(p.MaxTime)
		}
		ps.tier, ps.factor = int32(p.PriorityTier), float64(p.PriorityFactor)
		s.maxPartF = max(s.maxPartF, ps.factor)
	}
	for _, q := range c.QOS {
		s.maxQOSP = max(s.maxQOSP, float64(q.Priority))
	}
	s.qosGrp = make([]int, len(c.QOS))

	s.js = make([]jstate, len(jobs))
	maxUser := -1
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.Nodes < 1 || j.GPUs < 0 || j.Shards < 0 || j.Run < 0 || j.Limit < 0:
			return nil, badf("job %d: nodes %d, GPUs %d, shards %d, run %s, limit %s", i, j.Nodes, j.GPUs, j.Shards, j.Run, j.Limit)
		case j.GPUs > 0 && j.Shards > 0:
			return nil, badf("job %d asks for both whole GPUs and shards", i)
		case len(j.Partitions) == 0:
			return nil, badf("job %d is in no partition", i)
		case j.QOS < -1 || j.QOS >= len(c.QOS):
			return nil, badf("job %d: QOS index %d of %d", i, j.QOS, len(c.QOS))
		case j.User < 0 || j.Account < 0:
			return nil, badf("job %d: negative user or account id", i)
		}
		js := &s.js[i]
		js.arrival, js.run, js.order = secs(j.Arrival), secs(j.Run), j.Order
		js.limit = never
		if j.Limit > 0 {
			js.limit = max(secs(j.Limit), 1)
			js.run = min(js.run, js.limit)
		}
		js.cancel = never
		if j.Cancels {
			js.cancel = secs(j.Cancel)
		}
		js.typ = -1
		if j.Type != "" {
			js.typ = typeID(j.Type)
		}
		for _, p := range j.Partitions {
			if p < 0 || p >= len(c.Partitions) {
				return nil, badf("job %d: partition index %d of %d", i, p, len(c.Partitions))
			}
			js.parts |= 1 << uint(p)
		}
		js.node, js.part = -1, -1
		js.tie = uint64(i)
		if o.Seed != 0 {
			js.tie = splitmix(o.Seed ^ uint64(i))
		}
		maxUser = max(maxUser, j.User)
	}
	shapes := map[fitKey]int32{}
	for i := range s.js {
		j, in := &s.js[i], &jobs[i]
		k := fitKey{typ: j.typ, nodes: in.Nodes, gpus: in.GPUs, shard: in.Shards, limit: j.limit}
		id, ok := shapes[k]
		if !ok {
			id = int32(len(shapes))
			shapes[k] = id
		}
		j.shape = id
	}
	s.domClasses(shapes)
	s.orderShapes(shapes, len(c.Partitions))
	s.orderFrom = 48
	s.wholeOnly = true
	for i := range c.Nodes {
		s.wholeOnly = s.wholeOnly && c.Nodes[i].ShardsPerGPU == 0
	}
	for i := range jobs {
		s.wholeOnly = s.wholeOnly && jobs[i].GPUs > 0
	}
	s.memo = make([]memo, len(shapes)*len(c.Partitions))
	s.fitsNow = make([]int, len(shapes)*len(c.Partitions))
	s.bfPartN, s.bfUserN = make([]int, len(c.Partitions)), make([]int, maxUser+1)
	s.usage = make([]float64, maxUser+1)
	if pr.FairTree {
		if pr.RootUsers < 0 {
			return nil, badf("Fair Tree with %d root users: want 0 or more", pr.RootUsers)
		}
		s.ft = newFairTree(jobs)
		s.ft.rootUsers = pr.RootUsers
	}
	s.seenUser = make([]bool, maxUser+1)
	s.qosUser = make([]qosUse, len(c.QOS)*(maxUser+1))
	s.arrivals = make([]int32, 0, len(jobs))
	for i := range jobs {
		if !jobs[i].Running {
			s.arrivals = append(s.arrivals, int32(i))
		}
	}
	slices.SortFunc(s.arrivals, func(a, b int32) int {
		ja, jb := &s.js[a], &s.js[b]
		switch {
		case ja.arrival != jb.arrival:
			return cmpInt(ja.arrival, jb.arrival)
		case ja.order != jb.order:
			return cmpInt(ja.order, jb.order)
		}
		return cmpInt(int64(a), int64(b))
	})
	s.abort = o.Abort
	if o.Stop != nil {
		st, err := newStopState(o.Stop, len(jobs))
		if err != nil {
			return nil, err
		}
		s.stop = st
	}
	s.bfRes = secs(sc.BfResolution)
	s.clockOff = secs(sc.ClockOffset)
	interval := secs(sc.BfInterval)
	s.bfPhase = int64(splitmix(o.Seed) % uint64(interval))
	if sc.BfPhaseKnown {
		s.bfPhase = secs(sc.BfPhase) % interval
	}
	return s, nil
}

// orderShapes gives each shape its single-node search order's id: the
// shapes that differ only in their limit share one (searchOrdered).
func (s *sim) orderShapes(shapes map[fitKey]int32, parts int) {
	ids := map[fitKey]int32{}
	s.orderOf = make([]int32, len(shapes))
	for k, id := range shapes {
		ok := fitKey{typ: k.typ, gpus: k.gpus, shard: k.shard}
		o, seen := ids[ok]
		if !seen {
			o = int32(len(ids))
			ids[ok] = o
		}
		s.orderOf[id] = o
	}
	s.orders = make([]nodeOrder, len(ids)*parts)
}

// domClasses sorts the shapes into the dominance bound's classes and
// levels (backfill.go) and makes its slots.
func (s *sim) domClasses(shapes map[fitKey]int32) {
	classes := map[fitKey]int32{}
	s.domClass, s.domLevel = make([]int32, len(shapes)), make([]int32, len(shapes))
	for k, id := range shapes {
		ck := fitKey{typ: k.typ, nodes: k.nodes, shard: min(k.shard, 1)}
		c, seen := classes[ck]
		if !seen {
			c = int32(len(classes))
			classes[ck] = c
			s.domLevels = append(s.domLevels, nil)
		}
		level := int32(max(k.gpus, k.shard))
		s.domClass[id], s.domLevel[id] = c, level
		if !slices.Contains(s.domLevels[c], level) {
			s.domLevels[c] = append(s.domLevels[c], level)
		}
	}
	n := int32(0)
	for c := range s.domLevels {
		slices.Sort(s.domLevels[c])
		s.domBase = append(s.domBase, n)
		n += int32(len(s.domLevels[c]) * len(s.parts))
	}
	for id, c := range s.domClass {
		li, _ := slices.BinarySearch(s.domLevels[c], s.domLevel[id])
		s.domLevel[id] = int32(li)
	}
	s.noStart = make([]noStartMark, n)
}

func cmpInt(a, b int64) int { return cmp.Compare(a, b) }

// splitmix is SplitMix64: a well-mixed 64-bit value from a seed.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// alignUp returns the first time at or after now on the grid
// phase + k·step.
func alignUp(now, phase, step int64) int64 {
	if now <= phase {
		return phase
	}
	return phase + (now-phase+step-1)/step*step
}

// nextTick returns the first time after now on the grid phase + k·step.
func nextTick(now, phase, step int64) int64 {
	if now < phase {
		return phase
	}
	return phase + ((now-phase)/step+1)*step
}

func (s *sim) loop() {
	s.startRunning()
	bfStep, fullStep, calcStep := secs(s.sc.BfInterval), secs(s.sc.SchedInterval), secs(s.pr.CalcPeriod)
	nextBf, nextFull, nextCalc := s.bfPhase, fullStep, calcStep
	mainDirty, bfDirty := true, true
	ai := 0
	for {
		t := int64(never)
		if ai < len(s.arrivals) {
			t = s.js[s.arrivals[ai]].arrival
		}
		if len(s.events) > 0 && s.events[0].t < t {
			t = s.events[0].t
		}
		if len(s.pending) > 0 {
			if s.bf && bfDirty && nextBf < t {
				t = nextBf
			}
			if mainDirty && nextFull < t {
				t = nextFull
			}
			if s.pr.Multifactor && nextCalc < t {
				t = nextCalc
			}
		}
		if t == never {
			break
		}
		s.now = max(s.now, t)
		// slurmctld's backfill, main-pass and decay threads wake on their
		// grids whether or not anything is pending: a tick that fell
		// while nothing was due is gone, and the next runs at the next
		// tick of the grid, not at this event.
		if s.now > nextBf && bfStep > 0 {
			nextBf = alignUp(s.now, s.bfPhase, bfStep)
		}
		if s.now > nextFull && fullStep > 0 {
			nextFull = alignUp(s.now, 0, fullStep)
		}
		if s.now > nextCalc && calcStep > 0 {
			nextCalc = alignUp(s.now, 0, calcStep)
		}
		event := false
		for len(s.events) > 0 && s.events[0].t <= s.now {
			e := s.popEvent()
			event = true
			if e.kind == evEnd {
				s.finish(e.j)
			} else if j := &s.js[e.j]; j.status == stPending {
				j.status, j.outcome, j.end = stDone, Cancelled, s.now
				s.leftQueue++
			}
		}
		for ai < len(s.arrivals) && s.js[s.arrivals[ai]].arrival <= s.now {
			s.arrive(s.arrivals[ai])
			ai++
			event = true
		}
		if s.pr.Multifactor && s.now >= nextCalc {
			s.recalc()
			nextCalc = nextTick(s.now, 0, calcStep)
			event = true
		}
		if event {
			s.stats.Events++
			mainDirty, bfDirty = true, true
			if len(s.pending) > 0 {
				s.mainPass(s.sc.QueueDepth)
			}
		}
		if s.now >= nextFull {
			if mainDirty && len(s.pending) > 0 {
				s.mainPass(len(s.pending))
			}
			mainDirty = false
			nextFull = nextTick(s.now, 0, fullStep)
		}
		if s.now >= nextBf {
			if s.bf && bfDirty && len(s.pending) > 0 {
				s.backfill()
			}
			bfDirty = false
			nextBf = nextTick(s.now, s.bfPhase, bfStep)
		}
		if s.stop != nil && s.stopCheck() {
			return
		}
		if s.abort != nil && s.abort.Load() {
			s.aborted = true
			return
		}
	}
}

// startRunning puts the jobs running at the start on their nodes.
func (s *sim) startRunning() {
	for i := range s.in {
		j := &s.in[i]
		if !j.Running {
			continue
		}
		js := &s.js[i]
		js.start = min(secs(j.Started), 0)
		end := js.start + js.run
		s.seeUser(j.User)
		if end <= 0 {
			js.status, js.outcome, js.end = stDone, Ran, end
			continue
		}
		// place starts it now, to end after what is left of its run; it
		// keeps its real start, from which its planned end follows.
		full := js.run
		js.run = end
		placed := false
		if len(j.Pinned) == j.Nodes {
			for _, p := range j.Partitions {
				if s.pinFits(i, j.Pinned) {
					s.place(int32(i), int32(p), toInt32(s.pick[:0], j.Pinned), false)
					placed = true
					break
				}
			}
		}
		if !placed {
			for _, p := range j.Partitions {
				if nodes, ok := s.findNow(int32(i), int32(p)); ok {
					s.place(int32(i), int32(p), nodes, false)
					placed = true
					break
				}
			}
		}
		if placed {
			js.start, js.run = min(secs(j.Started), 0), full
			continue
		}
		js.run = full
		s.stats.Displaced++
		js.arrival = 0
		s.arrivals = slices.Insert(s.arrivals, 0, int32(i))
	}
}

func toInt32(dst []int32, v []int) []int32 {
	for _, x := range v {
		dst = append(dst, int32(x))
	}
	return dst
}

// pinFits reports whether the job fits now on exactly these nodes.
func (s *sim) pinFits(i int, nodes []int) bool {
	j := &s.js[i]
	for _, n := range nodes {
		if n < 0 || n >= len(s.nodes) || !s.fitsNodeNow(j, &s.in[i], n) {
			return false
		}
	}
	return true
}

func (s *sim) seeUser(u int) {
	if !s.seenUser[u] {
		s.seenUser[u] = true
		s.users++
	}
}

// arrive puts a job in the queue, or sets it aside when it can never run.
func (s *sim) arrive(ji int32) {
	j := &s.js[ji]
	in := &s.in[ji]
	s.seeUser(in.User)
	if j.status != stWaiting {
		return
	}
	if j.cancel <= s.now {
		j.status, j.outcome, j.end = stDone, Cancelled, s.now
		return
	}
	j.parts = s.runnable(ji)
	if j.parts == 0 {
		j.status, j.outcome = stDone, Unrunnable
		return
	}
	j.tier = math.MinInt32
	for p := range s.parts {
		if j.parts&(1<<uint(p)) != 0 {
			j.tier = max(j.tier, s.parts[p].tier)
		}
	}
	j.status = stPending
	if s.pr.Multifactor {
		j.prio = s.priority(ji)
	}
	at, _ := slices.BinarySearchFunc(s.pending, ji, s.cmpQueue)
	s.pending = slices.Insert(s.pending, at, ji)
	if j.cancel != never {
		s.pushEvent(event{t: j.cancel, j: ji, kind: evCancel})
	}
}

// runnable returns the partitions (mask) whose nodes, MaxTime and QOS
// limits could ever hold the job: CheckFit's rule, each partition's
// answer kept for the jobs that ask alike.
func (s *sim) runnable(ji int32) uint64 {
	j, in := &s.js[ji], &s.in[ji]
	if in.QOS >= 0 {
		q := s.qos[in.QOS]
		gpus := in.GPUs * in.Nodes
		if q.MaxGPUsPerUser > 0 && gpus > q.MaxGPUsPerUser || q.GrpGPUs > 0 && gpus > q.GrpGPUs {
			return 0
		}
	}
	k := fitKey{typ: j.typ, nodes: in.Nodes, gpus: in.GPUs, shard: in.Shards, limit: j.limit}
	var mask uint64
	for p := range s.parts {
		bit := uint64(1) << uint(p)
		if j.parts&bit == 0 {
			continue
		}
		k.part = p
		ok, seen := s.fits[k]
		if !seen {
			ok = partitionFit(&s.c, in, p).Kind == Fits
			s.fits[k] = ok
		}
		if ok {
			mask |= bit
		}
	}
	return mask
}

func (s *sim) typeMatches(typ int32, ns *nstate) bool { return typ < 0 || ns.typ == typ }

// cmpQueue orders the queue: higher tier, higher priority, earlier
// submission, then the tie-break.
func (s *sim) cmpQueue(a, b int32) int {
	ja, jb := &s.js[a], &s.js[b]
	switch {
	case ja.tier != jb.tier:
		return cmpInt(int64(jb.tier), int64(ja.tier))
	case ja.prio != jb.prio:
		if ja.prio > jb.prio {
			return -1
		}
		return 1
	case ja.order != jb.order:
		return cmpInt(ja.order, jb.order)
	case ja.tie != jb.tie:
		if ja.tie < jb.tie {
			return -1
		}
		return 1
	}
	return cmpInt(int64(a), int64(b))
}

// qosAllows reports whether the job's QOS limits let it start now.
func (s *sim) qosAllows(ji int32) bool {
	in := &s.in[ji]
	if in.QOS < 0 {
		return true
	}
	q := &s.qos[in.QOS]
	gpus := in.GPUs * in.Nodes
	if q.GrpGPUs > 0 && s.qosGrp[in.QOS]+gpus > q.GrpGPUs {
		return false
	}
	if q.MaxGPUsPerUser == 0 && q.MaxJobsPerUser == 0 {
		return true
	}
	u := s.qosUser[in.QOS*len(s.seenUser)+in.User]
	return (q.MaxGPUsPerUser == 0 || u.gpus+gpus <= q.MaxGPUsPerUser) && (q.MaxJobsPerUser == 0 || u.jobs < q.MaxJobsPerUser)
}

func (s *sim) qosAdd(ji int32, sign int) {
	in := &s.in[ji]
	if in.QOS < 0 {
		return
	}
	gpus := in.GPUs * in.Nodes
	s.qosGrp[in.QOS] += sign * gpus
	u := &s.qosUser[in.QOS*len(s.seenUser)+in.User]
	u.gpus += sign * gpus
	u.jobs += sign
}

// mainPass is Slurm's main scheduler: up to depth pending jobs in
// priority order, each started where it fits now; once a job of a
// partition cannot start, no later job starts in that partition or on its
// nodes in this pass (job_scheduler.c: "do not schedule more jobs in this
// partition or on nodes in this partition").
func (s *sim) mainPass(depth int) {
	s.stats.MainPasses++
	s.gen++
	blocked, tested := 0, 0
	for _, ji := range s.pending {
		j := &s.js[ji]
		if j.status != stPending {
			continue
		}
		if tested >= depth || blocked == len(s.parts) {
			break
		}
		tested++
		if !s.qosAllows(ji) {
			continue
		}
		tried, started := false, false
		for _, p := range s.in[ji].Partitions {
			if j.parts&(1<<uint(p)) == 0 || s.blockGen[p] == s.gen {
				continue
			}
			tried = true
			s.inPass = true
			nodes, ok := s.findNow(ji, int32(p))
			s.inPass = false
			if ok {
				s.place(ji, int32(p), nodes, false)
				started = true
				break
			}
		}
		if tried && !started {
			for _, p := range s.in[ji].Partitions {
				if j.parts&(1<<uint(p)) != 0 && s.blockGen[p] != s.gen {
					s.blockGen[p] = s.gen
					blocked++
					for _, n := range s.parts[p].nodes {
						s.nodeGen[n] = s.gen
					}
				}
			}
		}
	}
	s.compact()
}

// compact drops the queue's entries that are no longer pending: none
// when no job has left the queue since the last compact (a queue of
// thousands is not read for nothing after every pass).
func (s *sim) compact() {
	if s.leftQueue == 0 {
		return
	}
	s.leftQueue = 0
	s.pending = slices.DeleteFunc(s.pending, func(ji int32) bool { return s.js[ji].status != stPending })
}

// fitsNodeNow reports whether one node has room now for the job's share.
func (s *sim) fitsNodeNow(j *jstate, in *Job, n int) bool {
	ns := &s.nodes[n]
	if !s.typeMatches(j.typ, ns) {
		return false
	}
	if in.Shards > 0 {
		return s.shardGPU(ns, in.Shards) >= 0
	}
	return ns.freeWhole >= in.GPUs
}

// shardGPU returns a GPU of the node with room for n more shards, or -1.
func (s *sim) shardGPU(ns *nstate, n int) int {
	for k, used := range ns.shards {
		if used >= 0 && int(used)+n <= ns.spg {
			return k
		}
	}
	return -1
}

// findNow returns the first nodes of the partition, in their order, with
// room for the job now.
func (s *sim) findNow(ji int32, p int32) ([]int32, bool) {
	j, in := &s.js[ji], &s.in[ji]
	if in.Shards == 0 && in.GPUs > 0 {
		free := s.freeAll
		if j.typ >= 0 {
			free = s.freeType[j.typ]
		}
		if free < in.GPUs*in.Nodes {
			return nil, false
		}
	}
	s.pick = s.pick[:0]
	for _, n := range s.parts[p].nodes {
		if s.inPass && s.nodeGen[n] == s.gen {
			continue // a failed partition's node, in this main pass
		}
		if s.fitsNodeNow(j, in, int(n)) {
			s.pick = append(s.pick, n)
			if len(s.pick) == in.Nodes {
				return s.pick, true
			}
		}
	}
	return nil, false
}

// place starts the job now on the nodes given (each with room).
func (s *sim) place(ji, p int32, nodes []int32, backfilled bool) {
	j, in := &s.js[ji], &s.in[ji]
	if j.status == stPending {
		s.leftQueue++
	}
	j.status, j.outcome, j.part, j.backfilled = stRunning, Ran, p, backfilled
	j.start, j.end, j.usageFrom = s.now, s.now+j.run, s.now
	j.node = nodes[0]
	s.stopStarted(ji, p, nodes[0])
	if len(nodes) > 1 {
		j.multi = make([]int32, len(nodes))
	}
	j.gpuEq = 0
	for k, n := range nodes {
		ns := &s.nodes[n]
		gpu := 0
		if in.Shards > 0 {
			gpu = s.shardGPU(ns, in.Shards)
			if ns.shards[gpu] == 0 {
				ns.freeWhole--
				s.freeType[ns.typ]--
				s.freeAll--
			}
			ns.shards[gpu] += int16(in.Shards)
			j.gpuEq += float64(in.Shards) / float64(ns.spg)
		} else if in.GPUs > 0 {
			ns.freeWhole -= in.GPUs
			s.freeType[ns.typ] -= in.GPUs
			s.freeAll -= in.GPUs
			for g, left := 0, in.GPUs; left > 0 && ns.shards != nil; g++ {
				if ns.shards[g] == 0 {
					ns.shards[g] = -1
					left--
				}
			}
			j.gpuEq += float64(in.GPUs)
		}
		if j.multi != nil {
			j.multi[k] = n<<8 | int32(gpu)
		} else {
			j.gpu = int16(gpu)
		}
	}
	s.qosAdd(ji, 1)
	j.runIdx = int32(len(s.running))
	s.running = append(s.running, ji)
	s.pushEvent(event{t: j.end, j: ji, kind: evEnd})
	if backfilled {
		s.stats.BackfillStarts++
	}
}

// finish ends a running job and frees what it held.
func (s *sim) finish(ji int32) {
	j, in := &s.js[ji], &s.in[ji]
	if j.status != stRunning {
		return
	}
	s.accrue(ji, s.now)
	j.status = stDone
	release := func(n int32, gpu int) {
		ns := &s.nodes[n]
		if in.Shards > 0 {
			ns.shards[gpu] -= int16(in.Shards)
			if ns.shards[gpu] == 0 {
				ns.freeWhole++
				s.freeType[ns.typ]++
				s.freeAll++
			}
			return
		}
		ns.freeWhole += in.GPUs
		s.freeType[ns.typ] += in.GPUs
		s.freeAll += in.GPUs
		for g, left := 0, in.GPUs; left > 0 && ns.shards != nil; g++ {
			if ns.shards[g] == -1 {
				ns.shards[g] = 0
				left--
			}
		}
	}
	if j.multi != nil {
		for _, v := range j.multi {
			release(v>>8, int(v&0xff))
		}
	} else {
		release(j.node, int(j.gpu))
	}
	s.qosAdd(ji, -1)
	last := s.running[len(s.running)-1]
	s.running[j.runIdx] = last
	s.js[last].runIdx = j.runIdx
	s.running = s.running[:len(s.running)-1]
}

func (s *sim) pushEvent(e event) {
	s.events = append(s.events, e)
	s.up(len(s.events) - 1)
}

func (s *sim) popEvent() event {
	e := s.events[0]
	last := len(s.events) - 1
	s.events[0] = s.events[last]
	s.events = s.events[:last]
	if last > 0 {
		s.down(0)
	}
	return e
}

func evLess(a, b event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.j < b.j
}

func (s *sim) up(k int) {
	h := s.events
	for k > 0 {
		p := (k - 1) / 2
		if !evLess(h[k], h[p]) {
			break
		}
		h[k], h[p] = h[p], h[k]
		k = p
	}
}

func (s *sim) down(k int) {
	h := s.events
	for {
		l := 2*k + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && evLess(h[r], h[l]) {
			m = r
		}
		if !evLess(h[m], h[k]) {
			return
		}
		h[k], h[m] = h[m], h[k]
		k = m
	}
}

func (s *sim) result() *Result {
	r := &Result{Jobs: make([]JobResult, len(s.js)), Stats: s.stats}
	for i := range s.js {
		j := &s.js[i]
		jr := JobResult{Outcome: j.outcome, Partition: -1, Node: -1}
		if j.status == stRunning {
			jr.Outcome = Ran // ran past the last event: cannot happen, ends are events
		}
		switch jr.Outcome {
		case Ran:
			jr.Start, jr.End = time.Duration(j.start)*time.Second, time.Duration(j.end)*time.Second
			jr.Partition, jr.Node, jr.Backfilled = int(j.part), int(j.node), j.backfilled
		case Cancelled:
			jr.End = time.Duration(j.end) * time.Second
		case Unrunnable:
			jr.Unfit = CheckFit(&s.c, &s.in[i])
		}
		if j.status == stPending {
			jr.Outcome = NotStarted
		}
		r.Jobs[i] = jr
	}
	return r
}
