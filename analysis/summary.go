package analysis

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// RanJob is the one rule of which jobs are runs: a job that started. A job
// that never started (cancelled while pending, or still pending) has no
// run time, no outcome of a run and no GPU-hours; the class and bottleneck
// tables, the task profiles and their failure rates count runs only.
func RanJob(m *Metrics) bool { return !m.Start.IsZero() }

// ClusterSummary is the cluster-level view of a set of jobs.
type ClusterSummary struct {
	// Jobs are the jobs given that are the window's (their life overlaps
	// it; all of them without a window): the workload's Headline.Jobs.
	Jobs int `json:"jobs"`
	// CPUJobs neither requested nor recorded a GPU; they are counted here
	// and nowhere else.
	CPUJobs int `json:"cpu_jobs"`
	GPUJobs int `json:"gpu_jobs"`
	// NeverStarted are the GPU jobs that never started (cancelled while
	// pending, still pending): counted in GPUJobs, but not runs, so in no
	// class, bottleneck or task (the one rule of what a run is, RanJob).
	NeverStarted int `json:"never_started"`
	// WithGPUData and WithoutGPUData split the GPU jobs: usable GPU
	// readings, or none (sacct history, hook-only profiles, readings all
	// absurd: class unknown).
	WithGPUData    int `json:"with_gpu_data"`
	WithoutGPUData int `json:"without_gpu_data"`
	// BySMActivity and ByDutyCycle split the jobs with GPU data by the
	// measure the idle and compute rules read (Metrics.Compute): GPM's SM
	// activity on every measured GPU as the job's own, else NVML's duty
	// cycle (the share of time any kernel ran), which cannot tell busy SMs
	// from a GPU kept nominally busy by small kernels.
	BySMActivity int `json:"by_sm_activity"`
	ByDutyCycle  int `json:"by_duty_cycle"`
	// GPUHours is Metrics.GPUHours summed over GPU jobs: counted inside
	// the window (Findings.Counting), shard jobs by their share.
	GPUHours float64 `json:"gpu_hours"`

	// ByClass has every class, in report order. ByBottleneck has every
	// kind; a job with several bottlenecks counts under each, so the
	// GPU-hours there add up to more than the total.
	ByClass      []ClassShare `json:"by_class"`
	ByBottleneck []KindShare  `json:"by_bottleneck"`

	// Partitions are ordered by name ("" for jobs without one).
	Partitions []PartitionSummary `json:"partitions"`

	// Notes counts readings ignored as impossible, over all jobs.
	Notes            DataNotes `json:"data_notes"`
	PercentileMethod string    `json:"percentile_method"`
}

// PartitionSummary is queueing and time-limit accuracy in one partition.
type PartitionSummary struct {
	Partition string  `json:"partition"`
	Jobs      int     `json:"jobs"`
	GPUHours  float64 `json:"gpu_hours"`
	// Wait is the distribution of waits (start − eligible, else submit),
	// seconds, over jobs where both are known.
	Wait Dist `json:"wait_s"`
	// Run is the distribution of run times (end − start), seconds, over
	// the partition's jobs (GPU jobs, as Jobs) whose run time is known and
	// plausible: the work the Wait was spent queueing for.
	Run Dist `json:"run_s"`
	// LimitRatio is the distribution of requested time limit / run time
	// over COMPLETED and TIMEOUT jobs with a finite limit that ran at least
	// summary.limit_min_run: 1 is a perfect request, 10 asked for ten
	// times the run time. Failed and cancelled runs do not say what limit
	// the work needed.
	LimitRatio Dist `json:"limit_ratio"`
	// NoLimit counts the jobs LimitRatio would be over that had no time
	// limit (UNLIMITED, or one of NoLimitFrom or more): no ratio, as
	// there is no request to measure.
	NoLimit int `json:"no_limit"`
}

