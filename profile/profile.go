// Package profile is the domain model of a job's GPU profile on one node:
// what the agent accumulates while a job runs and what the store keeps.
//
// It is pure: it turns readings into summaries (peaks, utilisation
// histograms, idle fractions, bounded time series) and never touches NVML,
// SQLite, Slurm or the clock. Callers pass times in.
package profile

import (
	"slices"
	"time"
)

// Status of a profile on its node.
const (
	StatusRunning  = "running"  // the job is in progress; the profile is accumulating
	StatusFinished = "finished" // the epilog (or a fallback) closed the profile
)

// Sources of a profile: who recorded it.
const (
	SourceAgent = "agent" // sampled by the node agent
	SourceHook  = "hook"  // recorded by a hook alone (agent unreachable): no readings
)

// IO-wait scopes, from most to least precise.
const (
	IOScopeCgroup  = "cgroup"  // the job's cgroup v2 io.pressure
	IOScopeProcess = "process" // block-IO delay of the job's processes (/proc/PID/stat)
	IOScopeNode    = "node"    // node-wide (/proc/pressure/io or /proc/stat iowait)
	IOScopeNone    = ""        // not measured
)

// Key identifies one job's profile on one node.
type Key struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"`
	Node    string `json:"node"`
}

// Job is one job's profile on one node.
type Job struct {
	Key
	User      string    `json:"user,omitempty"`
	UID       int       `json:"uid"`
	GID       int       `json:"gid"`
	Account   string    `json:"account,omitempty"`
	Partition string    `json:"partition,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end,omitzero"`
	Status    string    `json:"status"`
	Source    string    `json:"source"`

	// Exit as seen by the epilog; ExitKnown is false while running or when
	// the epilog did not report it.
	ExitKnown  bool `json:"exit_known"`
	ExitStatus int  `json:"exit_status"`
	ExitSignal int  `json:"exit_signal"`

	// Partial is true when the profile misses part of the job's life; the
	// reasons say which part and why.
	Partial        bool     `json:"partial"`
	PartialReasons []string `json:"partial_reasons,omitempty"`

	SampleInterval time.Duration `json:"sample_interval_ns"`
	LastSample     time.Time     `json:"last_sample,omitzero"`

	Driver     string `json:"driver,omitempty"`
	CUDADriver string `json:"cuda_driver,omitempty"`

	IO IOWait `json:"io"`

	// Shards is how many shards of its GPU Slurm allocated the job on
	// this node (--gres=shard:N); 0 for a job of whole GPUs. AllocKnown
	// says that slurmctld's answer was read (the agent asks squeue once,
	// notices.squeue): slurmd gives a prolog the GPU behind a shard job
	// but not its shard count, so a shard job and a one-GPU job look the
	// same to the hooks. While AllocKnown is false, Shards is 0 and means
	// unknown, not whole.
	Shards     int  `json:"shards,omitempty"`
	AllocKnown bool `json:"alloc_known,omitempty"`

	GPUs []GPU `json:"gpus"`

	// Notices are the notices decided for the job on this node, oldest
	// first (see Notice).
	Notices []Notice `json:"notices,omitempty"`
}

// IOWait accumulates the time the job spent waiting on block IO.
type IOWait struct {
	Scope string `json:"scope"`
	// StallSeconds is the accumulated IO stall time in the scope; Seconds the
	// wall time over which it was measured. Fraction = Stall / Seconds.
	StallSeconds float64 `json:"stall_seconds"`
	Seconds      float64 `json:"seconds"`
}

// Fraction returns the IO-wait fraction and whether it was measured.
func (w IOWait) Fraction() (float64, bool) {
	if w.Seconds <= 0 || w.Scope == IOScopeNone {
		return 0, false
	}
	f := w.StallSeconds / w.Seconds
	return min(max(f, 0), 1), true
}

// Observe adds one interval of IO-wait measurement. A change of scope (say,
// the cgroup disappeared) keeps the less precise one for the rest of the job
// so the fraction is never a mix reported under the better name.
func (w *IOWait) Observe(scope string, stall, wall float64) {
	if scope == IOScopeNone || wall <= 0 || stall < 0 {
		return
	}
	if w.Scope == "" || scopeRank(scope) > scopeRank(w.Scope) {
		w.Scope = scope
	}
	w.StallSeconds += min(stall, wall)
	w.Seconds += wall
}

func scopeRank(s string) int {
	switch s {
	case IOScopeCgroup:
		return 1
	case IOScopeProcess:
		return 2
	case IOScopeNode:
		return 3
	}
	return 0
}

// MinCoverIntervals is how many sampling intervals a job must last before
// an untouched GPU is called an idle allocation: a shorter job may have done
// its work between two samples.
const MinCoverIntervals = 3

// Finish closes a profile at end and computes its flags.
func (j *Job) Finish(end time.Time) {
	if end.Before(j.Start) {
		end = j.Start
	}
	j.End = end
	j.Status = StatusFinished
	short := j.SampleInterval > 0 && end.Sub(j.Start) < MinCoverIntervals*j.SampleInterval
	for i := range j.GPUs {
		j.GPUs[i].finish()
		if short {
			j.GPUs[i].IdleAllocation = false
		}
	}
	if short && len(j.GPUs) > 0 {
		j.MarkPartial("job shorter than " + (MinCoverIntervals * j.SampleInterval).String() +
			": sampling may have missed its work")
	}
}

// MarkPartial records that part of the job's life is missing.
func (j *Job) MarkPartial(reason string) {
	j.Partial = true
	if !slices.Contains(j.PartialReasons, reason) {
		j.PartialReasons = append(j.PartialReasons, reason)
	}
}

// GPU returns the job's GPU with the given UUID, or nil.
func (j *Job) GPU(uuid string) *GPU {
	for i := range j.GPUs {
		if j.GPUs[i].UUID == uuid {
			return &j.GPUs[i]
		}
	}
	return nil
}

// Clone returns a deep copy, safe to hand to another goroutine.
func (j *Job) Clone() Job {
	c := *j
	c.PartialReasons = slices.Clone(j.PartialReasons)
	c.GPUs = make([]GPU, len(j.GPUs))
	for i, g := range j.GPUs {
		g.UtilHist = slices.Clone(g.UtilHist)
		g.XIDs = slices.Clone(g.XIDs)
		g.Processes = slices.Clone(g.Processes)
		g.Series.Points = slices.Clone(g.Series.Points)
		if g.Series.Thinned != nil {
			t := *g.Series.Thinned
			g.Series.Thinned = &t
		}
		if g.Activity != nil {
			a := *g.Activity
			for _, st := range []*ActivityStat{&a.SM, &a.SMOccupancy, &a.Tensor, &a.DRAM, &a.FP64, &a.FP32, &a.FP16} {
				st.Hist = slices.Clone(st.Hist)
			}
			g.Activity = &a
		}
		c.GPUs[i] = g
	}
	return c
}
