// Package notice decides and delivers the notices a job's user gets while
// the job runs about idle and oversized GPU allocations (docs/notices.md):
// the rules over the agent's live readings (Tracker), the message (Compose),
// delivery through a sendmail-compatible program (Mailer), recipients,
// exemptions and opt-outs, the job name and QOS from squeue, and the
// optional cancel action (Canceller); and the admins' daily digest: its
// day (DayWindow; the window pipeline, monthly.Digest, reads it once
// through the caller's scope), its sums (SummariseDay: per user, the
// GPU-hours held and idle, and the notices), its text (Digest.Subject,
// Digest.WriteBody, laid out by internal/texttable) and its mail
// (SendDigest).
//
// The rules are pure and cheap: a Tracker keeps a few values per GPU and
// evaluates in O(GPUs) without allocating, so the agent can call it on
// every sampling tick. Everything that touches the outside world (mail,
// squeue, scancel, home directories) is bounded in time and is called from
// the agent's delivery goroutine, never from sampling. It must not touch
// the database (the agent records notices through package store) nor NVML.
package notice

import (
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// IdleRule is a rule over idle readings (rules a, b and d): a reading is
// idle when its utilisation is known and below UtilBelow percent — its SM
// activity (GPM) where the reading has the job's own (readingSM), its
// duty cycle elsewhere — and
// either none of the job's processes is on the GPU or its memory is known
// and below MemoryBelow. At the threshold is busy. The rule fires when a
// GPU's readings were idle without a break for at least Window.
type IdleRule struct {
	Enabled     bool
	Window      time.Duration
	UtilBelow   float64
	MemoryBelow uint64
}

// idle reports whether rd is an idle reading under r.
func (r *IdleRule) idle(rd *profile.Reading) bool {
	if sm, ok := readingSM(rd); ok {
		if sm >= r.UtilBelow {
			return false
		}
	} else if !rd.Util.Valid || float64(rd.Util.Value) >= r.UtilBelow {
		return false
	}
	if rd.Processes == 0 {
		return true
	}
	return rd.MemUsed.Valid && rd.MemUsed.Value < r.MemoryBelow
}

// readingSM is a reading's SM activity (GPM, percent) when it is the
// job's own: measured, and not a shared GPU's, whose activity is the whole
// device's. A loop of tiny kernels keeps the duty cycle high while using
// almost none of the SMs; where GPM measured it, the rules read the SMs.
func readingSM(rd *profile.Reading) (float64, bool) {
	if !rd.Activity.Valid || rd.Shared || rd.ActivityScope == profile.ActivityScopeSharedGPU {
		return 0, false
	}
	sm := rd.Activity.Value.SM
	if !sm.Valid || !(sm.Value >= 0 && sm.Value <= 100) {
		return 0, false
	}
	return sm.Value, true
}

// profileSM is a running profile's mean SM activity when it is the job's
// own (not a shared GPU's device activity).
func profileSM(g *profile.GPU) (float64, bool) {
	if g.Activity == nil || g.Activity.Shared() {
		return 0, false
	}
	return g.Activity.SM.Mean()
}

// GPUType is a GPU type of the cluster with its memory: a job that fits it
// needs no larger card.
type GPUType struct {
	Name   string // the gres type users name (--gres=gpu:NAME:1)
	Memory uint64 // bytes
}

// OversizedRule is rule (c): a single whole-GPU job that has run at least
// Window with a mean utilisation below UtilBelow percent and whose memory
// need (peak × Margin, the analysis' sharing margin) fits MemoryShare of
// its card (a shard, when Shards) or one of Types smaller than its card.
type OversizedRule struct {
	Enabled     bool
	Window      time.Duration
	UtilBelow   float64
	MemoryShare float64
	Margin      float64
	Shards      bool
	Types       []GPUType // smallest first
	// SharedNodes is true when a job of the cluster may hold shards of
	// its GPU rather than the GPU (slurm.conf gives a node gres/shard,
	// or slurm.conf is not known). The prolog cannot tell a shard job
	// from a one-GPU job, so the rule then fires only for a job whose
	// allocation slurmctld confirmed as whole GPUs (Tracker.SetAllocation):
	// a --gres=shard:2 job alone on its GPU is never told it holds a
	// whole GPU (issue #38).
	SharedNodes bool
}

// Rules are the rules the agent evaluates, with the sampling interval that
// tells a gap in the readings from a slow tick.
type Rules struct {
	Interval   time.Duration
	IdleGPU    IdleRule // (a)
	IdleJob    IdleRule // (b)
	UnusedGPUs IdleRule // (d)
	Oversized  OversizedRule
	// CancelGrace, when positive, enables the cancel step: after the
	// idle_job notice, this much more of every GPU idle under IdleJob's
	// thresholds (the idle run at least IdleJob.Window + CancelGrace).
	CancelGrace time.Duration
}

// MaxGap is how many sampling intervals may pass between two readings of a
// GPU before its idle run restarts: unknown is never idle.
const MaxGap = 3

// The rules by index in a Tracker's per-GPU state.
const (
	ruleA = iota // idle_gpu
	ruleB        // idle_job
	ruleD        // unused_gpus
	idleRules
)

type gpuState struct {
	last time.Time // the latest reading, zero before the first
	// since is when the current idle run began under each idle rule's
	// thresholds; zero when the latest reading was not idle.
	since [idleRules]time.Time
	// What the latest reading showed, for the evidence.
	util      uint32
	utilValid bool
	sm        float64 // SM activity (GPM), the job's own
	smValid   bool
	mem       uint64
	memValid  bool
	procs     int
}

// Tracker keeps one job's rule state: a few values per GPU, never the
// readings. The zero value is unusable; make one with NewTracker. It is
// not safe for concurrent use (the agent calls it under its lock).
type Tracker struct {
	rules *Rules
	gpus  []gpuState
	// fired are the rules noticed (or queued) for the job, by bit.
	fired uint8
	// idleJobAt is when the idle_job notice was decided, for the cancel
	// step.
	idleJobAt time.Time
	// cancel allows the cancel step for this job (its partition is one
	// the admin listed; it is not exempt).
	cancel bool
	// shards and allocKnown are what Slurm allocated the job on this
	// node (SetAllocation).
	shards     int
	allocKnown bool
}

// SetAllocation tells the tracker what slurmctld allocated the job on
// this node (profile.Job.Shards, AllocKnown): shards of its GPU, or whole
// GPUs (shards 0), once known. A shard job never gets the oversized
// notice; where a job may hold shards (OversizedRule.SharedNodes), one
// whose allocation is not known does not either.
func (t *Tracker) SetAllocation(shards int, known bool) {
	t.shards, t.allocKnown = shards, known
}

// wholeGPUs reports whether the job is known to hold its GPUs whole.
func (t *Tracker) wholeGPUs() bool {
	if t.allocKnown {
		return t.shards == 0
	}
	return !t.rules.Oversized.SharedNodes
}

// AllowCancel lets the cancel step (Rules.CancelGrace) apply to the job.
func (t *Tracker) AllowCancel() { t.cancel = true }

// SetCancel sets whether the cancel step applies to the job (its
// partition, which a late hook may change, is one the admin listed).
func (t *Tracker) SetCancel(allowed bool) { t.cancel = allowed }

const (
	bitIdleGPU = 1 << iota
	bitIdleJob
	bitUnused
	bitOversized
	bitCancel
)

func ruleBit(rule string) uint8 {
	switch rule {
	case profile.RuleIdleGPU:
		return bitIdleGPU
	case profile.RuleIdleJob:
		return bitIdleJob
	case profile.RuleUnusedGPUs:
		return bitUnused
	case profile.RuleOversized:
		return bitOversized
	case profile.RuleCancel:
		return bitCancel
	}
	return 0
}

// NewTracker returns the state of a job with gpus GPUs under rules. The
// notices the job already has (a resumed agent's, loaded with the profile)
// count as fired: they are never decided again.
func NewTracker(rules *Rules, gpus int, done []profile.Notice) *Tracker {
	t := &Tracker{rules: rules, gpus: make([]gpuState, gpus)}
	for _, n := range done {
		t.MarkFired(n.Rule, n.Time)
	}
	return t
}

// GPUs returns how many GPUs the tracker follows.
func (t *Tracker) GPUs() int { return len(t.gpus) }

// Resize follows a job whose GPU list changed (a hook told the agent more
// than it had found): the state of every GPU restarts.
func (t *Tracker) Resize(gpus int) {
	t.gpus = make([]gpuState, gpus)
}

// MarkFired records that rule was decided at time at: it is never decided
// again for the job.
func (t *Tracker) MarkFired(rule string, at time.Time) {
	t.fired |= ruleBit(rule)
	if rule == profile.RuleIdleJob && (t.idleJobAt.IsZero() || at.Before(t.idleJobAt)) {
		t.idleJobAt = at
	}
}

// Fired reports whether rule was decided for the job.
func (t *Tracker) Fired(rule string) bool { return t.fired&ruleBit(rule) != 0 }

// Observe adds the reading of GPU i (its position in the job's profile),
// as the agent attributed it to the job. A reading more than MaxGap
// intervals after the previous one restarts the GPU's idle runs first.
func (t *Tracker) Observe(i int, rd profile.Reading) {
	if i < 0 || i >= len(t.gpus) {
		return
	}
	g := &t.gpus[i]
	if !g.last.IsZero() && rd.Time.Sub(g.last) > MaxGap*t.rules.Interval {
		g.since = [idleRules]time.Time{}
	}
	g.last = rd.Time
	g.util, g.utilValid = rd.Util.Value, rd.Util.Valid
	g.sm, g.smValid = readingSM(&rd)
	g.mem, g.memValid = rd.MemUsed.Value, rd.MemUsed.Valid
	g.procs = rd.Processes
	for k, r := range [idleRules]*IdleRule{&t.rules.IdleGPU, &t.rules.IdleJob, &t.rules.UnusedGPUs} {
		switch {
		case !r.idle(&rd):
			g.since[k] = time.Time{}
		case g.since[k].IsZero():
			g.since[k] = rd.Time
		}
	}
}

// Restart restarts GPU i's idle runs: the processes its readings come
// from changed (one exited, started, or was replaced under its PID), and a
// notice or a cancel needs its evidence from the same processes for its
// whole window.
func (t *Tracker) Restart(i int) {
	if i < 0 || i >= len(t.gpus) {
		return
	}
	t.gpus[i].since = [idleRules]time.Time{}
}

// Lost records that GPU i's reading failed at now: its idle runs restart
// (a GPU that cannot be read is not known to be idle).
func (t *Tracker) Lost(i int, now time.Time) {
	if i < 0 || i >= len(t.gpus) {
		return
	}
	t.gpus[i].since = [idleRules]time.Time{}
	t.gpus[i].last = now
	t.gpus[i].utilValid, t.gpus[i].memValid = false, false
}

// Finding is a rule that fires: which, since when, on which GPUs (bit i is
// the job's GPU at position i).
type Finding struct {
	Rule  string
	Since time.Time
	GPUs  uint64
	// Need is the memory need (bytes, peak × margin) and Target the
	// smaller resource it fits ("shard" or a GPU type), for oversized.
	Need   uint64
	Target string
}

// run returns the start of GPU i's idle run under rule k as of now, and
// whether the run is current (its latest reading is recent).
func (t *Tracker) run(i, k int, now time.Time) (time.Time, bool) {
	g := &t.gpus[i]
	if g.since[k].IsZero() || now.Sub(g.last) > MaxGap*t.rules.Interval {
		return time.Time{}, false
	}
	return g.since[k], true
}

// Evaluate returns the rule that fires for the job now, if any: at most
// one per call, the highest of b, d, a (b supersedes a and d, d
// supersedes a), then c, then the cancel step. A rule fires once per job:
// the caller marks it with MarkFired when it has taken the finding (a
// full queue may make it try again at the next tick). gpus are the job's
// GPUs in profile order (for rule c's peaks and means); start is the
// job's start. It does not allocate.
func (t *Tracker) Evaluate(now, start time.Time, gpus []profile.GPU) (Finding, bool) {
	n := len(t.gpus)
	if n == 0 || n > 64 {
		return Finding{}, false
	}
	r := t.rules
	// Count the GPUs idle for each rule's window.
	var mask [idleRules]uint64
	var latest [idleRules]time.Time // the latest run start among the idle GPUs
	var count [idleRules]int
	windows := [idleRules]time.Duration{r.IdleGPU.Window, r.IdleJob.Window, r.UnusedGPUs.Window}
	for i := range t.gpus {
		for k := range idleRules {
			since, ok := t.run(i, k, now)
			if !ok || now.Sub(since) < windows[k] {
				continue
			}
			mask[k] |= 1 << i
			count[k]++
			if since.After(latest[k]) {
				latest[k] = since
			}
		}
	}
	allB := count[ruleB] == n
	if r.IdleJob.Enabled && allB && t.fired&bitIdleJob == 0 {
		return Finding{Rule: profile.RuleIdleJob, Since: latest[ruleB], GPUs: mask[ruleB]}, true
	}
	superseded := t.fired&bitIdleJob != 0
	if r.UnusedGPUs.Enabled && !superseded && n >= 2 && count[ruleD] == n-1 && t.fired&bitUnused == 0 {
		return Finding{Rule: profile.RuleUnusedGPUs, Since: latest[ruleD], GPUs: mask[ruleD]}, true
	}
	superseded = superseded || t.fired&bitUnused != 0
	// With (b) on, every GPU idle is (b)'s case, not (a)'s.
	whole := r.IdleJob.Enabled && count[ruleA] == n
	if r.IdleGPU.Enabled && !superseded && count[ruleA] > 0 && !whole && t.fired&bitIdleGPU == 0 {
		return Finding{Rule: profile.RuleIdleGPU, Since: latest[ruleA], GPUs: mask[ruleA]}, true
	}
	if f, ok := t.oversized(now, start, gpus); ok {
		return f, true
	}
	if r.CancelGrace > 0 && t.cancel && t.fired&bitIdleJob != 0 && t.fired&bitCancel == 0 && allB {
		// Every GPU idle since before the notice (or for a whole window
		// and the grace again after a break), and the grace passed.
		if now.Sub(t.idleJobAt) >= r.CancelGrace && now.Sub(latest[ruleB]) >= r.IdleJob.Window+r.CancelGrace {
			return Finding{Rule: profile.RuleCancel, Since: latest[ruleB], GPUs: mask[ruleB]}, true
		}
	}
	return Finding{}, false
}

// oversized evaluates rule (c) on the job's running summary: a single
// GPU known to be held whole (wholeGPUs), run for the window with enough readings, low mean
// utilisation, and a memory need that a shard or a smaller type holds.
func (t *Tracker) oversized(now, start time.Time, gpus []profile.GPU) (Finding, bool) {
	o := &t.rules.Oversized
	if !o.Enabled || t.fired&bitOversized != 0 || len(gpus) != 1 || len(t.gpus) != 1 || !t.wholeGPUs() {
		return Finding{}, false
	}
	g := &gpus[0]
	if g.Shared || g.EarlyHigh || g.MemoryTotal == 0 || g.MemSamples == 0 || start.IsZero() ||
		now.Sub(start) < o.Window {
		return Finding{}, false
	}
	// At least half the window's readings: a profile resumed after a long
	// agent outage knows too little.
	if t.rules.Interval > 0 && time.Duration(g.Samples)*t.rules.Interval < o.Window/2 {
		return Finding{}, false
	}
	mean, ok := g.UtilMean()
	if sm, smOK := profileSM(g); smOK {
		mean, ok = sm, true
	}
	if !ok || mean >= o.UtilBelow {
		return Finding{}, false
	}
	need := uint64(float64(g.MemPeak) * o.Margin)
	if need == 0 {
		return Finding{}, false // no memory used: that is an idle GPU, rules a/b
	}
	f := Finding{Rule: profile.RuleOversized, Since: start, GPUs: 1, Need: need}
	switch {
	case o.Shards && float64(need) <= o.MemoryShare*float64(g.MemoryTotal):
		f.Target = "shard"
	default:
		for _, ty := range o.Types {
			if ty.Memory < g.MemoryTotal && need <= ty.Memory {
				f.Target = ty.Name
				break
			}
		}
	}
	if f.Target == "" {
		return Finding{}, false
	}
	return f, true
}
