package analysis

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TaskKey identifies a recurring task: the runs of one user with the same
// normalised job name (NormaliseName) on one cluster. Array tasks share
// their array's name and user, so an array is one task (or part of one,
// when the same script also ran outside it); an array task whose name
// normalises to nothing is keyed by its array as "array:<array job id>".
type TaskKey struct {
	Cluster string `json:"cluster"`
	User    string `json:"user"`
	Name    string `json:"name"`
}

// ClassShare is a class's part of a set of jobs.
type ClassShare struct {
	Class    Class   `json:"class"`
	Jobs     int     `json:"jobs"`
	GPUHours float64 `json:"gpu_hours"`
}

// KindShare is a bottleneck's part of a set of jobs.
type KindShare struct {
	Kind     Kind    `json:"kind"`
	Jobs     int     `json:"jobs"`
	GPUHours float64 `json:"gpu_hours"`
}

// TaskProfile summarises the runs of one recurring task.
type TaskProfile struct {
	TaskKey
	// Account of the latest run (by start, else submit; of runs at the
	// same time, the first by job id, as Slurm lists them). Partition is the
	// one holding the most of the task's GPU-hours (by runs when they hold
	// none; ties: more runs, then by name); PartitionMixed says it holds
	// less than half, so a label says "mixed" (PartitionLabel).
	Account        string `json:"account"`
	Partition      string `json:"partition"`
	PartitionMixed bool   `json:"partition_mixed,omitempty"`
	// FirstStart and LastStart bound the runs' start times (zero when no
	// run has one).
	FirstStart time.Time `json:"first_start,omitzero"`
	LastStart  time.Time `json:"last_start,omitzero"`

	Jobs        int `json:"jobs"`
	WithGPUData int `json:"with_gpu_data"` // runs with usable GPU readings
	Arrays      int `json:"arrays"`        // distinct array jobs among the runs

	// VRAMPeakFrac is the distribution of the runs' memory peaks as a
	// fraction of the card (Metrics.VRAMPeakFrac), over runs whose peak is
	// a need; VRAMPeak the same peaks in bytes (also runs without a card
	// size). Preallocated counts the runs left out because a framework
	// reserved the memory.
	VRAMPeakFrac Dist `json:"vram_peak_frac"`
	VRAMPeak     Dist `json:"vram_peak_bytes"`
	Preallocated int  `json:"preallocated"`
	// UtilMean is the distribution of the runs' mean utilisation, percent.
	UtilMean Dist `json:"util_mean"`
	// Duration is the distribution of run times, seconds.
	Duration Dist `json:"duration_s"`
	// GPUsRequested is the mean per run of the GPUs held (Metrics.GPUs),
	// over every run: the scheduler's record says it, readings or not.
	GPUsRequested float64 `json:"gpus_requested"`
	// UsageRuns are the runs with utilisation readings. GPUsUsed and
	// GPUsUnused are means per run over those runs alone: GPUs held minus
	// unused (Metrics.UnusedGPUs), and unused. Both are nil, and absent
	// from JSON, when no run has readings: how many GPUs sacct history
	// used is unknown, not 0.
	UsageRuns  int      `json:"usage_runs"`
	GPUsUsed   *float64 `json:"gpus_used,omitempty"`
	GPUsUnused *float64 `json:"gpus_unused,omitempty"`

	// Finished runs have a final outcome; FailureRate and TimeoutRate are
	// Failures / Finished and Timeouts / Finished (0 when none finished).
	Finished    int     `json:"finished"`
	Failures    int     `json:"failures"`
	Timeouts    int     `json:"timeouts"`
	FailureRate float64 `json:"failure_rate"`
	TimeoutRate float64 `json:"timeout_rate"`

	GPUHours float64 `json:"gpu_hours"`
	// Class is the class holding the most of the runs' GPU-hours (by runs
	// when they hold none; ties: more runs, then report order);
	// ClassMixed says it holds less than half, so a label says "mixed"
	// (ClassLabel). ByClass and ByBottleneck list the classes and
	// bottlenecks present, in report order.
	Class        Class        `json:"class"`
	ClassMixed   bool         `json:"class_mixed,omitempty"`
	ByClass      []ClassShare `json:"by_class"`
	ByBottleneck []KindShare  `json:"by_bottleneck"`
}

// Mixed is the label of a task whose runs no one class (or partition)
// holds the majority of.
const Mixed = "mixed"

// ClassLabel is the task's class as a label: Class, or Mixed.
func (t TaskProfile) ClassLabel() string {
	if t.ClassMixed {
		return Mixed
	}
	return t.Class.String()
}

