package capacity

import (
	"math/rand/v2"
	"testing"
)

// bisect is the plain bisection the purchase search made before narrow:
// lo a miss, hi a hit, each step's midpoint replayed alone.
func bisect(lo, hi int, meets func(int) bool) (int, int) {
	steps := 0
	for hi-lo > 1 {
		steps++
		mid := (lo + hi) / 2
		if meets(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, steps
}

// TestNarrowFindsBisectionsSize: on random step functions — monotone
// (from a threshold on), and not (a size meeting the target between two
// missing it, as the replays' one-GPU anomalies do) — narrow with and
// without its step run ahead finds the size plain bisection finds, asks
// only for sizes strictly inside the interval, in increasing order, at
// most two a step, and with ahead takes no more steps than bisection.
func TestNarrowFindsBisectionsSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	for trial := range 4000 {
		lo := rng.IntN(300)
		hi := lo + 1 + rng.IntN([]int{2, 8, 64, 1024}[trial%4])
		th := lo + 1 + rng.IntN(hi-lo)
		flip := map[int]bool{}
		if trial%2 == 1 { // not monotone: some sizes answer the other way
			for range 1 + rng.IntN(4) {
				flip[lo+1+rng.IntN(hi-lo)] = true
			}
			delete(flip, hi)
		}
		meets := func(k int) bool { return (k >= th) != flip[k] }
		want, wantSteps := bisect(lo, hi, meets)
		for _, ahead := range []bool{false, true} {
			steps := 0
			curLo, curHi := lo, hi
			got, err := narrow(lo, hi, ahead, func(ks []int) ([]bool, error) {
				steps++
				if len(ks) == 0 || len(ks) > 2 || !ahead && len(ks) > 1 || len(ks) == 2 && ks[0] >= ks[1] {
					t.Fatalf("ahead %v: step sizes %v", ahead, ks)
				}
				var met []bool
				for _, k := range ks {
					if k <= curLo || k >= curHi {
						t.Fatalf("ahead %v: size %d outside (%d, %d)", ahead, k, curLo, curHi)
					}
					met = append(met, meets(k))
					if meets(k) {
						curHi = k
						break
					}
					curLo = k
				}
				return met, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("ahead %v on (%d, %d], threshold %d, flipped %v: narrow found %d, bisection %d", ahead, lo, hi, th, flip, got, want)
			}
			if steps > wantSteps || !ahead && steps != wantSteps {
				t.Fatalf("ahead %v on (%d, %d]: %d steps, bisection %d", ahead, lo, hi, steps, wantSteps)
			}
		}
	}
}

// TestStepWidth: two sizes side by side with one seed, else one.
func TestStepWidth(t *testing.T) {
	if stepWidth(1) != 2 || stepWidth(2) != 1 || stepWidth(3) != 1 {
		t.Errorf("stepWidth: %d %d %d", stepWidth(1), stepWidth(2), stepWidth(3))
	}
}
