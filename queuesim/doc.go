// Package queuesim replays a batch queue through a model of Slurm's
// scheduler, to say what queue waits a change of GPUs or of rules would
// produce: discrete events (a job becomes eligible, ends, or is cancelled
// while pending) over nodes with typed GPUs and shards, partitions with
// their nodes, MaxTime and PriorityTier, QOS limits, priority/basic or
// multifactor priority, the main scheduler and conservative backfill on
// the jobs' time limits. docs/whatif.md describes the model and what it
// leaves out; ../shared/design/whatif.md the checks it must pass.
//
// It is pure: jobs and a cluster in, a start and an end per job out. It
// must not read the clock, a file or the database, and must not import
// the store, NVML or cobra (internal/archtest enforces it). Times are
// offsets from the start of the replay, in whole seconds as Slurm keeps
// them. A run is deterministic for its inputs and Options.Seed.
package queuesim
