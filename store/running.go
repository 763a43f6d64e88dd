package store

import (
	"sort"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// SourceProfiles is the Source of RunningRecord's record: the nodes'
// profiles, which hold what slurmd's prolog told each node's agent.
const SourceProfiles = "profiles"

// GPUsFromProlog is RunningRecord's GPUsFrom: its GPU count is the GPUs
// Slurm gave the job on the nodes running it (SLURM_JOB_GPUS in the
// prolog), not a TRES string.
const GPUsFromProlog = "SLURM_JOB_GPUS"

// RunningRecord is the scheduler's view of a job no scheduler report has
// reached yet while a node runs it — jobcomp writes its record when the
// job ends and the sacct import takes final states only — from what
// slurmd's prolog told the agents running it, as their profiles keep it:
// state RUNNING, the owner, account and partition of the first running
// profile, the earliest start, the nodes, and as GPUs requested the GPUs
// Slurm gave the job there. Its name is v.RunningName: slurmd does not
// give the prolog the job's name (slurmctld's PrologSlurmctld and jobcomp
// have it), so the reader asks squeue (jobsource).
// nil when v has a scheduler record or no profile of it runs.
func (v JobView) RunningRecord() *slurmext.JobRecord {
	if v.Sched != nil {
		return nil
	}
	var first *profile.Job
	var start time.Time
	var nodes []string
	gpus, shards := 0, 0
	for i := range v.Profiles {
		p := &v.Profiles[i]
		if p.Status != profile.StatusRunning {
			continue
		}
		if first == nil {
			first = p
		}
		if !p.Start.IsZero() && (start.IsZero() || p.Start.Before(start)) {
			start = p.Start
		}
		nodes = append(nodes, p.Node)
		if p.AllocKnown && p.Shards > 0 {
			// Shards of the GPU it names, not the GPU (profile.Job.Shards).
			shards += p.Shards
		} else {
			gpus += len(p.GPUs)
		}
	}
	if first == nil {
		return nil
	}
	sort.Strings(nodes)
	return &slurmext.JobRecord{
		Cluster: v.Cluster, JobID: v.JobID, DisplayID: v.JobID, ArrayTaskID: -1, HetOffset: -1,
		User: first.User, UID: first.UID, Account: first.Account, Partition: first.Partition,
		Name: v.RunningName, State: slurmext.StateRunning, CancelledBy: -1, Start: start,
		NodeList: strings.Join(nodes, ","), NodeCount: len(nodes),
		ReqGPUs: gpus, ReqShards: shards, GPUsFrom: GPUsFromProlog, Source: SourceProfiles,
	}
}

// SchedView is the scheduler's view jobs, show, the TUI and their JSON
// show of v: its scheduler record, else RunningRecord's, else nil.
func (v JobView) SchedView() *slurmext.JobRecord {
	if v.Sched != nil {
		return v.Sched
	}
	return v.RunningRecord()
}

// ElapsedAt is how long v has run as a reader sees it at now: the
// scheduler's elapsed time (start to end) once it ended; while it runs
// (no end, a node's profile running), from its start to now, to the
// second, as squeue's TIME counts it — not to the last reading, which
// lags by up to the sampling and flush intervals. A finished profile
// without a scheduler record counts to its end. false when unknown.
func (v JobView) ElapsedAt(now time.Time) (time.Duration, bool) {
	s := v.SchedView()
	if s != nil {
		if d, ok := s.Elapsed(); ok {
			return d, true
		}
	}
	var start, end time.Time
	running := false
	for _, p := range v.Profiles {
		if !p.Start.IsZero() && (start.IsZero() || p.Start.Before(start)) {
			start = p.Start
		}
		if p.Status == profile.StatusRunning {
			running = true
		} else if p.End.After(end) {
			end = p.End
		}
	}
	if s != nil && !s.Start.IsZero() {
		start = s.Start
	}
	switch {
	case start.IsZero():
		return 0, false
	case running && !now.IsZero() && !now.Before(start):
		return now.Sub(start).Truncate(time.Second), true
	case !running && !end.IsZero() && !end.Before(start):
		return end.Sub(start), true
	}
	return 0, false
}
