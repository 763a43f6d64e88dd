package queuesim

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrBadInput means the cluster, the policy or a job is not something the
// simulator can run: a partition naming a node that does not exist, a job
// in no partition, a negative run time. The error says which.
var ErrBadInput = errors.New("queuesim: bad input")

// Cluster is what the jobs run on: nodes with GPUs, the partitions that
// group them, and the QOS whose limits apply.
type Cluster struct {
	Nodes      []Node
	Partitions []Partition
	QOS        []QOS
}

// Node is one node: GPUs of one type, and optionally shards on them.
type Node struct {
	Name string
	// Type is the node's GPU type as jobs ask for it (Slurm's GRES type,
	// "h100"), compared exactly: the caller folds case. "" means untyped:
	// only jobs that name no type run here.
	Type string
	GPUs int
	// ShardsPerGPU is the node's shard count divided by its GPUs (Slurm
	// splits a shard count evenly over the GPUs); 0 when the node has no
	// shards. A GPU holding shards of a job is not given whole to another,
	// and a GPU given whole holds no shards.
	ShardsPerGPU int
}

// Partition is a set of nodes with its limits.
type Partition struct {
	Name  string
	Nodes []int // indices into Cluster.Nodes
	// MaxTime is the longest time limit a job may have here; 0 is
	// unlimited. A job whose limit is longer never starts in it (Slurm
	// leaves it pending with reason PartitionTimeLimit).
	MaxTime time.Duration
	// PriorityTier orders partitions: jobs of a higher tier are scheduled
	// first, whatever their priority.
	PriorityTier int
	// PriorityFactor is PriorityJobFactor, the partition's share of the
	// multifactor priority (normalised by the largest).
	PriorityFactor int
}

// QOS is a quality of service: its priority and the limits a job must fit
// in to start (0 is no limit). A job held back by a QOS limit does not
// block the lower-priority jobs of its partition, as in Slurm.
type QOS struct {
	Name     string
	Priority int
	// MaxGPUsPerUser is MaxTRESPerUser=gres/gpu=N, counting shard jobs by
	// their share of a GPU; MaxJobsPerUser limits running jobs; GrpGPUs is
	// GrpTRES=gres/gpu=N over all users.
	MaxGPUsPerUser int
	MaxJobsPerUser int
	GrpGPUs        int
}

// Priority is how pending jobs are ordered: Slurm's priority/basic (FIFO by
// submission, Job.Order) or priority/multifactor, a weighted sum of factors
// each between 0 and 1 (age, fair-share, job size, partition, QOS),
// recomputed every CalcPeriod as Slurm's PriorityCalcPeriod.
type Priority struct {
	Multifactor bool

	WeightAge, WeightFairshare, WeightJobSize, WeightPartition, WeightQOS float64
	// MaxAge is when the age factor reaches 1 (PriorityMaxAge, 7 days by
	// default); DecayHalfLife the half-life of fair-share usage
	// (PriorityDecayHalfLife, 7 days).
	MaxAge, DecayHalfLife time.Duration
	// FavorSmall reverses the job size factor (PriorityFavorSmall).
	FavorSmall bool
	// CalcPeriod is PriorityCalcPeriod (5 minutes by default).
	CalcPeriod time.Duration
	// FairTree ranks fair-share as Slurm's Fair Tree does (its default
	// since 19.05; PriorityFlags=NO_FAIR_TREE is the classic formula):
	// every association (account, user) is ranked, accounts first by
	// their level fair-share S/U among the accounts, then users by theirs
	// within the account, and its factor is its rank over the number of
	// associations. Every account and every user in an account has an
	// equal share. Off, fair-share is classic 2^(−U/S) per user.
	FairTree bool
	// RootUsers is, for Fair Tree, the number of user associations
	// directly under the tree's root that run no job in the replay:
	// slurmdbd creates one, the cluster's root user, with every cluster
	// (DefaultPriority: 1). Each has no usage, so an infinite level
	// fair-share: it ranks above every association with usage and counts
	// in the number the ranks are divided by (with the root user and three
	// accounts of one user each, Slurm's factors are 3/4, 2/4 and 1/4, not
	// 1, 2/3 and 1/3).
	RootUsers int
}

// Scheduler holds the main scheduler's and the backfill's settings, named
// as in slurm.conf's SchedulerParameters.
type Scheduler struct {
	// QueueDepth is default_queue_depth: how many jobs the main scheduler
	// tests on an event (a job arrives or ends); every SchedInterval it
	// tests them all.
	QueueDepth    int
	SchedInterval time.Duration

	// Backfill is sched/backfill: every BfInterval, pending jobs are
	// planned in priority order on the time limits of running jobs; one
	// may start now only if it delays no job planned before it
	// (conservative backfill). At most BfMaxJobTest jobs are tested per
	// cycle, and none is planned beyond BfWindow. As in Slurm 22.05's
	// backfill.c, a running job is planned to end at start + limit
	// exactly, a pending job is tested for its limit exactly, and a
	// planned job's booking runs from its start to its end, each rounded
	// down to BfResolution on the wall clock (ClockOffset), at least one
	// BfResolution.
	Backfill     bool
	BfInterval   time.Duration
	BfResolution time.Duration
	BfWindow     time.Duration
	BfMaxJobTest int
	// BfMaxJobPart and BfMaxJobUser are bf_max_job_part and
	// bf_max_job_user: in one cycle at most this many jobs of a partition,
	// or of a user, are tested (0: no limit). As in Slurm, a job past
	// either is skipped before it is tested and does not count toward
	// BfMaxJobTest, and one that is tested counts toward both. A job
	// submitted to several partitions counts once toward its user and once
	// toward each partition still open to it, and is planned in those only
	// (Slurm tests it once per partition, counting each toward the user).
	//
	// bf_continue is not a setting here: it lets Slurm's cycle go on after
	// it yields its locks while jobs changed; in the replay a cycle takes
	// no time and nothing changes during it, so it always runs to its end,
	// as with bf_continue. bf_max_time (slurmctld's wall clock) is not
	// modelled either.
	BfMaxJobPart int
	BfMaxJobUser int
	// BfPhase is when, after the start, the first backfill cycle runs; with
	// BfPhaseKnown false it is drawn from the seed (real slurmctld starts
	// its cycle when it starts, which the data does not say).
	BfPhase      time.Duration
	BfPhaseKnown bool
	// ClockOffset is the wall-clock time of the replay's start modulo
	// BfResolution: the backfill rounds its bookings down on the wall
	// clock, as slurmctld does, not from the replay's start.
	ClockOffset time.Duration
}

