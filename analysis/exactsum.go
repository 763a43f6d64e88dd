package analysis

import "math"

// ExactSum adds float64 terms exactly and rounds once, when read (Float):
// the float64 nearest to the true sum of the terms, so a function of the
// terms alone and not of their order. It is gpuTime's rule (gputime.go)
// for the sums that are not whole GPU-nanoseconds — used and idle
// GPU-hours, energy, emissions, the recommendations' evidence: the store
// hands a large window over in no particular order (two readers at
// once), and a float sum in arrival order printed one figure in one run
// and a figure a few units in the last place apart in the next.
//
// The terms are kept as non-overlapping partial sums (Shewchuk's
// algorithm, as Python's math.fsum), smallest first; the rounding at the
// end is to the nearest, ties to even. A sum of terms whose magnitudes
// span less than about 2^400 (from the smallest term's last bit to the
// largest partial sum: any GPU-hours, joules or grams) needs fewer
// partials than it holds, and is exact; beyond that the two smallest are
// merged, losing bits past the 400th. A term that is ±Inf or NaN, or a
// sum past float64's range, makes the sum ±Inf or NaN, as a float sum
// would: every presenter writes those as unknown.
//
// The zero value is an empty sum (0). An ExactSum is a value: copying it
// copies its partials.
type ExactSum struct {
	n       int
	p       [exactPartials]float64
	special float64 // the sum of the terms that are not finite
	anyInf  bool    // special holds at least one term
}

// exactPartials is how many partial sums an ExactSum holds: 53 bits each.
const exactPartials = 8

// Add adds x to the sum.
func (s *ExactSum) Add(x float64) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		s.special += x
		s.anyInf = true
		return
	}
	i := 0
	for _, y := range s.p[:s.n] {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		if math.IsInf(hi, 0) { // past float64's range
			s.special += hi
			s.anyInf = true
			s.n = 0
			return
		}
		lo := y - (hi - x)
		if lo != 0 {
			s.p[i] = lo
			i++
		}
		x = hi
	}
	if i == exactPartials {
		// Full: the two smallest become one (bits past the 400th).
		s.p[1] += s.p[0]
		copy(s.p[:], s.p[1:])
		i--
	}
	s.p[i] = x
	s.n = i + 1
}

// AddSum adds every term of o to the sum.
func (s *ExactSum) AddSum(o ExactSum) {
	for _, x := range o.p[:o.n] {
		s.Add(x)
	}
	if o.anyInf {
		s.special += o.special
		s.anyInf = true
	}
}

// Float returns the sum, rounded once to the nearest float64 (ties to
// even).
func (s ExactSum) Float() float64 {
	if s.anyInf {
		return s.special
	}
	n := s.n
	if n == 0 {
		return 0
	}
	// From the largest partial down, until a sum is inexact (fsum).
	n--
	hi, lo := s.p[n], 0.0
	for n > 0 {
		x := hi
		n--
		y := s.p[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// hi + lo is exact; a half-way lo rounds to even only if the
	// partials below it do not push it past the half.
	if n > 0 && (lo < 0 && s.p[n-1] < 0 || lo > 0 && s.p[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}
