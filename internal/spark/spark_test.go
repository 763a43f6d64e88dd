package spark

import (
	"math"
	"testing"
)

func nan() float64 { return math.NaN() }

func TestSparkline(t *testing.T) {
	cases := []struct {
		name string
		vs   []float64
		w    int
		peak bool
		want string
	}{
		{"one per cell", []float64{0, 50, 100}, 3, false, "▁▅█"},
		{"stretched", []float64{0, 100}, 4, false, "▁▁██"},
		{"averaged", []float64{0, 100, 0, 100}, 2, false, "▅▅"},
		{"peak", []float64{0, 100, 0, 0}, 2, true, "█▁"},
		{"gap", []float64{100, nan(), 100}, 3, false, "█ █"},
		{"empty", nil, 4, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.vs, 100, c.w, c.peak); got != c.want {
				t.Errorf("Line = %q, want %q", got, c.want)
			}
		})
	}
}