// PartitionLabel is the task's partition as a label: Partition, or Mixed.
func (t TaskProfile) PartitionLabel() string {
	if t.PartitionMixed {
		return Mixed
	}
	return t.Partition
}

// Profiles groups jobs into recurring tasks and summarises each, largest
// GPU-hours first (ties: more runs, then by key). Jobs that neither
// requested nor recorded a GPU are left out, and so are those that never
// started (RanJob): a task's runs are the jobs that ran.
func Profiles(jobs []Job, c Config) []TaskProfile {
	p := newProfileAcc(len(jobs))
	// Counted as Analyse counts the same jobs (the data's own window), so
	// a run still going has its GPU-hours so far here too.
	k := newCounter(&Input{Jobs: jobs}, c.Counting.shardsPerGPU())
	var m Metrics
	for i := range jobs {
		j := &jobs[i]
		measure(j, &c, &m)
		k.count(j, &m)
		p.add(j, &m, classify(j, &m, &c, nil), diagnose(j, &m, &c, nil))
	}
	out, _ := p.finish()
	return out
}

// profileAcc builds task profiles in two passes: add accumulates the
// scalar sums per task and keeps each job's distribution values in a
// compact record; finish scatters those into one flat array per
// distribution, grouped by task, so that n jobs cost O(n) memory in a few
// large allocations instead of growing a slice per task.
type profileAcc struct {
	index map[TaskKey]int32
	// raw maps a job's raw (cluster, user, name) to its group, so that the
	// name is normalised once per distinct raw name and each job costs one
	// map lookup; noName marks a raw name that normalises to "" (the group
	// then depends on the array).
	raw    map[TaskKey]int32
	arrays map[arrayKey]struct{}
	groups []taskAcc
	recs   []taskRec // one per job added; group −1 for a job left out
	buf    []byte
}

const noName = -1

type arrayKey struct {
	group int32
	id    string
}

type taskAcc struct {
	key                          TaskKey
	lastArray                    string // array of the previous run: arrays run in a row
	account, partition           string
	latest, first, last          time.Time
	latestID                     string // job id of the latest run
	jobs, withData, arrays       int
	prealloc                     int
	nPeakFrac, nPeak, nUtil      int
	nDur, utilJobs               int
	gpusReq                      int // over all runs
	gpusHeld, gpusUsed           int // over the utilJobs runs
	finished, failures, timeouts int
	// GPU time exactly (gpuTime), so that no figure depends on the
	// order the runs came in.
	gpuTime   gpuTime
	partTime  map[string]gpuTime // by partition
	partJobs  map[string]int     // runs by partition
	classJobs [numClasses]int32
	classTime [numClasses]gpuTime
	kindJobs  [numKinds]int32
	kindTime  [numKinds]gpuTime
}

// Flags of taskRec.has.
const (
	recPeakFrac = 1 << iota
	recPeak
	recUtil
	recDur
)

type taskRec struct {
	group                     int32
	has                       uint8
	peakFrac, peak, util, dur float64
}

func newProfileAcc(n int) *profileAcc {
	return &profileAcc{
		index:  make(map[TaskKey]int32),
		raw:    make(map[TaskKey]int32),
		arrays: make(map[arrayKey]struct{}),
		recs:   make([]taskRec, 0, n),
	}
}

// group returns the index of j's task, creating the task when new.
func (p *profileAcc) group(j *Job) int32 {
	rk := TaskKey{Cluster: j.Cluster, User: j.User, Name: j.Name}
	gi, cached := p.raw[rk]
	if cached && gi != noName {
		return gi
	}
	name := "" // the cached noName case
	if !cached {
		p.buf = appendNormalised(p.buf[:0], j.Name)
		name = string(p.buf)
	}
	normalised := name
	if name == "" && j.ArrayJobID != "" {
		name = "array:" + j.ArrayJobID
	}
	k := TaskKey{Cluster: j.Cluster, User: j.User, Name: name}
	gi, found := p.index[k]
	if !found {
		gi = int32(len(p.groups))
		p.index[k] = gi
		p.groups = append(p.groups, taskAcc{key: k})
	}
	switch {
	case cached:
	case normalised == "":
		p.raw[rk] = noName
	default:
		p.raw[rk] = gi
	}
	return gi
}

// skip keeps the place of a job that is in no profile (not the window's).
func (p *profileAcc) skip() { p.recs = append(p.recs, taskRec{group: -1}) }

