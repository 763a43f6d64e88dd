package cliview

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// TestJobJSONCPUEfficiency: --json's cpu_efficiency is sacct's TotalCPU ÷
// (Elapsed × AllocCPUS), and null whenever one of them is unknown.
func TestJobJSONCPUEfficiency(t *testing.T) {
	start := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	rec := func(cpus int, run time.Duration, u slurmext.HostUsage) *slurmext.JobRecord {
		r := &slurmext.JobRecord{CPUs: cpus, Usage: u}
		if run > 0 {
			r.Start, r.End = start, start.Add(run)
		}
		return r
	}
	used := slurmext.HostUsage{TotalCPU: 3 * time.Hour, TotalCPUValid: true}
	tests := []struct {
		name string
		rec  *slurmext.JobRecord
		want float64 // -1: null
	}{
		// 3 h of CPU over 2 h on 4 CPUs: 3 / 8.
		{"known", rec(4, 2*time.Hour, used), 0.375},
		{"no TotalCPU", rec(4, 2*time.Hour, slurmext.HostUsage{}), -1},
		{"no run time", rec(4, 0, used), -1},
		{"no CPU count", rec(0, 2*time.Hour, used), -1},
		{"no scheduler view", nil, -1},
	}
	for _, tt := range tests {
		v := store.JobView{Cluster: "c", JobID: "1", Sched: tt.rec}
		got := JobsJSON([]store.JobView{v}, analysis.DefaultConfig(), time.Time{})[0].CPUEfficiency
		switch {
		case tt.want < 0 && got != nil:
			t.Errorf("%s: cpu_efficiency %v, want null", tt.name, *got)
		case tt.want >= 0 && (got == nil || *got != tt.want):
			t.Errorf("%s: cpu_efficiency %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestJobJSONSaysWhatIsMissing(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	sacct := &slurmext.JobRecord{JobID: "1", Submit: t0, Start: t0.Add(time.Minute), ReqTRES: "gres/gpu=2", ReqGPUs: 2}
	jobcomp := &slurmext.JobRecord{JobID: "2", Submit: t0}
	// Job 3's GPU a averaged 50 %, b stayed at 0 %: one of two used.
	prof := profile.Job{Key: profile.Key{JobID: "3"}, GPUs: []profile.GPU{{UUID: "a", Samples: 3, UtilSum: 150, ProcSamples: 3}, {UUID: "b", Samples: 3}}}
	got := JobsJSON([]store.JobView{
		{JobID: "1", Sched: sacct},
		{JobID: "2", Sched: jobcomp},
		{JobID: "3", Profiles: []profile.Job{prof}},
	}, analysis.DefaultConfig(), time.Time{})
	if w := got[0].WaitSeconds; w == nil || *w != 60 {
		t.Errorf("job 1 wait %v, want 60", w)
	}
	if r := got[0].GPUsRequested; r == nil || *r != 2 {
		t.Errorf("job 1 requested %v, want 2 from sacct", r)
	}
	if got[0].GPUsUsed != nil || strings.Join(got[0].Missing, ",") != "gpu_profile" {
		t.Errorf("job 1: used %v missing %v; want null and gpu_profile", got[0].GPUsUsed, got[0].Missing)
	}
	if got[1].GPUsRequested != nil || got[1].WaitSeconds != nil {
		t.Errorf("job 2 (jobcomp only, never started): requested %v wait %v, want both null", got[1].GPUsRequested, got[1].WaitSeconds)
	}
	if r, u := got[2].GPUsRequested, got[2].GPUsUsed; r == nil || *r != 2 || u == nil || *u != 1 || got[2].GPUsHeld != 2 {
		t.Errorf("job 3: requested %v held %d used %v, want 2 allocated, 2 held and 1 used", r, got[2].GPUsHeld, u)
	}
	if u := got[2].UtilMean; u == nil || *u != 25 {
		t.Errorf("job 3: util_mean %v, want 25 (the mean of 50 and 0)", u)
	}
	if strings.Join(got[2].Missing, ",") != "scheduler_view" {
		t.Errorf("job 3 missing %v, want scheduler_view", got[2].Missing)
	}
}
