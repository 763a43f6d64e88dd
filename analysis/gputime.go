package analysis

import (
	"math"
	"math/big"
	"math/bits"
	"time"
)

// gpuTime is GPU time counted exactly, in GPU-nanoseconds, in 128 bits.
//
// The tables that add up GPU-hours over many jobs (task profiles, the
// cluster summary, the jobs counted up to the window's end) add gpuTimes,
// not float64 hours: a float sum depends on the order of its terms, and
// the store hands a large window over in no particular order (two readers
// at once), so a total exactly on a rounding boundary (1,000.5 GPU-hours
// written to the hour) printed one way in one run and the other way in the
// next. An integer sum is the same in every order; hours are made of it
// once, when the table is finished (hours).
// Sums that are not whole GPU-nanoseconds (used and idle GPU-hours,
// energy, the plan's and recommendations' shares) keep the same rule
// with ExactSum (exactsum.go): exact, rounded once.
//
// Bound: a job's GPU time is at most GPUs × its counted run, each below
// 2^63, so below 2^126, and 128 bits hold any four such jobs; a thousand
// GPUs held for a century is below 2^72 (2^10 × 2^62 ns), and 2^50 such
// jobs sum below 2^122.
// A sum that would overflow anyway stays at the largest value and its
// hours are +Inf, which every table writes as unknown (present.Dash),
// never as a wrong number.
type gpuTime struct{ hi, lo uint64 }

// gpuTimeOf returns gpus × d, exactly.
func gpuTimeOf(gpus int, d time.Duration) gpuTime {
	if gpus <= 0 || d <= 0 {
		return gpuTime{}
	}
	hi, lo := bits.Mul64(uint64(gpus), uint64(d))
	return gpuTime{hi, lo}
}

// gpuTimeHeld returns the GPU time of share GPUs held for d: exactly
// gpus × d when share is gpus whole GPUs, else a shard job's share × d to
// the nearest GPU-nanosecond. The counter and the workload's headline
// count a run's GPU time by it, as GPUHours is share × d's hours.
func gpuTimeHeld(share float64, gpus int, d time.Duration) gpuTime {
	if share == float64(gpus) {
		return gpuTimeOf(gpus, d)
	}
	return gpuTimeOfFloat(share * float64(d))
}

// gpuTimeOfFloat returns GPU-nanoseconds given as a float64 (a shard
// job's share × its run), rounded to the nearest; 0 for a value that is
// not positive or not a number, the largest value for +Inf.
func gpuTimeOfFloat(ns float64) gpuTime {
	switch {
	case !(ns > 0):
		return gpuTime{}
	case math.IsInf(ns, 1):
		return maxGPUTime
	}
	ns = math.Round(ns)
	if ns < 1<<64 {
		return gpuTime{0, uint64(ns)}
	}
	// An integer above 2^64: its 53-bit mantissa shifted into place.
	frac, exp := math.Frexp(ns) // ns = frac × 2^exp, 0.5 ≤ frac < 1
	mant := uint64(frac * (1 << 53))
	shift := exp - 53   // ≥ 12
	if shift > 128-53 { // the top bit beyond bit 127
		return maxGPUTime
	}
	if shift >= 64 {
		return gpuTime{hi: mant << (shift - 64)}
	}
	return gpuTime{hi: mant >> (64 - shift), lo: mant << shift}
}

var maxGPUTime = gpuTime{math.MaxUint64, math.MaxUint64}

// add adds u to t, staying at the largest value on overflow.
func (t *gpuTime) add(u gpuTime) {
	lo, carry := bits.Add64(t.lo, u.lo, 0)
	hi, over := bits.Add64(t.hi, u.hi, carry)
	if over != 0 {
		*t = maxGPUTime
		return
	}
	t.hi, t.lo = hi, lo
}

// twice returns 2t (the largest value on overflow), for "less than half"
// without a division.
func (t gpuTime) twice() gpuTime {
	u := t
	u.add(t)
	return u
}

// cmp compares t and u: −1, 0 or +1.
func (t gpuTime) cmp(u gpuTime) int {
	switch {
	case t.hi != u.hi:
		if t.hi < u.hi {
			return -1
		}
		return 1
	case t.lo < u.lo:
		return -1
	case t.lo > u.lo:
		return 1
	}
	return 0
}

// hours returns t in GPU-hours, the float64 nearest to t ÷ 3.6e12 (+Inf
// for an overflowed sum): a function of t alone, so of the jobs summed
// and not of their order.
func (t gpuTime) hours() float64 {
	switch {
	case t == maxGPUTime:
		return math.Inf(1)
	case t.hi == 0 && t.lo <= 1<<53:
		// Both operands exact (nsPerHour: an hour in nanoseconds): IEEE
		// division rounds to the nearest.
		return float64(t.lo) / nsPerHour
	}
	n := new(big.Int).SetUint64(t.hi)
	n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(t.lo))
	h, _ := new(big.Rat).SetFrac(n, big.NewInt(int64(time.Hour))).Float64()
	return h
}
