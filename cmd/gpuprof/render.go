package main

import (
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// jobJSON is one element of `jobs --json` and `show --json` (docs/json.md).
// Derived values are null when their inputs are missing: never a zero that
// looks measured.
type jobJSON struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"` // raw id (SLURM_JOB_ID)
	// DisplayID is the id as Slurm prints it ("53_1", "60+1"); the raw
	// id when no scheduler record names the job otherwise.
	DisplayID     string              `json:"display_id"`
	Sched         *slurmext.JobRecord `json:"sched"`
	Profiles      []profile.Job       `json:"profiles"`
	WaitSeconds   *float64            `json:"wait_seconds"`
	GPUsRequested *int                `json:"gpus_requested"`
	GPUsUsed      *int                `json:"gpus_used"`
	Missing       []string            `json:"missing"`
}

// What a job view can lack.
const (
	missingSched   = "scheduler_view" // no jobcomp record or sacct import
	missingProfile = "gpu_profile"    // no GPU readings (e.g. history from sacct, or a job with no GPU)
)

func toJobJSON(views []store.JobView) []jobJSON {
	out := make([]jobJSON, 0, len(views))
	for _, v := range views {
		j := jobJSON{Cluster: v.Cluster, JobID: v.JobID, DisplayID: v.SlurmID(), Sched: v.Sched, Profiles: v.Profiles, Missing: missing(v)}
		if j.Profiles == nil {
			j.Profiles = []profile.Job{}
		}
		if v.Sched != nil {
			if w, ok := v.Sched.Wait(); ok {
				s := w.Seconds()
				j.WaitSeconds = &s
			}
		}
		if n, ok := gpusRequested(v); ok {
			j.GPUsRequested = &n
		}
		if n, ok := gpusUsed(v); ok {
			j.GPUsUsed = &n
		}
		out = append(out, j)
	}
	return out
}

func missing(v store.JobView) []string {
	m := []string{}
	if v.Sched == nil {
		m = append(m, missingSched)
	}
	if len(v.Profiles) == 0 {
		m = append(m, missingProfile)
	}
	return m
}

// gpusRequested: the scheduler's request (sacct TRES) when known, else the
// GPUs the nodes saw allocated.
func gpusRequested(v store.JobView) (int, bool) {
	if v.Sched != nil && (v.Sched.ReqTRES != "" || v.Sched.AllocTRES != "") {
		return v.Sched.ReqGPUs, true
	}
	if len(v.Profiles) == 0 {
		return 0, false
	}
	n := 0
	for _, p := range v.Profiles {
		n += len(p.GPUs)
	}
	return n, true
}

// gpusUsed counts the GPUs on which a process of the job was seen.
func gpusUsed(v store.JobView) (int, bool) {
	n, sampled := 0, false
	for _, p := range v.Profiles {
		for _, g := range p.GPUs {
			if g.Samples > 0 || g.MemSamples > 0 || g.ProcSamples > 0 {
				sampled = true
			}
			if g.ProcSamples > 0 {
				n++
			}
		}
	}
	return n, sampled
}

// dur writes a duration as Slurm does: [D-]HH:MM:SS.
func dur(d time.Duration) string { return slurmext.FormatDuration(d.Round(time.Second), false) }
