package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Window is the half-open period [From, To) a workload summary covers,
// typically a calendar month. Days and hours of the week are taken in
// From's location.
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// WorkloadParams choose the period and how many users and accounts the
// summary names.
type WorkloadParams struct {
	Window Window `json:"window"`
	// TopN is how many users and accounts are listed by name; the rest are
	// summed into one "others" row. 0 (or less) means 10.
	TopN int `json:"top_n"`
}

// Workload is what the monthly report shows beyond the task profiles,
// recommendations and plan: GPU-hours inside the window (jobs that straddle
// a boundary count only their part inside), how much of them was used, who
// used them, what was lost, and how demand spread over days and hours.
// Every number the report prints comes from here or from Findings.
type Workload struct {
	Window   Window   `json:"window"`
	Headline Headline `json:"headline"`
	// Inventory is the GPU inventory capacity is counted from, and where
	// it came from (Input.Inventory); Conf the cluster and the Slurm
	// configuration bound to it (Input.Conf).
	Inventory Inventory `json:"inventory"`
	Conf      ConfUse   `json:"conf"`

	// Daily has one entry per calendar day of the window, in order.
	Daily []DayUsage `json:"daily"`
	// HourOfWeek is the mean number of GPUs allocated in each hour of the
	// week, [weekday][hour], Monday = 0, averaged over the occurrences of
	// that hour inside the window; PendingHourOfWeek the same for GPUs
	// requested by jobs waiting in the queue.
	HourOfWeek        [7][24]float64 `json:"hour_of_week_gpus"`
	PendingHourOfWeek [7][24]float64 `json:"pending_hour_of_week_gpus"`

	// Models has one entry per GPU model seen, most GPU-hours first (then
	// by name). Model "" holds GPUs held without a per-GPU record (sacct
	// history, a shard job without a profile): their GPU-hours, no
	// readings. The models' GPU-hours add up to AllocatedGPUHours.
	Models []ModelUsage `json:"models"`
	// Util is the distribution of per-GPU mean utilisation over the GPUs
	// with readings (as MeasuredGPUHours), in ten bins of 10 points
	// ([0,10), …, [90,100]).
	Util UtilHistogram `json:"util_histogram"`

	// Users and Accounts are the TopN largest by allocated GPU-hours, ties
	// by name; OtherUsers and OtherAccounts sum the rest (Name "", Count =
	// how many; all zero when there is no rest).
	Users         []GroupUsage `json:"users"`
	OtherUsers    GroupUsage   `json:"other_users"`
	Accounts      []GroupUsage `json:"accounts"`
	OtherAccounts GroupUsage   `json:"other_accounts"`

	// Lost is GPU-hours (clipped) of GPU jobs that ran inside the window
	// and ended in a state of lost work (slurmext.LostStates: FAILED,
	// OUT_OF_MEMORY, NODE_FAIL, BOOT_FAIL, DEADLINE, PREEMPTED, TIMEOUT),
	// one entry per state present, most GPU-hours first, then most jobs,
	// then in that order. LostGPUHours sums them; TimeoutGPUHours is the
	// TIMEOUT part of it, shown apart (a job that checkpoints may have
	// saved its work). A job without a scheduler state is never lost here,
	// and a job cancelled in the queue held no GPU.
	Lost            []LostShare `json:"lost"`
	LostGPUHours    float64     `json:"lost_gpu_hours"`
	TimeoutGPUHours float64     `json:"timeout_gpu_hours"`
	// Cancelled is the GPU jobs that ran and ended CANCELLED: never called
	// lost, since services and interactive sessions end with scancel.
	Cancelled LostShare `json:"cancelled"`

	// XIDs are the XID errors of the window's jobs, hardware apart from
	// application, and per GPU.
	XIDs XIDs `json:"xids"`

	// Carbon says where the emission factors came from (Carbon.Source);
	// empty without one, and then no Energy has CO2e.
	Carbon string `json:"carbon,omitempty"`

	// DataEnd is when jobs still running (or still queued) stop counting
	// (Counting.End): the window's end, or the time of the analysis
	// (Input.Now) when earlier, or without it the latest time anywhere in
	// the data. A report made mid-month thus counts no future hours.
	DataEnd time.Time `json:"data_end"`
	// Counting says how GPU time was counted (the same rule as Findings').
	Counting Counting `json:"counting"`
	// Notes counts readings ignored as impossible in the jobs counted;
	// AbsurdGPUCounts the jobs whose GPU count (over 100,000) was ignored.
	Notes           DataNotes `json:"data_notes"`
	AbsurdGPUCounts int       `json:"absurd_gpu_counts"`
}

