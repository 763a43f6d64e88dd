package demo

import (
	"math"
	"math/rand/v2"
	"time"
)

// MemMode is how a job's GPU memory evolves over its run.
type MemMode uint8

// Memory modes.
const (
	// MemRamp grows linearly to the peak over the first tenth of the run
	// (a training loop warming up its allocator), then holds it.
	MemRamp MemMode = iota
	// MemPrealloc takes 95 % of the card at once and holds it flat, as
	// TensorFlow and JAX do by default.
	MemPrealloc
	// MemSteady holds the peak from the first reading (a loaded model).
	MemSteady
)

// Pattern is what a job does with each GPU it uses.
type Pattern struct {
	Mem     MemMode
	MemFrac float64 // peak memory as a fraction of the card (MemRamp, MemSteady)
	Util    float64 // mean SM utilisation, percent
	// Burst, when > 0, makes utilisation bursty: each reading is either
	// Util+Burst or near zero, averaging Util (an inference service).
	Burst float64
	// UsedGPUs is how many of the allocated GPUs get a process; 0 means
	// none (an idle allocation), −1 means all.
	UsedGPUs int
	// IOWait is the fraction of wall time the job stalls on block IO.
	IOWait float64
}

// window returns the template's submission window of the day, [from, to).
func (t *Template) window() (from, to time.Duration) {
	if t.To <= 0 {
		return 0, 24 * time.Hour
	}
	return t.From, t.To
}

// advance returns the time at which d has passed since at, counting only
// the template's submission window of each day (a time outside a window
// first moves to the next window's start).
func (t *Template) advance(at time.Time, d time.Duration) time.Time {
	from, to := t.window()
	for {
		day := at.Truncate(24 * time.Hour)
		switch tod := at.Sub(day); {
		case tod < from:
			at = day.Add(from)
		case tod >= to:
			at = day.Add(24*time.Hour + from)
			continue
		}
		left := day.Add(to).Sub(at)
		if d < left {
			return at.Add(d)
		}
		d -= left
		at = day.Add(24*time.Hour + from)
	}
}

// usage returns memory (fraction of the card) and utilisation at the
// elapsed fraction x of the run; rng adds the noise of real readings.
func (p Pattern) usage(x float64, rng *rand.Rand) (memFrac, util float64) {
	switch p.Mem {
	case MemPrealloc:
		memFrac = 0.95
	case MemSteady:
		memFrac = p.MemFrac
	default:
		memFrac = p.MemFrac * math.Min(1, 0.2+x*8)
	}
	switch {
	case p.Burst > 0:
		// On with probability Util/(Util+Burst) at Util+Burst: mean Util.
		if rng.Float64() < p.Util/(p.Util+p.Burst) {
			util = p.Util + p.Burst
		} else {
			util = rng.Float64() * 2
		}
	default:
		util = p.Util + (rng.Float64()-0.5)*p.Util*0.2
	}
	return memFrac, math.Max(0, math.Min(100, util))
}

// Template is one kind of recurring job a user submits.
type Template struct {
	User, Account string
	Name          string
	// Model is the GPU type the job asks for ("h100", "a100", "l40s"), ""
	// for any.
	Model string
	GPUs  int
	// PerDay is the mean number of submissions per day (Poisson).
	PerDay float64
	// From and To, when To > 0, are the time of day (on the simulated
	// clock, UTC) within which the user submits: the PerDay submissions of
	// a day all fall in [From, To), at a Poisson rate scaled to the
	// window. Zero To: at any time of day.
	From, To time.Duration
	// Run is the run time, drawn uniformly in [RunMin, RunMax].
	RunMin, RunMax time.Duration
	// Limit is the requested time limit; a run longer than it times out.
	Limit time.Duration
	// ArrayTasks > 0 submits an array of that many tasks.
	ArrayTasks int
	// FailRate is the share of runs that fail (exit 1) partway.
	FailRate float64
	Pattern  Pattern
}

