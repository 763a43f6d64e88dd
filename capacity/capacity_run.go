package capacity

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/queuesim"
)

// PlanProgress is how far a simulated plan has got, for a caller that
// shows it (SimPlanParams.Progress): the seeded replays counted so far
// and an estimate of those the plan takes in all. Done never falls and
// never passes Planned; the last report has Final set, and Done ==
// Planned unless Stopped (a budget stopped the plan).
type PlanProgress struct {
	Done, Planned int
	Final         bool
	Stopped       bool
}

// evalReq is one configuration a batch replays: the changes at month m's
// load.
type evalReq struct {
	changes []analysis.Change
	m       int
	// keep keeps the replay and its runs in the result: an effect's
	// subsets and the calibration read them; every other step reads the
	// Scenario only.
	keep bool
	// r is the replay when it is built already (today's), else nil.
	r *replay
	// stop, when not nil, lets its seeds stop once they prove the target
	// missed (plan_stop.go): the caller reads only meets or misses, and
	// an OverBound where it misses.
	stop *stopScope
	// scan marks a month of a scan that ends at its first miss (the
	// timeline): once the seeds of one of the batch's scan requests that
	// stopped prove it a miss, the scan requests after it are not
	// replayed (commit reads none of them).
	scan bool
}

// evalOut is a configuration's result, or why there is none.
type evalOut struct {
	e   *evalResult
	err error
}

// errSkipped marks the work of a batch past its stop: never read.
var errSkipped = errors.New("not replayed: the batch stopped before it")

// seedOut is one seeded replay of a configuration, reduced.
type seedOut struct {
	res         *queuesim.Result // kept only when the request keeps it
	stats       seedStats
	jobs, steps int
	err         error
	// stopped is set when the seed's StopRule ended it early.
	stopped *queuesim.Stopped
}

// sharedReplay is a replay built once for every configuration of a batch
// with its changes (the months of the timeline differ in load only), and
// let go when the last of them is committed.
type sharedReplay struct {
	once  sync.Once
	r     *replay
	err   error
	users int // configurations not yet committed; the committing goroutine's
}

// batchItem is a configuration of a batch on its way.
type batchItem struct {
	req   evalReq
	key   string
	rep   *sharedReplay
	seeds []seedOut
	done  []chan struct{}
	skip  atomic.Bool
	// abort ends its seeds still replaying: the answer no longer needs
	// them (commit decided it on the seeds before them, or the batch
	// stopped before it).
	abort atomic.Bool
	// proved counts, per group, its seeds that stopped proving the
	// group over the target (a scan request's; under mu).
	mu     sync.Mutex
	proved []int
	// first is the item of the same configuration earlier in the batch;
	// out the item's result once committed.
	first *batchItem
	out   evalOut
}

func evalKey(changes []analysis.Change, m int) string {
	var key strings.Builder
	fmt.Fprintf(&key, "%d", m)
	for _, c := range changes {
		key.WriteString("\x00" + c.Kind + "\x01" + c.Spec)
	}
	return key.String()
}

