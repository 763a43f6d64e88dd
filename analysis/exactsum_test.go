package analysis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactOf is the true sum of xs rounded once to the nearest float64
// (ties to even), by big.Float at a precision that holds it exactly.
func exactOf(xs []float64) float64 {
	s := new(big.Float).SetPrec(4000)
	for _, x := range xs {
		s.Add(s, new(big.Float).SetPrec(4000).SetFloat64(x))
	}
	f, _ := s.Float64()
	return f
}

// TestExactSum: an ExactSum is the true sum rounded once, in every order
// of its terms, and so is one made of others (AddSum); a float sum in
// order is not (the test checks that the terms are such).
func TestExactSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 41))
	terms := map[string]func() float64{
		"GPU-hours":     func() float64 { return r.Float64() * 40 },
		"joules":        func() float64 { return r.Float64() * 5e6 },
		"mixed signs":   func() float64 { return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(20)-10)) },
		"wide range":    func() float64 { return r.Float64() * math.Pow(2, float64(r.IntN(200)-100)) },
		"cancellation":  func() float64 { return []float64{1e16, -1e16, 1, 3.3e-17, -2.2e-16}[r.IntN(5)] },
		"half-way ties": func() float64 { return []float64{1, 1 << 53, 0x1p-53, -0x1p-106, 0x1p-106}[r.IntN(5)] },
	}
	for name, term := range terms {
		t.Run(name, func(t *testing.T) {
			floatDiffers := false
			for range 50 {
				xs := make([]float64, 1+r.IntN(300))
				for i := range xs {
					xs[i] = term()
				}
				want := exactOf(xs)
				var first float64
				for k := range 6 {
					r.Shuffle(len(xs), func(a, b int) { xs[a], xs[b] = xs[b], xs[a] })
					var s, a, b ExactSum
					plain := 0.0
					for i, x := range xs {
						s.Add(x)
						if i%3 == 0 {
							a.Add(x)
						} else {
							b.Add(x)
						}
						plain += x
					}
					a.AddSum(b)
					if got := s.Float(); got != want {
						t.Fatalf("%d terms: %.17g, want %.17g", len(xs), got, want)
					}
					if got := a.Float(); got != want {
						t.Fatalf("%d terms in two sums: %.17g, want %.17g", len(xs), got, want)
					}
					if k == 0 {
						first = plain
					} else if plain != first {
						floatDiffers = true
					}
				}
			}
			if !floatDiffers && name != "half-way ties" {
				t.Errorf("a float sum of these terms is the same in every order: the test shows nothing")
			}
		})
	}
}

// TestExactSumSpecial: no terms is 0; an infinite or NaN term, or a sum
// past float64's range, makes the sum infinite or NaN, in every order.
func TestExactSumSpecial(t *testing.T) {
	for _, tc := range []struct {
		name  string
		terms []float64
		want  float64
	}{
		{"empty", nil, 0},
		{"+Inf", []float64{1, math.Inf(1), 2}, math.Inf(1)},
		{"Inf and -Inf", []float64{math.Inf(-1), 1, math.Inf(1)}, math.NaN()},
		{"NaN", []float64{1, math.NaN()}, math.NaN()},
		{"overflow", []float64{math.MaxFloat64, math.MaxFloat64, 1}, math.Inf(1)},
		{"cancels to zero", []float64{0.1, 0.2, -0.3, -0.1, -0.2, 0.3}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s ExactSum
			for _, x := range tc.terms {
				s.Add(x)
			}
			got := s.Float()
			if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("%v: %v, want %v", tc.terms, got, tc.want)
			}
		})
	}
}
