package analysis

// What the recommendations and the capacity plan (package capacity) share:
// the changes a recommendation asks a replay to apply, and the replayed
// effect the plan hands back. They are data only; the replay itself is
// capacity's.

import (
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// Change kinds of a what-if.
const (
	ChangeAdd       = "add"       // Count GPUs of Model (into Partition)
	ChangeRemove    = "remove"    // Count GPUs of Model
	ChangePartition = "partition" // a partition changed or added
	ChangeQOS       = "qos"       // a QOS's priority and limits
	ChangeShards    = "shards"    // Count shards per GPU on the nodes of Model
	ChangeJobs      = "jobs"      // some jobs asked differently (Rewrite)
)

// JobRewrite is how a recommendation changes what some jobs ask for, as
// if their users followed it: fewer GPUs, a shard, a tighter time limit,
// another QOS or partition, or no GPU at all.
type JobRewrite struct {
	// Jobs are indices into the Input's Jobs.
	Jobs map[int]bool
	// Drop takes the jobs out of the GPU queue (they run without GPUs).
	Drop bool
	// GPUs > 0: each job asks for that many GPUs when it asked for more.
	GPUs int
	// Shards > 0: each job asks for that many shards instead of its GPU.
	Shards int
	// LimitCap > 0: a job whose run fits in it gets it as its time limit
	// when its own was longer (or none); longer runs keep theirs (their
	// users pass --time).
	LimitCap time.Duration
	// QOS and Partition, when set, replace the job's.
	QOS, Partition string
}

// Change is one change a what-if applies to today's cluster and rules.
type Change struct {
	Kind string `json:"kind"`
	// add, remove: how many GPUs of which model (matched case-insensitively
	// by Slurm's GRES type or in the model name), and for add the
	// partition ("" : the partitions that have that model, else all).
	Count     int    `json:"count,omitempty"`
	Model     string `json:"model,omitempty"`
	Partition string `json:"partition,omitempty"`
	// partition: the partition as given, and which keys were given.
	PartitionConf slurmext.PartitionConf `json:"-"`
	PartitionSet  map[string]bool        `json:"-"`
	// JobsOnly: a new partition takes only the jobs a rewrite sends to
	// it, not every job whose limit fits its MaxTime.
	JobsOnly bool `json:"-"`
	// qos: the QOS's limits.
	QOS slurmext.QOSLimits `json:"-"`
	// jobs: the rewrite.
	Rewrite *JobRewrite `json:"-"`
	// Spec is the change as the user wrote it; Words what it did to
	// today's cluster, for a heading ("8xG2 removed", "4xH100 added to
	// partition gpu", "partition debug added (…)"), set by capacity.RunWhatIf.
	Spec  string `json:"spec"`
	Words string `json:"words,omitempty"`
}

// String is a change as the user wrote it.
func (c Change) String() string { return c.Spec }

// Effect is a recommendation's replayed effect: the waits of the jobs it
// is about (Group) and of every GPU job, today's rules against the rules
// with it, each a median over seeds with its p10–p90.
type Effect struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Simulated bool   `json:"simulated"`
	// Why it was not replayed, when Simulated is false.
	Why     string `json:"why,omitempty"`
	Group   string `json:"group,omitempty"`
	Jobs    int    `json:"jobs"`
	Before  Group  `json:"before"`
	After   Group  `json:"after"`
	AllFrom Group  `json:"all_before"`
	AllTo   Group  `json:"all_after"`
	// Outcome is EffectHelps, EffectNone, EffectHarms, EffectAloneOnly or
	// EffectNotSimulated.
	Outcome string `json:"outcome"`
	// Text is the sentence every output prints.
	Text string `json:"text"`
}

// Effect outcomes.
const (
	EffectHelps        = "helps"
	EffectNone         = "no_effect"
	EffectHarms        = "harms"
	EffectNotSimulated = "not_simulated"
	// EffectAloneOnly: it helps alone, but not with the free changes kept
	// before it; it is not applied.
	EffectAloneOnly = "helps_alone_only"
)

// OutcomeWords says what a replayed effect's outcome means for the plan.
func OutcomeWords(outcome string) string {
	switch outcome {
	case EffectHelps:
		return "helps: applied before any purchase"
	case EffectHarms:
		return "harmful: the queue as a whole waits longer; not applied"
	case EffectNone:
		return "no material change in waits; not applied"
	case EffectAloneOnly:
		return "helps alone, not with the changes kept before it; not applied"
	}
	return "not simulated"
}

// Group is the answer for one partition or GPU model: each a spread over
// the seeded runs. Waits are of the jobs that arrived in the window,
// seconds; occupancy the share of the group's GPU time used in the window;
// queued GPU-hours the GPUs those jobs asked for times their wait.
type Group struct {
	Name           string `json:"name"`
	GPUs           int    `json:"gpus"`
	Jobs           Spread `json:"jobs"`
	WaitMean       Spread `json:"wait_mean_s"`
	WaitP50        Spread `json:"wait_p50_s"`
	WaitP95        Spread `json:"wait_p95_s"`
	Occupancy      Spread `json:"occupancy"`
	QueuedGPUHours Spread `json:"queued_gpu_hours"`
	// Models only: FullHours is how long in the window every GPU of the
	// model was busy at once; AddedGPUs the GPUs a change added and
	// AddedOccupancy the share of their time used.
	FullHours      Spread `json:"full_hours"`
	AddedGPUs      int    `json:"added_gpus,omitempty"`
	AddedOccupancy Spread `json:"added_occupancy"`
	// Models only: Demand is how many of the window's replayed jobs could
	// run on this model only (they asked for its GPU type, or no other
	// model of their partitions could hold them); Placeable how many could
	// run on it and on another (they asked for no GPU type, or for one
	// several models answer to): which model such a job runs on is the
	// replay's placement, first fit in node order, not a demand for it.
	// Absent: none.
	Demand    int `json:"demand_jobs,omitempty"`
	Placeable int `json:"placeable_jobs,omitempty"`
}

// PlacedOnly reports whether a model's jobs, waits and occupancy are the
// replay's placement alone: no job needed the model, and some could run
// on it among others (untyped jobs placed by the replay). Such a model is
// never the worst group a verdict names, and --add or --remove of it says
// so.
func (g Group) PlacedOnly() bool { return g.Demand == 0 && g.Placeable > 0 }

// Placed reports whether some of the jobs that could run on a model could
// run on another as well: its rows are partly the replay's placement.
func (g Group) Placed() bool { return g.Placeable > 0 }

// Spread is a value over seeded runs: the median and the 10th and 90th
// percentiles (nearest rank).
type Spread struct {
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
}

// ReplaySpec is how a recommendation is applied in a replay: the what-if
// changes, and the jobs whose wait measures its effect (indices into the
// Input's Jobs). Why, when set, says why it cannot be replayed.
type ReplaySpec struct {
	Changes   []Change
	Group     map[int]bool
	GroupName string
	Why       string
}