// evalAll replays the configurations of reqs as if one after another in
// their order: each is looked up in the cache, else checked against the
// budgets (plan.replay_budget and plan.step_budget, as spent by those
// before it) and charged to them, in that order; after each, then (when
// not nil) is called with its result and says whether to stop, and
// nothing after a stop is charged or returned (errSkipped). The seeded
// replays themselves run in parallel on GOMAXPROCS workers, taken in the
// same order; work done past a stop or a budget is thrown away, so which
// replays count, the counts and every answer are the same with any
// number of workers.
func (pl *planner) evalAll(reqs []evalReq, then func(i int, o evalOut) bool) []evalOut {
	outs := make([]evalOut, len(reqs))
	for i := range outs {
		outs[i].err = errSkipped
	}
	items := make([]*batchItem, len(reqs))
	type task struct{ item, seed int }
	var tasks []task
	queued := map[string]*batchItem{}
	reps := map[string]*sharedReplay{}
	for i, q := range reqs {
		it := &batchItem{req: q, key: evalKey(q.changes, q.m)}
		items[i] = it
		if pl.cached(q) != nil {
			continue
		}
		if it.first = queued[it.key]; it.first != nil {
			continue
		}
		queued[it.key] = it
		ck := evalKey(q.changes, 0)
		if q.r != nil {
			ck = "\x02" + it.key
		}
		if it.rep = reps[ck]; it.rep == nil {
			it.rep = &sharedReplay{}
			reps[ck] = it.rep
		}
		it.rep.users++
		it.seeds = make([]seedOut, pl.seeds)
		it.done = make([]chan struct{}, pl.seeds)
		for s := range pl.seeds {
			it.done[s] = make(chan struct{})
			tasks = append(tasks, task{i, s})
		}
	}
	var stopped atomic.Bool
	var next atomic.Int64
	// cut is the first scan request its stopped seeds proved a miss:
	// those after it are past the scan's end.
	var cut atomic.Int64
	cut.Store(math.MaxInt64)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(tasks)) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(tasks) {
					return
				}
				t := tasks[k]
				it := items[t.item]
				if stopped.Load() || it.skip.Load() || it.req.scan && int64(t.item) > cut.Load() {
					it.seeds[t.seed].err = errSkipped
				} else {
					it.seeds[t.seed] = pl.runSeed(it, t.seed)
					if it.req.scan && it.provesMiss(it.seeds[t.seed].stopped, pl.seeds) {
						pl.cutScan(items, t.item, &cut)
					}
				}
				close(it.done[t.seed])
			}
		})
	}
	for i, it := range items {
		it.out = pl.commit(it)
		outs[i] = it.out
		if then != nil && then(i, outs[i]) {
			// Nothing after it is read: its seeds still replaying end.
			for _, later := range items[i+1:] {
				later.skip.Store(true)
				later.abort.Store(true)
			}
			break
		}
	}
	stopped.Store(true)
	wg.Wait()
	return outs
}

