package agent

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// Merging what reached gpuprof by another path than the agent's socket, so
// that a job is one record whatever order its pieces arrive in.
//
// The names: the agent has no hook environment. It starts with the
// configured names, else slurm.conf's ClusterName and the short host name
// (slurmext.ClusterName, slurmext.NodeName), and takes slurmd's own names
// from the first hook that reaches it, directly or through the spool. Every
// job it holds moves to those names; a row it had already flushed under the
// guessed ones is deleted in the same transaction that writes the new one.
//
// The spool: a prolog that could reach neither the agent nor the database
// spools a start record; an epilog, an end record. The agent reads both
// before draining the spool into the database: a start record of a job
// that may still run becomes a job the agent samples (as if the prolog had
// reached it), an end record of a job the agent holds finishes it with the
// agent's readings (as if the epilog had reached it).
//
// Running rows nobody samples: after each drain, a running row of the
// database that the agent does not hold (a prolog wrote it directly, or the
// spool held it) is taken in: sampled when its job may still run, else
// kept as an orphan that reconcile closes by the rule of every job whose
// epilog never came.

// learnNamesLocked takes slurmd's names for this node from a hook and
// moves every job the agent holds to them. Called with a.mu held.
func (a *Agent) learnNamesLocked(cluster, node string) {
	if cluster == "" || node == "" || (cluster == a.lastCluster && node == a.lastNode) {
		return
	}
	a.log.Info("node names taken from slurmd's hooks", "cluster", cluster, "node", node,
		"was_cluster", a.lastCluster, "was_node", a.lastNode)
	a.lastCluster, a.lastNode = cluster, node
	for _, st := range a.jobs {
		a.rekeyLocked(&st.prof, cluster, node)
	}
	for _, o := range a.orphans {
		a.rekeyLocked(&o.prof, cluster, node)
	}
}

// rekeyLocked moves a profile to (cluster, node), remembering the old key
// so the next flush deletes the row written under it. Called with a.mu
// held.
func (a *Agent) rekeyLocked(j *profile.Job, cluster, node string) {
	if j.Cluster == cluster && j.Node == node {
		return
	}
	a.moved = append(a.moved, j.Key)
	a.log.Info("job moved to slurmd's names", "job", j.JobID, "from", j.Cluster+"/"+j.Node, "to", cluster+"/"+node)
	j.Cluster, j.Node = cluster, node
}

// takeSpooledHooks reads the hook records waiting in the spool and merges
// them into the jobs the agent holds. It returns how many it consumed (end
// records applied to a held job are removed from the spool; start records
// stay, for the ingest that follows to store idempotently).
func (a *Agent) takeSpooledHooks(ctx context.Context) int {
	entries, err := a.spool.List()
	if err != nil {
		return 0
	}
	// A job whose epilog is spooled too has ended: its start is not taken
	// for sampling (the ingest stores both records).
	ended := map[string]bool{}
	for _, e := range entries {
		var h hookproto.JobEnd
		if e.Err == nil && e.Kind == hookproto.KindHookEnd && json.Unmarshal(e.Data, &h) == nil {
			ended[h.Job.JobID] = true
		}
	}
	n := 0
	for _, e := range entries {
		if e.Err != nil {
			continue // DrainSpool quarantines it
		}
		switch e.Kind {
		case hookproto.KindHookStart:
			var j profile.Job
			if json.Unmarshal(e.Data, &j) == nil && slurmext.ValidJobID(j.JobID) {
				a.takeHookStart(ctx, j, ended[j.JobID])
			}
		case hookproto.KindHookEnd:
			var h hookproto.JobEnd
			if json.Unmarshal(e.Data, &h) != nil || !slurmext.ValidJobID(h.Job.JobID) {
				continue
			}
			if a.takeHookEnd(ctx, h) {
				if err := a.spool.Remove(e.Name); err != nil {
					a.log.Warn("spooled epilog applied but not removed; it will be ignored", "record", e.Name, "err", err)
				}
				n++
			}
		}
	}
	return n
}

