package agent

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// Delivery to the collector (multi-node mode). Finished profiles wait in the
// node database's outbox, queued in the same transaction that stored them,
// until the collector acknowledges them; a collector outage loses nothing,
// and since the collector upserts by cluster, job and node, a retry after a
// lost acknowledgement duplicates nothing.

const (
	deliverEvery = 2 * time.Second
	deliverBatch = 100
	// maxBackoff also paces retries of pushes the collector refuses (a
	// misconfigured munge key, say): they stay queued, nothing is lost, and
	// the log says why until someone fixes it.
	maxBackoff = 5 * time.Minute
)

func backoff(attempts int) time.Duration {
	d := time.Second << min(attempts, 16)
	return min(d, maxBackoff)
}

func (a *Agent) deliverLoop(ctx context.Context) {
	t := time.NewTicker(deliverEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.deliver(ctx)
	}
}

// observeOutbox records the outbox length for /metrics, beside the
// profiles a delivery pass loaded and removed.
func (a *Agent) observeOutbox(ctx context.Context, seen []store.OutboxItem, gone []profile.Key) {
	n, err := a.db.OutboxLen(ctx)
	if err != nil {
		return // a locked database: the next pass tells
	}
	a.obs.outbox(n, seen, gone)
}

// deliver sends every due outbox item once.
func (a *Agent) deliver(ctx context.Context) {
	items, err := a.db.DueOutbox(ctx, a.now(), deliverBatch)
	if err != nil {
		a.log.Warn("outbox unreadable", "err", err)
		return
	}
	var gone []profile.Key
	defer func() { a.observeOutbox(ctx, items, gone) }()
	for _, it := range items {
		j, err := it.Job()
		if err != nil {
			a.log.Error("outbox item undecodable; dropped", "job", it.Key.JobID, "err", err)
			if deleted, _ := a.db.DropOutbox(ctx, it.Key, it.Version); deleted {
				gone = append(gone, it.Key)
			}
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = a.opts.Collector.Push(pctx, j)
		cancel()
		if err == nil {
			if deleted, err := a.db.AckOutbox(ctx, it.Key, it.Version); err != nil {
				a.log.Warn("outbox ack postponed", "job", it.Key.JobID, "err", err)
			} else if deleted {
				gone = append(gone, it.Key)
			}
			a.log.Info("profile delivered", "job", it.Key.JobID, "attempts", it.Attempts+1)
			continue
		}
		wait := backoff(it.Attempts)
		a.log.Warn("delivery failed; will retry", "job", it.Key.JobID, "attempt", it.Attempts+1, "retry_in", wait, "err", err)
		if rerr := a.db.RetryOutbox(ctx, it.Key, a.now().Add(wait)); rerr != nil {
			a.log.Warn("outbox retry not recorded", "job", it.Key.JobID, "err", rerr)
		}
		if ctx.Err() != nil {
			return
		}
	}
}
