package profile

import (
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// DefaultMaxPoints bounds a time series: a week-long job at 1 s sampling
// keeps at most this many points per GPU (each covering ~10 min).
const DefaultMaxPoints = 1024

// Point is one bucket of a time series.
type Point struct {
	T       int64  `json:"t"`       // bucket start, unix seconds
	N       uint32 `json:"n"`       // utilisation samples in the bucket
	UtilSum uint32 `json:"u_sum"`   // sum of utilisation, percent (mean = UtilSum/N)
	UtilMax uint8  `json:"u_max"`   // percent
	MemMax  uint64 `json:"mem_max"` // bytes
}

// Series is a bounded, downsampled time series of utilisation and memory.
// Buckets start one sampling interval wide; whenever the series would exceed
// MaxPoints, the bucket width doubles and neighbours merge, so the size stays
// bounded for jobs of any length while sums, maxima and counts stay exact.
type Series struct {
	Start     int64   `json:"start"` // unix seconds
	Step      int64   `json:"step"`  // bucket width, seconds
	MaxPoints int     `json:"max_points"`
	Points    []Point `json:"points"`
}

// NewSeries returns an empty series starting at start.
func NewSeries(start time.Time, interval time.Duration, maxPoints int) Series {
	step := max(int64(interval/time.Second), 1)
	if maxPoints < 2 {
		maxPoints = DefaultMaxPoints
	}
	return Series{Start: start.Unix(), Step: step, MaxPoints: maxPoints}
}

// Add records one reading.
func (s *Series) Add(t time.Time, util gpu.Opt[uint32], mem gpu.Opt[uint64]) {
	if s.Step <= 0 {
		s.Step = 1
	}
	if s.MaxPoints < 2 {
		s.MaxPoints = DefaultMaxPoints
	}
	ts := max(t.Unix(), s.Start)
	p := Point{T: s.bucket(ts)}
	if util.Valid {
		u := min(util.Value, 100)
		p.N, p.UtilSum, p.UtilMax = 1, u, uint8(u)
	}
	if mem.Valid {
		p.MemMax = mem.Value
	}
	if n := len(s.Points); n > 0 && s.Points[n-1].T >= p.T {
		// Same bucket (or a clock step backwards): merge into the last one.
		s.Points[n-1].merge(p)
	} else {
		s.Points = append(s.Points, p)
	}
	for len(s.Points) > s.MaxPoints {
		s.coarsen()
	}
}

func (s *Series) bucket(ts int64) int64 {
	return s.Start + (ts-s.Start)/s.Step*s.Step
}

// coarsen doubles the bucket width and merges points that now share one.
func (s *Series) coarsen() {
	s.Step *= 2
	out := s.Points[:0]
	for _, p := range s.Points {
		p.T = s.bucket(p.T)
		if n := len(out); n > 0 && out[n-1].T == p.T {
			out[n-1].merge(p)
			continue
		}
		out = append(out, p)
	}
	s.Points = out
}

func (p *Point) merge(q Point) {
	p.N += q.N
	p.UtilSum += q.UtilSum
	p.UtilMax = max(p.UtilMax, q.UtilMax)
	p.MemMax = max(p.MemMax, q.MemMax)
}
