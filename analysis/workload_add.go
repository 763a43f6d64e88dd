package analysis

import (
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// How SummariseWorkload folds one job in: its run and wait clipped to the
// window once, then each of its GPUs into the models and distributions,
// then its GPU-hours into the headline, its user's and account's groups
// and the lost states.

// jobRun is one job's run inside the window as add counts it: what every
// GPU of the job adds (the same clipped hours and per-GPU share for all
// of them, so that the headline, the days, the models and the groups
// count the same run), and what its GPUs add up to.
type jobRun struct {
	hours    float64 // the run's hours inside the window
	per      float64 // each GPU's share: 1, or shards held ÷ shards on the GPU
	gpuHours float64 // each GPU's: per × hours
	eShare   float64 // the share of the run's energy inside the window
	ci       float64 // the emission factor over the part of the run counted
	ciOK     bool

	waitValid bool
	wait      float64 // seconds, when waitValid
	waitStart int     // the job's first record in workloadAcc.modelWaits

	// The sums over the job's GPUs.
	energy                       energyAcc
	eff                          effAcc
	usedRate, idleRate, measured float64
}

// add folds one job in; open-ended jobs must wait for setDataEnd.
//
// The run and the wait are clipped to the window here, once; the GPUs
// (addGPU) and the job's totals (addTotals) take the clipped run from one
// jobRun, so that every sum counts the same run, wait and per-GPU share.
func (a *workloadAcc) add(j *Job, m *Metrics, c *Config) {
	tl := &a.tl
	end := j.End
	if !plausible(end) {
		end = time.Time{}
	}

	// The run, as the counter counted it.
	runS, runE := m.CountStart, m.CountEnd
	hasRun := !runS.IsZero()
	waitS, waitE, hasWait := a.waitSpan(j, m, end)

	rs, re, runIn := int64(0), int64(0), false
	if hasRun {
		rs, re, runIn = tl.clip(runS, runE)
	}
	ws, we, waitIn := int64(0), int64(0), false
	if hasWait {
		ws, we, waitIn = tl.clip(waitS, waitE)
	}
	startIn, submitIn := tl.inside(m.Start), tl.inside(m.Submit)

	h := &a.w.Headline
	h.Jobs++
	a.w.Notes.Add(m.Notes)
	gpus := m.GPUs
	if gpus > 0 {
		h.GPUJobs++
	}
	if gpus > maxJobGPUs || gpus < 0 {
		a.w.AbsurdGPUCounts++
		gpus = 0
	}
	if startIn {
		a.started[tl.day[tl.segment(int64(m.Start.Sub(tl.from)))]]++
	}
	if submitIn {
		a.submitted[tl.day[tl.segment(int64(m.Submit.Sub(tl.from)))]]++
	}
	ui, ai := a.users.of(j.User), a.accounts.of(j.Account)
	u, ac := &a.users.groups[ui], &a.accounts.groups[ai]
	u.jobs++
	ac.jobs++
	if m.WaitValid {
		a.waits = append(a.waits, waitRec{ui, ai, m.Wait.Seconds(), gpus > 0})
		u.nWait++
		ac.nWait++
	}
	if waitIn && gpus > 0 {
		a.pending.add(tl, ws, we, m.GPUShare)
	}
	// A job that ran inside the window, even for no time, shows its GPUs
	// in the per-GPU distributions.
	ran := runIn || (hasRun && runS.Equal(runE) && startIn)
	if !ran || gpus == 0 {
		return
	}

	// The same expression as Metrics.GPUHours, so the headline counts
	// exactly what the cluster summary counts. per is each GPU's share: 1
	// for whole GPUs, shards held ÷ shards on the GPU for a shard job.
	r := jobRun{hours: time.Duration(re - rs).Hours(), per: m.GPUShare / float64(gpus)}
	r.gpuHours = r.per * r.hours
	// Energy is recorded over the whole run: the window takes its share.
	r.eShare = inWindowShare(m, re-rs, a.analysisNow)
	// The emission factor over the part of the run counted.
	r.ci, r.ciOK = a.carbon.Intensity(tl.from.Add(time.Duration(rs)), tl.from.Add(time.Duration(re)))
	r.waitValid, r.wait, r.waitStart = m.WaitValid, m.Wait.Seconds(), len(a.modelWaits)
	recorded := min(len(j.GPUs), gpus)
	for i := range recorded {
		a.addGPU(&j.GPUs[i], &r)
	}
	if extra := gpus - recorded; extra > 0 {
		// GPUs without a record (sacct history, a shard job without a
		// profile): model unknown.
		mod := a.model("")
		mod.u.JobGPUs += extra
		mod.sums.gpuHours.Add(float64(extra) * r.gpuHours)
		if m.WaitValid {
			a.addModelWait(r.waitStart, a.lastModelIdx, r.wait)
		}
	}
	a.energy.add(r.energy)
	a.effective.add(r.eff)
	a.allocated.add(gpuTimeHeld(m.GPUShare, m.GPUs, time.Duration(re-rs)))
	a.addTotals(j, m, c, [...]*groupAcc{u, ac}, &r)
	if runIn {
		a.alloc.add(tl, rs, re, m.GPUShare)
		a.used.add(tl, rs, re, r.usedRate)
	}
}

// waitSpan is a job's time in the queue: until the start, or for a job
// that never started, until it was cancelled (end) or, still queued,
// until DataEnd. ok is false where the span is not known or longer than
// maxSpan.
func (a *workloadAcc) waitSpan(j *Job, m *Metrics, end time.Time) (s, e time.Time, ok bool) {
	if m.WaitValid {
		return m.Start.Add(-m.Wait), m.Start, true
	}
	if !m.Start.IsZero() {
		return time.Time{}, time.Time{}, false
	}
	w0 := j.Eligible
	if !plausible(w0) {
		w0 = m.Submit
	}
	w1 := time.Time{}
	switch {
	case m.Outcome == OutcomeCancelled && !end.IsZero():
		w1 = end
	case j.End.IsZero() && openEnded(m.Outcome):
		w1 = a.now
	}
	if !w0.IsZero() && !w1.IsZero() {
		if d := w1.Sub(w0); d >= 0 && d <= maxSpan {
			return w0, w1, true
		}
	}
	return time.Time{}, time.Time{}, false
}

// addGPU folds one recorded GPU of a job that ran into its model (jobs,
// GPU-hours, waits, VRAM, energy, SM-weighted hours, XIDs), the
// utilisation distribution and the job's sums in r.
func (a *workloadAcc) addGPU(g *GPU, r *jobRun) {
	mod := a.model(g.Model)
	mod.u.JobGPUs++
	mod.sums.gpuHours.Add(r.gpuHours)
	mod.u.MemoryTotal = max(mod.u.MemoryTotal, g.MemoryTotal)
	if r.waitValid {
		a.addModelWait(r.waitStart, a.lastModelIdx, r.wait)
	}
	if g.Preallocated {
		mod.u.Preallocated++
		mod.sums.preallocated.Add(r.gpuHours)
	} else if g.VRAMPeakValid && g.MemoryTotal > 0 && g.VRAMPeak <= g.MemoryTotal {
		frac := float64(g.VRAMPeak) / float64(g.MemoryTotal)
		a.fracs = append(a.fracs, frac)
		a.fracModel = append(a.fracModel, a.lastModelIdx)
		mod.nFracs++
		bin := min(int(frac*10), 9)
		mod.u.VRAMHist[bin]++
		mod.sums.vramHist[bin].Add(r.gpuHours)
	}
	if joules, ok := energyReading(g); ok {
		e := energyOf(joules*r.eShare, r.gpuHours, r.ci, r.ciOK)
		mod.energy.add(e)
		r.energy.add(e)
	}
	if sm, ok := smReading(g); ok {
		e := effOf(r.gpuHours*sm/100, r.gpuHours)
		mod.effective.add(e)
		r.eff.add(e)
	}
	a.addXIDs(g)
	util, ok := 0.0, false
	switch {
	case usable(g.UtilMean, g.UtilMeanValid, 100):
		util, ok = g.UtilMean, true
	case g.IdleAllocation:
		ok = true // never touched: 0 %
	}
	if !ok {
		return
	}
	idle := 0.0
	switch {
	case g.IdleAllocation:
		idle = 1
	case usable(g.IdleFraction, g.IdleValid, 1):
		idle = g.IdleFraction
	case util == 0:
		idle = 1 // a mean of 0 % is every sample at 0 %
	}
	per, hours := r.per, r.hours
	r.measured += per
	r.usedRate += per * util / 100
	r.idleRate += per * idle
	mod.sums.measured.Add(per * hours)
	mod.sums.used.Add(per * util / 100 * hours)
	bin := min(int(util/10), 9)
	a.w.Util.JobGPUs[bin]++
	a.sums.utilHours[bin].Add(per * hours)
}

// addTotals adds a job's GPU-hours (allocated, used, measured, idle) to
// the headline, to its user's and account's groups (with its class), and
// to the lost states' or the cancelled jobs' tallies.
func (a *workloadAcc) addTotals(j *Job, m *Metrics, c *Config, groups [2]*groupAcc, r *jobRun) {
	allocH := m.GPUShare * r.hours
	usedH, measH, idleH := r.usedRate*r.hours, r.measured*r.hours, r.idleRate*r.hours
	a.sums.used.Add(usedH)
	a.sums.measured.Add(measH)
	a.sums.idle.Add(idleH)
	cls := classify(j, m, c, nil)
	for _, g := range groups {
		g.sums.add(allocH, usedH, measH, idleH, cls)
		g.energy.add(r.energy)
		g.effective.add(r.eff)
	}
	if li := j.State.LostIndex(); li >= 0 {
		a.lost[li].Jobs++
		a.sums.lost[li].Add(allocH)
		a.sums.lostAll.Add(allocH)
		if j.State.LostApart() {
			a.sums.timeout.Add(allocH)
		}
		groups[0].sums.lost.Add(allocH)
		groups[1].sums.lost.Add(allocH)
	} else if j.State == slurmext.StateCancelled {
		a.w.Cancelled.Jobs++
		a.sums.cancelled.Add(allocH)
	}
}
