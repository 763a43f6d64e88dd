package agent

import (
	"context"
	"errors"
	"time"

	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// The persister: a goroutine that, every FlushInterval or when woken,
// writes what waits for the disk (pending.go), takes in the spool's hook
// records and running rows nobody samples (merge.go), and writes the
// running profiles.

func (a *Agent) wakePersister() {
	select {
	case a.persistWake <- struct{}{}:
	default:
	}
}

func (a *Agent) persistLoop(ctx context.Context) {
	t := time.NewTicker(a.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.persistWake:
		}
		a.drain(ctx)
		a.flush(ctx)
		if files, bytes, err := spoolUsage(a.spool.Path); err == nil {
			a.obs.spool(files, bytes)
		}
	}
}

// flush writes every running profile to the database in one transaction.
// A locked database skips this round; the profiles stay in memory.
func (a *Agent) flush(ctx context.Context) {
	a.mu.Lock()
	snap := make([]profile.Job, 0, len(a.jobs))
	for _, st := range a.jobs {
		snap = append(snap, st.prof.Clone())
	}
	moved := a.moved
	a.moved = nil
	a.mu.Unlock()
	if len(snap) == 0 && len(moved) == 0 {
		return
	}
	var gone []string
	err := a.db.WithTx(ctx, func(tx *store.Tx) error {
		gone = gone[:0]
		// Rows under the names the agent guessed before slurmd's reached
		// it go in the transaction that writes them under the right ones.
		for _, k := range moved {
			if _, err := tx.DeleteRunningJob(ctx, k); err != nil {
				return err
			}
		}
		for _, j := range snap {
			// Only the series' new points are written: the rest of each
			// series is in the database from the flushes before.
			err := tx.PutGrowingJob(ctx, j)
			if errors.Is(err, store.ErrFinished) {
				gone = append(gone, j.JobID)
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		a.mu.Lock()
		a.moved = append(moved, a.moved...)
		a.mu.Unlock()
		a.log.Warn("flush of running profiles postponed", "jobs", len(snap), "err", err)
		return
	}
	// Finished by someone else (an epilog that could not reach us).
	a.mu.Lock()
	for _, id := range gone {
		delete(a.jobs, id)
		a.log.Info("job already finished in the database; dropped", "job", id)
	}
	if len(gone) > 0 {
		a.publishLocked(nil, nil, nil)
	}
	a.mu.Unlock()
}

// drain merges the hook records of the spool into the jobs the agent
// holds, applies the spool to the database, and takes in the running rows
// nobody samples (merge.go).
func (a *Agent) drain(ctx context.Context) {
	a.writeUnwritten(ctx)
	a.takeSpooledHooks(ctx)
	a.drainSpool(ctx)
	a.takeRunningRows(ctx)
}

func (a *Agent) drainSpool(ctx context.Context) {
	n, err := ingest.DrainSpool(ctx, a.db, a.spool, ingest.Options{Outbox: a.opts.Outbox, Devices: a.devices}, a.log)
	if err != nil {
		a.log.Warn("spool not drained yet", "applied", n, "err", err)
	}
}