// Job is one job to replay. Times are offsets from the start of the
// replay; the simulator never sees a clock.
type Job struct {
	// Arrival is when the job becomes eligible (Slurm's EligibleTime).
	Arrival time.Duration
	// Order is the submission order (priority/basic schedules by it; ties
	// in multifactor priority too): smaller is earlier.
	Order int64
	// Run is how long the job runs once started (observed elapsed time,
	// capped at the limit by the caller); Limit its time limit, 0 for none.
	Run   time.Duration
	Limit time.Duration
	// Cancel, when Cancels is set, is when the job leaves the queue if it
	// has not started by then (a job cancelled while pending).
	Cancel  time.Duration
	Cancels bool

	// Partitions the job may run in (indices into Cluster.Partitions); a
	// job submitted to several starts in whichever fits first. QOS is an
	// index into Cluster.QOS, -1 for none.
	Partitions []int
	QOS        int
	// User and Account are small integers the caller assigns (fair-share
	// and per-user limits count by them).
	User, Account int

	// Nodes is the number of nodes (at least 1); GPUs and Shards are per
	// node, Type the GPU type asked for ("" any).
	Nodes  int
	GPUs   int
	Shards int
	Type   string

	// Running jobs were already running at the start of the replay: they
	// start at offset 0, before anything else, on Pinned when those nodes
	// have room, and run until Run after their real start Started (≤ 0).
	Running bool
	Started time.Duration
	Pinned  []int
}

// Options are what varies between runs of the same inputs.
type Options struct {
	// Seed draws the backfill phase (unless known) and breaks ties
	// between jobs of equal priority and submission order.
	Seed uint64
	// Stop, when not nil, ends the replay once its wait target is
	// certain to be missed (StopRule); Result.Stopped then says so.
	Stop *StopRule
	// Abort, when not nil, ends the replay once it is set (a caller that
	// no longer needs the answer); Result.Aborted then says so, and the
	// result is no answer.
	Abort *atomic.Bool
}

// Outcome says how a job left the replay.
type Outcome uint8

// Outcomes.
const (
	// NotStarted: still pending when no event was left (no job running
	// could ever make room).
	NotStarted Outcome = iota
	Ran
	// Cancelled: left the queue at its Cancel time without starting.
	Cancelled
	// Unrunnable: asks for more than any of its partitions has (GPUs of
	// its type, nodes, shards, the QOS's per-user or group GPUs) or for a
	// limit above the MaxTime of each of them.
	Unrunnable
)

func (o Outcome) String() string {
	switch o {
	case Ran:
		return "ran"
	case Cancelled:
		return "cancelled"
	case Unrunnable:
		return "unrunnable"
	}
	return "not started"
}

// JobResult is what happened to one job.
type JobResult struct {
	Outcome Outcome
	// Start and End of the run (Ran), or End the cancel time (Cancelled).
	Start, End time.Duration
	// Partition it ran in, and the first node it ran on (-1 when it did
	// not run).
	Partition int
	Node      int
	// Backfilled is set when the backfill cycle, not the main scheduler,
	// started it.
	Backfilled bool
	// Unfit says why an Unrunnable job could never start (CheckFit).
	Unfit Unfit
}

// Result is one replay: per job, in the order of the input.
type Result struct {
	Jobs []JobResult
	// Stats are the simulator's own counts.
	Stats Stats
	// Stopped is set when Options.Stop ended the replay early: the jobs'
	// outcomes are then those at that moment, and only Stopped's counts
	// are an answer. Over is the StopRule's count per group (at the end,
	// or when it stopped).
	Stopped *Stopped
	Over    []int
	// Aborted is set when Options.Abort ended the replay.
	Aborted bool
}

// Stats count what the simulator did.
type Stats struct {
	Events, MainPasses, BackfillPasses, BackfillStarts int
	// BackfillTested counts the jobs the backfill cycles tested, as
	// bf_max_job_test counts them; those after the last that could start
	// in a cycle are counted without being planned (their plans could
	// change no start).
	BackfillTested int
	// Displaced counts running jobs that did not fit on their own nodes at
	// the start (the cluster given is smaller than the one they ran on).
	Displaced int
}

func badf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadInput}, a...)...)
}
