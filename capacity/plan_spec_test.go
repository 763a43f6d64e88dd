package capacity

import (
	"reflect"
	"runtime"
	"testing"
)

// TestRunAheadChangesNothing: a configuration whose seeds were replayed
// ahead, on a worker a batch left idle, and adopted by the batch that
// asks for it, has the same scenario, stop bound and charges (replays,
// steps, the budget) as one replayed without hints.
func TestRunAheadChangesNothing(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	gm := goldenMonths[3]
	in := gm.month(t)
	c := planConfig(3)
	wp := multifactorConf(in)
	wp.Target = c.Plan.TargetP95Wait.D()
	newPlanner := func() *planner {
		pl := &planner{in: in, wp: wp, params: gm.pp, target: wp.Target.Seconds(),
			budget: c.Plan.ReplayBudget, stepBudget: c.Plan.StepBudget, cache: map[string]*evalResult{}}
		if err := pl.start(&c.Plan, 0); err != nil {
			t.Fatal(err)
		}
		return pl
	}
	// Odd months may stop once they prove the target missed; even ones
	// run to their end.
	req := func(m int) evalReq {
		if m%2 == 1 {
			return evalReq{m: m, stop: &stopScope{}}
		}
		return evalReq{m: m}
	}
	plain := newPlanner()
	hinted := newPlanner()
	for m := 1; m <= 8; m++ {
		// Month m's seeds are replayed ahead (here to their end, before
		// the batch, as an idle worker would beside it), with month m as
		// the other kind (stopping or not) and month m+4, which no batch
		// adopts: a seed is adopted only by the configuration it replayed.
		other := req(m + 1)
		other.m = m
		hinted.hint(req(m+4), req(m), other)
		hinted.beginBatch()
		hinted.runAhead()
		hinted.endBatch()
		for _, pl := range []*planner{plain, hinted} {
			if o := pl.evalAll([]evalReq{req(m)}, nil)[0]; o.err != nil {
				t.Fatalf("month %d: %v", m, o.err)
			}
		}
		a, b := plain.cache[evalKey(nil, m)], hinted.cache[evalKey(nil, m)]
		if !reflect.DeepEqual(a.sc, b.sc) || !reflect.DeepEqual(a.over, b.over) {
			t.Errorf("month %d: replayed ahead %+v %+v, without hints %+v %+v", m, b.sc, b.over, a.sc, a.over)
		}
		if plain.replays != hinted.replays || plain.steps != hinted.steps || plain.budget != hinted.budget || plain.replayed != hinted.replayed {
			t.Errorf("month %d: charged %d replays, %d steps, budget %d with hints; %d, %d, %d without",
				m, hinted.replays, hinted.steps, hinted.budget, plain.replays, plain.steps, plain.budget)
		}
	}
	t.Logf("%d seeds adopted", hinted.spec.adopted)
	if plain.spec.adopted != 0 || hinted.spec.adopted == 0 {
		t.Errorf("seeds adopted: %d without hints, %d with (want 0 and some)", plain.spec.adopted, hinted.spec.adopted)
	}
}
