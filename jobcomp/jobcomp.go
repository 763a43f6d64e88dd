// Package jobcomp records the scheduler's view of a job from slurmctld's
// jobcomp/script hook. Slurm runs jobcomp scripts one at a time and waits
// for each with no timeout, so everything here is bounded by the caller's
// context: a database that does not answer in time gets the record through
// the spool instead, and nothing is lost.
//
// It must not sample GPUs or talk to the node agent.
package jobcomp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// Outcome says where the record went.
type Outcome string

// Outcomes of Record.
const (
	ViaDB    Outcome = "database"
	ViaSpool Outcome = "spool"
)

// Deps is what Record needs.
type Deps struct {
	DB       string
	SpoolDir string
	Log      *slog.Logger
}

// Record stores r durably before anything may wait: first in the spool
// (two fsyncs, with all of the hook's time still ahead), then in the
// database if it can within a third of the time left, and the spool's copy
// is removed once the database holds it. A deadline reached while the
// database is locked therefore loses nothing: the spooled record is
// ingested later. (Before, the spool was written only after the database
// had failed, with what time was left: under CI's load two records of
// twenty were lost at a 200 ms deadline when the watchdog ended the hook
// during their spool write.) The database write is an idempotent merge
// (store.PutSchedJob), so a record in both — the hook ended between the
// database's write and the spool's removal — is merged once more on
// ingest, and a requeued job's PENDING report and its final report may
// arrive in any order, as may node profiles.
func Record(ctx context.Context, d Deps, r slurmext.JobRecord) (Outcome, error) {
	sp := spool.Dir{Path: d.SpoolDir}
	name, serr := sp.Put(hookproto.KindSchedJob, r)
	if serr != nil {
		d.Log.Warn("spool not writable; trying the database alone", "job", r.JobID, "err", serr)
	}
	busy := dbShare(ctx)
	err := func() error {
		dbctx, cancel := context.WithTimeout(ctx, busy)
		defer cancel()
		// Never migrate here: a migration is the agent's or an admin's
		// work, not slurmctld's; an older schema gets the spool.
		db, err := store.Open(dbctx, d.DB, store.Options{BusyTimeout: busy, NoMigrate: true})
		if err != nil {
			return err
		}
		defer db.Close()
		return db.PutSchedJob(dbctx, r)
	}()
	if err == nil {
		if serr == nil {
			if rerr := sp.Remove(name); rerr != nil {
				// Ingest merges it again, to the same row.
				d.Log.Warn("recorded in the database; its spooled copy stays for ingest", "job", r.JobID, "err", rerr)
			}
		}
		return ViaDB, nil
	}
	if store.IsSchemaMismatch(err) {
		d.Log.Warn("database schema is not this gpuprof's; jobcomp does not migrate it; spooled", "job", r.JobID, "err", err)
	} else {
		d.Log.Warn("database not writable in time; spooled", "job", r.JobID, "err", err)
	}
	if serr != nil {
		return "", fmt.Errorf("record lost: database: %v; spool: %w", err, serr)
	}
	return ViaSpool, nil
}

// dbShare is how long Record waits for the database: a third of the time
// left (a second without a deadline).
func dbShare(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return time.Second
	}
	return max(time.Until(dl)/3, time.Millisecond)
}
