package capacity

import "errors"

// The purchase search's bisection (docs/whatif.md, "The smallest
// purchase per GPU model"): between a size that misses the target and
// one that meets it, the size a bisection finds — the least that meets
// it where a size meeting it means every larger one does, as the search
// assumes. The replayed waits are not monotone at the scale of one GPU
// (a scheduler's anomalies, one seed), so any other choice of sizes may
// find another answer: the bisection's path is kept, and only run ahead.

// planWidth is the replays the plan is sized to run at once: the two
// cores of the machine it is measured on. It is a constant, not
// GOMAXPROCS, so that which sizes the search replays — and so every
// count, curve and answer — is the same with any number of workers.
const planWidth = 2

// stepWidth is how many sizes a step of the search replays together:
// as many as leave no worker of planWidth idle while the plan's seeds of
// one size run (two with one seed, else one).
func stepWidth(seeds int) int { return max(1, planWidth/max(seeds, 1)) }

// narrow is the size the bisection between lo (a miss) and hi (a hit)
// finds. Each step replays the midpoint through try; with ahead, beside
// it the midpoint the bisection takes next should the first miss
// ((mid + hi) / 2). try answers, in their order, whether each meets the
// target — up to the first that does (the size after a hit is not
// needed) or all of them. A step whose guess was right takes two of the
// bisection's steps for the wall time of one when the two replays run
// side by side; one whose guess was wrong stops the guess's replay as
// soon as the midpoint's answer is in.
func narrow(lo, hi int, ahead bool, try func(ks []int) ([]bool, error)) (int, error) {
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ks := []int{mid}
		if next := (mid + hi) / 2; ahead && next > mid {
			ks = append(ks, next)
		}
		met, err := try(ks)
		if err != nil {
			return 0, err
		}
		if len(met) == 0 {
			return 0, errors.New("capacity: a search step answered for no size")
		}
		if met[0] {
			hi = mid
			continue
		}
		lo = mid
		if len(met) > 1 {
			if met[1] {
				hi = ks[1]
			} else {
				lo = ks[1]
			}
		}
	}
	return hi, nil
}