// NoLimitFrom is the time limit taken for none: a year or more is what a
// cluster without limits gives its jobs (a partition's MaxTime of
// 365-00:00:00 stands in for INFINITE), and no request of the work's.
const NoLimitFrom = 365 * 24 * time.Hour

// Summarise returns the cluster summary of jobs, their whole runs counted
// (the data's own window); SummariseInput counts a window.
func Summarise(jobs []Job, c Config) ClusterSummary {
	return SummariseInput(Input{Jobs: jobs}, c)
}

// SummariseInput returns the cluster summary of in's jobs with GPU time
// counted as Analyse counts it (in.Window, in.Now, in.Nodes' shards): the
// same numbers as Analyse's Summary, without the rest of the analysis.
func SummariseInput(in Input, c Config) ClusterSummary {
	jobs := in.Jobs
	s := newSummaryAcc(len(jobs))
	k := newCounter(&in, c.Counting.shardsPerGPU())
	var m Metrics
	for i := range jobs {
		j := &jobs[i]
		measure(j, &c, &m)
		k.count(j, &m)
		if !k.touches(j, &m) {
			continue // not the window's job
		}
		s.add(j, &m, &c, classify(j, &m, &c, nil), diagnose(j, &m, &c, nil))
	}
	return s.finish()
}

// summaryAcc accumulates the summary. Like profileAcc, it keeps each
// job's distribution values in a compact record and scatters them into
// flat per-partition segments at the end, rather than growing a slice per
// partition.
// GPU time is added exactly (gpuTime), so that no figure depends on the
// order the jobs came in.
type summaryAcc struct {
	s         ClusterSummary
	gpuTime   gpuTime
	classJobs [numClasses]int
	classTime [numClasses]gpuTime
	kindJobs  [numKinds]int
	kindTime  [numKinds]gpuTime
	index     map[string]int32
	parts     []partAcc
	recs      []partRec
}

type partAcc struct {
	name                  string
	jobs                  int
	gpuTime               gpuTime
	nWait, nRatios, nRuns int
	noLimit               int
}

// Flags of partRec.has.
const (
	recWait = 1 << iota
	recRatio
	recRun
)

type partRec struct {
	part             int32
	has              uint8
	wait, ratio, run float64
}

func newSummaryAcc(n int) *summaryAcc {
	return &summaryAcc{index: make(map[string]int32), recs: make([]partRec, 0, n)}
}

func (a *summaryAcc) add(j *Job, m *Metrics, c *Config, cls Class, kinds Kinds) {
	a.s.Jobs++
	a.s.Notes.Add(m.Notes)
	if m.GPUs == 0 {
		a.s.CPUJobs++
		return
	}
	a.s.GPUJobs++
	if !RanJob(m) {
		a.s.NeverStarted++
		a.s.WithoutGPUData++
		return
	}
	// Readings, not the class, decide: a class can come from the
	// scheduler view alone (sacct history).
	if m.MeasuredGPUs > 0 || m.IdleAllocatedGPUs > 0 {
		a.s.WithGPUData++
		if _, measure, _ := m.Compute(); measure == MetricSMMean {
			a.s.BySMActivity++
		} else {
			a.s.ByDutyCycle++
		}
	} else {
		a.s.WithoutGPUData++
	}
	a.gpuTime.add(m.gpuTime)
	a.classJobs[cls]++
	a.classTime[cls].add(m.gpuTime)
	for k := range numKinds {
		if kinds.Has(k) {
			a.kindJobs[k]++
			a.kindTime[k].add(m.gpuTime)
		}
	}

	pi, ok := a.index[j.Partition]
	if !ok {
		pi = int32(len(a.parts))
		a.index[j.Partition] = pi
		a.parts = append(a.parts, partAcc{name: j.Partition})
	}
	p := &a.parts[pi]
	p.jobs++
	p.gpuTime.add(m.gpuTime)
	r := partRec{part: pi}
	if m.WaitValid {
		r.has |= recWait
		r.wait = m.Wait.Seconds()
		p.nWait++
	}
	if m.ElapsedValid {
		r.has |= recRun
		r.run = m.Elapsed.Seconds()
		p.nRuns++
	}
	ratioJob := m.ElapsedValid && m.Elapsed > 0 && m.Elapsed >= c.Summary.LimitMinRun.D() &&
		(m.Outcome == OutcomeCompleted || m.Outcome == OutcomeTimeout)
	if ratioJob && (j.Unlimited || j.TimeLimit >= NoLimitFrom) {
		p.noLimit++
	}
	if j.TimeLimit > 0 && !j.Unlimited && j.TimeLimit < NoLimitFrom && ratioJob {
		r.has |= recRatio
		r.ratio = j.TimeLimit.Seconds() / m.Elapsed.Seconds()
		p.nRatios++
	}
	if r.has != 0 {
		a.recs = append(a.recs, r)
	}
}

