package analysis

import (
	"cmp"
	"slices"
)

// What the month's GPU-hours did beyond being allocated: GPU-hours
// weighted by GPM's SM activity ("effective GPU-hours"), and the XID
// errors of each GPU, the hardware's apart from the programs'.
// SummariseWorkload fills these in the same pass as the rest.

// Effective is GPU-hours weighted by SM activity (GPM: the share of the
// SMs busy, not the duty cycle): an hour of a GPU whose SMs were 40 %
// active counts 0.4. Only GPUs GPM measured as the job's own count (a
// GPU without GPM, an older profile, a shared GPU whose activity is the
// whole device's are the unmeasured rest).
//
// GPUHours says nothing when MeasuredGPUHours is 0: no GPU had GPM, and
// the effective GPU-hours are unknown, not zero.
type Effective struct {
	// GPUHours is the measured GPU-hours × their SM activity.
	GPUHours float64 `json:"gpu_hours"`
	// MeasuredGPUHours is the GPU-hours (clipped to the window) with SM
	// activity; Coverage is it as a share (0–1) of the GPU-hours
	// allocated (of the whole, the model or the group).
	MeasuredGPUHours float64 `json:"measured_gpu_hours"`
	Coverage         float64 `json:"coverage"`
}

// Known reports whether any GPU-hour had SM activity.
func (e Effective) Known() bool { return e.MeasuredGPUHours > 0 }

// effAcc sums SM-weighted GPU-hours and the GPU-hours measured, exactly
// (ExactSum): the same in every order of the jobs.
type effAcc struct {
	effective, hours ExactSum
}

// effOf is one GPU's SM-weighted GPU-hours of hours measured.
func effOf(effective, hours float64) effAcc {
	var e effAcc
	e.effective.Add(effective)
	e.hours.Add(hours)
	return e
}

func (e *effAcc) add(o effAcc) {
	e.effective.AddSum(o.effective)
	e.hours.AddSum(o.hours)
}

func (e effAcc) summary(allocated float64) Effective {
	hours := e.hours.Float()
	if !(hours > 0) {
		return Effective{}
	}
	out := Effective{GPUHours: e.effective.Float(), MeasuredGPUHours: hours}
	if allocated > 0 {
		out.Coverage = min(1, hours/allocated)
	}
	return out
}

// smReading returns a GPU's mean SM activity (percent) when it is the
// job's own and usable: GPM measured it, not on a shared GPU.
func smReading(g *GPU) (float64, bool) {
	if g.ActivityScope == "shared_gpu" {
		return 0, false
	}
	return g.SMMean, usable(g.SMMean, g.ActivityValid, 100)
}

// XIDs counts the XID errors of the window's jobs by class
// (gpu.XIDInfo.Class), and per GPU: a GPU with hardware XIDs in several
// jobs is a failing card, whatever the jobs ran; application XIDs are the
// programs' own. A job's XIDs count in each window its run touches.
type XIDs struct {
	Hardware    int `json:"hardware"`
	Application int `json:"application"` // with the unclassified codes
	// GPUs lists every GPU with an XID, most hardware XIDs first (then
	// node, then UUID).
	GPUs []GPUXIDs `json:"gpus"`
}

// GPUXIDs is one GPU's XIDs in the window.
type GPUXIDs struct {
	Node        string `json:"node"`
	UUID        string `json:"uuid"`
	Model       string `json:"model"`
	Hardware    int    `json:"hardware"`
	Application int    `json:"application"`
	// HardwareJobs is how many jobs saw a hardware XID on it.
	HardwareJobs int `json:"hardware_jobs"`
}

// addXIDs counts one job GPU's XIDs.
func (a *workloadAcc) addXIDs(g *GPU) {
	if g.XIDs <= 0 {
		return
	}
	hw := min(g.XIDsHardware, g.XIDs)
	a.w.XIDs.Hardware += hw
	a.w.XIDs.Application += g.XIDs - hw
	key := g.Node + "\x00" + g.UUID
	if a.xidIndex == nil {
		a.xidIndex = map[string]int{}
	}
	i, ok := a.xidIndex[key]
	if !ok {
		i = len(a.w.XIDs.GPUs)
		a.xidIndex[key] = i
		a.w.XIDs.GPUs = append(a.w.XIDs.GPUs, GPUXIDs{Node: g.Node, UUID: g.UUID, Model: g.Model})
	}
	x := &a.w.XIDs.GPUs[i]
	x.Hardware += hw
	x.Application += g.XIDs - hw
	if hw > 0 {
		x.HardwareJobs++
	}
}

// finishXIDs orders the GPUs: most hardware XIDs first.
func (w *Workload) finishXIDs() {
	if w.XIDs.GPUs == nil {
		w.XIDs.GPUs = []GPUXIDs{}
	}
	slices.SortFunc(w.XIDs.GPUs, func(x, y GPUXIDs) int {
		return cmp.Or(cmp.Compare(y.Hardware, x.Hardware), cmp.Compare(y.Application, x.Application),
			cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID))
	})
}
