// Package spark draws a GPU's utilisation or memory over a job as a
// one-line sparkline of block characters, for the terminal UI's detail and
// gpuprof show: the same picture of the same series in both.
package spark

import (
	"math"
	"strings"

	"github.com/gpuprof/gpuprof/profile"
)

// sparkBlocks are the eight levels of a sparkline.
var sparkBlocks = [...]rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// Line draws vs (each in [0, hi]) across w cells: values are merged
// into w buckets when there are more (their mean, or their maximum when
// peak is set), and stretched over several cells when fewer. A NaN value
// (no reading) is drawn as a space.
func Line(vs []float64, hi float64, w int, peak bool) string {
	if w <= 0 || len(vs) == 0 || !(hi > 0) {
		return ""
	}
	cells := resample(vs, w, peak)
	var b strings.Builder
	for _, v := range cells {
		if math.IsNaN(v) {
			b.WriteByte(' ')
			continue
		}
		level := int(math.Round(v / hi * float64(len(sparkBlocks)-1)))
		level = min(max(level, 0), len(sparkBlocks)-1)
		b.WriteRune(sparkBlocks[level])
	}
	return b.String()
}

// resample maps vs onto w cells: several values merge into a cell by mean
// or by maximum, ignoring NaN values; fewer values than cells are
// stretched.
func resample(vs []float64, w int, peak bool) []float64 {
	if len(vs) == w {
		return vs
	}
	if len(vs) < w {
		out := make([]float64, w)
		for i := range out {
			out[i] = vs[i*len(vs)/w]
		}
		return out
	}
	out := make([]float64, w)
	for i := range out {
		lo, hi := i*len(vs)/w, (i+1)*len(vs)/w
		sum, top, n := 0.0, 0.0, 0
		for _, v := range vs[lo:hi] {
			if !math.IsNaN(v) {
				sum += v
				top = max(top, v)
				n++
			}
		}
		switch {
		case n == 0:
			out[i] = math.NaN()
		case peak:
			out[i] = top
		default:
			out[i] = sum / float64(n)
		}
	}
	return out
}

// Values lays a GPU's series out on its bucket grid: mean
// utilisation (percent) and peak memory (bytes) per bucket, NaN where no
// reading fell.
func Values(g *profile.GPU) (util, mem []float64) {
	return lay(g, func(p profile.Point) (float64, float64) {
		u, m := math.NaN(), math.NaN()
		if p.N > 0 {
			u = float64(p.UtilSum) / float64(p.N)
		}
		if g.MemSamples > 0 {
			m = float64(p.MemMax)
		}
		return u, m
	})
}

// Activity lays a GPU's SM and tensor activity (GPM, percent) out on the
// same grid as Values, NaN where no reading fell: all NaN for a GPU
// without GPM readings.
func Activity(g *profile.GPU) (sm, tensor []float64) {
	return lay(g, func(p profile.Point) (float64, float64) {
		s, t := math.NaN(), math.NaN()
		if v, ok := p.SMMean(); ok {
			s = v
		}
		if v, ok := p.TensorMean(); ok {
			t = v
		}
		return s, t
	})
}

// lay places two values of each point of g's series on its bucket grid.
func lay(g *profile.GPU, of func(profile.Point) (float64, float64)) (a, b []float64) {
	s := &g.Series
	pts := s.Points
	if len(pts) == 0 {
		return nil, nil
	}
	n := len(pts)
	grid := s.Step > 0 && pts[n-1].T >= s.Start && (pts[n-1].T-s.Start)/s.Step < 8*int64(max(s.MaxPoints, n))
	if grid {
		n = int((pts[n-1].T-s.Start)/s.Step) + 1
	}
	a, b = make([]float64, n), make([]float64, n)
	for i := range a {
		a[i], b[i] = math.NaN(), math.NaN()
	}
	for i, p := range pts {
		k := i
		if grid {
			k = int((p.T - s.Start) / s.Step)
			if k < 0 || k >= n {
				continue
			}
		}
		a[k], b[k] = of(p)
	}
	return a, b
}
