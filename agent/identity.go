package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Which job a GPU process belongs to. A job's owner, GPUs and existence
// come from Slurm: the prolog and epilog (slurmd's environment), the spool
// and the database rows they write. A process is what a user controls: its
// environment, and any cgroup directory systemd delegates to its user. So
// a process is attributed to a job only when
//
//   - its cgroup is the job's in Slurm's own hierarchy
//     (slurmext.SlurmCgroupJob; only root can create directories there)
//     and its real uid is the job's owner, or
//   - it is in no Slurm cgroup (proctrack/linuxproc), its SLURM_JOB_ID names
//     a job whose owner a Slurm record named, and its real uid is that
//     owner.
//
// A process that fails these checks is foreign: its load is charged to no
// job (a GPU that carries one is read per process, as a shared one), it is
// named once in the log, and the profile of the job holding its GPU says
// "foreign process uid N on GPU M". A user can thus misattribute load only
// to their own jobs, never claim another user's job, its GPUs or its
// notices.
//
// A process is a (PID, start time) pair: a PID is reused once its process
// is gone, within one sampling interval if someone cycles the counter. The
// facts are read once per process (procReader.facts): when its PID is first
// seen, and again whenever the start time /proc/PID/stat gives for it
// changes (another process under the same PID, attributed afresh). They
// are kept only when the start time read after them is the one read
// before (the process was not replaced while they were read). The
// attribution is decided again at every sample from them and the jobs held
// then, so a prolog that arrives after the process was first seen counts.

// procFacts is what procfs says about a GPU process, read when the agent
// first sees its PID.
type procFacts struct {
	// start is the process's start time (field 22 of /proc/PID/stat,
	// clock ticks since boot) before and after the facts were read; 0
	// when it could not be read or changed meanwhile (then uid is -1 and
	// the facts are read again at the next sample).
	start uint64
	uid   int // real uid; -1 when /proc/PID/status could not be read
	// cg is the process's job in Slurm's cgroup hierarchy, when inSlurm.
	cg      slurmext.CgroupJob
	inSlurm bool
	// envJob and envSLUID are SLURM_JOB_ID and SLURM_JOB_SLUID of its
	// environment, when well formed: the user's word, never the job's
	// identity on its own.
	envJob, envSLUID string
}

// procClass is how a process relates to the jobs the agent holds.
type procClass uint8

const (
	// procUnknown: its facts could not be read (it exited before the
	// agent looked, or lives in another PID namespace); nothing is
	// attributed to it and it makes no GPU shared, as before.
	procUnknown procClass = iota
	// procOwn: attributed to pidInfo.job.
	procOwn
	// procOtherJob: a process of a job the agent does not hold, by
	// Slurm's word (its Slurm cgroup, or a PID of a run that just ended):
	// a job ending or about to be found (discover.go).
	procOtherJob
	// procForeign: readable, and no job's by the rules above.
	procForeign
)

// procKey is one process: its PID and start time (procFacts.start).
type procKey struct {
	pid   int
	start uint64
}

// facts reads the identity facts of a process. The environment is read
// only where the cgroup does not already name the job. The start time is
// read before and after: facts of a process replaced meanwhile are
// discarded (uid -1), never mixed with the next one's.
func (p procReader) facts(pid int) procFacts {
	before, err := p.startTime(pid)
	if err != nil {
		return procFacts{uid: -1}
	}
	f := p.readFacts(pid)
	if after, err := p.startTime(pid); err != nil || after != before {
		return procFacts{uid: -1}
	}
	f.start = before
	return f
}