// Headline holds the report's first numbers.
type Headline struct {
	// Jobs whose life (submission to end, or on while they have none)
	// overlaps the window, CPU jobs included: the jobs Analyse counts
	// (ClusterSummary.Jobs) for the same window.
	Jobs     int `json:"jobs"`
	GPUJobs  int `json:"gpu_jobs"` // of which requested or recorded a GPU
	Users    int `json:"users"`    // distinct user names of those jobs
	Accounts int `json:"accounts"` // distinct accounts of those jobs

	// AllocatedGPUHours is GPUs held × time, clipped to the window.
	AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
	// MeasuredGPUHours is the part of AllocatedGPUHours on GPUs with a
	// usable mean utilisation (or the idle-allocation flag, which means
	// 0 %); UsedGPUHours is that part weighted by each
	// GPU's mean utilisation (an hour at 40 % counts 0.4).
	MeasuredGPUHours float64 `json:"measured_gpu_hours"`
	UsedGPUHours     float64 `json:"used_gpu_hours"`
	// Utilisation is UsedGPUHours / MeasuredGPUHours (0–1), the mean
	// utilisation weighted by GPU-hours; Coverage is MeasuredGPUHours /
	// AllocatedGPUHours.
	Utilisation float64 `json:"utilisation"`
	Coverage    float64 `json:"coverage"`
	// IdleGPUHours are measured GPU-hours at 0 % utilisation: each GPU's
	// idle fraction × its hours (a whole idle allocation, or a mean of 0 %
	// without an idle fraction, counts fully).
	IdleGPUHours float64 `json:"idle_gpu_hours"`
	// VRAMPeakFrac is the distribution over job GPUs of the memory peak as
	// a fraction of the card (preallocated GPUs, GPUs without a card size
	// and peaks above the card left out);
	// VRAMHeadroom = 1 − VRAMPeakFrac.P95 (0 when there are none).
	VRAMPeakFrac Dist    `json:"vram_peak_frac"`
	VRAMHeadroom float64 `json:"vram_headroom"`
	// CapacityGPUHours is the inventory's GPUs × the window's hours (0
	// without an inventory; a node with a GPU count ≤ 0 or over 100,000 is
	// left out); Occupancy = AllocatedGPUHours / it.
	CapacityGPUHours float64 `json:"capacity_gpu_hours"`
	Occupancy        float64 `json:"occupancy"`
	// InventoryGPUs is the inventory's GPU count behind CapacityGPUHours
	// (0 without an inventory): the most GPUs the cluster could have
	// allocated at once, the top of the report's hour-of-week scale.
	InventoryGPUs int `json:"inventory_gpus"`
	// InventoryMisfit, when not empty, says that the jobs held more GPU
	// time than the inventory could (an occupancy above 100 %): the
	// inventory is not the cluster's, and InventoryGPUs, CapacityGPUHours,
	// Occupancy and the days' capacity are 0 — no occupancy is printed.
	InventoryMisfit string `json:"inventory_misfit,omitempty"`
	// GPUWait is the distribution of queue waits (start − eligible, else
	// submit), seconds, of the GPU jobs counted whose wait is known.
	GPUWait Dist `json:"gpu_wait_s"`
	// Energy is the GPU energy the profiles recorded in the window, with
	// its CO2e where a factor is configured (Workload.Carbon).
	Energy Energy `json:"energy"`
	// Effective is the GPU-hours weighted by SM activity (GPM), where
	// measured.
	Effective Effective `json:"effective"`
}

// DayUsage is one calendar day (23 or 25 hours on a DST change; the first
// and last may be partial when the window does not start or end at
// midnight). Jobs count as in Headline.Jobs.
type DayUsage struct {
	Date      string  `json:"date"` // YYYY-MM-DD in the window's location
	Allocated float64 `json:"allocated_gpu_hours"`
	Used      float64 `json:"used_gpu_hours"`    // as Headline.UsedGPUHours
	Pending   float64 `json:"pending_gpu_hours"` // GPUs requested × time waiting
	// Capacity is the inventory's GPUs × the day's hours inside the
	// window (0 without an inventory): the most that could be allocated.
	Capacity      float64 `json:"capacity_gpu_hours"`
	JobsStarted   int     `json:"jobs_started"`
	JobsSubmitted int     `json:"jobs_submitted"`
}

