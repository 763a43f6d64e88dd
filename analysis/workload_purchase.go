package analysis

import (
	"math"
	"time"
)

// What a purchaser reads beside the month's GPU-hours: the energy the GPUs
// drew, how full each model's cards were and how long the jobs on each
// model waited. SummariseWorkload fills these in the same pass as the
// rest of the Workload.

// joulesPerKWh converts the profiles' joules to kilowatt-hours.
const joulesPerKWh = 3.6e6

// Energy is GPU energy as the node agents recorded it per GPU (NVML's
// energy counter, else power × time), for the GPUs that have a reading.
// A job's energy counts in the window in proportion to the part of its
// run inside it. A GPU shared with other jobs (shards, MPS) has no reading
// (its energy belongs to several jobs), nor does a GPU from the
// scheduler's history; their GPU-hours are the unmeasured rest.
//
// KWh says nothing when MeasuredGPUHours is 0: no GPU had a reading, and
// the energy is unknown, not zero.
type Energy struct {
	// KWh is the energy of the measured GPU-hours, in kilowatt-hours.
	KWh float64 `json:"kwh"`
	// MeasuredGPUHours is the GPU-hours (clipped to the window) of the
	// GPUs with an energy reading; Coverage is it as a share (0–1) of the
	// GPU-hours allocated (of the whole, the model or the group).
	MeasuredGPUHours float64 `json:"measured_gpu_hours"`
	Coverage         float64 `json:"coverage"`
	// CO2eKg is the emissions of the energy by Input.Carbon's factor, in
	// kilograms of CO2e; absent (nil) without a factor, never a guessed
	// default. CO2eCoverage is the share (0–1) of KWh that had a factor
	// (hourly factors may miss hours); the rest has no CO2e.
	CO2eKg       *float64 `json:"co2e_kg,omitempty"`
	CO2eCoverage float64  `json:"co2e_coverage,omitempty"`
}

// Known reports whether any GPU-hour had an energy reading.
func (e Energy) Known() bool { return e.MeasuredGPUHours > 0 }

// energyAcc sums joules and the GPU-hours they were drawn in, exactly
// (ExactSum): the same in every order of the jobs.
type energyAcc struct {
	joules, hours ExactSum
	// grams of CO2e of joulesCO2, the joules that had a factor.
	grams, joulesCO2 ExactSum
}

// energyOf is one GPU's energy: joules drawn in hours GPU-hours, with
// their CO2e at ci grams per kWh when ciOK.
func energyOf(joules, hours, ci float64, ciOK bool) energyAcc {
	var e energyAcc
	e.joules.Add(joules)
	e.hours.Add(hours)
	if ciOK {
		e.grams.Add(joules / joulesPerKWh * ci)
		e.joulesCO2.Add(joules)
	}
	return e
}

func (e *energyAcc) add(o energyAcc) {
	e.joules.AddSum(o.joules)
	e.hours.AddSum(o.hours)
	e.grams.AddSum(o.grams)
	e.joulesCO2.AddSum(o.joulesCO2)
}

// energy returns the summary of e against allocated GPU-hours.
func (e energyAcc) energy(allocated float64) Energy {
	hours, joules, joulesCO2 := e.hours.Float(), e.joules.Float(), e.joulesCO2.Float()
	if !(hours > 0) {
		return Energy{}
	}
	out := Energy{KWh: joules / joulesPerKWh, MeasuredGPUHours: hours}
	if allocated > 0 {
		out.Coverage = min(1, hours/allocated)
	}
	if joulesCO2 > 0 {
		kg := e.grams.Float() / 1000
		out.CO2eKg = &kg
		out.CO2eCoverage = min(1, joulesCO2/joules)
	}
	return out
}

// energyReading returns a GPU's recorded energy in joules when it is
// usable: present, finite and not negative.
func energyReading(g *GPU) (float64, bool) {
	return g.EnergyJ, usable(g.EnergyJ, g.EnergyValid, math.MaxFloat64)
}

// inWindowShare is the part of a job's recorded run that the window
// counts: its counted time over the whole run (the elapsed time, or for a
// job still running the time from its start to now, the time of the
// analysis, where known, else to the end of counting). It scales
// quantities recorded over the whole run, such as energy. 1 when the
// run's length is unknown or 0.
func inWindowShare(m *Metrics, countedNs int64, now time.Time) float64 {
	whole := int64(0)
	switch {
	case m.ElapsedValid:
		whole = int64(m.Elapsed)
	case m.Open && !now.IsZero() && now.After(m.Start):
		whole = int64(now.Sub(m.Start))
	case m.Open:
		whole = int64(m.SoFar)
	}
	if whole <= 0 || countedNs >= whole {
		return 1
	}
	return float64(countedNs) / float64(whole)
}

// modelWait is one job's queue wait on one GPU model it ran on.
type modelWait struct {
	model int32
	wait  float64 // seconds
}

// addModelWait records the job's wait for model i once: the job's own
// records are the tail of a.modelWaits from start.
func (a *workloadAcc) addModelWait(start int, i int32, wait float64) {
	for _, r := range a.modelWaits[start:] {
		if r.model == i {
			return
		}
	}
	a.modelWaits = append(a.modelWaits, modelWait{i, wait})
}

// modelWaitDists returns each model's wait distribution, by model index.
func (a *workloadAcc) modelWaitDists() []Dist {
	n := make([]int, len(a.models)+1)
	for _, r := range a.modelWaits {
		n[r.model+1]++
	}
	for i := 1; i < len(n); i++ {
		n[i] += n[i-1]
	}
	buf := make([]float64, len(a.modelWaits))
	next := append([]int(nil), n[:len(a.models)]...)
	for _, r := range a.modelWaits {
		buf[next[r.model]] = r.wait
		next[r.model]++
	}
	out := make([]Dist, len(a.models))
	for i := range out {
		out[i] = distOf(buf[n[i]:n[i+1]])
	}
	return out
}

// inventory returns the GPUs of the plausible nodes (a GPU count ≤ 0 or
// over maxJobGPUs is a parsing error) and their count per named model.
func inventory(nodes []Node) (gpus int, byModel map[string]int) {
	byModel = map[string]int{}
	for _, n := range nodes {
		if n.GPUs <= 0 || n.GPUs > maxJobGPUs {
			continue
		}
		gpus += n.GPUs
		if n.GPUModel != "" {
			byModel[n.GPUModel] += n.GPUs
		}
	}
	return gpus, byModel
}

// gpuWaits returns the waits of the GPU jobs.
func (a *workloadAcc) gpuWaits() []float64 {
	out := make([]float64, 0, len(a.waits))
	for _, r := range a.waits {
		if r.gpu {
			out = append(out, r.wait)
		}
	}
	return out
}