// readFacts reads the uid, the cgroup and (where the cgroup does not name
// the job) the environment of a process; facts checks they are one
// process's.
func (p procReader) readFacts(pid int) procFacts {
	f := procFacts{uid: -1}
	dir := filepath.Join(p.procfs, strconv.Itoa(pid))
	if uid, err := p.uid(pid); err == nil {
		f.uid = uid
	}
	if data, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
		f.cg, f.inSlurm = slurmext.SlurmCgroupJob(string(data))
	}
	if f.inSlurm && f.cg.JobID != "" {
		return f
	}
	data, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		return f
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("SLURM_JOB_ID=")); ok && slurmext.ValidJobID(string(v)) {
			f.envJob = string(v)
		}
		if v, ok := bytes.CutPrefix(kv, []byte("SLURM_JOB_SLUID=")); ok && slurmext.ValidJobID(string(v)) {
			f.envSLUID = string(v)
		}
	}
	return f
}

// jobIDError refuses a job id a hook or the spool gave that is not one
// (slurmext.ValidJobID): every job id the agent reads passes that rule
// before it names a map entry, a cgroup directory or a socket pattern.
func jobIDError(op, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%s: empty job id", op)
	case !slurmext.ValidJobID(id):
		return fmt.Errorf("%s: job id %.64q is not 1-64 characters of [A-Za-z0-9_.+-]", op, id)
	}
	return nil
}

// slurmJobLocked is the id of the job a process's Slurm cgroup names ("" for
// none, or a SLUID no prolog told the agent about). Called with a.mu held.
func (a *Agent) slurmJobLocked(f procFacts) string {
	if !f.inSlurm {
		return ""
	}
	if f.cg.JobID != "" {
		return f.cg.JobID
	}
	if id, ok := a.sluids[f.cg.SLUID]; ok {
		return id
	}
	return a.learnSLUIDLocked(f)
}

// learnSLUIDLocked maps a 26.05 SLUID cgroup to a job held without its SLUID
// (resumed after a restart: profiles do not keep the SLUID): the cgroup is
// Slurm's, the job id the process's environment gives is trusted only for
// a job whose Slurm-named owner runs the process, so a user can map only
// their own job. Called with a.mu held.
func (a *Agent) learnSLUIDLocked(f procFacts) string {
	st := a.jobs[f.envJob]
	if st == nil || st.sluid != "" || !st.slurmOwner || f.uid < 0 || f.uid != st.prof.UID ||
		f.envSLUID != "" && f.envSLUID != f.cg.SLUID {
		return ""
	}
	st.sluid = f.cg.SLUID
	a.sluids[f.cg.SLUID] = f.envJob
	a.log.Info("job's cgroup (SLUID) learnt from its process", "job", f.envJob, "sluid", f.cg.SLUID)
	return f.envJob
}

// attributeLocked decides the job of one process from its facts and the
// jobs held now (see the rules above). Called with a.mu held.
func (a *Agent) attributeLocked(pid int, f procFacts) (string, procClass) {
	if f.uid < 0 {
		return "", procUnknown
	}
	if f.inSlurm {
		id := a.slurmJobLocked(f)
		st := a.jobs[id]
		switch {
		case id == "":
			return "", procForeign // a SLUID no prolog named
		case f.cg.UID >= 0 && f.cg.UID != f.uid:
			return "", procForeign // another user's process in the owner's v1 directory
		case st == nil:
			return id, procOtherJob
		case st.prof.UID >= 0 && st.prof.UID != f.uid:
			return "", procForeign
		}
		return id, procOwn
	}
	if f.envJob == "" {
		return "", procForeign
	}
	st := a.jobs[f.envJob]
	switch {
	case st == nil && a.ended[f.envJob].pids[procKey{pid, f.start}]:
		return f.envJob, procOtherJob // a program of the run that just ended, still listed
	case st == nil || !st.slurmOwner || st.prof.UID < 0 || st.prof.UID != f.uid:
		return "", procForeign
	}
	return f.envJob, procOwn
}

// reattributeLocked decides again the job of every process the agent
// knows, after the jobs it holds changed. Called with a.mu held.
func (a *Agent) reattributeLocked() {
	for pid, info := range a.pids {
		info.job, info.class = a.attributeLocked(pid, info.facts)
		a.pids[pid] = info
	}
}

// foreignLogEvery bounds the log lines about one uid's foreign processes:
// a user starting many cannot fill the disk with them.
const foreignLogEvery = 10 * time.Minute

