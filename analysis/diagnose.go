package analysis

import (
	"encoding/json"
	"fmt"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Kind is a kind of bottleneck.
type Kind uint8

// Bottleneck kinds, in report order.
//
// HostMemoryBound is Slurm's OUT_OF_MEMORY state: the job's cgroup hit its
// host-memory limit (--mem). It is not a GPU out-of-memory error — CUDA
// reports that to the program, which then exits as FAILED — so it is kept
// apart from VRAMBound, whose evidence is the GPU memory peak.
const (
	KindVRAMBound Kind = iota
	KindHostMemoryBound
	KindComputeBound
	KindIOBound
	KindUnderused
	KindQueueBound
	// KindLowSMActivity: the duty cycle says busy, GPM's SM activity says
	// the kernels used few of the SMs.
	KindLowSMActivity
	numKinds
)

var kindNames = [numKinds]string{
	"vram_bound", "host_memory_bound", "compute_bound", "io_bound", "underused", "queue_bound",
	"low_sm_activity",
}

// AllKinds returns every bottleneck kind in report order.
func AllKinds() []Kind {
	ks := make([]Kind, numKinds)
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText implements encoding.TextMarshaler: the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if k >= numKinds {
		return nil, fmt.Errorf("marshal bottleneck kind %d: out of range", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown bottleneck kind %q", b)
}

// Kinds is a set of bottleneck kinds: the compact per-job result of the
// bulk paths.
type Kinds uint16

// Has reports whether k is in the set.
func (s Kinds) Has(k Kind) bool { return k < numKinds && s&(1<<k) != 0 }

// With returns the set with k added.
func (s Kinds) With(k Kind) Kinds { return s | 1<<k }

// List returns the kinds in the set, in report order.
func (s Kinds) List() []Kind {
	var ks []Kind
	for k := range numKinds {
		if s.Has(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// MarshalJSON writes the set as a list of names.
func (s Kinds) MarshalJSON() ([]byte, error) {
	ks := s.List()
	if ks == nil {
		ks = []Kind{}
	}
	return json.Marshal(ks)
}

// Bottleneck is one diagnosis of a job, with its evidence.
type Bottleneck struct {
	Kind   Kind   `json:"kind"`
	Reason Reason `json:"reason"`
}

// Diagnose returns every bottleneck the job shows, in report order, each
// with the rule and numbers that found it (docs/analysis.md):
//
//   - vram_bound: a GPU's memory peak ≥ bottlenecks.vram_bound_frac of its
//     card; a preallocated peak does not count (it is a reservation)
//   - host_memory_bound: Slurm state OUT_OF_MEMORY
//   - compute_bound: median utilisation ≥ bottlenecks.compute_bound_util;
//     where GPM measured the job's SM activity, its mean instead
//   - io_bound: IO wait ≥ bottlenecks.io_bound_frac while mean utilisation
//     < classes.low_util_max
//   - underused: at least one held GPU unused (idle allocation, or mean
//     utilisation < classes.idle_util_max)
//   - queue_bound: waited ≥ bottlenecks.queue_bound_ratio × its run time
//     and ≥ bottlenecks.queue_bound_min_wait
//   - low_sm_activity: mean duty cycle ≥ bottlenecks.low_sm_util_min and
//     mean SM activity (GPM, every measured GPU the job's own) <
//     bottlenecks.low_sm_ratio × the duty cycle
func Diagnose(j Job, c Config) []Bottleneck {
	var m Metrics
	measure(&j, &c, &m)
	var out []Bottleneck
	diagnose(&j, &m, &c, &out)
	return out
}

// diagnose applies the bottleneck rules; out, when not nil, receives the
// evidence. The bulk paths pass nil and use the returned set.
func diagnose(j *Job, m *Metrics, c *Config, out *[]Bottleneck) Kinds {
	b := &c.Bottlenecks
	var set Kinds
	found := func(k Kind, r Reason) {
		set = set.With(k)
		if out != nil {
			*out = append(*out, Bottleneck{Kind: k, Reason: r})
		}
	}

	if m.VRAMPeakValid && m.VRAMPeakFrac >= b.VRAMBoundFrac {
		r := Reason{Rule: "vram_bound.peak"}
		if out != nil {
			r.Checks = []Check{{MetricVRAMPeakFrac, m.VRAMPeakFrac, OpGE, b.VRAMBoundFrac}}
			r.Note = fmt.Sprintf("%s of %s", present.GiB(m.VRAMPeak)+" GiB", present.GiB(m.VRAMCard)+" GiB")
			if m.VRAMModel != "" {
				r.Note += " on " + m.VRAMModel
			}
		}
		found(KindVRAMBound, r)
	}
	if j.State == slurmext.StateOutOfMemory {
		found(KindHostMemoryBound, Reason{Rule: "host_memory_bound",
			Note: "state OUT_OF_MEMORY: the host-memory limit (--mem), not GPU memory"})
	}
	if use, measure, ok := m.Compute(); measure == MetricSMMean {
		if ok && use >= b.ComputeBoundUtil {
			r := Reason{Rule: "compute_bound.sm"}
			if out != nil {
				r.Checks = []Check{{MetricSMMean, use, OpGE, b.ComputeBoundUtil}}
			}
			found(KindComputeBound, r)
		}
	} else if m.UtilP50Valid && m.UtilP50 >= b.ComputeBoundUtil {
		r := Reason{Rule: "compute_bound"}
		if out != nil {
			r.Checks = []Check{{MetricUtilP50, m.UtilP50, OpGE, b.ComputeBoundUtil}}
		}
		found(KindComputeBound, r)
	}
	if ioBound(m, c) {
		r := Reason{Rule: "io_bound"}
		if out != nil {
			r.Checks = []Check{
				{MetricIOWait, m.IOWait, OpGE, b.IOBoundFrac},
				{MetricUtilMean, m.UtilMean, OpLT, c.Classes.LowUtilMax},
			}
			r.Note = "IO wait measured per " + m.IOScope
		}
		found(KindIOBound, r)
	}
	if m.UnusedGPUs > 0 {
		r := Reason{Rule: "underused"}
		if out != nil {
			r.Checks = []Check{{MetricUnusedGPUs, float64(m.UnusedGPUs), OpGE, 1}}
			what := "mean util"
			if _, measure, _ := m.Compute(); measure == MetricSMMean {
				what = "mean SM activity"
			}
			r.Note = fmt.Sprintf("%d of %s unused (%s < %s or never touched)",
				m.UnusedGPUs, present.Count(m.GPUs, "GPU", "GPUs"), what, formatPercent(c.Classes.IdleUtilMax))
		}
		found(KindUnderused, r)
	}
	if m.WaitValid && m.ElapsedValid && m.Wait >= b.QueueBoundMinWait.D() &&
		m.Wait.Seconds() >= b.QueueBoundRatio*m.Elapsed.Seconds() {
		r := Reason{Rule: "queue_bound"}
		if out != nil {
			if m.Elapsed > 0 {
				r.Checks = append(r.Checks, Check{MetricWaitRatio, m.Wait.Seconds() / m.Elapsed.Seconds(), OpGE, b.QueueBoundRatio})
			} else {
				r.Note = "ran 00:00:00"
			}
			r.Checks = append(r.Checks, Check{MetricWait, m.Wait.Seconds(), OpGE, b.QueueBoundMinWait.D().Seconds()})
		}
		found(KindQueueBound, r)
	}
	if lowSMActivity(m, c) {
		r := Reason{Rule: "low_sm_activity"}
		if out != nil {
			r.Checks = []Check{
				{MetricUtilMean, m.UtilMean, OpGE, b.LowSMUtilMin},
				{MetricSMMean, m.SMMean, OpLT, b.LowSMRatio * m.UtilMean},
			}
			r.Note = fmt.Sprintf("kernels keep the GPU nominally busy but use %s of its SMs: small batches, launch-bound or CPU-bound input",
				formatActivity(m.SMMean))
		}
		found(KindLowSMActivity, r)
	}
	return set
}

// lowSMActivity is the low_sm_activity test: a duty cycle that says busy
// and an SM activity, measured on every measured GPU as the job's own,
// that says the kernels used few of the SMs.
func lowSMActivity(m *Metrics, c *Config) bool {
	_, measure, _ := m.Compute()
	b := &c.Bottlenecks
	return measure == MetricSMMean && m.UtilMeanValid && m.UtilMean >= b.LowSMUtilMin &&
		m.SMMean < b.LowSMRatio*m.UtilMean
}
