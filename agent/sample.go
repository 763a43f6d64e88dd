package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times on Linux.
const clockTicks = 100

func (a *Agent) sampleLoop(ctx context.Context) {
	t := time.NewTicker(a.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case due := <-t.C:
			a.obs.tick(due, time.Now(), a.opts.Interval)
			sctx, cancel := context.WithTimeout(ctx, a.opts.Interval)
			a.sample(sctx, "")
			cancel()
		}
	}
}

// SampleNow takes one sampling tick of every running job, exactly what the
// sampling loop does on each interval. It exists for drivers that run the
// agent on a virtual clock instead of calling Run (the demo's simulated
// month, package demo): they call Handle for the hooks' requests and
// SampleNow once per virtual interval.
func (a *Agent) SampleNow(ctx context.Context) { a.sample(ctx, "") }

// reading is one GPU's raw readings at one instant.
type reading struct {
	dev    gpu.Device
	ds     gpu.DeviceSample
	energy gpu.Opt[uint64] // the energy counter, mJ, when read this time
	procs  []gpu.ProcessSample
	err    error
}

// sample reads the GPUs of running jobs (of one job when only != "") and
// adds the readings to their profiles.
func (a *Agent) sample(ctx context.Context, only string) {
	now := a.now()
	a.mu.Lock()
	want := map[string]bool{}
	for id, st := range a.jobs {
		if only != "" && id != only {
			continue
		}
		for _, g := range st.prof.GPUs {
			want[g.UUID] = true
		}
	}
	a.mu.Unlock()

	readings := map[string]reading{}
	// Processes on the GPUs no running job holds: a job whose prolog the
	// agent never saw (a requeued job on 22.05, an agent restarted without
	// its database) is found from them.
	others := map[string][]gpu.ProcessSample{}
	var xids []gpu.XIDEvent
	var idle map[string]reading
	if a.acquire(ctx) {
		for uuid := range want {
			// A job's first and last readings (only != "": its prolog or
			// epilog) read the energy counter, so that its energy is the
			// counter's difference; between them at most every
			// EnergyEvery.
			readings[uuid] = a.read(ctx, uuid, now, only != "")
		}
		if only == "" {
			for _, d := range a.devices {
				if want[d.UUID] {
					continue
				}
				if procs, err := a.gpus.Processes(ctx, d.UUID); err == nil && len(procs) > 0 {
					others[d.UUID] = procs
				}
			}
		}
		if only == "" {
			var err error
			xids, err = a.gpus.XIDEvents(ctx)
			if err != nil && !errors.Is(err, gpu.ErrUnsupported) {
				a.log.Warn("XID events", "err", err)
				a.obs.gpuError(time.Now(), err)
			}
			if a.opts.MetricsListener != nil {
				idle = a.readIdle(ctx, want, now)
			}
		}
		a.release()
	}
	for _, r := range readings {
		if r.err != nil {
			a.log.Warn("GPU reading failed", "gpu", r.dev.UUID, "err", r.err)
			a.obs.gpuError(time.Now(), r.err)
			a.obs.drop(dropReadError, 1)
		}
	}

	a.mu.Lock()
	a.mapPIDs(readings, others, only == "")
	if only == "" {
		if ask := a.discoverLocked(now, readings, others); len(ask) > 0 {
			// Whether a job finished is the database's to say (a restarted
			// agent forgot): asked without the lock, then found.
			a.mu.Unlock()
			a.checkStore(ctx, now, ask)
			a.mu.Lock()
			a.discoverLocked(now, readings, others)
		}
		a.noteForeignLocked(now, readings, others)
	}
	defer a.mu.Unlock()
	nodeIO := a.readNodeIO()
	for id, st := range a.jobs {
		if only != "" && id != only {
			continue
		}
		a.apply(now, st, readings)
		a.noticeTick(now, st, readings)
		a.observeIO(now, st, nodeIO)
		st.prof.LastSample = now
	}
	for _, x := range xids {
		for _, st := range a.jobs {
			if g := st.prof.GPU(x.UUID); g != nil {
				g.AddXID(x.XID, x.Time)
				a.log.Warn("XID error", "job", st.prof.JobID, "gpu", x.UUID, "xid", x.XID)
			}
		}
	}
	if only == "" {
		a.publishLocked(readings, idle, xids)
	}
}

