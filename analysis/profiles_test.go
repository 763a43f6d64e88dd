package analysis

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// aliceRuns are four runs of one task under different raw names, plus
// noise: bob's run of the same task, and a CPU job of alice's.
func aliceRuns() []Job {
	day := 24 * time.Hour
	at := func(d time.Duration, j Job) Job {
		run := j.End.Sub(j.Start)
		j.Submit, j.Start, j.End = t0.Add(d), t0.Add(d), t0.Add(d+run)
		return j
	}
	// J1: 2 h, 1 GPU, peak 20/80, util 80 (median 80: compute-bound).
	j1 := at(0, job(2*time.Hour, busy(80, 20)))
	j1.Name, j1.ArrayJobID = "train_resnet50_seed1", "500"
	// J2: 4 h, 2 GPUs, peaks 40 and 10 of 80, util 90 and 2 (the second
	// unused): mean 46, failed.
	j2 := at(day, job(4*time.Hour, busy(90, 40), busy(2, 10)))
	j2.Name, j2.State, j2.ExitStatus = "train_resnet50_seed2", "FAILED", 1
	// J3: 1 h, 1 GPU, peak 60/80, util 70, timed out.
	j3 := at(2*day, job(time.Hour, busy(70, 60)))
	j3.Name, j3.State, j3.ArrayJobID = "Train-ResNet50-seed3", "TIMEOUT", "501"
	// J4: 3 h, sacct history only (one GPU requested, no readings).
	j4 := at(3*day, job(3*time.Hour))
	j4.Name, j4.ReqGPUs, j4.ArrayJobID, j4.Account, j4.Partition = "train_resnet50_seed4", 1, "500", "acct4", "long"

	bob := job(time.Hour, busy(50, 10))
	bob.User, bob.Name = "bob", "train_resnet50"
	cpu := job(10 * time.Hour)
	cpu.Name = "train_resnet50_seed5"
	return []Job{j1, bob, j2, cpu, j3, j4}
}

func TestProfiles(t *testing.T) {
	ps := Profiles(aliceRuns(), DefaultConfig())
	if len(ps) != 2 {
		t.Fatalf("got %d profiles, want 2 (alice, bob): %+v", len(ps), ps)
	}
	a := ps[0]
	want := TaskProfile{
		TaskKey: TaskKey{Cluster: "c1", User: "alice", Name: "train_resnet_seed"},
		Account: "acct4", // of the latest run, J4
		// J1-J3 (11 of the 14 GPU-hours) ran in gpu; J4, the latest,
		// in long: the label follows the GPU-hours.
		Partition:  "gpu",
		FirstStart: t0,
		LastStart:  t0.Add(3 * 24 * time.Hour),
		Jobs:       4,
		// J4 has no readings.
		WithGPUData: 3,
		// J1 and J4 are tasks of array 500, J3 of 501.
		Arrays: 2,
		// Peaks 0.25, 0.5, 0.75: mean 0.5, p50 rank 2, p95 rank ceil(2.85) = 3.
		VRAMPeakFrac: Dist{N: 3, Mean: 0.5, P50: 0.5, P95: 0.75, Max: 0.75},
		VRAMPeak:     Dist{N: 3, Mean: float64(40 * gib), P50: float64(40 * gib), P95: float64(60 * gib), Max: float64(60 * gib)},
		// Means 80, 46, 70 → sorted 46, 70, 80.
		UtilMean: Dist{N: 3, Mean: 196.0 / 3, P50: 70, P95: 80, Max: 80},
		// 1, 2, 3, 4 h: mean 2.5 h, p50 rank 2 → 2 h, p95 rank ceil(3.8) = 4 → 4 h.
		Duration: Dist{N: 4, Mean: 9000, P50: 7200, P95: 14400, Max: 14400},
		// Requested over J1–J4: 1 + 2 + 1 + 1. Used and unused over the
		// three runs with readings: held 1 + 2 + 1, used 1 + 1 + 1.
		GPUsRequested: 5.0 / 4,
		UsageRuns:     3,
		GPUsUsed:      ptr(1.0),
		GPUsUnused:    ptr(1.0 / 3),
		Finished:      4,
		Failures:      1,
		Timeouts:      1,
		FailureRate:   0.25,
		TimeoutRate:   0.25,
		// 2·1 + 4·2 + 1·1 + 3·1.
		GPUHours: 14,
		// J1 (2 h, 80 %) and J3 (1 h, 70 %) match no rule; J2 (4 h, 46 %)
		// is long training; J4 unknown.
		// Long training holds 8 of the 14 GPU-hours (J2), though other
		// has more runs (2): the label follows the GPU-hours.
		Class: ClassLongTraining,
		ByClass: []ClassShare{
			{ClassUnknown, 1, 3}, {ClassLongTraining, 1, 8}, {ClassOther, 2, 3},
		},
		ByBottleneck: []KindShare{
			{KindComputeBound, 1, 2}, // J1
			{KindUnderused, 1, 8},    // J2
		},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("alice's profile:\n got %+v\nwant %+v", a, want)
	}
	if b := ps[1]; b.User != "bob" || b.Jobs != 1 || b.GPUHours != 1 || b.Arrays != 0 || b.Class != ClassOther {
		t.Errorf("bob's profile = %+v", b)
	}
}

