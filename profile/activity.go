package profile

import (
	"math"
	"sort"

	"github.com/gpuprof/gpuprof/gpu"
)

// Scopes of a GPU's activity: whose activity the readings were.
const (
	// ActivityScopeGPU: the whole GPU, held by the job alone.
	ActivityScopeGPU = "gpu"
	// ActivityScopeMIG: the job's MIG instance (its GPU instance).
	ActivityScopeMIG = "mig"
	// ActivityScopeSharedGPU: the whole GPU while other jobs held it too.
	// GPM has no per-process view: the activity is the device's, all its
	// jobs together, not this job's share.
	ActivityScopeSharedGPU = "shared_gpu"
)

// ActivityLevels are the values an activity histogram bins to, in
// percent: whole percents from 1 to 100, and below 1 % a 1-2-5 ladder, so
// that a loop of tiny kernels (0.02 % of the SMs) stays apart from idle and
// from 1 %. A reading goes to the nearest level (on a log scale below 1 %,
// to 0 below 0.005 %), so a percentile is exact to ±0.5 percentage points
// from 1 % up and to a factor of about 1.6 below.
//
// A literal, and the boundaries below computed where they are used, not
// tables built before main: every gpuprof process, a hook among them, ran
// that code at start (issue #41). TestActivityLevelsLadder holds the
// literal to the ladder.
var ActivityLevels = []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
	21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
	41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
	61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80,
	81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100,
}

// activityBound is the boundary between ActivityLevels i and i+1: halfway
// above 0, the geometric mean below 1 %, else halfway.
func activityBound(i int) float64 {
	lo, hi := ActivityLevels[i], ActivityLevels[i+1]
	switch {
	case lo == 0:
		return hi / 2
	case hi <= 1:
		return math.Sqrt(lo * hi)
	}
	return (lo + hi) / 2
}

// activityBin is the index of the level nearest v (v in 0–100).
func activityBin(v float64) int {
	// The first boundary at or above v; a value on a boundary goes up, as
	// 0.5 rounds to 1.
	return sort.Search(len(ActivityLevels)-1, func(i int) bool { return activityBound(i) > v })
}

// ActivityStat accumulates one activity metric of a GPU over a job: the
// readings' count, sum and maximum, and, for the metrics whose percentiles
// are kept, a histogram on ActivityLevels.
type ActivityStat struct {
	N    int      `json:"n"`
	Sum  float64  `json:"sum"`
	Max  float64  `json:"max"`
	Hist []uint32 `json:"hist,omitempty"` // len(ActivityLevels) when kept
}

func newActivityStat(hist bool) ActivityStat {
	if !hist {
		return ActivityStat{}
	}
	return ActivityStat{Hist: make([]uint32, len(ActivityLevels))}
}

func (s *ActivityStat) add(v gpu.Opt[float64]) {
	if !v.Valid || !(v.Value >= 0 && v.Value <= 100) {
		return
	}
	s.N++
	s.Sum += v.Value
	s.Max = max(s.Max, v.Value)
	if len(s.Hist) == len(ActivityLevels) {
		s.Hist[activityBin(v.Value)]++
	}
}

// Mean is the mean of the readings, percent, and whether there was one.
func (s ActivityStat) Mean() (float64, bool) {
	if s.N == 0 {
		return 0, false
	}
	return s.Sum / float64(s.N), true
}

// Percentile is the p-th percentile (0 < p ≤ 100) of the readings by the
// nearest-rank method, to the resolution of ActivityLevels; false without
// a reading or a histogram.
func (s ActivityStat) Percentile(p float64) (float64, bool) {
	if s.N == 0 || !(p > 0 && p <= 100) || len(s.Hist) != len(ActivityLevels) {
		return 0, false
	}
	exact := p * float64(s.N) / 100
	rank := uint64(exact)
	if float64(rank) < exact {
		rank++
	}
	rank = max(rank, 1)
	var cum uint64
	for i, c := range s.Hist {
		cum += uint64(c)
		if cum >= rank {
			return ActivityLevels[i], true
		}
	}
	return s.Max, true
}

// Activity is what GPM measured on one GPU of a job (gpu.Activity), over
// the job's sampling intervals. SM, tensor and DRAM keep histograms for
// their percentiles; occupancy and the FP pipes their means and maxima.
type Activity struct {
	// Scope says whose activity it was: ActivityScopeGPU,
	// ActivityScopeMIG, or ActivityScopeSharedGPU once any reading came
	// while another job held the GPU.
	Scope string `json:"scope"`
	// Seconds is the time the readings cover (the sum of their intervals).
	Seconds     float64      `json:"seconds"`
	SM          ActivityStat `json:"sm"`
	SMOccupancy ActivityStat `json:"sm_occupancy"`
	Tensor      ActivityStat `json:"tensor"`
	DRAM        ActivityStat `json:"dram"`
	FP64        ActivityStat `json:"fp64"`
	FP32        ActivityStat `json:"fp32"`
	FP16        ActivityStat `json:"fp16"`
}

func newActivity() *Activity {
	return &Activity{SM: newActivityStat(true), Tensor: newActivityStat(true), DRAM: newActivityStat(true)}
}

func (a *Activity) observe(r gpu.Activity, scope string) {
	switch {
	case a.Scope == "" || scope == ActivityScopeSharedGPU:
		a.Scope = scope
	}
	a.Seconds += r.Interval.Seconds()
	a.SM.add(r.SM)
	a.SMOccupancy.add(r.SMOccupancy)
	a.Tensor.add(r.Tensor)
	a.DRAM.add(r.DRAM)
	a.FP64.add(r.FP64)
	a.FP32.add(r.FP32)
	a.FP16.add(r.FP16)
}

// Shared reports whether the activity is the whole GPU's while other jobs
// held it too (not the job's own).
func (a *Activity) Shared() bool { return a != nil && a.Scope == ActivityScopeSharedGPU }
