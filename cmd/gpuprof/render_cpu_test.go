package main

import (
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
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
		got := toJobJSON([]store.JobView{v}, analysis.DefaultConfig())[0].CPUEfficiency
		switch {
		case tt.want < 0 && got != nil:
			t.Errorf("%s: cpu_efficiency %v, want null", tt.name, *got)
		case tt.want >= 0 && (got == nil || *got != tt.want):
			t.Errorf("%s: cpu_efficiency %v, want %v", tt.name, got, tt.want)
		}
	}
}