// ModelUsage is one GPU model: its GPU-hours, how much of its memory
// jobs reached, how full its cards were, how long its jobs waited and the
// energy they drew.
type ModelUsage struct {
	Model       string  `json:"model"`
	MemoryTotal uint64  `json:"memory_total"` // bytes, the largest seen
	JobGPUs     int     `json:"job_gpus"`     // job × GPU pairs
	GPUHours    float64 `json:"gpu_hours"`    // clipped to the window
	// VRAMHist counts job GPUs by peak / card in ten bins of 10 % (the
	// last bin includes 100 %); Preallocated GPUs are counted apart.
	VRAMHist     [10]int `json:"vram_peak_hist"`
	VRAMPeakFrac Dist    `json:"vram_peak_frac"`
	Preallocated int     `json:"preallocated"`
	// VRAMHistGPUHours is VRAMHist weighted by each job GPU's GPU-hours
	// in the window, so a month-long job weighs more than a minute's
	// test; PreallocatedGPUHours the GPU-hours of the preallocated GPUs,
	// whose peak is a reservation, not a need. GPUs without a usable peak
	// or card size are in neither.
	VRAMHistGPUHours     [10]float64 `json:"vram_peak_hist_gpu_hours"`
	PreallocatedGPUHours float64     `json:"preallocated_gpu_hours"`
	UtilMean             float64     `json:"util_mean"` // GPU-hour weighted, percent; 0 without readings
	// Cards is the GPUs of this model in the inventory (Input.Nodes whose
	// GPUModel is Model; 0 when none is, and always for model "");
	// CapacityGPUHours = Cards × the window's hours and Occupancy =
	// GPUHours / CapacityGPUHours (0 and saying nothing without cards).
	Cards            int     `json:"cards"`
	CapacityGPUHours float64 `json:"capacity_gpu_hours"`
	Occupancy        float64 `json:"occupancy"`
	// InventoryMisfit: the model's GPU-hours exceed what its cards could
	// hold in the window; CapacityGPUHours and Occupancy are then 0.
	InventoryMisfit bool `json:"inventory_misfit,omitempty"`
	// Wait is the distribution of queue waits, seconds, of the jobs that
	// ran on this model in the window and whose wait is known; a job on
	// two models counts in both.
	Wait Dist `json:"wait_s"`
	// Energy is the energy its GPUs drew in the window.
	Energy Energy `json:"energy"`
	// Effective is its GPU-hours weighted by SM activity (GPM).
	Effective Effective `json:"effective"`
}

// UtilHistogram is per-GPU mean utilisation in ten bins of 10 points.
type UtilHistogram struct {
	JobGPUs  [10]int     `json:"job_gpus"`
	GPUHours [10]float64 `json:"gpu_hours"`
}

// GroupUsage is one user's or account's share.
type GroupUsage struct {
	Name     string  `json:"name"`
	Count    int     `json:"count,omitempty"` // for the "others" rows: how many names
	Jobs     int     `json:"jobs"`            // as Headline.Jobs
	GPUHours float64 `json:"gpu_hours"`       // allocated, clipped
	// MeasuredGPUHours, UsedGPUHours and Utilisation are as in Headline;
	// Utilisation is 0 and says nothing when MeasuredGPUHours is 0.
	MeasuredGPUHours float64 `json:"measured_gpu_hours"`
	UsedGPUHours     float64 `json:"used_gpu_hours"`
	Utilisation      float64 `json:"utilisation"` // used / measured, 0–1
	IdleGPUHours     float64 `json:"idle_gpu_hours"`
	LostGPUHours     float64 `json:"lost_gpu_hours"`
	Share            float64 `json:"share"` // of all allocated GPU-hours
	// WaitP50 is the median (nearest rank) queue wait, seconds, over the
	// jobs with a known wait; 0 without one.
	WaitP50 float64 `json:"wait_p50_s"`
	// TopClass is the class with the most GPU-hours (ties: report order;
	// unknown without GPU-hours).
	TopClass Class `json:"top_class"`
	// Energy is the GPU energy of the group's jobs in the window.
	Energy Energy `json:"energy"`
	// Effective is the group's GPU-hours weighted by SM activity (GPM).
	Effective Effective `json:"effective"`
}

// LostShare is GPU-hours of jobs that ended in one unsuccessful state.
type LostShare struct {
	State    slurmext.JobState `json:"state"`
	Jobs     int               `json:"jobs"`
	GPUHours float64           `json:"gpu_hours"`
	Share    float64           `json:"share"` // of all allocated GPU-hours
}

// maxWindow bounds the window SummariseWorkload accepts: ten years of
// hours is 87,672 timeline segments; a longer window is a parsing error.
const maxWindow = 10 * 366 * 24 * time.Hour

// maxJobGPUs is the most GPUs a plausible job holds; a larger count is a
// parsing error and is ignored (Workload.AbsurdGPUCounts).
const maxJobGPUs = 100_000

