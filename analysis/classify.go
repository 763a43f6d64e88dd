package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
)

// Class is the kind of work a job is.
type Class uint8

// Classes, in the order reports list them. Other is a job with GPU
// readings that no rule matched (say, one hour at 60 % utilisation: neither
// short nor long); Unknown is a CPU job, or a GPU job without usable GPU
// readings whose scheduler record decides no class either.
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
//  1. unknown: no GPU requested or recorded. A GPU job without a usable
//     GPU reading is classified from its scheduler record alone
//     (classifyScheduler): short_debug when short or interactive by name,
//     long_training when long, else unknown
//  2. preprocessing_io: IO wait ≥ bottlenecks.io_bound_frac while mean
//     utilisation < classes.low_util_max
//  3. idle_allocation: mean utilisation over all GPUs < classes.idle_util_max
//  4. short_debug: not an array task and ran < classes.short_job_max
//     (after 2 and 3, which a running job's readings decide already, so
//     that a job keeps the class it had while it ran when it ends)
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
//
// The rules are tried here in order and the first that holds is the
// class, so the order is the rule; read top to bottom, it is the
// classification. The longer reasons are built apart (idleReason,
// serviceReason), only when asked for.
func classify(j *Job, m *Metrics, c *Config, why *[]Reason) Class {
	cl := &c.Classes
	say := func(r Reason) {
		if why != nil {
			*why = append(*why, r)
		}
	}

	if m.GPUs == 0 {
		say(Reason{Rule: "unknown.no_gpu", Note: "no GPU requested or recorded"})
		return ClassUnknown
	}
	if m.MeasuredGPUs == 0 {
		return classifyScheduler(j, m, c, why)
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

	// Idle by SM activity where GPM measured the job's own, else by the
	// duty cycle (Metrics.Compute): the reason names the measure. This
	// rule and the IO one come before the run-time rule, which needs the
	// job's end: a job idle (or IO-bound) while it runs keeps its class
	// when it ends, however short — one rule for running and finished
	// jobs.
	if use, measure, ok := m.Compute(); ok && use < cl.IdleUtilMax {
		if why != nil {
			say(idleReason(m, measure, use, cl.IdleUtilMax))
		}
		return ClassIdleAllocation
	}

	elapsed := m.Elapsed.Seconds()
	if short(j, m, c) {
		if why != nil {
			say(Reason{Rule: "short_debug.duration", Checks: []Check{
				{MetricElapsed, elapsed, OpLT, cl.ShortJobMax.D().Seconds()},
			}})
		}
		return ClassShortDebug
	}

	if interactiveName(j.Name, cl.InteractiveNames) {
		say(Reason{Rule: "short_debug.name", Note: fmt.Sprintf("interactive job name %q", j.Name)})
		return ClassShortDebug
	}

	ran, ranOK := runTime(m)
	if ranOK && m.UtilMeanValid && ran >= cl.ServiceMinDuration.D() &&
		(!m.VRAMSteadyValid || m.VRAMSteady >= cl.ServiceSteadyMin) {
		low := m.UtilMean < cl.LowUtilMax
		bursty := m.UtilP50Valid && m.UtilP95Valid && m.UtilP95-m.UtilP50 >= cl.ServiceBurstSpread
		if low || bursty {
			if why != nil {
				say(serviceReason(m, ran, low, c))
			}
			return ClassInferenceService
		}
	}

	if ranOK && m.UtilMeanValid && ran >= cl.LongTrainingMin.D() && m.UtilMean >= cl.LowUtilMax {
		if why != nil {
			say(Reason{Rule: "long_training", Checks: []Check{
				{MetricElapsed, ran.Seconds(), OpGE, cl.LongTrainingMin.D().Seconds()},
				{MetricUtilMean, m.UtilMean, OpGE, cl.LowUtilMax},
			}, Note: stillRunning(m)})
		}
		return ClassLongTraining
	}

	if why != nil {
		say(Reason{Rule: "other", Note: otherNote(m, c)})
	}
	return ClassOther
}

// runTime is the job's run time, or for a job still running the time it
// has run so far (Metrics.SoFar): a lower bound, which the long-run rules
// can use and the short-run rule cannot.
func runTime(m *Metrics) (time.Duration, bool) {
	switch {
	case m.ElapsedValid:
		return m.Elapsed, true
	case m.Open && m.SoFar >= 0:
		return m.SoFar, true
	}
	return 0, false
}

// longRun reports whether the job ran (or has run so far) at least d.
func longRun(m *Metrics, d time.Duration) bool {
	ran, ok := runTime(m)
	return ok && ran >= d
}

// idleReason is why a job is an idle allocation: its measure of use
// (SM activity or duty cycle) under the limit, over the GPUs that have
// readings, with those no process touched.
func idleReason(m *Metrics, measure Metric, use, limit float64) Reason {
	r := Reason{Rule: "idle_allocation", Checks: []Check{
		{measure, use, OpLT, limit},
	}}
	r.Note = "over " + present.Count(m.MeasuredGPUs, "GPU", "GPUs")
	if m.MeasuredGPUs < m.GPUs {
		r.Note = fmt.Sprintf("over the %d of %d held GPUs that have readings", m.MeasuredGPUs, m.GPUs)
	}
	if m.IdleAllocatedGPUs > 0 {
		r.Note += fmt.Sprintf(", %d never touched by a process", m.IdleAllocatedGPUs)
	}
	return r
}

// serviceReason is why a job that ran ran long enough is an inference
// service: its run time, its memory steadiness where measured, and its
// low mean utilisation (low) or else its bursty one.
func serviceReason(m *Metrics, ran time.Duration, low bool, c *Config) Reason {
	cl := &c.Classes
	r := Reason{Rule: "inference_service", Checks: []Check{
		{MetricElapsed, ran.Seconds(), OpGE, cl.ServiceMinDuration.D().Seconds()},
	}, Note: stillRunning(m)}
	if m.VRAMSteadyValid {
		r.Checks = append(r.Checks, Check{MetricVRAMSteady, m.VRAMSteady, OpGE, cl.ServiceSteadyMin})
	} else {
		r.Note = joinNotes(r.Note, "memory steadiness not measured")
	}
	if low {
		r.Checks = append(r.Checks, Check{MetricUtilMean, m.UtilMean, OpLT, cl.LowUtilMax})
	} else {
		r.Checks = append(r.Checks, Check{MetricUtilSpread, m.UtilP95 - m.UtilP50, OpGE, cl.ServiceBurstSpread})
	}
	return r
}

// stillRunning notes a run time that is only a lower bound.
func stillRunning(m *Metrics) string {
	if m.ElapsedValid || !m.Open {
		return ""
	}
	return "still running: the run time so far"
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// short is the short-debugging rule's condition, which the scheduler's
// record alone decides: a run shorter than classes.short_job_max that is
// not an array task.
func short(j *Job, m *Metrics, c *Config) bool {
	return m.ElapsedValid && j.ArrayJobID == "" && m.Elapsed < c.Classes.ShortJobMax.D()
}

// classifyScheduler classifies a GPU job without a usable GPU reading
// (sacct history, a hook-only profile, readings all absurd) from what the
// scheduler recorded, so that such history still shows its short and long
// runs. It applies the rules' scheduler-view conditions in the rules'
// order:
//
//   - short_debug.duration: the same run-time test as with readings (it
//     comes before every GPU rule there, so readings could not change it);
//   - short_debug.name: an interactive job name;
//   - long_training.duration: ran ≥ classes.long_training_min. With
//     readings such a run could also be idle, IO-bound or a service; the
//     reason says that utilisation was not measured;
//   - anything else stays unknown: idle_allocation, preprocessing_io and
//     inference_service are decided by readings alone.
//
// Every reason says that the GPU readings are missing.
func classifyScheduler(j *Job, m *Metrics, c *Config, why *[]Reason) Class {
	cl := &c.Classes
	missing := "no GPU readings"
	rule := "unknown.no_data"
	if j.HasGPUData {
		missing = fmt.Sprintf("no usable GPU reading (%d ignored)", m.Notes.Total())
		rule = "unknown.bad_data"
	}
	say := func(r Reason) {
		if why != nil {
			*why = append(*why, r)
		}
	}
	elapsed := m.Elapsed.Seconds()
	switch {
	case short(j, m, c):
		if why != nil {
			say(Reason{Rule: "short_debug.duration", Checks: []Check{
				{MetricElapsed, elapsed, OpLT, cl.ShortJobMax.D().Seconds()},
			}, Note: missing + ": decided from the scheduler view alone (run time)"})
		}
		return ClassShortDebug
	case interactiveName(j.Name, cl.InteractiveNames):
		if why != nil {
			say(Reason{Rule: "short_debug.name", Note: fmt.Sprintf(
				"interactive job name %q; %s: decided from the scheduler view alone (job name), an idle session cannot be told apart", j.Name, missing)})
		}
		return ClassShortDebug
	case longRun(m, cl.LongTrainingMin.D()):
		if why != nil {
			ran, _ := runTime(m)
			say(Reason{Rule: "long_training.duration", Checks: []Check{
				{MetricElapsed, ran.Seconds(), OpGE, cl.LongTrainingMin.D().Seconds()},
			}, Note: joinNotes(stillRunning(m), missing+": decided from the scheduler view alone (run time); utilisation not measured, so an idle, IO-bound or serving run cannot be told apart")})
		}
		return ClassLongTraining
	}
	if why != nil {
		ran := "run time unknown"
		switch {
		case m.ElapsedValid && j.ArrayJobID != "" && m.Elapsed < cl.ShortJobMax.D():
			ran = "a short array task (batch work, not debugging)"
		case m.ElapsedValid:
			ran = "ran " + present.Duration(m.Elapsed) + ", neither short nor long"
		}
		note := missing + " (scheduler record only)"
		if j.HasGPUData {
			note = missing
		}
		say(Reason{Rule: rule, Note: note + ": " + ran + "; the other classes need GPU readings"})
	}
	return ClassUnknown
}

// otherNote says why no rule matched, with the numbers the rules read.
func otherNote(m *Metrics, c *Config) string {
	var parts []string
	if m.ElapsedValid {
		parts = append(parts, "ran "+present.Duration(m.Elapsed))
	} else {
		parts = append(parts, "run time unknown")
	}
	if m.UtilMeanValid {
		parts = append(parts, "mean util "+formatPercent(m.UtilMean))
	} else {
		parts = append(parts, "no utilisation readings")
	}
	if m.VRAMSteadyValid && m.VRAMSteady < c.Classes.ServiceSteadyMin {
		parts = append(parts, "memory floor "+present.Share(m.VRAMSteady)+" of the peak")
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