// DefaultWorkload is the demo cluster's users: eleven people in three
// accounts, each with the habits that make a real cluster interesting.
// The load is set so that the month's queue asks a capacity question with
// one answer of each kind: the H100s are short (alice's and dave's jobs wait
// hours at the p95); in working hours (08:00–18:00) the interactive and
// evaluation jobs fill the gpu partition and the short debug and test jobs,
// which ask for 30 minutes, wait behind them on the A100s too, which a debug
// partition of that MaxTime and a higher PriorityTier fixes without a
// purchase (the A100 jobs themselves are submitted at night); the L40Ss
// are not short.
func DefaultWorkload() []Template {
	all := -1
	return []Template{
		// vision: a big trainer, a debugger with notebooks (working
		// hours), a sweeper (evening arrays).
		{User: "alice", Account: "vision", Name: "train-vit-large", Model: "h100", GPUs: 4, PerDay: 1,
			RunMin: 8 * time.Hour, RunMax: 26 * time.Hour, Limit: 24 * time.Hour,
			Pattern: Pattern{Mem: MemRamp, MemFrac: 0.88, Util: 92, UsedGPUs: all}},
		{User: "bob", Account: "vision", Name: "debug-augment", GPUs: 1, PerDay: 6, From: 8 * time.Hour, To: 18 * time.Hour,
			RunMin: 2 * time.Minute, RunMax: 20 * time.Minute, Limit: 30 * time.Minute, FailRate: 0.3,
			Pattern: Pattern{Mem: MemRamp, MemFrac: 0.2, Util: 40, UsedGPUs: all}},
		{User: "bob", Account: "vision", Name: "jupyter", GPUs: 1, PerDay: 2, From: 8 * time.Hour, To: 18 * time.Hour,
			RunMin: 1 * time.Hour, RunMax: 3 * time.Hour, Limit: 8 * time.Hour,
			Pattern: Pattern{Mem: MemSteady, MemFrac: 0.1, Util: 12, Burst: 50, UsedGPUs: all}},
		{User: "carol", Account: "vision", Name: "sweep-lr", Model: "a100", GPUs: 1, PerDay: 0.5, ArrayTasks: 4, From: 18 * time.Hour, To: 24 * time.Hour,
			RunMin: 30 * time.Minute, RunMax: 90 * time.Minute, Limit: 4 * time.Hour, FailRate: 0.05,
			Pattern: Pattern{Mem: MemRamp, MemFrac: 0.55, Util: 85, UsedGPUs: all}},
		// nlp: a trainer who asks for two GPUs and uses one, a service, a
		// JAX user whose framework takes the whole card (overnight runs).
		{User: "dave", Account: "nlp", Name: "finetune-llama", Model: "h100", GPUs: 2, PerDay: 1,
			RunMin: 5 * time.Hour, RunMax: 14 * time.Hour, Limit: 48 * time.Hour,
			Pattern: Pattern{Mem: MemRamp, MemFrac: 0.7, Util: 80, UsedGPUs: 1}},
		{User: "erin", Account: "nlp", Name: "serve-embeddings", GPUs: 1, PerDay: 0.5,
			RunMin: 12 * time.Hour, RunMax: 36 * time.Hour, Limit: 48 * time.Hour,
			Pattern: Pattern{Mem: MemSteady, MemFrac: 0.3, Util: 10, Burst: 60, UsedGPUs: all}},
		{User: "frank", Account: "nlp", Name: "jax-distill", Model: "a100", GPUs: 1, PerDay: 2, To: 8 * time.Hour,
			RunMin: 4 * time.Hour, RunMax: 10 * time.Hour, Limit: 24 * time.Hour, FailRate: 0.1,
			Pattern: Pattern{Mem: MemPrealloc, Util: 55, UsedGPUs: all}},
		// bio: IO-bound preprocessing, forgotten allocations, short tests,
		// small batch inference that would fit on a shard.
		{User: "grace", Account: "bio", Name: "preprocess-cryoem", Model: "l40s", GPUs: 1, PerDay: 2,
			RunMin: 1 * time.Hour, RunMax: 3 * time.Hour, Limit: 6 * time.Hour,
			Pattern: Pattern{Mem: MemSteady, MemFrac: 0.15, Util: 12, UsedGPUs: all, IOWait: 0.45}},
		{User: "heidi", Account: "bio", Name: "interactive-alloc", GPUs: 2, PerDay: 0.5,
			RunMin: 4 * time.Hour, RunMax: 10 * time.Hour, Limit: 12 * time.Hour,
			Pattern: Pattern{UsedGPUs: 0}},
		{User: "ivan", Account: "bio", Name: "test-pipeline", GPUs: 1, PerDay: 5, From: 8 * time.Hour, To: 18 * time.Hour,
			RunMin: 1 * time.Minute, RunMax: 15 * time.Minute, Limit: 30 * time.Minute, FailRate: 0.35,
			Pattern: Pattern{Mem: MemRamp, MemFrac: 0.1, Util: 30, UsedGPUs: all}},
		{User: "judy", Account: "bio", Name: "fold-batch", Model: "l40s", GPUs: 1, PerDay: 2,
			RunMin: 1 * time.Hour, RunMax: 4 * time.Hour, Limit: 24 * time.Hour,
			Pattern: Pattern{Mem: MemSteady, MemFrac: 0.12, Util: 18, UsedGPUs: all}},
		// nlp again: an evaluation harness, small arrays in working hours.
		{User: "mallory", Account: "nlp", Name: "eval-harness", GPUs: 1, PerDay: 1.33, ArrayTasks: 3, From: 8 * time.Hour, To: 18 * time.Hour,
			RunMin: 30 * time.Minute, RunMax: 90 * time.Minute, Limit: 4 * time.Hour,
			Pattern: Pattern{Mem: MemRamp, MemFrac: 0.4, Util: 60, UsedGPUs: all}},
	}
}
