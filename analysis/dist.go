package analysis

import (
	"math"
	"slices"
)

// PercentileMethod names how every percentile in this package is computed;
// reports print it next to the numbers.
const PercentileMethod = "nearest-rank"

// Dist summarises a distribution: its size, mean, median, 95th percentile
// (nearest rank) and maximum. The unit is the field's (seconds, a fraction,
// bytes, percent). A zero N means no values: the other fields are then 0
// and say nothing.
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Max  float64 `json:"max"`
}

// nearestRank returns the 1-based rank of the p-th percentile (0 < p ≤ 100)
// of n sorted values: ceil(p·n/100), at least 1. p·n is computed before the
// division because p/100 is inexact in binary (0.07·100 is
// 7.000000000000001), which would push an exact rank one too high.
func nearestRank(n int, p float64) int {
	exact := p * float64(n) / 100
	rank := int(exact)
	if float64(rank) < exact {
		rank++
	}
	return min(max(rank, 1), n)
}

// PercentileSorted returns the p-th percentile (nearest rank) of sorted,
// which must not be empty.
func PercentileSorted(sorted []float64, p float64) float64 {
	return sorted[nearestRank(len(sorted), p)-1]
}

// distOf summarises vs, which it sorts in place. NaN and ±Inf must have been
// filtered out by the caller (the measurement step does that).
func distOf(vs []float64) Dist {
	if len(vs) == 0 {
		return Dist{}
	}
	slices.Sort(vs)
	sum := 0.0
	for _, v := range vs {
		sum += v
	}
	return Dist{
		N:    len(vs),
		Mean: sum / float64(len(vs)),
		P50:  PercentileSorted(vs, 50),
		P95:  PercentileSorted(vs, 95),
		Max:  vs[len(vs)-1],
	}
}

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