// read takes one GPU's device and process readings, dropping absurd values,
// and its energy counter when due (energyNow, or see readEnergy). The
// caller holds gpuSem.
func (a *Agent) read(ctx context.Context, uuid string, now time.Time, energyNow bool) reading {
	dev := a.byUUID[uuid]
	r := reading{dev: dev}
	ds, err := a.gpus.SampleDevice(ctx, uuid)
	if err != nil {
		r.err = fmt.Errorf("sample: %w", err)
		return r
	}
	r.energy = a.readEnergy(ctx, uuid, now, energyNow)
	ds, dropped := gpu.Sanitize(ds, dev.MemoryTotal)
	procs, err := a.gpus.Processes(ctx, uuid)
	if err != nil && !errors.Is(err, gpu.ErrUnsupported) {
		r.err = fmt.Errorf("processes: %w", err)
	}
	for i := range procs {
		var d int
		procs[i], d = gpu.SanitizeProcess(procs[i], dev.MemoryTotal)
		dropped += d
	}
	if dropped > 0 {
		a.log.Warn("dropped absurd GPU readings", "gpu", uuid, "count", dropped)
		a.obs.drop(dropImplausible, dropped)
	}
	r.ds, r.procs = ds, procs
	return r
}

// readEnergy reads a GPU's energy counter when now is due (a job starts or
// ends on it) or EnergyEvery has passed since its last read, and never for
// a GPU that has none. The caller holds gpuSem.
func (a *Agent) readEnergy(ctx context.Context, uuid string, at time.Time, now bool) gpu.Opt[uint64] {
	if a.noEnergy[uuid] {
		return gpu.Opt[uint64]{}
	}
	if last, ok := a.energyAt[uuid]; !now && ok && at.Sub(last) < a.opts.EnergyEvery && !at.Before(last) {
		return gpu.Opt[uint64]{}
	}
	e, err := a.gpus.Energy(ctx, uuid)
	switch {
	case errors.Is(err, gpu.ErrUnsupported):
		a.noEnergy[uuid] = true
		a.log.Debug("GPU has no energy counter: power is integrated", "gpu", uuid)
		return gpu.Opt[uint64]{}
	case err != nil:
		a.log.Debug("energy counter unread; power integrated meanwhile", "gpu", uuid, "err", err)
		return gpu.Opt[uint64]{}
	}
	a.energyAt[uuid] = at
	a.obs.energyRead(uuid, e)
	return gpu.Some(e)
}

// jobActivity is the activity of a reading taken at now that belongs to
// job j: none when its interval began before the job did (the GPU's
// previous sample was taken for someone else, or long ago), spans more
// than two intervals (a gap in sampling) or no time at all.
func (a *Agent) jobActivity(j *profile.Job, ds gpu.DeviceSample, now time.Time) gpu.Opt[gpu.Activity] {
	act := ds.Activity
	if !act.Valid {
		return act
	}
	// Job starts are whole seconds in the hooks' records.
	begin := now.Add(-act.Value.Interval)
	if act.Value.Interval <= 0 || act.Value.Interval > 2*a.opts.Interval+time.Second || begin.Before(j.Start.Add(-time.Second)) {
		return gpu.Opt[gpu.Activity]{}
	}
	return act
}

