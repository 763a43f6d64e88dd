package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bisect is the plain bisection the purchase search made before narrow:
// the least size in (lo, hi] for which meets holds, lo a miss, hi a hit.
func bisect(lo, hi int, meets func(int) bool) int {
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if meets(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// TestNarrowFindsBisectionsSize: on random monotone step functions
// (sizes from a threshold on meet the target), narrow of every width
// finds the size plain bisection finds — the threshold — asks try for
// strictly increasing sizes strictly inside the interval, stops reading
// a step at its first hit, and takes at most ⌈log_{w+1} n⌉ + 1 steps for
// n sizes left (one step, with w = 1, is bisection's ⌈log2 n⌉).
func TestNarrowFindsBisectionsSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	for trial := range 3000 {
		lo := rng.IntN(300)
		hi := lo + 1 + rng.IntN([]int{2, 8, 64, 1024}[trial%4])
		th := lo + 1 + rng.IntN(hi-lo) // the least size that meets
		meets := func(k int) bool { return k >= th }
		want := bisect(lo, hi, meets)
		if want != th {
			t.Fatalf("bisect(%d, %d) = %d, threshold %d", lo, hi, want, th)
		}
		for width := 1; width <= 3; width++ {
			steps := 0
			curLo, curHi := lo, hi
			got, err := narrow(lo, hi, width, func(ks []int) ([]bool, error) {
				steps++
				if len(ks) == 0 || len(ks) > width || !slices.IsSorted(ks) || len(slices.Compact(slices.Clone(ks))) != len(ks) {
					t.Fatalf("width %d: step sizes %v", width, ks)
				}
				var met []bool
				for _, k := range ks {
					if k <= curLo || k >= curHi {
						t.Fatalf("width %d: size %d outside (%d, %d)", width, k, curLo, curHi)
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
				t.Fatalf("width %d on (%d, %d], threshold %d: narrow found %d, bisection %d", width, lo, hi, th, got, want)
			}
			if most := int(math.Ceil(math.Log(float64(hi-lo))/math.Log(float64(width+1))+1e-9)) + 1; hi-lo > 1 && steps > most {
				t.Fatalf("width %d on (%d, %d]: %d steps, more than %d", width, lo, hi, steps, most)
			}
		}
	}
}

// TestStepSizes: with width 1 the step is bisection's midpoint; with 2,
// the interval in three near-equal parts.
func TestStepSizes(t *testing.T) {
	for _, c := range []struct {
		lo, hi, w int
		want      []int
	}{
		{0, 2, 1, []int{1}}, {128, 256, 1, []int{192}}, {3, 10, 1, []int{6}},
		{128, 256, 2, []int{170, 213}}, {32, 64, 2, []int{42, 53}},
		{5, 7, 2, []int{6}}, {5, 8, 2, []int{6, 7}}, {0, 1, 2, nil},
	} {
		if got := stepSizes(c.lo, c.hi, c.w); !slices.Equal(got, c.want) {
			t.Errorf("stepSizes(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.w, got, c.want)
		}
	}
	if stepWidth(1) != 2 || stepWidth(2) != 1 || stepWidth(3) != 1 {
		t.Errorf("stepWidth: %d %d %d", stepWidth(1), stepWidth(2), stepWidth(3))
	}
}
