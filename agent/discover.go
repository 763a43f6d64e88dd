package agent

import (
	"cmp"
	"context"
	"maps"
	"os/user"
	"slices"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// Discovery of jobs the agent was not told about. An agent restarted
// without its database has lost its jobs, and Slurm 22.05 does not run the
// prolog again when a job is requeued onto the same node: in both cases
// the job's processes are on the GPUs. But a process is its user's word
// (identity.go), so:
//
//   - A job the agent never heard of is found only from a process in its
//     Slurm cgroup, never from a process's environment. It is provisional:
//     its owner is the process's, its GPUs those its processes are on,
//     until the first Slurm record (prolog, spooled record, a hook's row,
//     epilog) replaces every field; no notice goes to it before.
//   - A job that finished (here, recently, or in the database: a restarted
//     agent forgets) is never reopened by a process. A new run of it
//     (requeued) is taken only while slurmd holds a step of it again
//     (slurmd's spool, which only root writes), and only from processes of
//     the owner Slurm named for the run that finished; its GPUs are those
//     its processes are on until a Slurm record names them.

// endedKeep is how long the PIDs of an ended job are remembered, so that
// its lingering processes (Slurm is still killing them) do not bring it
// back, and how long what the database said of a job is believed.
const endedKeep = 10 * time.Minute

// maxStoreChecks bounds the database look-ups of one sample: processes
// naming many jobs cannot make the tick slow.
const maxStoreChecks = 8

type endedRun struct {
	at time.Time
	// pids are the run's processes, PID and start time: a later process
	// under one of their PIDs is not the run's.
	pids map[procKey]bool
	// rec is the finished run as a Slurm record named it (no GPUs); UID -1
	// when no Slurm record named its owner.
	rec hookproto.JobStart
}

// storedCheck is what the database said of a job the agent does not hold.
type storedCheck struct {
	at       time.Time
	finished bool
	rec      hookproto.JobStart // the finished run's owner, as for endedRun
}

// rememberEnded records the PIDs of a job that just ended and who its
// Slurm-named owner was. Called with a.mu held.
func (a *Agent) rememberEnded(jobID string, now time.Time, st *jobState) {
	pids := map[procKey]bool{}
	for pid, info := range a.pids {
		if info.job == jobID {
			pids[procKey{pid, info.facts.start}] = true
		}
	}
	rec := hookproto.JobStart{UID: -1}
	if st != nil && st.slurmOwner {
		rec = slurmRecordOf(st.prof)
		rec.GPUs = nil
	}
	a.ended[jobID] = endedRun{at: now, pids: pids, rec: rec}
}

// finishedRecord is the Slurm record of a stored finished profile; its
// owner counts only if a Slurm record named it.
func finishedRecord(j profile.Job) hookproto.JobStart {
	rec := slurmRecordOf(j)
	rec.GPUs = nil
	if slices.Contains(j.PartialReasons, reasonDiscovered) {
		rec.UID = -1
	}
	return rec
}

// candidate is a job the agent does not hold whose processes are on GPUs.
type candidate struct {
	id    string
	procs []candidateProc
}

// candidateProc is one process that names a candidate job.
type candidateProc struct {
	pid, uid int
	uuid     string
	cgroup   bool // in the job's Slurm cgroup (else it names it in its environment)
}

// cgroupOwner is the uid a job found from its Slurm cgroup is given until a
// Slurm record names its owner: slurmstepd starts the job's programs as its
// owner, so the uid of most of them, preferring a user's to root's (sudo
// inside the job), the lowest in a tie. ok is false without a process in
// the cgroup.
func (c *candidate) cgroupOwner() (uid int, ok bool) {
	count := map[int]int{}
	for _, p := range c.procs {
		if p.cgroup {
			count[p.uid]++
		}
	}
	rank := func(u int) (user, n int) {
		if u != 0 {
			user = 1
		}
		return user, count[u]
	}
	uid = -1
	for u := range count {
		uu, un := rank(u)
		bu, bn := rank(uid)
		if uid < 0 || cmp.Or(cmp.Compare(uu, bu), cmp.Compare(un, bn), cmp.Compare(uid, u)) > 0 {
			uid = u
		}
	}
	return uid, uid >= 0
}

// of returns the processes of uid that name the job (in its cgroup only,
// when cgroupOnly), with the GPUs they are on, and the lowest PID.
func (c *candidate) of(uid int, cgroupOnly bool) (uuids []string, pid int) {
	pid = -1
	for _, p := range c.procs {
		if p.uid != uid || cgroupOnly && !p.cgroup {
			continue
		}
		if !slices.Contains(uuids, p.uuid) {
			uuids = append(uuids, p.uuid)
		}
		if pid < 0 || p.pid < pid {
			pid = p.pid
		}
	}
	slices.Sort(uuids)
	return uuids, pid
}

// discoverLocked starts a profile for the jobs found from their processes,
// by the rules above. It returns the jobs whose fate depends on what the
// database says and that it has not asked yet (checkStore). Called with
// a.mu held.
func (a *Agent) discoverLocked(now time.Time, readings map[string]reading, others map[string][]gpu.ProcessSample) []string {
	a.pruneLocked(now)
	cands := map[string]*candidate{}
	consider := func(uuid string, procs []gpu.ProcessSample) {
		for _, p := range procs {
			info := a.pids[p.PID]
			var id string
			switch {
			case info.class == procOtherJob && info.facts.inSlurm:
				id = info.job
			case info.class == procForeign && !info.facts.inSlurm && info.facts.envJob != "" && a.opts.SlurmdSpoolDir != "":
				id = info.facts.envJob // only ever a new run of a finished job
			default:
				continue
			}
			if a.jobs[id] != nil || a.unwrittenLocked(id) || a.ended[id].pids[procKey{p.PID, info.facts.start}] {
				continue
			}
			c := cands[id]
			if c == nil {
				c = &candidate{id: id}
				cands[id] = c
			}
			c.procs = append(c.procs, candidateProc{pid: p.PID, uid: info.facts.uid, uuid: uuid, cgroup: info.facts.inSlurm})
		}
	}
	for uuid, r := range readings {
		consider(uuid, r.procs)
	}
	for uuid, procs := range others {
		consider(uuid, procs)
	}
	var ask []string
	found := 0
	for _, id := range slices.Sorted(maps.Keys(cands)) {
		c := cands[id]
		owner, inCgroup := c.cgroupOwner()
		rec, finished, known := a.finishedLocked(id)
		if !inCgroup && !finished {
			if !known && a.stepsAlive(id) {
				ask = append(ask, id) // a requeued run after a restart?
			}
			continue // an environment alone names no job
		}
		if !known {
			ask = append(ask, id)
			continue
		}
		if finished {
			uuids, pid := c.of(rec.UID, false)
			if rec.UID < 0 || len(uuids) == 0 || !a.stepsAlive(id) {
				continue // a finished job is never reopened by a process
			}
			a.startFoundLocked(now, id, uuids, pid, rec, reasonRequeued, true)
		} else {
			uuids, pid := c.of(owner, true)
			a.startFoundLocked(now, id, uuids, pid, hookproto.JobStart{UID: owner, GID: -1}, reasonDiscovered, false)
		}
		found++
	}
	if found > 0 {
		a.reattributeLocked()
		a.wakePersister()
	}
	if len(ask) > maxStoreChecks {
		ask = ask[:maxStoreChecks]
	}
	return ask
}

// stepsAlive says whether slurmd holds a step of the job now (and can
// tell). Called with a.mu held.
func (a *Agent) stepsAlive(id string) bool {
	alive, known := a.hasSteps(id)
	return alive && known
}

// finishedLocked says whether job id finished on this node, with its Slurm
// record, and whether the agent knows (recently ended here, or the
// database was asked within endedKeep). Called with a.mu held.
func (a *Agent) finishedLocked(id string) (rec hookproto.JobStart, finished, known bool) {
	if e, ok := a.ended[id]; ok {
		return e.rec, true, true
	}
	if s, ok := a.stored[id]; ok {
		return s.rec, s.finished, true
	}
	return hookproto.JobStart{}, false, false
}

// checkStore asks the database whether the jobs finished (it holds this
// node's jobs only). A failed look-up is not remembered: the next sample
// asks again, and the job is not found meanwhile.
func (a *Agent) checkStore(ctx context.Context, now time.Time, ids []string) {
	for _, id := range ids {
		js, err := a.db.ListJobs(ctx, store.Filter{JobID: id, Status: profile.StatusFinished, Limit: 1})
		if err != nil {
			a.log.Debug("finished job not looked up", "job", id, "err", err)
			continue
		}
		c := storedCheck{at: now, rec: hookproto.JobStart{UID: -1}}
		if len(js) > 0 {
			c.finished, c.rec = true, finishedRecord(js[0])
		}
		a.mu.Lock()
		a.stored[id] = c
		a.mu.Unlock()
	}
}

// startFoundLocked starts the profile of a job found from its processes.
// Called with a.mu held.
func (a *Agent) startFoundLocked(now time.Time, id string, uuids []string, pid int, rec hookproto.JobStart, reason string, slurmOwner bool) {
	refs := make([]hookproto.GPURef, 0, len(uuids))
	for _, u := range uuids {
		refs = append(refs, hookproto.GPURef{SlurmIndex: -1, Minor: -1, UUID: u})
	}
	js := rec
	js.Cluster, js.Node, js.JobID, js.Start, js.GPUs = a.lastCluster, a.lastNode, id, now, refs
	if !slurmOwner {
		js.User = ""
		if u, err := user.LookupId(strconv.Itoa(rec.UID)); err == nil {
			js.User = u.Username
		}
	}
	devs, idx, _ := a.resolve(js.GPUs)
	j := hookproto.NewProfile(js, devs, idx, a.opts.Interval, a.opts.SeriesPoints, a.versions, profile.SourceAgent)
	j.MarkPartial(reason)
	a.jobs[id] = &jobState{prof: j, ticks: map[procKey]uint64{}, provisional: true, slurmOwner: slurmOwner}
	delete(a.ended, id)
	delete(a.stored, id)
	a.log.Info("job found from its GPU processes", "job", id, "gpus", len(devs), "uid", js.UID,
		"pid", pid, "requeued_run", slurmOwner)
}

// pruneLocked forgets ended jobs, database answers and SLUIDs older than
// endedKeep or of jobs gone. Called with a.mu held.
func (a *Agent) pruneLocked(now time.Time) {
	for id, e := range a.ended {
		if now.Sub(e.at) > endedKeep {
			delete(a.ended, id)
		}
	}
	for id, s := range a.stored {
		if now.Sub(s.at) > endedKeep {
			delete(a.stored, id)
		}
	}
	for s, id := range a.sluids {
		if _, ended := a.ended[id]; a.jobs[id] == nil && !ended {
			delete(a.sluids, s)
		}
	}
}
