package tui

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/store"
)

// Source is where the TUI reads jobs from: the local database or the
// collector (`gpuprof serve`). Access control lives in the Source, not in
// the UI: a non-admin's Source returns only that user's jobs whatever the
// filter asks for.
type Source interface {
	// Jobs returns one page of the jobs f selects, in f's order
	// (f.Sort, f.Asc; newest first by default), f.Limit at most, after
	// skipping f.Offset.
	Jobs(ctx context.Context, f store.ViewFilter) ([]store.JobView, error)
	// Count returns how many jobs f selects (f.Limit and f.Offset are
	// ignored).
	Count(ctx context.Context, f store.ViewFilter) (int, error)
	// Job returns one job with its GPU time series, or an error wrapping
	// store.ErrNotFound.
	Job(ctx context.Context, cluster, jobID string) (store.JobView, error)
}

// MonthSource is implemented by a Source that reads a month for the
// summary through the window pipeline (monthly.SummaryMonth): Month reads
// user's jobs ("": everyone's) of the window w, the newest newest of
// them, with the clock at now, into the analysis input, which carries the
// Slurm configuration of the one cluster they are of (only the slurm.conf
// whose ClusterName is that cluster's: docs/configuration.md), so that
// the summary counts shard jobs by their node's shards as the CLI and the
// report do; total is how many jobs the window holds.
type MonthSource interface {
	Month(ctx context.Context, user string, w analysis.Window, now time.Time, newest int) (in analysis.Input, total int, err error)
}

// TypeSource is implemented by a Source that knows the GPU types of a
// cluster (analysis.GPUTypes of its inventory), as show does: the
// detail's hints then name a smaller GPU type where a job's need fits
// one. GPUTypes returns nil when none is known; it may read many jobs,
// so it is called from a tea.Cmd only.
type TypeSource interface {
	GPUTypes(ctx context.Context, cluster string) []analysis.GPUType
}

// Identity is who runs the TUI: the store's Caller, the one type of a
// reader (its Admin enables switching to another user; the Source
// enforces what they may read either way).
type Identity = store.Caller