func (p *profileAcc) add(j *Job, m *Metrics, cls Class, kinds Kinds) {
	if m.GPUs == 0 || !RanJob(m) {
		p.recs = append(p.recs, taskRec{group: -1})
		return
	}
	gi := p.group(j)
	g := &p.groups[gi]
	rec := taskRec{group: gi}

	g.jobs++
	when := m.Start
	if when.IsZero() {
		when = m.Submit
	}
	if g.jobs == 1 || when.After(g.latest) || when.Equal(g.latest) && firstListed(j, g.latestID, g.account) {
		g.latest, g.latestID, g.account, g.partition = when, j.ID, j.Account, j.Partition
	}
	if !m.Start.IsZero() {
		if g.first.IsZero() || m.Start.Before(g.first) {
			g.first = m.Start
		}
		if m.Start.After(g.last) {
			g.last = m.Start
		}
	}
	if j.ArrayJobID != "" && j.ArrayJobID != g.lastArray {
		g.lastArray = j.ArrayJobID
		ak := arrayKey{gi, j.ArrayJobID}
		if _, seen := p.arrays[ak]; !seen {
			p.arrays[ak] = struct{}{}
			g.arrays++
		}
	}
	// Readings, not the class, say whether a run has GPU data: history
	// without readings is classified too (classifyScheduler). The same
	// test as the summary's WithGPUData.
	if m.MeasuredGPUs > 0 || m.IdleAllocatedGPUs > 0 {
		g.withData++
	}
	shown := m.Shown() // the figures every page shows of one run
	g.gpusReq += shown.GPUs
	if m.Preallocated {
		g.prealloc++
	}
	if m.VRAMPeakValid {
		rec.has |= recPeakFrac
		rec.peakFrac = m.VRAMPeakFrac
		g.nPeakFrac++
	}
	if m.VRAMPeakBytesValid {
		rec.has |= recPeak
		rec.peak = float64(m.VRAMPeak)
		g.nPeak++
	}
	if shown.UtilKnown {
		rec.has |= recUtil
		rec.util = shown.Util
		g.nUtil++
	}
	if shown.UsedKnown {
		g.utilJobs++
		g.gpusHeld += shown.GPUs
		g.gpusUsed += shown.Used
	}
	if m.ElapsedValid {
		rec.has |= recDur
		rec.dur = m.Elapsed.Seconds()
		g.nDur++
	}
	if m.Outcome.Finished() {
		g.finished++
		switch m.Outcome {
		case OutcomeFailed:
			g.failures++
		case OutcomeTimeout:
			g.timeouts++
		}
	}
	g.gpuTime.add(m.gpuTime)
	if g.partTime == nil {
		g.partTime, g.partJobs = map[string]gpuTime{}, map[string]int{}
	}
	pt := g.partTime[j.Partition]
	pt.add(m.gpuTime)
	g.partTime[j.Partition] = pt
	g.partJobs[j.Partition]++
	g.classJobs[cls]++
	g.classTime[cls].add(m.gpuTime)
	for k := range numKinds {
		if kinds.Has(k) {
			g.kindJobs[k]++
			g.kindTime[k].add(m.gpuTime)
		}
	}
	p.recs = append(p.recs, rec)
}

// firstListed reports whether j comes before the run of job id and
// account given, both at the same time: by job id as Slurm lists them,
// then by the ids' bytes and the account, so that the latest run's
// account does not depend on the order the runs came in.
func firstListed(j *Job, id, account string) bool {
	return cmp.Or(slurmext.CompareJobIDs(j.ID, id), strings.Compare(j.ID, id), strings.Compare(j.Account, account)) < 0
}