// defaultTopN is how many users and accounts are named when TopN is 0.
const defaultTopN = 10

// numLost is len(slurmext.LostStates()).
const numLost = 7

// SummariseWorkload returns the monthly workload summary of in.Jobs inside
// p.Window (docs/analysis.md, "Workload summary"). It counts GPU time with
// the same rule as Analyse (counter: clipped to the window, jobs without an
// end up to DataEnd, shard jobs by their share of the GPU) and spreads it
// over the days and the hours of the week with a binary search over the
// window's hours, so a job costs the same whatever its length.
//
// A job counts when its life, from its submission (else eligibility, else
// start) to its end, or on while it has none, overlaps the window (the one
// rule of which jobs a window counts, as Analyse counts them: CPU jobs
// included). A job still running is taken to run until DataEnd; one
// whose start is unknown counts but contributes no GPU-hours. A window
// that is empty, reversed, outside the years 1970–9999 or longer than ten
// years gives a Workload with only the Window and empty lists.
//
// c should be valid (Config.Validate); it decides the classes behind
// GroupUsage.TopClass.
func SummariseWorkload(in Input, p WorkloadParams, c Config) Workload {
	a, ok := newWorkloadAcc(p.Window)
	if !ok {
		w := emptyWorkload(p.Window)
		w.Inventory, w.Conf = InventoryOf(&in), in.Conf
		return w
	}
	nGPUs := 0
	for i := range in.Jobs {
		nGPUs += len(in.Jobs[i].GPUs)
	}
	a.waits = make([]waitRec, 0, len(in.Jobs))
	a.modelWaits = make([]modelWait, 0, len(in.Jobs))
	a.fracs, a.fracModel = make([]float64, 0, nGPUs), make([]int32, 0, nGPUs)
	// The one counting rule, over the summary's window.
	win := in
	win.Window = Window{From: a.tl.from, To: a.tl.to}
	k := newCounter(&win, c.Counting.shardsPerGPU())
	a.now = k.end
	a.analysisNow = in.Now
	a.w.DataEnd = k.end
	a.carbon = in.Carbon
	if in.Carbon != nil {
		a.w.Carbon = in.Carbon.Source
	}
	var m Metrics
	for i := range in.Jobs {
		j := &in.Jobs[i]
		measure(j, &c, &m)
		k.count(j, &m)
		if !k.touches(j, &m) {
			continue // not the window's job
		}
		a.add(j, &m, &c)
	}
	a.w.Counting = k.counting()
	w := a.finish(in.Nodes, p.TopN)
	w.Inventory, w.Conf = InventoryOf(&in), in.Conf
	return w
}

func emptyWorkload(w Window) Workload {
	return Workload{
		Window: w, Daily: []DayUsage{}, Models: []ModelUsage{},
		Users: []GroupUsage{}, Accounts: []GroupUsage{}, Lost: []LostShare{},
		XIDs: XIDs{GPUs: []GPUXIDs{}},
	}
}

// openEnded reports whether a job without an end time may still be
// running or queued.
func openEnded(o Outcome) bool { return o == OutcomeRunning || o == OutcomeUnknown }

// plausible reports whether t is a known time inside the years the
// analysis accepts (DataNotes.BadTimes).
func plausible(t time.Time) bool {
	// Seconds of 1970-01-01 and 10000-01-01 UTC: cheaper than t.Year().
	const lo, hi = 0, 253402300800
	s := t.Unix()
	return s >= lo && s < hi
}

// timeline cuts the window into segments that each lie inside one hour of
// the week and one calendar day of the window's location: usually whole
// local hours, shorter at the window's edges and at odd time-zone changes.
// Times are nanoseconds after the window's start.
type timeline struct {
	from, to time.Time
	length   int64
	starts   []int64 // segment starts; one more entry: length
	cell     []uint8 // weekday×24 + hour, Monday = 0
	day      []int32
	dates    []string // one per calendar day
}

