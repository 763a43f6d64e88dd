package main

import (
	"github.com/gpuprof/gpuprof/cliview"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

func TestCleanKeepsTerminalsSafe(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "train-resnet", "train-resnet"},
		{"ansi", "x\x1b[31mred\x1b[0m", "xred"},
		{"c1 csi", "a\u009b2Jb", "ab"},
		{"c1 control", "a\u0085b", "a\uFFFDb"},
		{"newline", "a\nb", "a b"},
		{"bidi override", "evil\u202Etxt.exe", "evil\uFFFDtxt.exe"},
		{"bidi isolate", "a\u2066b\u2069", "a\uFFFDb\uFFFD"},
		{"long", strings.Repeat("é", 30), strings.Repeat("é", 19) + "…"},
		{"cjk", "训练任务", "训练任务"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cliview.Clean(tt.in, 20); got != tt.want {
				t.Errorf("cliview.Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestJobJSONSaysWhatIsMissing(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	sacct := &slurmext.JobRecord{JobID: "1", Submit: t0, Start: t0.Add(time.Minute), ReqTRES: "gres/gpu=2", ReqGPUs: 2}
	jobcomp := &slurmext.JobRecord{JobID: "2", Submit: t0}
	// Job 3's GPU a averaged 50 %, b stayed at 0 %: one of two used.
	prof := profile.Job{Key: profile.Key{JobID: "3"}, GPUs: []profile.GPU{{UUID: "a", Samples: 3, UtilSum: 150, ProcSamples: 3}, {UUID: "b", Samples: 3}}}
	got := toJobJSON([]store.JobView{
		{JobID: "1", Sched: sacct},
		{JobID: "2", Sched: jobcomp},
		{JobID: "3", Profiles: []profile.Job{prof}},
	}, analysis.DefaultConfig())
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
