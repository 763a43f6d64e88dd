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
	// SM and tensor activity (GPM): SMN readings of each, their sums in
	// percent. Absent (0) in buckets without one and in series recorded
	// before gpuprof read GPM: then unknown, not idle.
	SMN       uint32  `json:"sm_n,omitempty"`
	SMSum     float64 `json:"sm_sum,omitempty"`
	TensorN   uint32  `json:"tc_n,omitempty"`
	TensorSum float64 `json:"tc_sum,omitempty"`
}

// SMMean is the bucket's mean SM activity, percent, if it has a reading.
func (p Point) SMMean() (float64, bool) {
	if p.SMN == 0 {
		return 0, false
	}
	return p.SMSum / float64(p.SMN), true
}

// TensorMean is the bucket's mean tensor activity, percent, if it has a
// reading.
func (p Point) TensorMean() (float64, bool) {
	if p.TensorN == 0 {
		return 0, false
	}
	return p.TensorSum / float64(p.TensorN), true
}

// Series is a bounded, downsampled time series of utilisation, memory and
// SM and tensor activity.
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
	var p Point
	if util.Valid {
		u := min(util.Value, 100)
		p.N, p.UtilSum, p.UtilMax = 1, u, uint8(u)
	}
	if mem.Valid {
		p.MemMax = mem.Value
	}
	s.add(t, p)
}

// AddActivity records one reading of SM and tensor activity (percent,
// 0–100; others are dropped).
func (s *Series) AddActivity(t time.Time, sm, tensor gpu.Opt[float64]) {
	var p Point
	if sm.Valid && sm.Value >= 0 && sm.Value <= 100 {
		p.SMN, p.SMSum = 1, sm.Value
	}
	if tensor.Valid && tensor.Value >= 0 && tensor.Value <= 100 {
		p.TensorN, p.TensorSum = 1, tensor.Value
	}
	if p.SMN == 0 && p.TensorN == 0 {
		return
	}
	s.add(t, p)
}

func (s *Series) add(t time.Time, p Point) {
	if s.Step <= 0 {
		s.Step = 1
	}
	if s.MaxPoints < 2 {
		s.MaxPoints = DefaultMaxPoints
	}
	ts := max(t.Unix(), s.Start)
	p.T = s.bucket(ts)
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
	p.SMN += q.SMN
	p.SMSum += q.SMSum
	p.TensorN += q.TensorN
	p.TensorSum += q.TensorSum
}
