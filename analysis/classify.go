package analysis

import (
	"fmt"
	"strings"

	"github.com/gpuprof/gpuprof/profile"
)

// Class is the kind of work a job is.
type Class uint8

// Classes, in the order reports list them. Other is a job with GPU
// readings that no rule matched (say, one hour at 60 % utilisation: neither
// short nor long); Unknown has no usable GPU readings at all.
const (
	ClassUnknown Class = iota
	ClassLongTraining
	ClassShortDebug
	ClassInferenceService
	ClassPreprocessingIO
	ClassIdleAllocation
	ClassOther
	numClasses
)

var classNames = [numClasses]string{
	"unknown", "long_training", "short_debug", "inference_service",
	"preprocessing_io", "idle_allocation", "other",
}

// Classes returns every class in report order.
func Classes() []Class {
	cs := make([]Class, numClasses)
	for i := range cs {
		cs[i] = Class(i)
	}
	return cs
}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// MarshalText implements encoding.TextMarshaler: the class's name.
func (c Class) MarshalText() ([]byte, error) {
	if c >= numClasses {
		return nil, fmt.Errorf("marshal class %d: out of range", uint8(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("unknown class %q", b)
}

// Classify returns the job's class and the reasons for it. The rules are
// tried in order and the first that matches decides (docs/analysis.md):
//
//  1. unknown: no GPU requested or recorded, no GPU readings, or none usable
//  2. short_debug: not an array task and ran < classes.short_job_max
//  3. preprocessing_io: IO wait ≥ bottlenecks.io_bound_frac while mean
//     utilisation < classes.low_util_max
//  4. idle_allocation: mean utilisation over all GPUs < classes.idle_util_max
//  5. short_debug: the job name is one of classes.interactive_names
//  6. inference_service: ran ≥ classes.service_min_duration, memory floor
//     ≥ classes.service_steady_min of the peak (where measured), and mean
//     utilisation < classes.low_util_max or p95 − p50 ≥
//     classes.service_burst_spread
//  7. long_training: ran ≥ classes.long_training_min and mean utilisation
//     ≥ classes.low_util_max
//  8. other
func Classify(j Job, c Config) (Class, []Reason) {
	var m Metrics
	measure(&j, &c, &m)
	var why []Reason
	cls := classify(&j, &m, &c, &why)
	return cls, why
}

// classify applies the rules to measured metrics. why, when not nil,
// receives the reasons; the bulk paths pass nil and allocate nothing.
func classify(j *Job, m *Metrics, c *Config, why *[]Reason) Class {
	cl := &c.Classes
	say := func(r Reason) {
		if why != nil {
			*why = append(*why, r)
		}
	}

	switch {
	case m.GPUs == 0:
		say(Reason{Rule: "unknown.no_gpu", Note: "no GPU requested or recorded"})
		return ClassUnknown
	case !j.HasGPUData:
		say(Reason{Rule: "unknown.no_data", Note: "no GPU readings (scheduler record only)"})
		return ClassUnknown
	case m.MeasuredGPUs == 0:
		say(Reason{Rule: "unknown.bad_data", Note: fmt.Sprintf("no usable GPU reading (%d ignored)", m.Notes.Total())})
		return ClassUnknown
	}

	elapsed := m.Elapsed.Seconds()
	if m.ElapsedValid && j.ArrayJobID == "" && m.Elapsed < cl.ShortJobMax.D() {
		if why != nil {
			say(Reason{Rule: "short_debug.duration", Checks: []Check{
				{MetricElapsed, elapsed, OpLT, cl.ShortJobMax.D().Seconds()},
			}})
		}
		return ClassShortDebug
	}

	if ioBound(m, c) {
		if why != nil {
			say(Reason{Rule: "preprocessing_io", Checks: []Check{
				{MetricIOWait, m.IOWait, OpGE, c.Bottlenecks.IOBoundFrac},
				{MetricUtilMean, m.UtilMean, OpLT, cl.LowUtilMax},
			}, Note: "IO wait measured per " + m.IOScope})
		}
		return ClassPreprocessingIO
	}

	if m.UtilMeanValid && m.UtilMean < cl.IdleUtilMax {
		if why != nil {
			r := Reason{Rule: "idle_allocation", Checks: []Check{
				{MetricUtilMean, m.UtilMean, OpLT, cl.IdleUtilMax},
			}}
			r.Note = fmt.Sprintf("over %d GPU(s)", m.MeasuredGPUs)
			if m.MeasuredGPUs < m.GPUs {
				r.Note = fmt.Sprintf("over the %d of %d held GPUs that have readings", m.MeasuredGPUs, m.GPUs)
			}
			if m.IdleAllocatedGPUs > 0 {
				r.Note += fmt.Sprintf(", %d never touched by a process", m.IdleAllocatedGPUs)
			}
			say(r)
		}
		return ClassIdleAllocation
	}

	if interactiveName(j.Name, cl.InteractiveNames) {
		say(Reason{Rule: "short_debug.name", Note: fmt.Sprintf("interactive job name %q", j.Name)})
		return ClassShortDebug
	}

	if m.ElapsedValid && m.UtilMeanValid && m.Elapsed >= cl.ServiceMinDuration.D() &&
		(!m.VRAMSteadyValid || m.VRAMSteady >= cl.ServiceSteadyMin) {
		low := m.UtilMean < cl.LowUtilMax
		bursty := m.UtilP50Valid && m.UtilP95Valid && m.UtilP95-m.UtilP50 >= cl.ServiceBurstSpread
		if low || bursty {
			if why != nil {
				r := Reason{Rule: "inference_service", Checks: []Check{
					{MetricElapsed, elapsed, OpGE, cl.ServiceMinDuration.D().Seconds()},
				}}
				if m.VRAMSteadyValid {
					r.Checks = append(r.Checks, Check{MetricVRAMSteady, m.VRAMSteady, OpGE, cl.ServiceSteadyMin})
				} else {
					r.Note = "memory steadiness not measured"
				}
				if low {
					r.Checks = append(r.Checks, Check{MetricUtilMean, m.UtilMean, OpLT, cl.LowUtilMax})
				} else {
					r.Checks = append(r.Checks, Check{MetricUtilSpread, m.UtilP95 - m.UtilP50, OpGE, cl.ServiceBurstSpread})
				}
				say(r)
			}
			return ClassInferenceService
		}
	}

	if m.ElapsedValid && m.UtilMeanValid && m.Elapsed >= cl.LongTrainingMin.D() && m.UtilMean >= cl.LowUtilMax {
		if why != nil {
			say(Reason{Rule: "long_training", Checks: []Check{
				{MetricElapsed, elapsed, OpGE, cl.LongTrainingMin.D().Seconds()},
				{MetricUtilMean, m.UtilMean, OpGE, cl.LowUtilMax},
			}})
		}
		return ClassLongTraining
	}

	if why != nil {
		say(Reason{Rule: "other", Note: otherNote(m, c)})
	}
	return ClassOther
}

// otherNote says why no rule matched, with the numbers the rules read.
func otherNote(m *Metrics, c *Config) string {
	var parts []string
	if m.ElapsedValid {
		parts = append(parts, "ran "+FormatDuration(m.Elapsed))
	} else {
		parts = append(parts, "run time unknown")
	}
	if m.UtilMeanValid {
		parts = append(parts, "mean util "+formatPercent(m.UtilMean))
	} else {
		parts = append(parts, "no utilisation readings")
	}
	if m.VRAMSteadyValid && m.VRAMSteady < c.Classes.ServiceSteadyMin {
		parts = append(parts, "memory floor "+formatFraction(m.VRAMSteady)+" of the peak")
	}
	return "no rule matched: " + strings.Join(parts, ", ")
}

// ioBound is the IO-bound test shared by the preprocessing_io class and the
// io_bound bottleneck: the job waited on IO while its GPUs waited too.
func ioBound(m *Metrics, c *Config) bool {
	if !m.IOWaitValid || !m.UtilMeanValid {
		return false
	}
	if m.IOScope == profile.IOScopeNode && !c.Bottlenecks.IONodeScope {
		return false
	}
	return m.IOWait >= c.Bottlenecks.IOBoundFrac && m.UtilMean < c.Classes.LowUtilMax
}

func interactiveName(name string, names []string) bool {
	if name == "" {
		return false
	}
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}