// mapPIDs refreshes the PID → job cache for the processes seen now: the
// facts of a process are read once, when its PID is new or its start time
// changed (another process under the same PID: identity.go), and the job
// of every PID decided again. A sample of every GPU (all) also forgets the
// PIDs it did not see; one of a single job's GPUs leaves the others' PIDs
// be (a program that has exited but is still listed must keep its job, or
// its load becomes the next job's).
func (a *Agent) mapPIDs(readings map[string]reading, others map[string][]gpu.ProcessSample, all bool) {
	seen := make(map[int]bool, len(a.pids))
	see := func(procs []gpu.ProcessSample) {
		for _, p := range procs {
			if seen[p.PID] {
				continue // on several GPUs: looked at once
			}
			seen[p.PID] = true
			info, known := a.pids[p.PID]
			if known {
				// One read of /proc/PID/stat a process and sample: the
				// same start time is the same process. None (it exited,
				// still listed) keeps what was learnt of it; another is a
				// new process, read afresh.
				start, err := startTimeAt(info.stat)
				if err != nil || start == info.facts.start {
					continue
				}
			}
			a.pids[p.PID] = pidInfo{facts: a.proc.facts(p.PID), name: a.proc.comm(p.PID), stat: a.proc.statPath(p.PID)}
		}
	}
	for _, r := range readings {
		see(r.procs)
	}
	for _, procs := range others {
		see(procs)
	}
	if all {
		for pid := range a.pids {
			if !seen[pid] {
				delete(a.pids, pid)
			}
		}
	}
	a.reattributeLocked()
}

// ownedBy reports whether a process is attributed to job.
func (info pidInfo) ownedBy(job string) bool {
	return info.class == procOwn && info.job == job
}

