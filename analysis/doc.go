// Package analysis turns recorded jobs into findings an admin can act on:
// a class for every job (long training, short debugging, inference service,
// IO-bound preprocessing, idle allocation, …) with the rule that fired and
// its numbers, bottlenecks per job (VRAM, compute, IO, unused GPUs,
// queueing), recurring task profiles, a cluster summary, recommendations
// with their evidence and exact Slurm configuration (EmitSlurm), the
// workload summary, and the capacity plan by queueing arithmetic
// (Findings.Plan). The what-ifs and the plan made on a replay of the queue
// are package capacity's, which imports this one (never the reverse): a
// recommendation says what a replay should change (Recommendation.Replay)
// and capacity writes back its effect. Plant generates workloads with
// known answers for tests and demonstrations.
//
// Everything here is pure: Jobs and a Config in, findings out. The package
// must not import database/sql, SQLite, NVML, cobra, the store or any GPU
// backend (internal/archtest enforces it), must not read the clock, and
// reads a file only in LoadConfig. Callers (cmd/) load jobs from the store
// and convert each one with FromView.
//
// Readings are not trusted blindly: NaN, ±Inf, negative values, utilisation
// above 100 % and memory peaks above the card's size are ignored and counted
// in DataNotes, so that one broken counter cannot poison a month's report.
//
// Percentiles are nearest-rank throughout (the smallest value such that at
// least p % of the values are at or below it), the method of
// profile.GPU.UtilPercentile: every percentile is a value that was actually
// observed.
package analysis
