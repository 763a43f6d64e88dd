// Package ingest applies durable records — from the spool directory, where
// hooks and the agent put what the database could not take in time — to a
// database. Every record kind is idempotent to apply. It must not sample
// GPUs or talk to Slurm.
package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// The kinds of spool records are hookproto's (hookproto.KindProfile, ...):
// hooks, jobcomp and the agent write them, Apply reads them.

// Options say what applying a record does besides writing it.
type Options struct {
	// Outbox queues every finished profile for delivery to the collector
	// (multi-node mode), in the same transaction that stores it.
	Outbox bool
	// Devices are the node's GPUs as the writer's backend names them (the
	// agent's NVML inventory), or nil. A hook's record takes from the
	// device of the same UUID what the hook could not read: the hooks name
	// GPUs from the driver's /proc files (gpu/nvproc), which give no
	// memory size.
	Devices []gpu.Device
}

// Apply writes one record to the database within tx.
func Apply(ctx context.Context, tx *store.Tx, kind string, data []byte, opts Options) error {
	switch kind {
	case hookproto.KindProfile:
		var j profile.Job
		if err := json.Unmarshal(data, &j); err != nil {
			return fmt.Errorf("%w: %v", errBadRecord, err)
		}
		err := tx.PutJob(ctx, j)
		if errors.Is(err, store.ErrFinished) {
			return nil
		}
		if err == nil && opts.Outbox && j.Status == profile.StatusFinished {
			err = tx.EnqueueOutbox(ctx, j)
		}
		return err
	case hookproto.KindSchedJob:
		var r slurmext.JobRecord
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%w: %v", errBadRecord, err)
		}
		err := tx.PutSchedJob(ctx, r)
		if errors.Is(err, store.ErrInvalid) {
			return fmt.Errorf("%w: %v", errBadRecord, err)
		}
		return err
	case hookproto.KindHookStart:
		var j profile.Job
		if err := json.Unmarshal(data, &j); err != nil {
			return fmt.Errorf("%w: %v", errBadRecord, err)
		}
		complete(&j, opts.Devices)
		_, err := tx.InsertJobIfAbsent(ctx, j)
		return err
	case hookproto.KindHookEnd:
		var h hookproto.JobEnd
		if err := json.Unmarshal(data, &h); err != nil {
			return fmt.Errorf("%w: %v", errBadRecord, err)
		}
		complete(&h.Job, opts.Devices)
		if err := FinishFromHook(ctx, tx, h); err != nil {
			return err
		}
		if opts.Outbox {
			j, err := tx.GetJob(ctx, h.Job.Key)
			if err != nil {
				return err
			}
			return tx.EnqueueOutbox(ctx, j)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown kind %q", errBadRecord, kind)
}

var errBadRecord = errors.New("unreadable spool record")

// complete fills, from devs by UUID, what a hook could not read of its
// job's GPUs: a memory size, model or minor it left unknown (a MIG
// instance the hook kept by UUID alone takes its own memory and name and
// its parent's minor, as gpu.ByUUID gives them). What the hook did read is
// kept.
func complete(j *profile.Job, devs []gpu.Device) {
	if len(devs) == 0 {
		return
	}
	byUUID := gpu.ByUUID(devs)
	for i := range j.GPUs {
		g := &j.GPUs[i]
		d, ok := byUUID[g.UUID]
		if !ok {
			continue
		}
		if g.MemoryTotal == 0 {
			g.MemoryTotal = d.MemoryTotal
		}
		if g.Model == "" {
			g.Model = d.Name
		}
		if g.Minor < 0 {
			g.Minor = d.Minor
		}
	}
}

// FinishFromHook closes a job in the database without the agent: what the
// agent last flushed is kept, the job is finished at the epilog's end time
// and marked partial. A job already finished (by the agent) is left alone.
func FinishFromHook(ctx context.Context, tx *store.Tx, h hookproto.JobEnd) error {
	j, err := tx.GetJob(ctx, h.Job.Key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		j = h.Job
		j.MarkPartial("no readings: the agent never saw this job")
	case err != nil:
		return err
	case j.Status == profile.StatusFinished:
		return nil
	default:
		if !j.LastSample.IsZero() {
			j.MarkPartial("agent unreachable at job end: readings stop at " + j.LastSample.UTC().Format("2006-01-02T15:04:05Z"))
		} else {
			j.MarkPartial("no readings: the agent never sampled this job")
		}
	}
	j.ExitKnown, j.ExitStatus, j.ExitSignal = h.ExitKnown, h.ExitStatus, h.ExitSignal
	j.Finish(h.End)
	return tx.PutJob(ctx, j)
}

// DrainSpool applies every record in dir to db, oldest first, removing each
// once committed. Unreadable records, and records the store refuses as
// invalid, are quarantined, not retried. It stops at the first database
// error (typically: locked) and returns it; the rest stays for the next
// call.
func DrainSpool(ctx context.Context, db *store.DB, dir spool.Dir, opts Options, log *slog.Logger) (int, error) {
	entries, err := dir.List()
	if err != nil {
		return 0, fmt.Errorf("list spool: %w", err)
	}
	n := 0
	for _, e := range entries {
		if e.Err != nil {
			log.Error("spool record unreadable; quarantined", "record", e.Name, "err", e.Err)
			if qerr := dir.Quarantine(e.Name, e.Err.Error()); qerr != nil {
				return n, qerr
			}
			continue
		}
		err := db.WithTx(ctx, func(tx *store.Tx) error { return Apply(ctx, tx, e.Kind, e.Data, opts) })
		// A record the store refuses as invalid (a hook's profile with no
		// node or cluster) is refused on every pass: retrying it would
		// block every record behind it.
		if errors.Is(err, errBadRecord) || errors.Is(err, store.ErrInvalid) {
			log.Error("spool record unreadable; quarantined", "record", e.Name, "err", err)
			if qerr := dir.Quarantine(e.Name, err.Error()); qerr != nil {
				return n, qerr
			}
			continue
		}
		if err != nil {
			return n, fmt.Errorf("apply spool record %s: %w", e.Name, err)
		}
		if err := dir.Remove(e.Name); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// DrainEvery drains dir into db (DrainSpool) every interval until ctx
// ends: the collector's loop for the records jobcomp spooled while the
// database was busy. A pass that stops on an error is logged and retried
// at the next tick.
func DrainEvery(ctx context.Context, db *store.DB, dir spool.Dir, interval time.Duration, opts Options, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := DrainSpool(ctx, db, dir, opts, log); err != nil {
				log.Warn("spool not drained yet", "err", err)
			}
		}
	}
}