// maxForeignNotes bounds the foreign-process notes of one profile.
const maxForeignNotes = 8

// noteForeignLocked names the foreign processes on the GPUs read now: in
// the log, once per process and at most once per uid every
// foreignLogEvery, and in the profile of each job holding such a GPU.
// Called with a.mu held.
func (a *Agent) noteForeignLocked(now time.Time, readings map[string]reading, others map[string][]gpu.ProcessSample) {
	see := func(uuid string, procs []gpu.ProcessSample) {
		for _, p := range procs {
			info, ok := a.pids[p.PID]
			if !ok || info.class != procForeign {
				continue
			}
			dev := a.byUUID[uuid]
			for _, st := range a.jobs {
				if st.prof.GPU(uuid) != nil {
					st.noteForeign(info.facts.uid, dev.Index)
				}
			}
			if info.logged {
				continue
			}
			info.logged = true
			a.pids[p.PID] = info
			if last, ok := a.foreignLog[info.facts.uid]; ok && now.Sub(last) < foreignLogEvery {
				a.foreignQuiet[info.facts.uid]++
				continue
			}
			if len(a.foreignLog) > 4096 {
				clear(a.foreignLog) // many uids: start over rather than grow
			}
			a.foreignLog[info.facts.uid] = now
			quiet := a.foreignQuiet[info.facts.uid]
			delete(a.foreignQuiet, info.facts.uid)
			a.log.Warn("foreign process on a GPU: charged to no job", "pid", p.PID, "uid", info.facts.uid,
				"gpu", dev.Index, "claimed_job", claimOf(info.facts), "name", info.name, "not_logged_before", quiet)
		}
	}
	for uuid, r := range readings {
		see(uuid, r.procs)
	}
	for uuid, procs := range others {
		see(uuid, procs)
	}
}

// claimOf says which job a foreign process claimed, for the log.
func claimOf(f procFacts) string {
	switch {
	case f.inSlurm:
		return "cgroup " + f.cg.Key()
	case f.envJob != "":
		return "environment " + f.envJob
	}
	return ""
}

// noteForeign records in the job's profile that a foreign process was on
// one of its GPUs (its load is not the job's; the GPU was read per process
// meanwhile).
func (st *jobState) noteForeign(uid, gpuIndex int) {
	note := fmt.Sprintf("foreign process uid %d on GPU %d: not charged to this job; the GPU was read per process meanwhile", uid, gpuIndex)
	if slices.Contains(st.prof.PartialReasons, note) || st.foreignNotes >= maxForeignNotes {
		return
	}
	st.foreignNotes++
	if st.foreignNotes == maxForeignNotes {
		note = "more foreign processes on the job's GPUs: not charged to this job"
	}
	st.prof.MarkPartial(note)
}

// Reasons that mark a profile whose fields came from its processes, not
// from Slurm; a restarted agent reads them back (resume).
const (
	reasonDiscovered = "prolog not seen: the job was found from its processes in its Slurm cgroup (started while the agent was away); " +
		"its owner and GPUs are its processes' until a Slurm record names them"
	reasonRequeued = "prolog not seen: a new run of the job (requeued) was found from its processes while slurmd holds a step of it; " +
		"its GPUs are those its processes were seen on"
	reasonFoundEarly = "found from its processes before a Slurm record reached the agent: no readings before it was found"
)

// markProvenance sets what a resumed profile's reasons say about where its
// fields came from.
func (st *jobState) markProvenance() {
	switch {
	case slices.Contains(st.prof.PartialReasons, reasonDiscovered):
		st.provisional, st.slurmOwner = true, false
	case slices.Contains(st.prof.PartialReasons, reasonRequeued):
		st.provisional, st.slurmOwner = true, true
	default:
		st.provisional, st.slurmOwner = false, true
	}
}