// takeHookStart treats a spooled prolog record like a prolog that reached
// the agent: a job the agent holds takes it as it would the prolog
// (takePrologLocked: found from its processes, the job becomes Slurm's),
// also when its epilog waits in the spool too (epilogSpooled), so that
// the epilog ends a job with the prolog's start and GPUs; a job it does not
// hold is sampled from now, when it may still run on this node and its
// epilog is not spooled.
func (a *Agent) takeHookStart(ctx context.Context, j profile.Job, epilogSpooled bool) {
	now := a.now()
	a.mu.Lock()
	a.learnNamesLocked(j.Cluster, j.Node)
	st, held := a.jobs[j.JobID]
	if held {
		a.takePrologLocked(st, slurmRecordOf(j))
		a.publishLocked(nil, nil, nil)
	}
	_, ended := a.ended[j.JobID]
	may := !held && !epilogSpooled && !ended && !a.unwrittenLocked(j.JobID) && a.mayRunLocked(j.JobID, j.UID, j.Start, now)
	a.mu.Unlock()
	if !may {
		return
	}
	if got, err := a.db.GetJob(ctx, j.Key); err == nil && got.Status == profile.StatusFinished {
		return // its epilog reached the database while the agent was away
	}
	if err := a.startJob(ctx, slurmRecordOf(j)); err != nil {
		a.log.Warn("spooled prolog not taken", "job", j.JobID, "err", err)
		return
	}
	a.mu.Lock()
	if st := a.jobs[j.JobID]; st != nil {
		// What the prolog said of the job ("agent unreachable at job
		// start", GPUs it could not name) stays, as it did when the
		// prolog wrote the row itself.
		for _, r := range j.PartialReasons {
			st.prof.MarkPartial(r)
		}
		st.prof.MarkPartial("the prolog did not reach the agent: no readings before " + now.UTC().Format(time.RFC3339))
	}
	a.mu.Unlock()
	a.log.Info("spooled prolog taken: job sampled from now", "job", j.JobID)
}

// takeHookEnd finishes a held job from a spooled epilog record, and says
// whether it did.
func (a *Agent) takeHookEnd(ctx context.Context, h hookproto.JobEnd) bool {
	a.mu.Lock()
	a.learnNamesLocked(h.Job.Cluster, h.Job.Node)
	_, held := a.jobs[h.Job.JobID]
	a.mu.Unlock()
	if !held {
		return false
	}
	je := hookproto.JobEnd{
		JobStart: slurmRecordOf(h.Job),
		End:      h.End, ExitKnown: h.ExitKnown, ExitStatus: h.ExitStatus, ExitSignal: h.ExitSignal,
	}
	if err := a.endJob(ctx, je); err != nil {
		a.log.Warn("spooled epilog not applied by the agent; left to the ingest", "job", h.Job.JobID, "err", err)
		return false
	}
	a.log.Info("spooled epilog applied to the sampled job", "job", h.Job.JobID)
	return true
}

// refsOf names a hook profile's GPUs for Resolve: by UUID when the hook
// could read it, else by device minor and Slurm index. The Slurm index
// goes along either way: it is what the job's GPU is called in Slurm
// (SLURM_JOB_GPUS), which no device says.
func refsOf(j profile.Job) []hookproto.GPURef {
	refs := make([]hookproto.GPURef, 0, len(j.GPUs))
	for _, g := range j.GPUs {
		if g.UUID != "" && !strings.HasPrefix(g.UUID, hookproto.UnresolvedUUIDPrefix) {
			refs = append(refs, hookproto.GPURef{SlurmIndex: g.SlurmIndex, Minor: -1, UUID: g.UUID})
			continue
		}
		refs = append(refs, hookproto.GPURef{SlurmIndex: g.SlurmIndex, Minor: g.Minor})
	}
	return refs
}

// mayRunLocked says whether job id, of owner uid as a Slurm record named
// it, may still be running here: it started less than reconcileMinAge ago,
// slurmd holds a step of it, one of its processes is on a GPU
// (hasProcesses), or slurmd's spool cannot be read (then nothing can
// tell). Called with a.mu held.
func (a *Agent) mayRunLocked(id string, uid int, start, now time.Time) bool {
	if now.Sub(start) < reconcileMinAge {
		return true
	}
	alive, known := a.hasSteps(id)
	return !known || alive || a.hasProcesses(id, uid)
}