// apply attributes readings to one job. A GPU held by this job alone gets
// the device's readings (processes or not: an untouched GPU is an idle
// allocation, not a gap). A GPU held by several jobs at once (shards, MPS),
// or carrying another job's processes, gets the sum of the job's own
// processes.
func (a *Agent) apply(now time.Time, st *jobState, readings map[string]reading) {
	if !st.gapFrom.IsZero() {
		// Stored times have whole seconds: allow that much on top of two
		// intervals before calling it a gap.
		if gap := now.Sub(st.gapFrom); gap > 2*a.opts.Interval+time.Second {
			st.prof.MarkPartial(fmt.Sprintf("no readings from %s to %s (agent not running)",
				st.gapFrom.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
		}
		st.gapFrom = time.Time{}
	}
	// A job the hooks recorded while the agent was away is sampled now.
	st.prof.Source = profile.SourceAgent
	for i := range st.prof.GPUs {
		g := &st.prof.GPUs[i]
		r, ok := readings[g.UUID]
		if !ok || r.err != nil && !r.ds.Util.Valid && !r.ds.MemoryUsed.Valid {
			continue
		}
		// Processes of another job on a GPU we think exclusive (a job's
		// leftovers, a misconfigured device constraint), or of no job at
		// all (identity.go), would inflate the device readings: then
		// attribute per process as on a shared GPU.
		foreign := false
		for _, p := range r.procs {
			if info := a.pids[p.PID]; info.class != procUnknown && !info.ownedBy(st.prof.JobID) {
				foreign = true
			}
		}
		// The device's activity (GPM has no per-process view), on a shared
		// GPU too: then marked as the device's (rd.Shared).
		rd := profile.Reading{Time: now, TempC: r.ds.TempC, Activity: a.jobActivity(&st.prof, r.ds, now), ActivityScope: profile.ActivityScopeGPU}
		if a.mig[g.UUID] {
			rd.ActivityScope = profile.ActivityScopeMIG
		}
		if a.holders(g.UUID) <= 1 && !foreign {
			rd.MemUsed, rd.Util = r.ds.MemoryUsed, r.ds.Util
			rd.PowerMW, rd.EnergyMJ = r.ds.PowerMW, r.energy
			rd.Processes = len(r.procs)
			for _, p := range r.procs {
				g.AddProcessName(a.pids[p.PID].name)
			}
		} else {
			rd.Shared = true
			rd.MemUsed, rd.Util = a.ownShare(st.prof.JobID, r.procs, func(info pidInfo) {
				rd.Processes++
				g.AddProcessName(info.name)
			})
		}
		g.Observe(rd, a.opts.Interval)
		if st.notes.tracker != nil {
			st.noticeProcs(i, len(st.prof.GPUs), a.procSet(r.procs))
		}
		st.noticeObserve(i, rd)
	}
}

// ownShare is a job's own use of a GPU: the sum of the memory and SM
// utilisation (at most 100 %) of the processes it owns (pidInfo.ownedBy),
// each valid when every one of them reported it. each, when not nil, sees
// each of those processes. The job's profile on a shared GPU and its
// /metrics gauges both read it.
func (a *Agent) ownShare(job string, procs []gpu.ProcessSample, each func(pidInfo)) (gpu.Opt[uint64], gpu.Opt[uint32]) {
	var mem uint64
	var util uint32
	memOK, utilOK := true, true
	for _, p := range procs {
		info := a.pids[p.PID]
		if !info.ownedBy(job) {
			continue
		}
		if each != nil {
			each(info)
		}
		if p.MemoryUsed.Valid {
			mem += p.MemoryUsed.Value
		} else {
			memOK = false
		}
		if p.SMUtil.Valid {
			util += p.SMUtil.Value
		} else {
			utilOK = false
		}
	}
	var m gpu.Opt[uint64]
	var u gpu.Opt[uint32]
	if memOK {
		m = gpu.Some(mem)
	}
	if utilOK {
		u = gpu.Some(min(util, 100))
	}
	return m, u
}

// holders counts the running jobs that hold a GPU now.
func (a *Agent) holders(uuid string) int {
	n := 0
	for _, st := range a.jobs {
		if st.prof.GPU(uuid) != nil {
			n++
		}
	}
	return n
}

// readNodeIO reads the node-wide IO counters: PSI "some" total where the
// kernel has it, and the CPU iowait jiffies from /proc/stat.
func (a *Agent) readNodeIO() ioCounter {
	var c ioCounter
	c.psi, c.hasPSI = a.proc.nodeIOPressure()
	c.iowait, c.total, c.hasCPU = a.proc.cpuIOWait()
	c.lastValid = true
	return c
}

// nodeStall returns the node's IO stall seconds between two readings that
// span wall seconds: PSI where available, else the iowait share of CPU time.
func nodeStall(prev, cur ioCounter, wall float64) (float64, bool) {
	switch {
	case !prev.lastValid || wall <= 0:
		return 0, false
	case cur.hasPSI && prev.hasPSI && cur.psi >= prev.psi:
		return cur.psi - prev.psi, true
	case cur.hasCPU && prev.hasCPU && cur.total > prev.total && cur.iowait >= prev.iowait:
		return float64(cur.iowait-prev.iowait) / float64(cur.total-prev.total) * wall, true
	}
	return 0, false
}

// observeIO adds the job's IO wait since its previous reading, in the most
// precise scope available.
func (a *Agent) observeIO(now time.Time, st *jobState, node ioCounter) {
	prev := st.lastIO
	st.lastIO = now
	wall := now.Sub(prev).Seconds()
	first := prev.IsZero()

	// A job without a cgroup (proctrack/linuxproc) is re-checked only every
	// tenth sample: the failed lookups were a tenth of the agent's work.
	var v float64
	ok := false
	if st.hasCG || st.cgMisses%10 == 0 {
		v, ok = a.proc.jobIOPressure(st.prof.JobID, st.sluid)
	}
	if !ok {
		st.cgMisses++
	}
	if ok {
		if st.hasCG && !first && v >= st.cgroupIO {
			st.prof.IO.Observe(profile.IOScopeCgroup, v-st.cgroupIO, wall)
		}
		st.cgroupIO, st.hasCG = v, true
		return
	}
	if a.delayAcct {
		var stall float64
		n := 0
		for pid, info := range a.pids {
			if !info.ownedBy(st.prof.JobID) {
				continue
			}
			t, start, err := a.proc.blkioTicks(pid)
			if err != nil || start != info.facts.start {
				continue // gone, or another process under its PID
			}
			k := procKey{pid, start}
			if last, ok := st.ticks[k]; ok && t >= last {
				stall += float64(t-last) / clockTicks
			}
			st.ticks[k] = t
			n++
		}
		if n > 0 {
			if !first {
				// Several processes may wait at once; cap at the wall time.
				st.prof.IO.Observe(profile.IOScopeProcess, min(stall, wall), wall)
			}
			return
		}
	}
	prevNode := st.nodeIO
	st.nodeIO = node
	if stall, ok := nodeStall(prevNode, node, wall); ok && !first {
		st.prof.IO.Observe(profile.IOScopeNode, stall, wall)
	}
}
