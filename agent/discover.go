package agent

import (
	"os/user"
	"slices"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Discovery of jobs the agent was not told about. Slurm 22.05 does not run
// the prolog again when a job is requeued onto the same node, and an agent
// restarted without its database has lost its jobs: in both cases the job's
// processes still appear on the GPUs, carrying its id (cgroup or
// environment). Such a job is profiled from the first sample that shows it,
// marked partial; its epilog finishes it as usual.

// endedKeep is how long the PIDs of an ended job are remembered, so that
// its lingering processes (Slurm is still killing them) do not bring it
// back.
const endedKeep = 10 * time.Minute

type endedRun struct {
	at   time.Time
	pids map[int]bool
}

// rememberEnded records the PIDs of a job that just ended. Called with a.mu
// held.
func (a *Agent) rememberEnded(jobID string, now time.Time) {
	pids := map[int]bool{}
	for pid, info := range a.pids {
		if info.job == jobID {
			pids[pid] = true
		}
	}
	a.ended[jobID] = endedRun{at: now, pids: pids}
}

// discover starts a profile for every job whose processes are on a GPU but
// which the agent does not know. Called with a.mu held.
func (a *Agent) discover(now time.Time, readings map[string]reading, others map[string][]gpu.ProcessSample) {
	for id, e := range a.ended {
		if now.Sub(e.at) > endedKeep {
			delete(a.ended, id)
		}
	}
	type found struct {
		uuids []string
		pid   int
	}
	jobs := map[string]*found{}
	consider := func(uuid string, procs []gpu.ProcessSample) {
		for _, p := range procs {
			job := a.pids[p.PID].job
			if !slurmext.ValidJobID(job) || a.jobs[job] != nil || a.ended[job].pids[p.PID] {
				continue
			}
			f := jobs[job]
			if f == nil {
				f = &found{pid: p.PID}
				jobs[job] = f
			}
			if !slices.Contains(f.uuids, uuid) {
				f.uuids = append(f.uuids, uuid)
			}
		}
	}
	for uuid, r := range readings {
		consider(uuid, r.procs)
	}
	for uuid, procs := range others {
		consider(uuid, procs)
	}
	for id, f := range jobs {
		refs := make([]GPURef, 0, len(f.uuids))
		slices.Sort(f.uuids)
		for _, u := range f.uuids {
			refs = append(refs, GPURef{SlurmIndex: -1, Minor: -1, UUID: u})
		}
		js := JobStart{Cluster: a.lastCluster, Node: a.lastNode, JobID: id, UID: -1, GID: -1, Start: now, GPUs: refs}
		if uid, err := a.proc.uid(f.pid); err == nil {
			js.UID = uid
			if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
				js.User = u.Username
			}
		}
		devs, idx, _ := a.resolve(js.GPUs)
		j := NewJobProfile(js, devs, idx, a.opts.Interval, a.opts.SeriesPoints, a.versions, profile.SourceAgent)
		j.MarkPartial("prolog not seen: the job was found from its processes on the GPU (requeued, or started while the agent was away)")
		a.jobs[id] = &jobState{prof: j, ticks: map[int]uint64{}}
		delete(a.ended, id)
		a.log.Info("job discovered from its GPU processes", "job", id, "gpus", len(devs), "uid", js.UID)
	}
	if len(jobs) > 0 {
		a.wakePersister()
	}
}
