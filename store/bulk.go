package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// BulkLoad is one write transaction for storing many scheduler records
// into a sched_jobs that holds few (see BulkLoadWorth): sched_jobs'
// secondary indexes (schedIndexes) are dropped at its start and built
// again, from the whole table, just before it commits, so each record goes
// into the table and its key only instead of into eight B-trees at spread
// places.
//
// All of it is one transaction, the drop and the build included, because
// then nothing needs recovering: other connections read the old rows with
// every index until the commit (WAL snapshots), and a crash, kill or error
// before the commit leaves the database as it was, indexes included — a
// database without its indexes is never seen by anyone. What it costs: the
// write lock is held for the whole load (other writers wait their busy
// timeout; a second importer is refused with ErrLocked rather than
// interleaving batches), a load that fails or is cancelled stores nothing
// of what it was given, and the WAL grows to about the size of the pages
// the load writes (no checkpoint can copy them while it is open; the next
// checkpoint after it does).
type BulkLoad struct {
	tx   *Tx
	stx  *sql.Tx
	done bool
}

// errBulkDone is the error of using a BulkLoad after Commit or Rollback.
var errBulkDone = errors.New("bulk load already committed or rolled back")

// BulkLoadWorth reports whether storing incoming new records is cheaper as
// a BulkLoad: whether sched_jobs holds at most a quarter as many rows.
// Building the eight indexes from the whole table cost from under half
// (whole processes' CPU) to three quarters (CPU profiles) of inserting the
// same rows into them one by one, over 238,710 jobs (docs/benchmarks.md);
// the build covers the rows already there too, so it pays off while they
// are a small part of the new, and a quarter stays on the safe side of
// both figures. incoming is what the caller knows: a lower bound, such as
// the size of an import's first batch.
func (db *DB) BulkLoadWorth(ctx context.Context, incoming int) (bool, error) {
	if incoming <= 0 {
		return false, nil
	}
	limit := incoming/4 + 1
	var n int
	// Counted only up to the limit: a large table is not scanned whole.
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM sched_jobs LIMIT ?)`, limit).Scan(&n); err != nil {
		return false, fmt.Errorf("count sched jobs: %w", classify(err))
	}
	return n < limit, nil
}

// BeginBulkLoad starts a BulkLoad: it takes the write lock (waiting up to
// the busy timeout, else ErrLocked) and drops sched_jobs' secondary
// indexes inside the new transaction. Call Commit or Rollback.
func (db *DB) BeginBulkLoad(ctx context.Context) (*BulkLoad, error) {
	if db.readOnly {
		return nil, ErrReadOnly
	}
	tx, err := beginWrite(ctx, db.w, db.busy)
	if err != nil {
		return nil, fmt.Errorf("begin bulk load: %w", classify(err))
	}
	if err := dropSchedIndexes(ctx, tx.tx); err != nil {
		_ = tx.tx.Rollback()
		tx.end()
		return nil, fmt.Errorf("begin bulk load: %w", err)
	}
	return &BulkLoad{tx: tx, stx: tx.tx}, nil
}

// Do runs fn inside the load's transaction and returns its error
// unchanged. After an error, Rollback: fn may have done part of its work.
// Queries in fn must not need sched_jobs' secondary indexes (they are
// gone until Commit): PutSchedJobs and the import marks need none.
func (b *BulkLoad) Do(fn func(tx *Tx) error) error {
	if b.done {
		return errBulkDone
	}
	return fn(b.tx)
}

// Commit builds the indexes again and commits everything. If either fails,
// the load is rolled back: nothing of it is stored.
func (b *BulkLoad) Commit(ctx context.Context) error {
	if b.done {
		return errBulkDone
	}
	b.done = true
	defer b.tx.end()
	if err := createSchedIndexes(ctx, b.stx); err != nil {
		_ = b.stx.Rollback()
		return fmt.Errorf("bulk load: %w", err)
	}
	if err := b.stx.Commit(); err != nil {
		_ = b.stx.Rollback()
		return fmt.Errorf("bulk load: commit: %w", classify(err))
	}
	return nil
}

// Rollback abandons the load: nothing of it is stored, and the indexes
// were never gone for any other connection. It does nothing after Commit
// or a Rollback.
func (b *BulkLoad) Rollback() error {
	if b.done {
		return nil
	}
	b.done = true
	defer b.tx.end()
	if err := b.stx.Rollback(); err != nil {
		return fmt.Errorf("bulk load: rollback: %w", classify(err))
	}
	return nil
}
