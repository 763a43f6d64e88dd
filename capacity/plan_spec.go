package capacity

import (
	"fmt"
	"runtime"
	"sync"
)

// specPool runs seeded replays ahead of need. A batch of configurations
// whose seeds are fewer than twice the workers leaves a worker with
// nothing to do while the last seed runs (three seeds on two workers:
// one idle half the time); given hints — the configurations the plan
// may ask for next, whichever way the batch's answer goes — that worker
// replays a seed of one of them instead. The next batch adopts the seeds
// it asks for and aborts the rest unread. A seed's replay depends only
// on its configuration and its number, and every charge (replays, steps,
// the budgets) is made when a batch commits, in order, so adopting a
// seed changes no count and no answer; with one worker nothing runs
// ahead.
type specPool struct {
	mu sync.Mutex
	// next are the hints for the batch about to start; hints those of
	// the batch running, not yet started.
	next, hints []specTask
	// live is set while the batch the seeds are hinted by runs: a seed
	// run ahead starts only then.
	live bool
	// running is set while a seed runs ahead: one at a time, so that no
	// more seeds run at once than there are workers.
	running bool
	seeds   map[string]*specSeed
	reps    map[string]*sharedReplay
	// adopted counts the seeds batches took from those run ahead.
	adopted int
}

// specTask is seed of a configuration hinted.
type specTask struct {
	req  evalReq
	seed int
}

// specSeed is a seed run ahead: the item it runs as (its own, with its
// own abort), and its result once done is closed.
type specSeed struct {
	it   *batchItem
	done chan struct{}
	out  seedOut
}

// specKey names seed s of a configuration as replayed: its changes,
// month and stop scope.
func specKey(q evalReq, s int) string {
	scope := "-"
	if q.stop != nil {
		scope = fmt.Sprintf("%q%q", q.stop.model, q.stop.parts)
	}
	return fmt.Sprintf("%s\x03%s\x03%d", evalKey(q.changes, q.m), scope, s)
}

// hint names the configurations the plan may replay after the next
// batch: their seeds, seed 0 of each first, run ahead on its idle
// workers. Configurations kept (keep) or with a replay built (r) are
// not run ahead.
func (pl *planner) hint(reqs ...evalReq) {
	if runtime.GOMAXPROCS(0) < 2 {
		return
	}
	sp := &pl.spec
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.next = sp.next[:0]
	for s := range pl.seeds {
		for _, q := range reqs {
			if !q.keep && q.r == nil && pl.cached(q) == nil {
				sp.next = append(sp.next, specTask{q, s})
			}
		}
	}
}

// beginBatch takes the seeds run ahead (the caller adopts those it
// needs and aborts the rest with dropAhead) and makes the hints given
// since the last batch this one's.
func (pl *planner) beginBatch() (map[string]*specSeed, map[string]*sharedReplay) {
	sp := &pl.spec
	sp.mu.Lock()
	defer sp.mu.Unlock()
	seeds, reps := sp.seeds, sp.reps
	sp.seeds, sp.reps = map[string]*specSeed{}, map[string]*sharedReplay{}
	sp.hints, sp.next = sp.next, nil
	sp.live = true
	return seeds, reps
}

// endBatch stops seeds from starting ahead until the next batch.
func (pl *planner) endBatch() {
	sp := &pl.spec
	sp.mu.Lock()
	sp.live = false
	sp.hints = nil
	sp.mu.Unlock()
}

// dropAhead aborts the seeds run ahead that no batch adopted.
func dropAhead(seeds map[string]*specSeed) {
	for _, ss := range seeds {
		ss.it.abort.Store(true)
	}
}

// runAhead replays hinted seeds, one after another, while the batch
// that hinted them runs: called by a worker the batch has no more work
// for.
func (pl *planner) runAhead() {
	sp := &pl.spec
	sp.mu.Lock()
	if sp.running {
		sp.mu.Unlock()
		return
	}
	sp.running = true
	sp.mu.Unlock()
	for {
		sp.mu.Lock()
		if !sp.live || len(sp.hints) == 0 {
			sp.running = false
			sp.mu.Unlock()
			return
		}
		t := sp.hints[0]
		sp.hints = sp.hints[1:]
		ck := evalKey(t.req.changes, 0)
		rep := sp.reps[ck]
		if rep == nil {
			rep = &sharedReplay{}
			sp.reps[ck] = rep
		}
		ss := &specSeed{it: &batchItem{req: t.req, rep: rep}, done: make(chan struct{})}
		sp.seeds[specKey(t.req, t.seed)] = ss
		sp.mu.Unlock()
		ss.out = pl.runSeed(ss.it, t.seed)
		close(ss.done)
	}
}

// adoptAhead is the seed s of item it's configuration run ahead, if
// there is one, else nil; the item's abort then reaches it too.
func (sp *specPool) adoptAhead(seeds map[string]*specSeed, q evalReq, s int) *specSeed {
	key := specKey(q, s)
	ss := seeds[key]
	if ss != nil {
		delete(seeds, key)
		sp.adopted++
	}
	return ss
}

// abortAhead aborts the seeds of it run ahead, with it.
func (it *batchItem) abortAhead() {
	for _, ss := range it.ahead {
		if ss != nil {
			ss.it.abort.Store(true)
		}
	}
}
