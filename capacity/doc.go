// Package capacity answers what-if questions and makes the capacity plan
// on a replay of the recorded queue (docs/whatif.md): it builds the
// replayed cluster, jobs and scheduler from an analysis.Input and
// slurm.conf (RunWhatIf), applies changes (more or fewer GPUs, a
// partition, a QOS, jobs asking differently), replays with queuesim over
// several seeds and reduces the runs to spreads per partition and GPU
// model, calibrated against what happened. SimulatePlan replays each
// recommendation's changes (analysis.Recommendation.Replay) for its
// effect, searches the GPUs to buy for the target wait at the horizon, the
// month growth breaks it, and the costs, and writes the plan's verdict.
// ParseSpecs reads the changes as a person writes them ("2xH100",
// "gpu[01-02]:4xh100", "NAME:MaxTime=…", "30%", "12mo"), so every front
// end reads them by one rule.
//
// It sits between analysis and queuesim and is the one importer of
// queuesim (internal/archtest enforces it): analysis concludes from the
// jobs and never imports capacity; what the two share — the changes a
// recommendation asks a replay to apply and the effect it gets back — are
// analysis's data types (analysis/effect.go). Everything here is pure, as
// in analysis: an Input and a Config in, an answer out; no database, no
// clock, no file.
package capacity
