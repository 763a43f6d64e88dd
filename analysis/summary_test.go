package analysis

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

func summaryJobs() []Job {
	mk := func(part string, wait, run, limit time.Duration, state slurmext.JobState, gpus ...GPU) Job {
		j := job(run, gpus...)
		j.Partition, j.State, j.TimeLimit = part, state, limit
		j.Submit = t0.Add(-wait)
		return j
	}
	// gpu partition.
	a := mk("gpu", 10*time.Minute, 2*time.Hour, 4*time.Hour, "COMPLETED", busy(85, 40)) // ratio 2; other, compute-bound
	b := mk("gpu", 30*time.Minute, time.Hour, 10*time.Hour, "COMPLETED", busy(3, 5))    // ratio 10; idle, underused
	c := mk("gpu", 0, time.Hour, time.Hour, "TIMEOUT", busy(60, 76))                    // ratio 1; other, vram-bound
	d := mk("gpu", 2*time.Hour, 30*time.Minute, 2*time.Hour, "FAILED")                  // no ratio (failed); no GPU data; queue-bound
	d.ReqGPUs = 2
	// debug partition.
	e := mk("debug", 5*time.Minute, 30*time.Second, 30*time.Minute, "COMPLETED", busy(40, 2)) // too short for a ratio; short_debug
	f := mk("debug", 0, 10*time.Minute, 0, "COMPLETED", busy(40, 2))                          // unlimited: no ratio
	f.Unlimited, f.Submit = true, time.Time{}                                                 // no submit: no wait
	// A CPU job, counted once and nowhere else.
	g := mk("cpu", 3*time.Hour, time.Hour, 2*time.Hour, "COMPLETED")
	// A GPU reading that cannot be true.
	bad := busy(50, 2)
	bad.UtilMax = math.NaN()
	h := mk("debug", time.Minute, 5*time.Minute, time.Hour, "COMPLETED", bad) // ratio 12 (ran ≥ 1 m); short_debug
	return []Job{a, b, c, d, e, f, g, h}
}

func TestSummarise(t *testing.T) {
	s := Summarise(summaryJobs(), DefaultConfig())
	hours := func(d time.Duration) float64 { return d.Hours() }
	want := ClusterSummary{
		Jobs: 8, CPUJobs: 1, GPUJobs: 7, WithGPUData: 6, WithoutGPUData: 1, ByDutyCycle: 6,
		// a 2 + b 1 + c 1 + d 2·0.5 + e 30 s + f 10 m + h 5 m.
		GPUHours: 2 + 1 + 1 + 1 + hours(30*time.Second) + hours(10*time.Minute) + hours(5*time.Minute),
		ByClass: []ClassShare{
			{ClassUnknown, 1, 1},
			{ClassLongTraining, 0, 0},
			{ClassShortDebug, 3, hours(30*time.Second) + hours(10*time.Minute) + hours(5*time.Minute)},
			{ClassInferenceService, 0, 0},
			{ClassPreprocessingIO, 0, 0},
			{ClassIdleAllocation, 1, 1},
			{ClassOther, 2, 3},
		},
		ByBottleneck: []KindShare{
			{KindVRAMBound, 1, 1},
			{KindHostMemoryBound, 0, 0},
			{KindComputeBound, 1, 2},
			{KindIOBound, 0, 0},
			{KindUnderused, 1, 1},
			{KindQueueBound, 1, 1},    // d: waited 2 h ≥ 4 × 30 m (and ≥ 15 m)
			{KindLowSMActivity, 0, 0}, // no GPM
		},
		Partitions: []PartitionSummary{
			{
				Partition: "debug", Jobs: 3,
				GPUHours: hours(30*time.Second) + hours(10*time.Minute) + hours(5*time.Minute),
				// e 300 s, h 60 s; f has no submit time.
				Wait: Dist{N: 2, Mean: 180, P50: 60, P95: 300, Max: 300},
				// e 30 s, f 600 s, h 300 s → sorted 30, 300, 600.
				Run: Dist{N: 3, Mean: 310, P50: 300, P95: 600, Max: 600},
				// h: 1 h / 5 m = 12; e ran 30 s < 1 m; f unlimited.
				LimitRatio: Dist{N: 1, Mean: 12, P50: 12, P95: 12, Max: 12},
				NoLimit:    1, // f
			},
			{
				Partition: "gpu", Jobs: 4, GPUHours: 5,
				// 600, 1800, 0, 7200 s → sorted 0, 600, 1800, 7200.
				Wait: Dist{N: 4, Mean: 2400, P50: 600, P95: 7200, Max: 7200},
				// a 7200, b 3600, c 3600, d 1800 s.
				Run: Dist{N: 4, Mean: 4050, P50: 3600, P95: 7200, Max: 7200},
				// a 2, b 10, c 1 (d failed) → sorted 1, 2, 10.
				LimitRatio: Dist{N: 3, Mean: 13.0 / 3, P50: 2, P95: 10, Max: 10},
			},
		},
		Notes:            DataNotes{NaN: 1},
		PercentileMethod: "nearest-rank",
	}
	if !approx(s.GPUHours, want.GPUHours) {
		t.Errorf("GPUHours = %v, want %v", s.GPUHours, want.GPUHours)
	}
	s.GPUHours = want.GPUHours
	for i := range s.ByClass {
		if approx(s.ByClass[i].GPUHours, want.ByClass[i].GPUHours) {
			s.ByClass[i].GPUHours = want.ByClass[i].GPUHours
		}
	}
	for i := range s.Partitions {
		if i < len(want.Partitions) && approx(s.Partitions[i].GPUHours, want.Partitions[i].GPUHours) {
			s.Partitions[i].GPUHours = want.Partitions[i].GPUHours
		}
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("summary:\n got %+v\nwant %+v", s, want)
	}
}

func TestSummariseEmptyAndOne(t *testing.T) {
	c := DefaultConfig()
	s := Summarise(nil, c)
	if s.Jobs != 0 || s.GPUHours != 0 || len(s.ByClass) != int(numClasses) || len(s.ByBottleneck) != int(numKinds) ||
		s.Partitions == nil || len(s.Partitions) != 0 {
		t.Errorf("empty summary = %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["partitions"] == nil || back["by_class"] == nil {
		t.Errorf("empty summary JSON has null lists: %s", b)
	}

	s = Summarise([]Job{job(2*time.Hour, busy(90, 10))}, c)
	if s.Jobs != 1 || s.GPUJobs != 1 || s.GPUHours != 2 || len(s.Partitions) != 1 ||
		s.Partitions[0].Wait != (Dist{N: 1}) || s.Partitions[0].LimitRatio != (Dist{N: 1, Mean: 12, P50: 12, P95: 12, Max: 12}) {
		t.Errorf("one-job summary = %+v", s)
	}
}
