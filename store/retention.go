package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Retention is what a node keeps (Prune). A profile is prunable once it is
// finished and, with Delivered, known delivered: the collector
// acknowledged it as it is stored (AckOutbox sets jobs.delivered_at) and
// it is not queued again; without Delivered (a single-host node, whose database
// is the only copy) only when LocalAge is positive and the job ended
// LocalAge ago. A running job, or one still queued for the collector, is
// never touched, whatever the ages or the size.
type Retention struct {
	// Delivered: the node sends its profiles to a collector (the agent's
	// outbox is on), so a finished profile the collector acknowledged is
	// held centrally. A job never acknowledged (recorded before a
	// collector was configured, or before schema 11 recorded delivery) is
	// never prunable this way.
	Delivered bool
	// LocalAge: on a node without a collector, a finished job becomes
	// prunable LocalAge after its end; 0 keeps every job (the default:
	// the node database is the only copy).
	LocalAge time.Duration
	// SeriesAge: a prunable job's series (gpu_series) is removed SeriesAge
	// after its end, leaving its summary (every figure show prints but the
	// chart); 0 keeps series.
	SeriesAge time.Duration
	// JobAge: a prunable job is removed whole JobAge after its end; 0
	// keeps jobs.
	JobAge time.Duration
	// MaxSize: while the pages in use pass MaxSize bytes, the oldest
	// prunable jobs are removed (series first, then whole jobs); 0 means
	// no bound. Only prunable jobs count: a database over MaxSize with
	// nothing prunable stays over it.
	MaxSize int64
}

// PruneResult says what one Prune did.
type PruneResult struct {
	// SeriesPruned: jobs whose series were removed.
	SeriesPruned int
	// JobsRemoved: jobs removed whole.
	JobsRemoved int
	// Freed: pages given back to the filesystem (incremental vacuum),
	// in bytes.
	Freed int64
	// UsedBefore, UsedAfter: bytes of pages in use before and after.
	UsedBefore, UsedAfter int64
	// OverSize: after pruning, the pages in use still pass MaxSize
	// (nothing prunable left).
	OverSize bool
}

// pruneBatch is how many jobs one transaction of Prune touches: a batch
// holds the write lock for milliseconds, so the agent's flushes and the
// hooks are not kept waiting by a large pruning.
const pruneBatch = 100

// sizeBatch is how many jobs pruning to max_size touches between two
// looks at the size: it stops soon after the bound is reached.
const sizeBatch = 10

// vacuumStep is how many pages one incremental_vacuum gives back (4 MiB
// of 4 kB pages), one write transaction each.
const vacuumStep = 1024

// Prune applies r at now: series of prunable jobs past SeriesAge, whole
// prunable jobs past JobAge, then the oldest prunable jobs while the
// database passes MaxSize; then it gives freed pages back to the
// filesystem when the database is in incremental auto-vacuum mode
// (otherwise SQLite reuses them for later writes). Work is done in small
// transactions; a cancelled ctx stops it between two, with what was done
// kept.
func (db *DB) Prune(ctx context.Context, now time.Time, r Retention) (PruneResult, error) {
	var res PruneResult
	if db.readOnly {
		return res, ErrReadOnly
	}
	if !r.Delivered && r.LocalAge <= 0 {
		// Nothing is prunable on a node that keeps the only copy.
		return res, nil
	}
	var err error
	if res.UsedBefore, err = db.usedBytes(ctx); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	eligible := prunableWhere(r, now)
	if r.SeriesAge > 0 {
		cut := now.Add(-r.SeriesAge).Unix()
		n, err := db.pruneLoop(ctx, eligible+` AND coalesce(j."end", j.updated_at) <= ?`, []any{cut}, true)
		res.SeriesPruned += n
		if err != nil {
			return res, fmt.Errorf("prune series: %w", err)
		}
	}
	if r.JobAge > 0 {
		cut := now.Add(-r.JobAge).Unix()
		n, err := db.pruneLoop(ctx, eligible+` AND coalesce(j."end", j.updated_at) <= ?`, []any{cut}, false)
		res.JobsRemoved += n
		if err != nil {
			return res, fmt.Errorf("prune jobs: %w", err)
		}
	}
	if r.MaxSize > 0 {
		// Series first (the summary is small and worth keeping), then whole
		// jobs, oldest first, a batch at a time until under the bound.
		for _, series := range []bool{true, false} {
			for {
				used, err := db.usedBytes(ctx)
				if err != nil {
					return res, fmt.Errorf("prune to size: %w", err)
				}
				if used <= r.MaxSize {
					break
				}
				n, err := db.pruneOnce(ctx, eligible, nil, series, sizeBatch)
				if series {
					res.SeriesPruned += n
				} else {
					res.JobsRemoved += n
				}
				if err != nil {
					return res, fmt.Errorf("prune to size: %w", err)
				}
				if n == 0 {
					break
				}
			}
		}
	}
	if res.Freed, err = db.IncrementalVacuum(ctx, 0); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	if res.UsedAfter, err = db.usedBytes(ctx); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	res.OverSize = r.MaxSize > 0 && res.UsedAfter > r.MaxSize
	return res, nil
}