func TestProfilesEdgeCases(t *testing.T) {
	c := DefaultConfig()
	if ps := Profiles(nil, c); ps == nil || len(ps) != 0 {
		t.Errorf("Profiles(nil) = %#v, want an empty, non-nil slice", ps)
	}
	if ps := Profiles([]Job{job(time.Hour)}, c); len(ps) != 0 {
		t.Errorf("a CPU job made profiles: %+v", ps)
	}

	one := Profiles([]Job{job(time.Hour, busy(50, 8))}, c)
	if len(one) != 1 {
		t.Fatalf("one job: %d profiles", len(one))
	}
	p := one[0]
	if p.Jobs != 1 || p.Duration != (Dist{N: 1, Mean: 3600, P50: 3600, P95: 3600, Max: 3600}) ||
		p.VRAMPeakFrac != (Dist{N: 1, Mean: 0.1, P50: 0.1, P95: 0.1, Max: 0.1}) || p.FailureRate != 0 {
		t.Errorf("one job's profile = %+v", p)
	}

	// Jobs without GPU data: counted, no GPU distributions, class unknown
	// (2 h is neither short nor long), GPUs requested known and GPUs used
	// unknown.
	sched := job(2 * time.Hour)
	sched.ReqGPUs = 4
	ps := Profiles([]Job{sched, sched}, c)
	if len(ps) != 1 || ps[0].Jobs != 2 || ps[0].WithGPUData != 0 || ps[0].VRAMPeakFrac.N != 0 ||
		ps[0].UtilMean.N != 0 || ps[0].GPUsRequested != 4 || ps[0].UsageRuns != 0 || ps[0].GPUsUsed != nil ||
		ps[0].GPUsUnused != nil || ps[0].GPUHours != 16 || ps[0].Class != ClassUnknown {
		t.Errorf("history-only profile = %+v", ps)
	}

	// Short history runs are short debugging from the scheduler view, and
	// still count as runs without GPU data.
	quick := job(10 * time.Minute)
	quick.ReqGPUs = 2
	ps = Profiles([]Job{quick, quick, quick}, c)
	if len(ps) != 1 || ps[0].Class != ClassShortDebug || ps[0].WithGPUData != 0 || ps[0].GPUsRequested != 2 || ps[0].GPUsUsed != nil {
		t.Errorf("short history-only profile = %+v", ps)
	}
}

func ptr[T any](v T) *T { return &v }

func TestProfilesGrouping(t *testing.T) {
	mk := func(cluster, user, name, array string) Job {
		j := job(time.Hour, busy(50, 10))
		j.Cluster, j.User, j.Name, j.ArrayJobID = cluster, user, name, array
		return j
	}
	jobs := []Job{
		mk("c1", "u", "prep_2025-03-01", ""),
		mk("c1", "u", "prep_2025-03-02", ""),
		mk("c2", "u", "prep_2025-03-02", ""), // other cluster
		mk("c1", "v", "prep", ""),            // other user
		mk("c1", "u", "42", "900"),           // nothing left of the name: keyed by array
		mk("c1", "u", "43", "900"),
		mk("c1", "u", "44", ""), // no name, no array
	}
	ps := Profiles(jobs, DefaultConfig())
	got := map[TaskKey]int{}
	for _, p := range ps {
		got[p.TaskKey] = p.Jobs
	}
	want := map[TaskKey]int{
		{"c1", "u", "prep"}:      2,
		{"c2", "u", "prep"}:      1,
		{"c1", "v", "prep"}:      1,
		{"c1", "u", "array:900"}: 2,
		{"c1", "u", ""}:          1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
	// Order: GPU-hours, then runs, then key.
	var order []TaskKey
	for _, p := range ps {
		order = append(order, p.TaskKey)
	}
	wantOrder := []TaskKey{{"c1", "u", "array:900"}, {"c1", "u", "prep"}, {"c1", "u", ""}, {"c1", "v", "prep"}, {"c2", "u", "prep"}}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("order = %v, want %v", order, wantOrder)
	}
}