// orphan is a running row of the database whose job no longer runs here
// and which no epilog closed; reconcile closes it.
type orphan struct {
	prof      profile.Job
	goneOnce  bool
	firstGone time.Time
}

// takeRunningRows takes in every running row of the database the agent
// does not hold: sampled from now when its job may still run, else an
// orphan for reconcile to close. Every round reads the running rows
// without their series (almost always all the agent's own, skipped); a row
// to take in is then read whole, outside the lock the sampler takes.
func (a *Agent) takeRunningRows(ctx context.Context) {
	rows, err := a.db.ListJobs(ctx, store.Filter{Status: profile.StatusRunning})
	if err != nil {
		return // locked: next round
	}
	a.mu.Lock()
	var take []profile.Key
	for _, j := range rows {
		if st := a.jobs[j.JobID]; st != nil && st.provisional && j.Source == profile.SourceHook {
			// A hook recorded the job the agent found from its processes:
			// a Slurm record, which replaces what the processes suggested.
			a.takePrologLocked(st, slurmRecordOf(j))
		}
		if !a.heldLocked(j.Key) {
			take = append(take, j.Key)
		}
	}
	a.mu.Unlock()
	if len(take) == 0 {
		return
	}
	whole := make([]profile.Job, 0, len(take))
	for _, k := range take {
		j, err := a.db.GetJob(ctx, k)
		if err != nil {
			continue // locked, or gone since: next round
		}
		whole = append(whole, j)
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, j := range whole {
		if j.Status != profile.StatusRunning || a.heldLocked(j.Key) {
			continue
		}
		id := j.JobID
		a.rekeyLocked(&j, a.lastCluster, a.lastNode)
		if a.mayRunLocked(id, j.UID, j.Start, now) {
			j.MarkPartial("recorded without the agent: no readings before " + now.UTC().Format(time.RFC3339))
			st := &jobState{prof: j, ticks: map[procKey]uint64{}, gapFrom: now}
			st.markProvenance()
			a.jobs[id] = st
			a.log.Info("running job recorded without the agent taken in; sampled from now", "job", id)
			continue
		}
		a.orphans[id] = &orphan{prof: j}
		a.log.Info("running row of a job slurmd no longer runs; closing it by the no-epilog rule", "job", id)
	}
}

// heldLocked reports whether the running row k is one the agent already
// accounts for: its job held (sampled or an orphan, under k or other
// names, in which case k joins the keys the next flush deletes), ended, or
// k already moved.
func (a *Agent) heldLocked(k profile.Key) bool {
	id := k.JobID
	var held profile.Key
	if st, ok := a.jobs[id]; ok {
		held = st.prof.Key
	} else if o, ok := a.orphans[id]; ok {
		held = o.prof.Key
	} else {
		// Its finished profile is on its way through the spool, or waits
		// for the disk (pending.go): the running row is not taken back.
		_, ended := a.ended[id]
		return ended || a.unwrittenLocked(id) || a.movedLocked(k)
	}
	if held != k && !a.movedLocked(k) {
		// The same job under other names (written before the agent
		// learnt slurmd's): the held profile replaces it.
		a.moved = append(a.moved, k)
	}
	return true
}

// movedLocked says whether k is an old key waiting for deletion.
func (a *Agent) movedLocked(k profile.Key) bool {
	for _, m := range a.moved {
		if m == k {
			return true
		}
	}
	return false
}

// mergeStart completes a profile with what a Slurm record knows: the job's
// real start and the fields it lacks. Called with a.mu held.
func mergeStart(j *profile.Job, js hookproto.JobStart) {
	if !js.Start.IsZero() && js.Start.Before(j.Start) {
		j.Start = js.Start
	}
	if j.User == "" {
		j.User = js.User
	}
	if j.UID < 0 {
		j.UID = js.UID
	}
	if j.GID < 0 {
		j.GID = js.GID
	}
	if j.Account == "" {
		j.Account = js.Account
	}
	if j.Partition == "" {
		j.Partition = js.Partition
	}
	if j.Comment == "" {
		j.Comment = js.Comment
	}
}