func newTimeline(from, to time.Time) timeline {
	loc := from.Location()
	tl := timeline{from: from, to: to, length: int64(to.Sub(from))}
	// Day k starts at local midnight of From's date + k days, computed from
	// the calendar date (as AddDate does), never as k × 24 h: DST days are
	// 23 or 25 hours long.
	y, mo, d := from.Date()
	var dayStarts []int64
	for k := 0; ; k++ {
		ds := time.Date(y, mo, d+k, 0, 0, 0, 0, loc)
		if !ds.Before(to) {
			break
		}
		dayStarts = append(dayStarts, max(0, int64(ds.Sub(from))))
		tl.dates = append(tl.dates, ds.Format(time.DateOnly))
	}
	di := 0
	for t := from; t.Before(to); {
		lt := t.In(loc)
		next := t.Add(time.Hour - time.Duration(lt.Minute())*time.Minute -
			time.Duration(lt.Second())*time.Second - time.Duration(lt.Nanosecond()))
		// A zone change off the hour (a 30-minute DST shift) or a
		// midnight off the hour grid also ends a segment.
		if _, ze := lt.ZoneBounds(); ze.After(t) && ze.Before(next) {
			next = ze
		}
		off := int64(t.Sub(from))
		for di+1 < len(dayStarts) && dayStarts[di+1] <= off {
			di++
		}
		if di+1 < len(dayStarts) {
			if nd := from.Add(time.Duration(dayStarts[di+1])); nd.Before(next) {
				next = nd
			}
		}
		if next.After(to) {
			next = to
		}
		wd := (int(lt.Weekday()) + 6) % 7
		tl.starts = append(tl.starts, off)
		tl.cell = append(tl.cell, uint8(wd*24+lt.Hour()))
		tl.day = append(tl.day, int32(di))
		t = next
	}
	tl.starts = append(tl.starts, tl.length)
	return tl
}

