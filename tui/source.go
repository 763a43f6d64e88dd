package tui

import (
	"context"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
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

// NodeSource is implemented by a Source that knows the Slurm
// configuration of a cluster: the summary then counts shard jobs by their
// node's shards, as the CLI and the report do. ClusterConf returns what
// is bound to cluster's jobs (only the slurm.conf whose ClusterName is
// cluster's: docs/configuration.md) and its nodes, nil when none is used.
type NodeSource interface {
	ClusterConf(cluster string) (analysis.ConfUse, []slurmext.NodeGres)
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
