package queuesim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOrderedSearchAsDirect: on random clusters, settings and months
// (randomReplay: overloaded ones among them, shards, types, several
// partitions), every single-node backfill search answers the same start
// and node read in the order of the nodes' bounds (searchOrdered) as
// scanning every node in the partition's order (searchDirect) — each
// search run both ways on the same timelines — and the replay with the
// ordered search gives every job the same outcome, start, partition and
// node, and the same counts, as the one with the direct search. Every
// candidate list is searched in order here (orderFrom 0), however short.
func TestOrderedSearchAsDirect(t *testing.T) {
	checks := 0
	for seed := range uint64(randomRuns()) {
		c, pr, sc, jobs, o := randomReplay(seed + 1)
		want := searchReplay(t, c, pr, sc, jobs, o, func(s *sim) { s.directSearch = true })
		var checked *sim
		searchReplay(t, c, pr, sc, jobs, o, func(s *sim) { s.checkSearch, s.orderFrom, checked = true, 0, s })
		if checked.searchDiffs > 0 {
			t.Errorf("seed %d: %d of %d searches answered differently in order", seed+1, checked.searchDiffs, checked.searchChecks)
		}
		checks += checked.searchChecks
		got := searchReplay(t, c, pr, sc, jobs, o, func(s *sim) { s.orderFrom = 0 })
		sameReplay(t, seed+1, got, want)
	}
	if checks < 10000 {
		t.Errorf("%d searches compared: want at least 10,000", checks)
	}
	t.Logf("%d single-node searches compared", checks)
}

// searchReplay runs the jobs through the simulator with set applied to
// it first (nil: as Run does).
func searchReplay(t *testing.T, c Cluster, pr Priority, sc Scheduler, jobs []Job, o Options, set func(*sim)) *Result {
	t.Helper()
	s, err := newSim(c, pr, sc, jobs, o)
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(s)
	}
	s.loop()
	return s.result()
}

// TestMostFreeAsFindNow: on random clusters, settings and months
// (randomReplay), every backfill cycle's answer to whether a single-node
// request of whole GPUs fits now, read from the partition's most free
// GPUs on one node per type (mostFreeWhole), is the one findNow gives by
// reading the partition's nodes.
func TestMostFreeAsFindNow(t *testing.T) {
	checks := 0
	for seed := range uint64(randomRuns()) {
		var checked *sim
		c, pr, sc, jobs, o := randomReplay(seed + 1)
		searchReplay(t, c, pr, sc, jobs, o, func(s *sim) { s.checkFits, checked = true, s })
		if checked.fitsDiffs > 0 {
			t.Errorf("seed %d: %d of %d fits-now answers differ from findNow's", seed+1, checked.fitsDiffs, checked.fitsChecks)
		}
		checks += checked.fitsChecks
	}
	if checks < 10000 {
		t.Errorf("%d fits-now answers compared: want at least 10,000", checks)
	}
	t.Logf("%d fits-now answers compared", checks)
}

// randomRuns is how many random replays a test compares: 120, or 30 with
// -short.
func randomRuns() int {
	if testing.Short() {
		return 30
	}
	return 120
}

// TestQueueKeptAsFullSort: on random clusters, settings and months
// (randomReplay: overloaded ones, cancels, multifactor and Fair Tree among
// them), every compact of the queue that stops reading once it dropped
// the jobs counted as gone leaves the queue that dropping every entry no
// longer pending leaves, and every re-sort after a recalc that sorts only
// the jobs out of order (sortQueue) gives the order of a full sort by
// cmpQueue.
func TestQueueKeptAsFullSort(t *testing.T) {
	checks := 0
	for seed := range uint64(randomRuns()) {
		var checked *sim
		c, pr, sc, jobs, o := randomReplay(seed + 1)
		searchReplay(t, c, pr, sc, jobs, o, func(s *sim) { s.checkQueue, checked = true, s })
		if checked.queueDiffs > 0 {
			t.Errorf("seed %d: %d of %d queues differ from the full compact or sort", seed+1, checked.queueDiffs, checked.queueChecks)
		}
		checks += checked.queueChecks
	}
	if checks < 10000 {
		t.Errorf("%d queues compared: want at least 10,000", checks)
	}
	t.Logf("%d queues compared", checks)
}

// TestSortQueuePlanted: sortQueue on planted queues — sorted by old
// priorities, then a few jobs moved, whole users moved together, most of
// the queue moved, equal priorities, a NaN — gives the order of a full
// sort by cmpQueue.
func TestSortQueuePlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for trial := range 400 {
		n := 1 + rng.IntN(300)
		s := &sim{js: make([]jstate, n)}
		for i := range s.js {
			s.js[i] = jstate{prio: float64(rng.IntN(50)), order: int64(rng.IntN(n)), tie: rng.Uint64() % 4, tier: int32(rng.IntN(2))}
			s.pending = append(s.pending, int32(i))
		}
		slices.SortFunc(s.pending, s.cmpQueue)
		users := 1 + rng.IntN(8)
		shift := make([]float64, users)
		for u := range shift {
			if rng.IntN(2) == 0 {
				shift[u] = float64(rng.IntN(21) - 10)
			}
		}
		for i := range s.js {
			switch mode := trial % 4; {
			case mode == 0 && rng.IntN(20) == 0:
				s.js[i].prio = float64(rng.IntN(50))
			case mode == 1:
				s.js[i].prio += shift[i%users]
			case mode == 2 && rng.IntN(2) == 0:
				s.js[i].prio = -s.js[i].prio
			}
		}
		if trial%50 == 3 {
			s.js[rng.IntN(n)].prio = math.NaN()
		}
		want := slices.Clone(s.pending)
		slices.SortFunc(want, s.cmpQueue)
		s.sortQueue()
		if !slices.Equal(s.pending, want) {
			t.Fatalf("trial %d (%d jobs): sortQueue's order differs from a full sort", trial, n)
		}
	}
}