// takePrologLocked applies a prolog's record — the prolog's request, a
// spooled prolog, a hook's running row — to a job the agent holds: the one
// way a start record joins a held job, whichever way it came. A job found
// from its processes becomes Slurm's (takeSlurmRecordLocked); a job that
// is Slurm's already keeps what it has and takes what it lacks: an
// earlier start, empty fields, its GPUs' Slurm indices, the SLUID. Called
// with a.mu held.
func (a *Agent) takePrologLocked(st *jobState, js hookproto.JobStart) {
	if st.provisional {
		a.takeSlurmRecordLocked(st, js)
		a.reattributeLocked()
		return
	}
	mergeStart(&st.prof, js)
	devs, idx, _ := a.resolve(js.GPUs)
	for i, d := range devs {
		if g := st.prof.GPU(d.UUID); g != nil && g.SlurmIndex < 0 {
			g.SlurmIndex = idx[i]
		}
	}
	if js.SLUID = validSLUID(js.SLUID); js.SLUID != "" && st.sluid == "" {
		st.sluid = js.SLUID
		a.sluids[js.SLUID] = st.prof.JobID
	}
}

// takeSlurmRecordLocked makes a provisional job's profile the Slurm record's:
// owner, account, partition, comment, start and GPUs. The readings of the
// GPUs the record names are kept, the others dropped (they were a process's
// word). From then on the job is Slurm's. The start is the record's only
// when earlier than the profile's: the job ran before its processes were
// found, and an epilog's record carries the epilog's own time where Slurm
// (before 23.02) gives it no start. Called with a.mu held.
func (a *Agent) takeSlurmRecordLocked(st *jobState, js hookproto.JobStart) {
	j := &st.prof
	was := j.UID
	j.User, j.UID, j.GID = js.User, js.UID, js.GID
	j.Account, j.Partition, j.Comment = js.Account, js.Partition, js.Comment
	if !js.Start.IsZero() && js.Start.Before(j.Start) {
		j.Start = js.Start
	}
	devs, idx, problems := a.resolve(js.GPUs)
	gpus := make([]profile.GPU, 0, len(devs))
	for i, d := range devs {
		if g := j.GPU(d.UUID); g != nil {
			g.SlurmIndex = idx[i]
			gpus = append(gpus, *g)
			continue
		}
		gpus = append(gpus, profile.NewGPU(d, idx[i], j.Start, a.opts.Interval, a.opts.SeriesPoints))
	}
	dropped := len(j.GPUs) - len(gpus)
	for _, g := range gpus {
		if j.GPU(g.UUID) == nil {
			dropped++
		}
	}
	j.GPUs = gpus
	for _, p := range problems {
		j.MarkPartial(p)
	}
	j.PartialReasons = slices.DeleteFunc(j.PartialReasons, func(r string) bool {
		return r == reasonDiscovered || r == reasonRequeued
	})
	j.MarkPartial(reasonFoundEarly)
	if js.SLUID != "" {
		st.sluid = js.SLUID
		a.sluids[js.SLUID] = j.JobID
	}
	st.provisional, st.slurmOwner = false, true
	st.notes = noticeState{}
	a.log.Info("job found from its processes now Slurm's", "job", j.JobID, "uid", js.UID, "was_uid", was,
		"gpus", len(gpus), "gpus_dropped_or_added", dropped)
}

// slurmRecordOf is what a record a hook wrote (a running row, a spooled
// prolog or epilog) says of a job.
func slurmRecordOf(j profile.Job) hookproto.JobStart {
	return hookproto.JobStart{Cluster: j.Cluster, JobID: j.JobID, Node: j.Node, User: j.User, UID: j.UID, GID: j.GID,
		Account: j.Account, Partition: j.Partition, Comment: j.Comment, Start: j.Start, GPUs: refsOf(j)}
}

// validSLUID keeps a SLUID only in the form Slurm names cgroups by; ""
// for anything else (a hook's JSON is checked again here).
func validSLUID(s string) string {
	if c, ok := slurmext.ParseSLUID(s); ok {
		return c
	}
	return ""
}
