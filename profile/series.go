package profile

import (
	"slices"
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
	// Thinned is set when Coarsened thinned the series for keeping (the
	// collector's downsampling of old series): what it was before, and the
	// figures read from its points then, which the thinned points no
	// longer give. Nil for a series as recorded.
	Thinned *Thinned `json:"thinned,omitempty"`
}

// Thinned is what a series was before Coarsened thinned it.
type Thinned struct {
	Step   int64 `json:"step"`   // bucket width before, seconds
	Points int   `json:"points"` // number of points before
	// MemFloor is MemFloor's value before thinning; MemFloorValid false
	// when the series had no point.
	MemFloor      uint64 `json:"mem_floor"`
	MemFloorValid bool   `json:"mem_floor_valid"`
}

// MemFloorPercentile is the percentile of a series' memory that MemFloor
// reports: memory held for at least 100 − MemFloorPercentile % of the
// time.
const MemFloorPercentile = 10

// MemFloor returns the memory the GPU held for at least 90 % of the
// series' time: the MemFloorPercentile-th percentile (nearest rank) of
// its buckets' memory maxima. Of a thinned series, the value before it
// was thinned. False without points (a series not loaded, thinned or
// not: a page reads the floor only where it loaded the points, so one
// page does not mix jobs with and without it).
func (s *Series) MemFloor() (uint64, bool) {
	if len(s.Points) == 0 {
		return 0, false
	}
	if s.Thinned != nil {
		return s.Thinned.MemFloor, s.Thinned.MemFloorValid
	}
	mem := make([]uint64, len(s.Points))
	for i, p := range s.Points {
		mem[i] = p.MemMax
	}
	slices.Sort(mem)
	// Nearest rank, ceil(p·n/100): p·n before the division, which is
	// exact where p/100 is not.
	n := len(mem)
	rank := (MemFloorPercentile*n + 99) / 100
	return mem[min(max(rank, 1), n)-1], true
}

// Coarsened returns a copy of s with at most maxPoints points (at least
// 2), its buckets widened by doubling and merged as when the series
// outgrows its bound while recording: sums, counts and maxima stay exact,
// only the resolution in time is lost. A series thinned this way keeps
// (Thinned) its width and length before and the figures read from its
// points then, so that every figure of the job stays what it was. s
// itself is not modified; a series within the bound comes back as it is.
func (s Series) Coarsened(maxPoints int) Series {
	maxPoints = max(maxPoints, 2)
	if len(s.Points) <= maxPoints {
		return s
	}
	c := s
	if c.Step <= 0 {
		c.Step = 1
	}
	c.Points = slices.Clone(s.Points)
	if c.Thinned == nil {
		floor, ok := s.MemFloor()
		c.Thinned = &Thinned{Step: c.Step, Points: len(s.Points), MemFloor: floor, MemFloorValid: ok}
	} else {
		t := *c.Thinned
		c.Thinned = &t
	}
	for len(c.Points) > maxPoints {
		c.coarsen()
	}
	c.MaxPoints = maxPoints
	return c
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