// segment returns the index of the segment holding off (0 ≤ off < length).
func (tl *timeline) segment(off int64) int {
	lo, hi := 0, len(tl.starts)-1 // starts[lo] ≤ off < starts[hi]
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if tl.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// inside reports whether t lies in the window.
func (tl *timeline) inside(t time.Time) bool {
	return !t.IsZero() && !t.Before(tl.from) && t.Before(tl.to)
}

// clip returns [s, e) clipped to the window, in nanoseconds after its
// start; ok is false when nothing is left.
func (tl *timeline) clip(s, e time.Time) (cs, ce int64, ok bool) {
	if !s.Before(tl.to) || !e.After(tl.from) || !e.After(s) {
		return 0, 0, false
	}
	cs, ce = 0, tl.length
	if s.After(tl.from) {
		cs = int64(s.Sub(tl.from))
	}
	if e.Before(tl.to) {
		ce = int64(e.Sub(tl.from))
	}
	return cs, ce, ce > cs
}

// spreadAcc adds a constant rate (GPUs) held over [s, e) to per-segment
// GPU-hours: the partial segments at both ends directly, the whole ones in
// between through a difference array, so a month-long job costs two
// binary searches.
// Both are exact sums (ExactSum), so a segment's GPU-hours are the same
// in every order of the jobs.
type spreadAcc struct {
	edge []ExactSum // GPU-hours
	diff []ExactSum // rate changes at segment starts
}

func newSpread(n int) spreadAcc {
	return spreadAcc{edge: make([]ExactSum, n), diff: make([]ExactSum, n+1)}
}

const nsPerHour = float64(time.Hour)

func (sp *spreadAcc) add(tl *timeline, s, e int64, rate float64) {
	if rate == 0 || e <= s {
		return
	}
	a, b := tl.segment(s), tl.segment(e-1)
	if a == b {
		sp.edge[a].Add(rate * float64(e-s) / nsPerHour)
		return
	}
	sp.edge[a].Add(rate * float64(tl.starts[a+1]-s) / nsPerHour)
	sp.edge[b].Add(rate * float64(e-tl.starts[b]) / nsPerHour)
	if b > a+1 {
		sp.diff[a+1].Add(rate)
		sp.diff[b].Add(-rate)
	}
}

// hours returns the GPU-hours of every segment.
func (sp *spreadAcc) hours(tl *timeline) []float64 {
	out := make([]float64, len(sp.edge))
	rate := 0.0
	for k := range out {
		rate += sp.diff[k].Float()
		// The running sum of ± rates can leave a rounding residue where
		// the true rate is 0.
		out[k] = max(0, sp.edge[k].Float()+max(0, rate)*float64(tl.starts[k+1]-tl.starts[k])/nsPerHour)
	}
	return out
}

// groupAcc accumulates one user or account.
type groupAcc struct {
	name                              string
	jobs, nWait                       int
	alloc, used, measured, idle, lost float64
	classHours                        [numClasses]float64
	energy                            energyAcc
	effective                         effAcc
	sums                              groupSums // settled into the floats above
}

// groupSet indexes groups by name; last caches the previous lookup, since
// a user's jobs tend to come together.
type groupSet struct {
	index   map[string]int32
	groups  []groupAcc
	last    string
	lastIdx int32
}

func (g *groupSet) of(name string) int32 {
	if len(g.groups) > 0 && name == g.last {
		return g.lastIdx
	}
	i, ok := g.index[name]
	if !ok {
		i = int32(len(g.groups))
		g.index[name] = i
		g.groups = append(g.groups, groupAcc{name: name})
	}
	g.last, g.lastIdx = name, i
	return i
}

// modelAcc accumulates one GPU model.
type modelAcc struct {
	u              ModelUsage
	measured, used float64 // GPU-hours
	nFracs         int
	energy         energyAcc
	effective      effAcc
	sums           modelSums // settled into u and the floats above
}

// waitRec is one job's queue wait, kept for the groups' medians.
type waitRec struct {
	user, account int32
	wait          float64 // seconds
	gpu           bool    // a GPU job's
}

type workloadAcc struct {
	w   Workload
	tl  timeline
	now time.Time // DataEnd
	// analysisNow is Input.Now (zero when not given): until when a
	// running job's energy was recorded.
	analysisNow time.Time

	alloc, used, pending spreadAcc
	started, submitted   []int // per day
	// allocated is Headline.AllocatedGPUHours exactly (gpuTime), so the
	// headline is the same in every order the jobs come in, and the
	// cluster summary's GPU-hours over the same window to the last digit.
	allocated gpuTime

	users, accounts groupSet
	modelIndex      map[string]int32
	models          []modelAcc
	lastModel       string
	lastModelIdx    int32
	lost            [numLost]LostShare
	// waits has one record per counted job with a known wait; fracs and
	// fracModel one per job GPU with a VRAM fraction. Both are sized
	// once from the input, so the pass does not grow them.
	waits     []waitRec
	fracs     []float64
	fracModel []int32
	// effective sums the window's SM-weighted GPU-hours; xidIndex finds
	// a GPU's row of Workload.XIDs by node and UUID.
	effective effAcc
	xidIndex  map[string]int
	carbon    *Carbon // Input.Carbon
	// modelWaits has one record per job and GPU model it ran on, with
	// a known wait; energy sums the whole window's.
	modelWaits []modelWait
	energy     energyAcc
	// sums are the pass's float sums, exact (settle).
	sums workloadSums
}

func newWorkloadAcc(w Window) (*workloadAcc, bool) {
	from, to := w.From, w.To
	if !plausible(from) || !plausible(to) {
		return nil, false
	}
	// Round(0) drops a monotonic reading: differences are then wall-clock.
	from, to = from.Round(0), to.In(from.Location()).Round(0)
	if !to.After(from) || to.Sub(from) > maxWindow {
		return nil, false
	}
	tl := newTimeline(from, to)
	n := len(tl.cell)
	a := &workloadAcc{
		tl:    tl,
		alloc: newSpread(n), used: newSpread(n), pending: newSpread(n),
		started:    make([]int, len(tl.dates)),
		submitted:  make([]int, len(tl.dates)),
		users:      groupSet{index: make(map[string]int32)},
		accounts:   groupSet{index: make(map[string]int32)},
		modelIndex: make(map[string]int32),
	}
	a.w.Window = w
	for i, st := range slurmext.LostStates() {
		a.lost[i].State = st
	}
	a.w.Cancelled.State = slurmext.StateCancelled
	return a, true
}

func (a *workloadAcc) model(name string) *modelAcc {
	if len(a.models) > 0 && name == a.lastModel {
		return &a.models[a.lastModelIdx]
	}
	i, ok := a.modelIndex[name]
	if !ok {
		i = int32(len(a.models))
		a.modelIndex[name] = i
		a.models = append(a.models, modelAcc{u: ModelUsage{Model: name}})
	}
	a.lastModel, a.lastModelIdx = name, i
	return &a.models[i]
}

// usable reports whether a reading is present, finite and in [0, hi].
func usable(v float64, valid bool, hi float64) bool {
	return valid && v >= 0 && v <= hi // NaN fails both comparisons
}

func (a *workloadAcc) finish(nodes []Node, topN int) Workload {
	a.settle()
	w := a.w
	tl := &a.tl
	h := &w.Headline
	h.AllocatedGPUHours = a.allocated.hours()

	invGPUs, modelCards := inventory(nodes)

	a.fillDays(&w, invGPUs)
	windowHours := time.Duration(tl.length).Hours()
	a.fillModels(&w, modelCards, windowHours)

	// Headline ratios and capacity.
	if h.MeasuredGPUHours > 0 {
		h.Utilisation = h.UsedGPUHours / h.MeasuredGPUHours
	}
	if h.AllocatedGPUHours > 0 {
		h.Coverage = h.MeasuredGPUHours / h.AllocatedGPUHours
	}
	h.InventoryGPUs = invGPUs
	h.CapacityGPUHours = float64(invGPUs) * windowHours
	if h.CapacityGPUHours > 0 {
		h.Occupancy = h.AllocatedGPUHours / h.CapacityGPUHours
	}
	if h.Occupancy > 1+1e-9 {
		// More GPU time than the inventory could hold: it is not this
		// cluster's, and its capacity and occupancy are no number at all.
		h.InventoryMisfit = fmt.Sprintf("the inventory does not fit the jobs: they held %s GPU-hours in the window, more than its %d %s could hold in it (%s)",
			present.GPUHours(h.AllocatedGPUHours), invGPUs, present.Plural(invGPUs, "GPU", "GPUs"), present.GPUHours(h.CapacityGPUHours))
		h.InventoryGPUs, h.CapacityGPUHours, h.Occupancy = 0, 0, 0
		for i := range w.Daily {
			w.Daily[i].Capacity = 0
		}
	}
	h.GPUWait = distOf(a.gpuWaits())
	h.Energy = a.energy.energy(h.AllocatedGPUHours)
	h.Effective = a.effective.summary(h.AllocatedGPUHours)
	w.finishXIDs()

	// Lost GPU-hours by state.
	w.Lost = []LostShare{}
	for _, l := range a.lost {
		if l.Jobs > 0 {
			if h.AllocatedGPUHours > 0 {
				l.Share = l.GPUHours / h.AllocatedGPUHours
			}
			w.Lost = append(w.Lost, l)
		}
	}
	slices.SortStableFunc(w.Lost, func(x, y LostShare) int {
		return cmp.Or(cmp.Compare(y.GPUHours, x.GPUHours), cmp.Compare(y.Jobs, x.Jobs))
	})
	if h.AllocatedGPUHours > 0 {
		w.Cancelled.Share = w.Cancelled.GPUHours / h.AllocatedGPUHours
	}

	// Users and accounts.
	if topN <= 0 {
		topN = defaultTopN
	}
	h.Users, h.Accounts = len(a.users.groups), len(a.accounts.groups)
	buf := make([]float64, len(a.waits))
	w.Users, w.OtherUsers = topGroups(a.users.groups, a.waits, func(r *waitRec) int32 { return r.user },
		buf, topN, h.AllocatedGPUHours)
	w.Accounts, w.OtherAccounts = topGroups(a.accounts.groups, a.waits, func(r *waitRec) int32 { return r.account },
		buf, topN, h.AllocatedGPUHours)
	return w
}

// fillDays sets w's days and hours of the week from the timeline's
// segments: the GPU-hours allocated, used and pending in each, and the
// capacity of invGPUs over each day's hours.
func (a *workloadAcc) fillDays(w *Workload, invGPUs int) {
	tl := &a.tl
	w.Daily = make([]DayUsage, len(tl.dates))
	for i, d := range tl.dates {
		w.Daily[i] = DayUsage{Date: d, JobsStarted: a.started[i], JobsSubmitted: a.submitted[i]}
	}
	alloc, used, pending := a.alloc.hours(tl), a.used.hours(tl), a.pending.hours(tl)
	var occ, allocCell, pendCell [7 * 24]float64
	for k := range tl.cell {
		d, cell := &w.Daily[tl.day[k]], tl.cell[k]
		segHours := float64(tl.starts[k+1]-tl.starts[k]) / nsPerHour
		d.Allocated += alloc[k]
		d.Used += used[k]
		d.Pending += pending[k]
		d.Capacity += float64(invGPUs) * segHours
		occ[cell] += segHours
		allocCell[cell] += alloc[k]
		pendCell[cell] += pending[k]
	}
	for cell, n := range occ {
		if n > 0 {
			w.HourOfWeek[cell/24][cell%24] = allocCell[cell] / n
			w.PendingHourOfWeek[cell/24][cell%24] = pendCell[cell] / n
		}
	}
}

// fillModels sets w's models, sorted by GPU-hours, and the headline's
// VRAM distribution over all of them; modelCards is the inventory's GPUs
// per model and windowHours the window's length.
func (a *workloadAcc) fillModels(w *Workload, modelCards map[string]int, windowHours float64) {
	h := &w.Headline
	// The fractions are scattered into one segment per model (a counting
	// sort) for the models' distributions, then summarised together.
	w.Models = make([]ModelUsage, len(a.models))
	byModel := make([]float64, len(a.fracs))
	next := make([]int, len(a.models))
	off := 0
	for i := range a.models {
		next[i] = off
		off += a.models[i].nFracs
	}
	for k, f := range a.fracs {
		byModel[next[a.fracModel[k]]] = f
		next[a.fracModel[k]]++
	}
	withFracs := 0
	waits := a.modelWaitDists()
	for i := range a.models {
		mo := &a.models[i]
		mo.u.VRAMPeakFrac = distOf(byModel[next[i]-mo.nFracs : next[i]])
		if mo.measured > 0 {
			mo.u.UtilMean = 100 * mo.used / mo.measured
		}
		mo.u.Wait = waits[i]
		mo.u.Energy = mo.energy.energy(mo.u.GPUHours)
		mo.u.Effective = mo.effective.summary(mo.u.GPUHours)
		if mo.u.Model != "" {
			mo.u.Cards = modelCards[mo.u.Model]
		}
		mo.u.CapacityGPUHours = float64(mo.u.Cards) * windowHours
		if mo.u.CapacityGPUHours > 0 {
			mo.u.Occupancy = mo.u.GPUHours / mo.u.CapacityGPUHours
		}
		if mo.u.Occupancy > 1+1e-9 {
			mo.u.InventoryMisfit = true
			mo.u.CapacityGPUHours, mo.u.Occupancy = 0, 0
		}
		if mo.nFracs > 0 {
			withFracs++
			h.VRAMPeakFrac = mo.u.VRAMPeakFrac
		}
		w.Models[i] = mo.u
	}
	slices.SortFunc(w.Models, func(x, y ModelUsage) int {
		return cmp.Or(cmp.Compare(y.GPUHours, x.GPUHours), cmp.Compare(x.Model, y.Model))
	})
	// With one model (the usual case) its distribution is the whole's.
	if withFracs > 1 {
		h.VRAMPeakFrac = distOf(a.fracs)
	}
	if h.VRAMPeakFrac.N > 0 {
		h.VRAMHeadroom = 1 - h.VRAMPeakFrac.P95
	}
}

// topGroups returns the n groups with the most GPU-hours (then by name)
// and the sum of the rest. The waits are laid out in buf (len(waits)) in
// that order, each group's together, so the rest's waits are one tail.
func topGroups(groups []groupAcc, waits []waitRec, key func(*waitRec) int32, buf []float64,
	n int, total float64) ([]GroupUsage, GroupUsage) {
	order := make([]int32, len(groups))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		return cmp.Or(cmp.Compare(groups[y].alloc, groups[x].alloc), cmp.Compare(groups[x].name, groups[y].name))
	})
	next := make([]int, len(groups)) // by group: where its next wait goes
	off := 0
	for _, gi := range order {
		next[gi] = off
		off += groups[gi].nWait
	}
	for i := range waits {
		g := key(&waits[i])
		buf[next[g]] = waits[i].wait
		next[g]++
	}

	n = min(n, len(order))
	top := make([]GroupUsage, n)
	for i, gi := range order[:n] {
		g := &groups[gi]
		top[i] = groupUsage(g, buf[next[gi]-g.nWait:next[gi]], total)
	}
	var others GroupUsage
	if len(order) == n {
		return top, others
	}
	var rest groupAcc
	tail := len(buf)
	for _, gi := range order[n:] {
		g := &groups[gi]
		rest.jobs += g.jobs
		rest.alloc += g.alloc
		rest.used += g.used
		rest.measured += g.measured
		rest.idle += g.idle
		rest.lost += g.lost
		rest.energy.add(g.energy)
		rest.effective.add(g.effective)
		for k := range rest.classHours {
			rest.classHours[k] += g.classHours[k]
		}
		tail -= g.nWait
	}
	others = groupUsage(&rest, buf[tail:], total)
	others.Count = len(order) - n
	return top, others
}

func groupUsage(g *groupAcc, waits []float64, total float64) GroupUsage {
	u := GroupUsage{
		Name: g.name, Jobs: g.jobs, GPUHours: g.alloc, MeasuredGPUHours: g.measured, UsedGPUHours: g.used,
		IdleGPUHours: g.idle, LostGPUHours: g.lost, Energy: g.energy.energy(g.alloc),
		Effective: g.effective.summary(g.alloc),
	}
	if g.measured > 0 {
		u.Utilisation = g.used / g.measured
	}
	if total > 0 {
		u.Share = g.alloc / total
	}
	if len(waits) > 0 {
		slices.Sort(waits)
		u.WaitP50 = PercentileSorted(waits, 50)
	}
	for k, hrs := range g.classHours {
		if hrs > g.classHours[u.TopClass] {
			u.TopClass = Class(k)
		}
	}
	return u
}
