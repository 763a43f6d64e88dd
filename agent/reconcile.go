package agent

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Jobs whose epilog never reaches the agent (the node rebooted, the epilog
// was killed at its deadline) would stay "running" forever and make every
// later job on their GPUs look shared. The agent closes them when slurmd
// has no step of theirs left, seen twice reconcileEvery apart, and no
// process of theirs is on a GPU.

const (
	reconcileEvery = time.Minute
	// reconcileMinAge spares jobs between allocation and their first step.
	reconcileMinAge = 2 * time.Minute
)

func (a *Agent) reconcileLoop(ctx context.Context) {
	if a.opts.SlurmdSpoolDir == "" {
		return
	}
	t := time.NewTicker(reconcileEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.reconcile(ctx)
		}
	}
}

// hasSteps reports whether slurmd's spool holds a step socket of the job,
// and whether it could tell at all. Called with a.mu held.
func (a *Agent) hasSteps(jobID string) (alive, known bool) {
	// %n is slurmd's node name, as slurm.conf's SlurmdSpoolDir may say.
	dir := slurmext.ExpandNodeName(a.opts.SlurmdSpoolDir, a.lastNode)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false, false
	}
	pattern, ok := slurmext.StepSocketGlob(jobID)
	if !ok {
		return false, false
	}
	matches, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return false, false
	}
	return len(matches) > 0, true
}

func (a *Agent) reconcile(ctx context.Context) {
	now := a.now()
	var closed []string
	a.mu.Lock()
	for id, st := range a.jobs {
		if now.Sub(st.prof.Start) < reconcileMinAge {
			continue
		}
		alive, known := a.hasSteps(id)
		if !known || alive || a.hasProcesses(id, st.prof.UID) {
			st.goneOnce = false
			continue
		}
		if !st.goneOnce {
			st.goneOnce = true
			continue
		}
		j := st.prof
		end := j.LastSample
		if end.IsZero() {
			end = now
		}
		j.MarkPartial("job ended without an epilog reaching gpuprof (node reboot or epilog killed?); its end is its last reading")
		j.Finish(end)
		if _, err := a.spool.Put(hookproto.KindProfile, j); err != nil {
			// Closed all the same: it stays finished here until the
			// disk takes it (pending.go), never sampled again.
			a.log.Warn("abandoned job closed; its record waits for the disk", "job", id, "err", err)
			a.holdUnwrittenLocked(j)
		}
		delete(a.jobs, id)
		a.rememberEnded(id, now, st)
		closed = append(closed, id)
	}
	closed = append(closed, a.closeOrphansLocked(now)...)
	if len(closed) > 0 {
		a.publishLocked(nil, nil, nil)
	}
	a.mu.Unlock()
	for _, id := range closed {
		a.log.Warn("closed a job slurmd no longer runs", "job", id)
	}
	if len(closed) > 0 {
		a.wakePersister()
	}
}

// hasProcesses reports whether a process of the job was on a GPU at the
// last sample, by Slurm's word: attributed to it, in its Slurm cgroup, or
// naming it in its environment and run by its owner uid (a job's owner as a
// Slurm record named it; -1 when unknown). Another user's process naming
// the job keeps nothing open. Called with a.mu held.
func (a *Agent) hasProcesses(jobID string, uid int) bool {
	for _, info := range a.pids {
		switch {
		case info.job == jobID && (info.class == procOwn || info.class == procOtherJob):
			return true
		case uid >= 0 && !info.facts.inSlurm && info.facts.envJob == jobID && info.facts.uid == uid:
			return true
		}
	}
	return false
}

// closeOrphansLocked closes the running rows no agent sampled whose job
// slurmd no longer runs, by the rule above: no step seen at two checks
// reconcileEvery apart. Such a row has no reading after the agent took it
// in, so its end is its last reading, else the first check that found no
// step (an upper bound), and it says so. Called with a.mu held.
func (a *Agent) closeOrphansLocked(now time.Time) []string {
	var closed []string
	for id, o := range a.orphans {
		alive, known := a.hasSteps(id)
		if !known {
			continue
		}
		if alive || a.hasProcesses(id, o.prof.UID) {
			// It runs after all: sample it from now.
			o.prof.MarkPartial("recorded without the agent: no readings before " + now.UTC().Format(time.RFC3339))
			st := &jobState{prof: o.prof, ticks: map[procKey]uint64{}, gapFrom: now}
			st.markProvenance()
			a.jobs[id] = st
			delete(a.orphans, id)
			continue
		}
		if !o.goneOnce {
			o.goneOnce, o.firstGone = true, now
			continue
		}
		j := o.prof
		end := j.LastSample
		if end.IsZero() || end.Before(j.Start) {
			end = o.firstGone
			j.MarkPartial("job ended without an epilog reaching gpuprof and without readings: its end is unknown, at most " +
				o.firstGone.UTC().Format(time.RFC3339) + " (when slurmd was first seen to hold no step of it)")
		} else {
			j.MarkPartial("job ended without an epilog reaching gpuprof (node reboot or epilog killed?); its end is its last reading")
		}
		j.Finish(end)
		if _, err := a.spool.Put(hookproto.KindProfile, j); err != nil {
			a.log.Warn("abandoned job closed; its record waits for the disk", "job", id, "err", err)
			a.holdUnwrittenLocked(j)
		}
		delete(a.orphans, id)
		ost := &jobState{prof: o.prof}
		ost.markProvenance()
		a.rememberEnded(id, now, ost)
		closed = append(closed, id)
	}
	return closed
}