// prunableWhere is the condition on jobs j (and the placeholder values
// it needs are none: now is written in) that makes a job prunable under r.
func prunableWhere(r Retention, now time.Time) string {
	w := `j.status = 'finished' AND NOT EXISTS (SELECT 1 FROM outbox o
		WHERE o.cluster = j.cluster AND o.job_id = j.job_id AND o.node = j.node)`
	if r.Delivered {
		w += ` AND j.delivered_at > 0`
	} else {
		w += fmt.Sprintf(` AND coalesce(j."end", j.updated_at) <= %d`, now.Add(-r.LocalAge).Unix())
	}
	return w
}

// pruneLoop runs pruneOnce until it finds nothing more.
func (db *DB) pruneLoop(ctx context.Context, where string, args []any, series bool) (int, error) {
	total := 0
	for {
		n, err := db.pruneOnce(ctx, where, args, series, pruneBatch)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// pruneOnce removes, in one transaction, the series (series) or the whole
// rows of up to limit of the oldest jobs matching where, and returns
// how many it touched. The condition is evaluated inside the write
// transaction, so a job queued or reopened meanwhile is not touched.
func (db *DB) pruneOnce(ctx context.Context, where string, args []any, series bool, limit int) (n int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	sel := `SELECT j.cluster, j.job_id, j.node FROM jobs j WHERE ` + where
	if series {
		sel += ` AND EXISTS (SELECT 1 FROM gpu_series s WHERE s.cluster = j.cluster AND s.job_id = j.job_id AND s.node = j.node)`
	}
	sel += ` ORDER BY coalesce(j."end", j.updated_at), j.cluster, j.job_id, j.node LIMIT ?`
	err = db.WithTx(ctx, func(tx *Tx) error {
		rows, err := tx.tx.QueryContext(ctx, sel, append(args, limit)...)
		if err != nil {
			return classify(err)
		}
		var keys [][3]string
		for rows.Next() {
			var k [3]string
			if err := rows.Scan(&k[0], &k[1], &k[2]); err != nil {
				rows.Close()
				return classify(err)
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		for _, k := range keys {
			if series {
				if _, err := tx.tx.ExecContext(ctx, `DELETE FROM gpu_series WHERE cluster = ? AND job_id = ? AND node = ?`, k[0], k[1], k[2]); err != nil {
					return classify(err)
				}
				if _, err := tx.tx.ExecContext(ctx, `UPDATE job_gpus SET series_points = 0 WHERE cluster = ? AND job_id = ? AND node = ?`, k[0], k[1], k[2]); err != nil {
					return classify(err)
				}
			} else if _, err := tx.tx.ExecContext(ctx, `DELETE FROM jobs WHERE cluster = ? AND job_id = ? AND node = ?`, k[0], k[1], k[2]); err != nil {
				return classify(err) // job_gpus and gpu_series cascade
			}
		}
		n = len(keys)
		return nil
	})
	return n, err
}

// usedBytes is the size of the database's pages in use (the file less its
// free pages).
func (db *DB) usedBytes(ctx context.Context) (int64, error) {
	st, err := db.SpaceStats(ctx)
	return st.Used(), err
}

// Space is what a database file holds, from SQLite's own counts.
type Space struct {
	PageSize  int64
	Pages     int64 // pages in the file
	FreePages int64 // pages on the free list: reused by later writes
	// AutoVacuum is SQLite's auto_vacuum mode: 0 none, 1 full,
	// 2 incremental (free pages can be given back with IncrementalVacuum).
	AutoVacuum int
}

// File is the database file's size in bytes (its WAL aside).
func (s Space) File() int64 { return s.Pages * s.PageSize }

// Used is the bytes of pages in use.
func (s Space) Used() int64 { return (s.Pages - s.FreePages) * s.PageSize }

// SpaceStats reads the database's page counts.
func (db *DB) SpaceStats(ctx context.Context) (Space, error) {
	var s Space
	err := db.read(ctx, func(tx *Tx) error {
		for _, q := range []struct {
			pragma string
			dst    any
		}{{"page_size", &s.PageSize}, {"page_count", &s.Pages}, {"freelist_count", &s.FreePages}, {"auto_vacuum", &s.AutoVacuum}} {
			if err := tx.tx.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(q.dst); err != nil {
				return fmt.Errorf("space: %s: %w", q.pragma, classify(err))
			}
		}
		return nil
	})
	return s, err
}

// IncrementalVacuum gives up to maxPages free pages (all when maxPages <=
// 0) back to the filesystem, vacuumStep pages per write transaction, and
// returns the bytes given back. In any auto_vacuum mode but incremental it
// does nothing (SQLite then reuses free pages for later writes; see
// ConvertIncremental).
func (db *DB) IncrementalVacuum(ctx context.Context, maxPages int64) (int64, error) {
	if db.readOnly {
		return 0, ErrReadOnly
	}
	st, err := db.SpaceStats(ctx)
	if err != nil || st.AutoVacuum != 2 {
		return 0, err
	}
	var freed int64
	for st.FreePages > 0 && (maxPages <= 0 || freed/st.PageSize < maxPages) {
		step := int64(vacuumStep)
		if maxPages > 0 {
			step = min(step, maxPages-freed/st.PageSize)
		}
		err := db.WithTx(ctx, func(tx *Tx) error {
			// The pragma returns no rows but must be stepped to the end:
			// Query, not Exec, and drain it.
			rows, err := tx.tx.QueryContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", step))
			if err != nil {
				return classify(err)
			}
			for rows.Next() {
			}
			rows.Close()
			return classify(rows.Err())
		})
		if err != nil {
			return freed, fmt.Errorf("incremental vacuum: %w", err)
		}
		before := st.FreePages
		if st, err = db.SpaceStats(ctx); err != nil {
			return freed, err
		}
		if st.FreePages >= before {
			break // nothing given back: do not spin
		}
		freed += (before - st.FreePages) * st.PageSize
	}
	return freed, nil
}

// ErrTooLargeToConvert: ConvertIncremental found a database in another
// auto_vacuum mode above the size it may rewrite.
var ErrTooLargeToConvert = errors.New("database too large to convert to incremental vacuum in place")

// ConvertIncremental turns a database made before incremental auto-vacuum
// (auto_vacuum none) into one: a VACUUM, which rewrites the whole file
// while holding the write lock, so it is done only when the file is at
// most below bytes (ErrTooLargeToConvert otherwise: the file keeps its
// size, its free pages reused by later writes). It reports whether it
// converted; a database already incremental is left alone.
func (db *DB) ConvertIncremental(ctx context.Context, below int64) (bool, error) {
	if db.readOnly {
		return false, ErrReadOnly
	}
	st, err := db.SpaceStats(ctx)
	if err != nil || st.AutoVacuum == 2 {
		return false, err
	}
	if st.File() > below {
		return false, fmt.Errorf("%w: %d bytes, converted only below %d", ErrTooLargeToConvert, st.File(), below)
	}
	// VACUUM cannot run in a transaction: on the writer's one connection,
	// so no write of this process runs meanwhile; other processes wait on
	// the lock (the hooks spool).
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("convert: %w", classify(err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return false, fmt.Errorf("convert: %w", classify(err))
	}
	if _, err := conn.ExecContext(ctx, "VACUUM"); err != nil {
		return false, fmt.Errorf("convert: vacuum: %w", classify(err))
	}
	return true, nil
}

// LimitPages bounds the database file at n pages (SQLite's
// max_page_count, on this process's writer connection: other processes
// are not bound) and returns the bound SQLite set, never below the pages
// in use. A write that needs more fails with ErrFull, as on a full disk:
// the tests of a full disk use it, and so may a site that wants a hard cap
// below the filesystem's.
func (db *DB) LimitPages(ctx context.Context, n int64) (int64, error) {
	if db.readOnly {
		return 0, ErrReadOnly
	}
	var got int64
	// The writer pool has one connection, kept open: the bound stays with
	// it.
	if err := db.w.QueryRowContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n)).Scan(&got); err != nil {
		return 0, fmt.Errorf("limit pages: %w", classify(err))
	}
	return got, nil
}
