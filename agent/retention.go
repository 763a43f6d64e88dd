package agent

import (
	"context"
	"errors"
	"time"

	"github.com/gpuprof/gpuprof/store"
)

// retentionLoop prunes the node database (store.DB.Prune) once at start,
// after converting a small database made before incremental vacuum, then
// every Options.RetentionEvery. Which jobs are prunable is the store's
// rule; the agent says only whether its profiles go to a collector.
func (a *Agent) retentionLoop(ctx context.Context) {
	if b := a.opts.ConvertBelow; b > 0 {
		switch converted, err := a.db.ConvertIncremental(ctx, b); {
		case errors.Is(err, store.ErrTooLargeToConvert):
			a.log.Info("database kept in its vacuum mode: free pages are reused, not given back", "reason", err)
		case err != nil:
			a.log.Warn("database not converted to incremental vacuum", "err", err)
		case converted:
			a.log.Info("database converted to incremental vacuum")
		}
	}
	t := time.NewTicker(a.opts.RetentionEvery)
	defer t.Stop()
	for {
		a.prune(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prune runs one pass of the retention rules.
func (a *Agent) prune(ctx context.Context) {
	r := a.opts.Retention
	r.Delivered = a.opts.Outbox
	res, err := a.db.Prune(ctx, a.now(), r)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn("retention pass stopped; the next one goes on", "err", err, "series_pruned", res.SeriesPruned, "jobs_removed", res.JobsRemoved)
		}
		return
	}
	if res.SeriesPruned > 0 || res.JobsRemoved > 0 || res.Freed > 0 {
		a.log.Info("retention pass", "series_pruned", res.SeriesPruned, "jobs_removed", res.JobsRemoved,
			"freed_bytes", res.Freed, "used_bytes", res.UsedAfter)
	}
	if res.OverSize {
		a.log.Warn("database over retention.max_size with nothing more prunable (jobs running or not yet delivered)",
			"used_bytes", res.UsedAfter, "max_size", r.MaxSize)
	}
}