// finish returns the profiles in report order and, for each group index,
// its position in that order.
func (p *profileAcc) finish() ([]TaskProfile, []int32) {
	ng := len(p.groups)
	if ng == 0 {
		return []TaskProfile{}, nil
	}
	// Offsets of each group's segment in the four flat arrays.
	type offs struct{ peakFrac, peak, util, dur int }
	starts := make([]offs, ng+1)
	for i, g := range p.groups {
		s := starts[i]
		starts[i+1] = offs{s.peakFrac + g.nPeakFrac, s.peak + g.nPeak, s.util + g.nUtil, s.dur + g.nDur}
	}
	total := starts[ng]
	peakFrac := make([]float64, total.peakFrac)
	peak := make([]float64, total.peak)
	util := make([]float64, total.util)
	dur := make([]float64, total.dur)
	next := slices.Clone(starts[:ng])
	for _, r := range p.recs {
		if r.group < 0 {
			continue
		}
		o := &next[r.group]
		if r.has&recPeakFrac != 0 {
			peakFrac[o.peakFrac] = r.peakFrac
			o.peakFrac++
		}
		if r.has&recPeak != 0 {
			peak[o.peak] = r.peak
			o.peak++
		}
		if r.has&recUtil != 0 {
			util[o.util] = r.util
			o.util++
		}
		if r.has&recDur != 0 {
			dur[o.dur] = r.dur
			o.dur++
		}
	}

	out := make([]TaskProfile, ng)
	for i := range p.groups {
		g := &p.groups[i]
		s, e := starts[i], starts[i+1]
		out[i] = g.profile(peakFrac[s.peakFrac:e.peakFrac], peak[s.peak:e.peak], util[s.util:e.util], dur[s.dur:e.dur])
	}

	order := make([]int32, ng)
	for i := range order {
		order[i] = int32(i)
	}
	// GPU-hours are exact sums (gpuTime), the same in whatever order the
	// jobs came; the order compares them to a microhour, so that tasks
	// whose GPU-hours differ only by a shard job's share rounded to a
	// GPU-nanosecond fall to the tie-breaks.
	hours := make([]float64, ng)
	for i := range out {
		hours[i] = math.Round(out[i].GPUHours * 1e6)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &out[a], &out[b]
		if c := cmp.Compare(hours[b], hours[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Jobs, x.Jobs); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Cluster, y.Cluster); c != 0 {
			return c
		}
		if c := cmp.Compare(x.User, y.User); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	sorted := make([]TaskProfile, ng)
	pos := make([]int32, ng)
	for i, gi := range order {
		sorted[i] = out[gi]
		pos[gi] = int32(i)
	}
	return sorted, pos
}

// profile is the group's TaskProfile, with its distributions of the
// values given: the group's segments of profileAcc.finish's flat arrays.
func (g *taskAcc) profile(peakFrac, peak, util, dur []float64) TaskProfile {
	tp := TaskProfile{
		TaskKey:      g.key,
		Account:      g.account,
		Partition:    g.partition,
		FirstStart:   g.first,
		LastStart:    g.last,
		Jobs:         g.jobs,
		WithGPUData:  g.withData,
		Arrays:       g.arrays,
		VRAMPeakFrac: distOf(peakFrac),
		VRAMPeak:     distOf(peak),
		Preallocated: g.prealloc,
		UtilMean:     distOf(util),
		Duration:     distOf(dur),
		Finished:     g.finished,
		Failures:     g.failures,
		Timeouts:     g.timeouts,
		GPUHours:     g.gpuTime.hours(),
	}
	if g.jobs > 0 {
		tp.GPUsRequested = float64(g.gpusReq) / float64(g.jobs)
	}
	if g.utilJobs > 0 {
		used := float64(g.gpusUsed) / float64(g.utilJobs)
		unused := float64(g.gpusHeld-g.gpusUsed) / float64(g.utilJobs)
		tp.UsageRuns, tp.GPUsUsed, tp.GPUsUnused = g.utilJobs, &used, &unused
	}
	if g.finished > 0 {
		tp.FailureRate = float64(g.failures) / float64(g.finished)
		tp.TimeoutRate = float64(g.timeouts) / float64(g.finished)
	}
	// The label follows what the row measures: the class with the most
	// GPU-hours (ties: more runs, then report order); by runs when the
	// runs hold no GPU-hours. Below half of them: mixed.
	best := Class(0)
	for cls := range numClasses {
		n := g.classJobs[cls]
		if n == 0 {
			continue
		}
		tp.ByClass = append(tp.ByClass, ClassShare{Class: cls, Jobs: int(n), GPUHours: g.classTime[cls].hours()})
		c := g.classTime[cls].cmp(g.classTime[best])
		if g.classJobs[best] == 0 || c > 0 || (c == 0 && n > g.classJobs[best]) {
			best = cls
		}
	}
	tp.Class = best
	none := gpuTime{}
	if g.gpuTime != none {
		tp.ClassMixed = g.classTime[best].twice().cmp(g.gpuTime) < 0
	} else {
		tp.ClassMixed = 2*int(g.classJobs[best]) < g.jobs
	}
	if len(g.partTime) > 0 {
		top, topT, topN := "", gpuTime{}, -1
		for part, pt := range g.partTime {
			pn := g.partJobs[part]
			c := pt.cmp(topT)
			if topN < 0 || c > 0 || (c == 0 && (pn > topN || pn == topN && part < top)) {
				top, topT, topN = part, pt, pn
			}
		}
		tp.Partition = top
		if g.gpuTime != none {
			tp.PartitionMixed = topT.twice().cmp(g.gpuTime) < 0
		} else {
			tp.PartitionMixed = 2*topN < g.jobs
		}
	}
	for k := range numKinds {
		if g.kindJobs[k] > 0 {
			tp.ByBottleneck = append(tp.ByBottleneck, KindShare{Kind: k, Jobs: int(g.kindJobs[k]), GPUHours: g.kindTime[k].hours()})
		}
	}
	if tp.ByBottleneck == nil {
		tp.ByBottleneck = []KindShare{}
	}
	return tp
}
