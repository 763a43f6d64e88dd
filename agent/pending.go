package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// End records the disk did not take. A job whose epilog came has ended,
// whatever the disk says: putting it back as running (as the agent once
// did, to retry through the flush) kept it sampled after its end, left its
// row running, and made the next job on its GPUs look shared. Its finished
// profile waits here instead, and every round of the persister tries the
// spool, then the database, until one takes it. The job counts as held
// meanwhile: no running row of it is taken in again (heldLocked) and no
// process brings it back (discover). What waits here is lost if the agent
// stops before the disk takes it, as the epilog is told (Response.Held):
// it spools what it can itself.

// errHeld means the finished profile was written neither to the spool nor
// to the database; the agent keeps it and writes it when it can.
var errHeld = errors.New("end record not written: the agent holds the finished job in memory and writes it when the disk takes it")

// dbFallback bounds the attempt to write a finished profile to the
// database when the spool refused it: the epilog is waiting.
const dbFallback = 500 * time.Millisecond

// writeFinished makes a finished profile durable: in the spool, else
// (the spool is not writable: disk full?) in the database itself.
func (a *Agent) writeFinished(ctx context.Context, j profile.Job) error {
	_, err := a.spool.Put(hookproto.KindProfile, j)
	if err == nil {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, dbFallback)
	defer cancel()
	derr := a.db.WithTx(dctx, func(tx *store.Tx) error {
		return ingest.Apply(dctx, tx, hookproto.KindProfile, mustJSON(j), ingest.Options{Outbox: a.opts.Outbox})
	})
	if derr != nil {
		return fmt.Errorf("spool: %v; database: %w", err, derr)
	}
	a.log.Warn("spool not writable; profile written to the database directly", "job", j.JobID, "err", err)
	return nil
}

// holdUnwritten keeps a finished profile nobody took, for the persister.
func (a *Agent) holdUnwritten(j profile.Job, err error) {
	a.mu.Lock()
	a.holdUnwrittenLocked(j)
	a.mu.Unlock()
	a.log.Error("job's end record not written (disk full?); it stays finished in the agent's memory and is written when the disk takes it",
		"job", j.JobID, "err", err)
	a.wakePersister()
}

// holdUnwrittenLocked is holdUnwritten with a.mu held (reconcile), without
// the log line.
func (a *Agent) holdUnwrittenLocked(j profile.Job) {
	a.unwritten = append(a.unwritten, j)
}

// unwrittenLocked reports whether a finished profile of job id waits for
// the disk. Called with a.mu held.
func (a *Agent) unwrittenLocked(id string) bool {
	return slices.ContainsFunc(a.unwritten, func(j profile.Job) bool { return j.JobID == id })
}

// writeUnwritten tries again to write every finished profile that waits,
// oldest first; a round of the persister calls it.
func (a *Agent) writeUnwritten(ctx context.Context) {
	a.mu.Lock()
	waiting := slices.Clone(a.unwritten)
	a.mu.Unlock()
	for _, j := range waiting {
		if err := a.writeFinished(ctx, j); err != nil {
			a.log.Warn("job's end record still not written; kept for the next round", "job", j.JobID, "err", err)
			return // the disk is still full: the next round tries again
		}
		a.mu.Lock()
		a.unwritten = slices.DeleteFunc(a.unwritten, func(w profile.Job) bool { return w.Key == j.Key && w.Start.Equal(j.Start) })
		a.mu.Unlock()
		a.log.Info("job's end record written after all", "job", j.JobID)
	}
}

// retryUnwritten answers a repeated epilog of a job whose record waits:
// durable now, or still held.
func (a *Agent) retryUnwritten(ctx context.Context, id string) error {
	a.writeUnwritten(ctx)
	a.mu.Lock()
	waiting := a.unwrittenLocked(id)
	a.mu.Unlock()
	if waiting {
		return fmt.Errorf("finish job %s: %w", id, errHeld)
	}
	return nil
}
