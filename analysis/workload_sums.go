package analysis

// The workload summary's sums over jobs, exact (ExactSum), so that each
// is the same in every order the jobs come in: the pass adds to them,
// and settle writes each total into the workload, rounded once, before
// finish reads them (ratios, shares, sorting).

// workloadSums are the window's sums over jobs.
type workloadSums struct {
	used, measured, idle ExactSum // Headline's GPU-hours
	utilHours            [10]ExactSum
	lost                 [numLost]ExactSum
	lostAll, timeout     ExactSum
	cancelled            ExactSum
}

// groupSums are one user's or account's sums over jobs.
type groupSums struct {
	alloc, used, measured, idle, lost ExactSum
	classHours                        [numClasses]ExactSum
}

// add adds one job's GPU-hours, allocated in class cls.
func (g *groupSums) add(alloc, used, measured, idle float64, cls Class) {
	g.alloc.Add(alloc)
	g.used.Add(used)
	g.measured.Add(measured)
	g.idle.Add(idle)
	g.classHours[cls].Add(alloc)
}

// modelSums are one GPU model's sums over job GPUs.
type modelSums struct {
	gpuHours, preallocated, measured, used ExactSum
	vramHist                               [10]ExactSum
}

// settle writes every sum into a's workload, groups and models.
func (a *workloadAcc) settle() {
	s, h := &a.sums, &a.w.Headline
	h.UsedGPUHours, h.MeasuredGPUHours, h.IdleGPUHours = s.used.Float(), s.measured.Float(), s.idle.Float()
	for i := range s.utilHours {
		a.w.Util.GPUHours[i] = s.utilHours[i].Float()
	}
	for i := range s.lost {
		a.lost[i].GPUHours = s.lost[i].Float()
	}
	a.w.LostGPUHours, a.w.TimeoutGPUHours, a.w.Cancelled.GPUHours = s.lostAll.Float(), s.timeout.Float(), s.cancelled.Float()
	for _, set := range []*groupSet{&a.users, &a.accounts} {
		for i := range set.groups {
			g := &set.groups[i]
			g.alloc, g.used, g.measured, g.idle, g.lost = g.sums.alloc.Float(), g.sums.used.Float(), g.sums.measured.Float(), g.sums.idle.Float(), g.sums.lost.Float()
			for k := range g.classHours {
				g.classHours[k] = g.sums.classHours[k].Float()
			}
		}
	}
	for i := range a.models {
		m := &a.models[i]
		m.u.GPUHours, m.u.PreallocatedGPUHours = m.sums.gpuHours.Float(), m.sums.preallocated.Float()
		m.measured, m.used = m.sums.measured.Float(), m.sums.used.Float()
		for k := range m.sums.vramHist {
			m.u.VRAMHistGPUHours[k] = m.sums.vramHist[k].Float()
		}
	}
}
