package capacity

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpuprof/gpuprof/internal/present"
)

// The purchase search's ends (docs/whatif.md, "Where the purchase search
// starts and ends"): a lower bound from the offered load skips sizes that
// provably miss the target, and the largest size tried scales with the
// model's GPUs.

// maxPurchaseOf is the most GPUs of a model of gpus GPUs the search
// tries: plan.max_purchase when set, else enough to double the model (at
// least 32).
func maxPurchaseOf(configured, gpus int) int {
	if configured > 0 {
		return configured
	}
	return max(32, gpus)
}

// loadBound is a size below which no purchase of model can meet the
// target at month m's load, with the changes given, and the sentence
// that says why; 0 when none is proved. scope names the groups the
// search compares (as the stop rule's).
//
// For a group — a partition's jobs, or its jobs on the model — take the
// jobs certain to count in it (they arrived in the window, cannot leave
// the queue unstarted, and can run in one partition only, on the model
// only for a cell). If the group's p95 wait is at most T, all but at
// most L(N) − 1 of them start within T of their arrival a (N bounds the
// group's waits, L as p95Limit), so by W + T (W the window). Each then
// runs min(run, W − a) or more within [0, W + T] on GPUs of the
// partition (of the model, for a cell): its GPUs × that is work those
// G + k GPUs must do in W + T. So when the work of the jobs left after
// dropping the L(N) − 1 largest exceeds (G + k)·(W + T), the p95 is over
// T. Per seed (the seeds scale the jobs differently), a size is skipped
// only when more than half the seeds prove it — the median over the
// seeds is then over the target — and only when the replays of every
// size skipped hold the same jobs (a job left out at one size and not
// at another would change the scaled sets).
func (pl *planner) loadBound(model string, scope *stopScope, req func(k int) evalReq) (int, string, error) {
	if pl.noLoadBound {
		return 0, "", nil
	}
	q0 := req(0)
	r, err := newReplay(pl.in, pl.wp, q0.changes)
	if err != nil {
		return 0, "", err
	}
	w := r.span.Seconds()
	nn := len(r.cluster.Nodes)
	type best struct {
		k        int
		part     string
		work, gs float64
		gpus     int
	}
	per := make([]best, pl.seeds)
	for s := range pl.seeds {
		jobs := pl.scaled(r, q0.m, s)
		rule := r.stopRule(scope, jobs, pl.target)
		for p := range r.simParts {
			// The partition's GPUs the group's jobs run on.
			gpus := 0
			for _, n := range r.cluster.Partitions[p].Nodes {
				if rule.Started[p*nn+n] == int32(p) {
					gpus += r.cluster.Nodes[n].GPUs
				}
			}
			if gpus == 0 {
				continue
			}
			var work []float64
			nmax := 0
			for i := range jobs {
				q := &jobs[i]
				if !rule.Counted[i] || !slices.Contains(q.Partitions, p) {
					continue
				}
				nmax++
				if rule.Pending[i] != int32(p) || q.Cancels || q.Shards > 0 {
					continue
				}
				run := q.Run
				if q.Limit > 0 {
					run = min(run, q.Limit)
				}
				work = append(work, float64(q.GPUs*q.Nodes)*math.Min(run.Seconds(), w-q.Arrival.Seconds()))
			}
			slices.Sort(work)
			drop := min(len(work), p95Limit(nmax)-1)
			sum := sumOf(work[:len(work)-drop])
			// The least k with (G + k)(W + T) ≥ the work is not proved.
			k := int(math.Ceil(sum/(w+pl.target))) - gpus
			if k > per[s].k {
				per[s] = best{k: k, part: r.simParts[p].Name, work: sum, gs: w + pl.target, gpus: gpus}
			}
		}
	}
	byK := slices.Clone(per)
	slices.SortFunc(byK, func(a, b best) int { return b.k - a.k })
	b := byK[pl.seeds/2] // more than half the seeds prove every size below it
	if b.k <= 1 {
		return 0, "", nil
	}
	// The replay of the largest size skipped must hold the same jobs.
	last, err := newReplay(pl.in, pl.wp, req(b.k-1).changes)
	if err != nil {
		return 0, "", err
	}
	if last.counts.Replayed != r.counts.Replayed {
		return 0, "", nil
	}
	group := "the jobs of partition " + b.part
	if scope.model != "" {
		group += " on " + model
	}
	why := fmt.Sprintf("no size below +%d can meet the target: %s that can run nowhere else must run %s GPU-hours within the window and the target wait (%s), after setting aside their longest 5 %% (those the p95 may leave waiting); %d + k GPUs give fewer for any k below %d",
		b.k, group, present.Int(int(b.work/3600)), present.Seconds(b.gs), b.gpus, b.k)
	return b.k, why, nil
}

// maxWords says where the largest size tried came from.
func maxWords(configured, maxGPUs, gpus int) string {
	if configured <= 0 {
		return fmt.Sprintf("the search's end: the larger of the model's %d GPUs and 32; plan.max_purchase sets another", gpus)
	}
	return fmt.Sprintf("plan.max_purchase %d", maxGPUs)
}
