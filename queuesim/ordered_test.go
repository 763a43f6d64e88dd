package queuesim

import "testing"

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
