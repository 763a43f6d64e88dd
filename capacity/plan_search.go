package capacity

import "errors"

// The purchase search's narrowing (docs/whatif.md, "The smallest purchase
// per GPU model"): between a size that misses the target and one that
// meets it, the least size that meets it, assuming (as the search does)
// that a size meeting the target means every larger one does.

// planWidth is the replays the plan is sized to run at once: the two
// cores of the machine it is measured on. It is a constant, not
// GOMAXPROCS, so that which sizes the search replays — and so every
// count, curve and answer — is the same with any number of workers.
const planWidth = 2

// stepWidth is how many sizes a step of the narrowing replays together:
// as many as leave no worker of planWidth idle while the plan's seeds of
// one size run (two with one seed, else one: plain bisection).
func stepWidth(seeds int) int { return max(1, planWidth/max(seeds, 1)) }

// stepSizes are the sizes one step between lo (a miss) and hi (a hit)
// replays: width of them, splitting (lo, hi) into width + 1 near-equal
// parts, ascending, each strictly between; with width 1, the midpoint
// (lo + hi) / 2, as a bisection's.
func stepSizes(lo, hi, width int) []int {
	var ks []int
	for i := 1; i <= width; i++ {
		k := lo + i*(hi-lo)/(width+1)
		if k > lo && k < hi && (len(ks) == 0 || k > ks[len(ks)-1]) {
			ks = append(ks, k)
		}
	}
	return ks
}

// narrow is the least size in (lo, hi] that meets the target, lo a size
// that misses it and hi one that meets it. Each step replays stepSizes
// through try, which answers, in their order, whether each meets the
// target — up to the first that does (the sizes after it are not
// needed) or all of them — and the step keeps the interval between the
// last miss and the first hit. With width w a step divides the sizes
// left by w + 1 for the wall time of one replay when the w replays run
// side by side.
func narrow(lo, hi, width int, try func(ks []int) ([]bool, error)) (int, error) {
	for hi-lo > 1 {
		ks := stepSizes(lo, hi, width)
		met, err := try(ks)
		if err != nil {
			return 0, err
		}
		if len(met) == 0 {
			return 0, errors.New("capacity: a search step answered for no size")
		}
		for i, ok := range met {
			if ok {
				hi = ks[i]
				break
			}
			lo = ks[i]
		}
	}
	return hi, nil
}