func (a *summaryAcc) finish() ClusterSummary {
	s := a.s
	s.PercentileMethod = PercentileMethod
	s.GPUHours = a.gpuTime.hours()
	s.ByClass = make([]ClassShare, numClasses)
	for cls := range numClasses {
		s.ByClass[cls] = ClassShare{Class: cls, Jobs: a.classJobs[cls], GPUHours: a.classTime[cls].hours()}
	}
	s.ByBottleneck = make([]KindShare, numKinds)
	for k := range numKinds {
		s.ByBottleneck[k] = KindShare{Kind: k, Jobs: a.kindJobs[k], GPUHours: a.kindTime[k].hours()}
	}

	type offs struct{ wait, ratio, run int }
	starts := make([]offs, len(a.parts)+1)
	for i, p := range a.parts {
		starts[i+1] = offs{starts[i].wait + p.nWait, starts[i].ratio + p.nRatios, starts[i].run + p.nRuns}
	}
	total := starts[len(a.parts)]
	waits, ratios, runs := make([]float64, total.wait), make([]float64, total.ratio), make([]float64, total.run)
	next := slices.Clone(starts[:len(a.parts)])
	for _, r := range a.recs {
		o := &next[r.part]
		if r.has&recWait != 0 {
			waits[o.wait] = r.wait
			o.wait++
		}
		if r.has&recRatio != 0 {
			ratios[o.ratio] = r.ratio
			o.ratio++
		}
		if r.has&recRun != 0 {
			runs[o.run] = r.run
			o.run++
		}
	}

	s.Partitions = make([]PartitionSummary, len(a.parts))
	for i := range a.parts {
		p := &a.parts[i]
		st, e := starts[i], starts[i+1]
		s.Partitions[i] = PartitionSummary{
			Partition:  p.name,
			Jobs:       p.jobs,
			GPUHours:   p.gpuTime.hours(),
			Wait:       distOf(waits[st.wait:e.wait]),
			Run:        distOf(runs[st.run:e.run]),
			LimitRatio: distOf(ratios[st.ratio:e.ratio]),
			NoLimit:    p.noLimit,
		}
	}
	slices.SortFunc(s.Partitions, func(x, y PartitionSummary) int { return cmp.Compare(x.Partition, y.Partition) })
	return s
}

// NoLimitSentence names the jobs without a time limit that the
// limit/run ratios leave out, per partition ("Limit/run leaves out 12
// jobs without a time limit (UNLIMITED, or a year or more): 9 in debug, 3
// in gpu."); "" when there are none.
func (s ClusterSummary) NoLimitSentence() string {
	n := 0
	var parts []string
	for _, p := range s.Partitions {
		if p.NoLimit > 0 {
			n += p.NoLimit
			name := p.Partition
			if name == "" {
				name = "no partition"
			}
			parts = append(parts, present.Int(p.NoLimit)+" in "+name)
		}
	}
	if n == 0 {
		return ""
	}
	return "Limit/run leaves out " + present.Count(n, "job", "jobs") + " without a time limit (UNLIMITED, or a year or more): no request to measure; " +
		strings.Join(parts, ", ") + "."
}