// provesMiss counts a seed of it that stopped, and says whether its
// stopped seeds prove it a miss: more than half of its n seeds proved
// one group over the target. commit then finds it a miss too
// (stopVerdict counts those seeds, and the others only add to them).
func (it *batchItem) provesMiss(st *queuesim.Stopped, n int) bool {
	if st == nil {
		return false
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	for g, ok := range st.Proved {
		if !ok {
			continue
		}
		for len(it.proved) <= g {
			it.proved = append(it.proved, 0)
		}
		if it.proved[g]++; 2*it.proved[g] > n {
			return true
		}
	}
	return false
}

// cutScan ends the scan at request i, proved a miss: the scan requests
// after it are not started, and those replaying end.
func (pl *planner) cutScan(items []*batchItem, i int, cut *atomic.Int64) {
	for {
		c := cut.Load()
		if int64(i) >= c || cut.CompareAndSwap(c, int64(i)) {
			break
		}
	}
	for _, later := range items[i+1:] {
		if later.req.scan {
			later.abort.Store(true)
		}
	}
}

// cached is the configuration's result when it was replayed before.
func (pl *planner) cached(q evalReq) *evalResult {
	if len(q.changes) == 0 && q.m == 0 && pl.base != nil {
		return pl.base
	}
	e := pl.cache[evalKey(q.changes, q.m)]
	// A bound answers only a request that may stop; and only of its
	// own scope.
	if e != nil && e.over != nil && (q.stop == nil || !sameScope(e.scope, q.stop)) {
		return nil
	}
	return e
}

func sameScope(a, b *stopScope) bool {
	return a != nil && b != nil && a.model == b.model && slices.Equal(a.parts, b.parts)
}

// build is the configuration's replay, built by whichever goroutine asks
// first.
func (pl *planner) build(it *batchItem) (*replay, error) {
	rep := it.rep
	rep.once.Do(func() {
		if it.req.r != nil {
			rep.r = it.req.r
			return
		}
		rep.r, rep.err = newReplay(pl.in, pl.wp, it.req.changes)
	})
	return rep.r, rep.err
}

// runSeed replays seed s of a configuration at its month's load.
func (pl *planner) runSeed(it *batchItem, s int) seedOut {
	r, err := pl.build(it)
	if err != nil {
		return seedOut{err: err}
	}
	jobs := pl.scaled(r, it.req.m, s)
	var rule *queuesim.StopRule
	if it.req.stop != nil && !pl.fullReplays {
		rule = r.stopRule(it.req.stop, jobs, pl.target)
	}
	res, err := queuesim.Run(r.cluster, r.prio, r.sched, jobs, queuesim.Options{Seed: uint64(s + 1), Stop: rule, Abort: &it.abort})
	if err != nil {
		return seedOut{err: err}
	}
	if res.Aborted {
		return seedOut{err: errSkipped}
	}
	out := seedOut{jobs: len(jobs), steps: res.Stats.Events + res.Stats.BackfillTested}
	if res.Stopped != nil {
		out.stopped = res.Stopped
		return out
	}
	out.stats = r.reduce(res, jobs)
	if it.req.keep {
		out.res = res
	}
	return out
}

// commit is a configuration's result, charged to the budgets as the
// sequential plan charges it: the replay is built; the budgets are
// checked before its seeds; each seed counts in turn.
func (pl *planner) commit(it *batchItem) evalOut {
	if e := pl.cached(it.req); e != nil {
		return evalOut{e: e}
	}
	if it.first != nil {
		// The same configuration earlier in the batch, which failed: it
		// fails again, as the budgets only shrink.
		return it.first.out
	}
	r, err := pl.build(it)
	if err != nil {
		it.skip.Store(true)
		return evalOut{err: err}
	}
	f := pl.maxFactor(it.req.m)
	pl.need = int(float64(len(r.jobs)*pl.seeds) * math.Max(f, 1))
	if pl.need > pl.budget || pl.stepBudget > 0 && pl.steps >= pl.stepBudget {
		it.skip.Store(true)
		return evalOut{err: errBudget}
	}
	e := &evalResult{nodes: r.simNodes, parts: r.simParts}
	stopped := 0
	for s := range pl.seeds {
		<-it.done[s]
		so := &it.seeds[s]
		if so.err != nil {
			return evalOut{err: so.err}
		}
		pl.charge(so)
		if so.stopped != nil {
			stopped++
		}
		if stopped == 0 || s == pl.seeds-1 {
			continue
		}
		// Most seeds proved a group over the target already: the seeds
		// after these cannot change the answer, so they are not waited
		// for, nor charged (the same with any number of workers).
		if b := r.stopVerdict(it.req.stop, it.seeds[:s+1], pl.seeds, pl.target); b != nil {
			it.skip.Store(true)
			it.abort.Store(true)
			for t := s + 1; t < pl.seeds; t++ {
				<-it.done[t]
			}
			return pl.provedOver(it, e, r, b)
		}
	}
	if stopped > 0 {
		if b := r.stopVerdict(it.req.stop, it.seeds, pl.seeds, pl.target); b != nil {
			return pl.provedOver(it, e, r, b)
		}
		// Not proved by most seeds: the seeds that stopped run again to
		// their end, in turn (their steps count too), and the answer is
		// the full one.
		for s := range it.seeds {
			if it.seeds[s].stopped == nil {
				continue
			}
			full := it.req
			full.stop = nil
			so := pl.runSeed(&batchItem{req: full, rep: it.rep}, s)
			if so.err != nil {
				return evalOut{err: so.err}
			}
			pl.charge(&so)
			it.seeds[s] = so
		}
	}
	stats := make([]seedStats, 0, pl.seeds)
	for s := range it.seeds {
		so := &it.seeds[s]
		stats = append(stats, so.stats)
		if it.req.keep {
			e.runs = append(e.runs, so.res)
		}
		so.res, so.stats = nil, seedStats{}
	}
	e.sc = r.combine(stats)
	if it.req.keep {
		e.r = r
	}
	pl.cache[it.key] = e
	pl.release(it)
	return evalOut{e: e}
}

// charge counts a seed's replay against the plan's budgets and in its
// progress.
func (pl *planner) charge(so *seedOut) {
	pl.steps += so.steps
	pl.budget -= so.jobs
	pl.replayed += so.jobs
	pl.replays++
	pl.report(false, false)
}

// provedOver settles it as over the target with the bound b its stopped
// seeds proved (no number the replays did not compute), caches it and
// lets its replay go.
func (pl *planner) provedOver(it *batchItem, e *evalResult, r *replay, b *OverBound) evalOut {
	e.over, e.scope = b, it.req.stop
	e.sc = Scenario{Jobs: r.counts}
	pl.cache[it.key] = e
	pl.release(it)
	return evalOut{e: e}
}

// release: every seed of it has run, so no worker reads its replay
// again, and the last configuration of the batch that shares it lets it
// go.
func (pl *planner) release(it *batchItem) {
	if it.rep.users--; it.rep.users == 0 {
		it.rep.r = nil
	}
}

// report tells the caller's progress function how far the plan is.
func (pl *planner) report(final, stopped bool) {
	if pl.progress == nil {
		return
	}
	pl.planned = max(pl.planned, pl.replays)
	p := PlanProgress{Done: pl.replays, Planned: pl.planned, Final: final, Stopped: final && stopped}
	if final && !stopped {
		p.Planned = p.Done
	}
	pl.progress(p)
}