func TestProfilesPreallocated(t *testing.T) {
	p := busy(60, 79)
	p.Preallocated = true
	ps := Profiles([]Job{job(time.Hour, p), job(time.Hour, busy(60, 8))}, DefaultConfig())
	// The reservation is left out of the VRAM distribution and counted.
	if len(ps) != 1 || ps[0].Preallocated != 1 || ps[0].VRAMPeakFrac != (Dist{N: 1, Mean: 0.1, P50: 0.1, P95: 0.1, Max: 0.1}) {
		t.Errorf("profile = %+v", ps)
	}
}

// TestProfileLabelsMixed: a task whose GPU-hours no class and no partition
// holds the majority of is labelled mixed, in both (issue #38).
func TestProfileLabelsMixed(t *testing.T) {
	runs := aliceRuns()
	var j5 Job
	for i := range runs {
		switch runs[i].Name {
		case "train_resnet50_seed1":
			runs[i].Partition = "ls"
			// J5: J1 again a day later, 2 GPUs for 1.5 h (3 GPU-hours).
			j5 = runs[i]
			j5.ID, j5.Name, j5.Partition = "j5", "train_resnet50_seed5", "x"
			j5.Submit, j5.Start = j5.Submit.Add(96*time.Hour), j5.Start.Add(96*time.Hour)
			j5.End = j5.Start.Add(90 * time.Minute)
			j5.GPUs = append(slices.Clone(j5.GPUs), j5.GPUs[0])
			j5.GPUs[1].UUID = "second"
		case "Train-ResNet50-seed3":
			runs[i].Partition = "debug"
		}
	}
	runs = append(runs, j5)
	// GPU-hours: long training 8 (J2, in gpu), other 2 + 1 + 3 (J1 in ls,
	// J3 in debug, J5 in x), unknown 3 (J4 in long): 17, no half anywhere.
	a := Profiles(runs, DefaultConfig())[0]
	if a.User != "alice" || a.GPUHours != 17 {
		t.Fatalf("task %s, %v GPU-hours: %+v", a.User, a.GPUHours, a.ByClass)
	}
	if !a.PartitionMixed || a.PartitionLabel() != Mixed {
		t.Errorf("partition %q mixed %v (label %q), want mixed", a.Partition, a.PartitionMixed, a.PartitionLabel())
	}
	if !a.ClassMixed || a.ClassLabel() != Mixed {
		t.Errorf("class %s mixed %v, want mixed: %+v", a.Class, a.ClassMixed, a.ByClass)
	}
	// Without J5 and the moves, alice's labels are a class and a partition.
	if b := Profiles(aliceRuns(), DefaultConfig())[0]; b.ClassLabel() != "long_training" || b.PartitionLabel() != "gpu" {
		t.Errorf("labels %q %q, want long_training gpu", b.ClassLabel(), b.PartitionLabel())
	}
}

// Tasks of the same GPU-hours made of different runs (as float hours,
// 0.1 + 0.2 against 0.15 + 0.15: apart in the last bits) are equal for
// the order: they fall to the runs and the key, whatever the order the
// jobs came in (issue #41: the same records, the same output).
func TestProfilesOrderIgnoresSumNoise(t *testing.T) {
	mk := func(name string, run time.Duration) Job {
		j := job(run, busy(50, 10))
		j.Name = name
		return j
	}
	// zeta: 0.1 h + 0.2 h = 0.30000000000000004; alpha: 0.15 h + 0.15 h = 0.3.
	jobs := []Job{mk("zeta", 6*time.Minute), mk("zeta", 12*time.Minute), mk("alpha", 9*time.Minute), mk("alpha", 9*time.Minute)}
	for _, js := range [][]Job{jobs, {jobs[3], jobs[1], jobs[2], jobs[0]}} {
		ps := Profiles(js, DefaultConfig())
		if len(ps) != 2 || ps[0].Name != "alpha" || ps[1].Name != "zeta" {
			var got []string
			for _, p := range ps {
				got = append(got, fmt.Sprintf("%s %.17g", p.Name, p.GPUHours))
			}
			t.Errorf("order %v, want alpha then zeta (same GPU-hours, same runs: by key)", got)
		}
	}
}
