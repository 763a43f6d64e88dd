package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// The outbox holds a node's profiles until the collector acknowledges them
// (multi-node mode). Delivery is at least once: the collector's upsert by
// key makes a repeat harmless, and the version check in AckOutbox makes
// sure a profile re-queued while its previous version was in flight is
// delivered too. One sender per database is assumed.

// OutboxItem is one queued profile.
type OutboxItem struct {
	Key profile.Key
	// Payload is the profile as JSON (of Normalize(j)), ready to send.
	Payload []byte
	// Version identifies this payload for AckOutbox.
	Version   int64
	Attempts  int
	NextTry   time.Time
	CreatedAt time.Time
}

// Job decodes the queued profile.
func (it OutboxItem) Job() (profile.Job, error) {
	var j profile.Job
	if err := json.Unmarshal(it.Payload, &j); err != nil {
		return j, fmt.Errorf("outbox %s: decode: %w", keyString(it.Key), err)
	}
	return j, nil
}

// EnqueueOutbox queues j in its own transaction. See Tx.EnqueueOutbox.
func (db *DB) EnqueueOutbox(ctx context.Context, j profile.Job) error {
	return db.WithTx(ctx, func(tx *Tx) error { return tx.EnqueueOutbox(ctx, j) })
}

// DueOutbox returns up to limit items due at now. See Tx.DueOutbox.
func (db *DB) DueOutbox(ctx context.Context, now time.Time, limit int) (items []OutboxItem, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		items, err = tx.DueOutbox(ctx, now, limit)
		return err
	})
	return items, err
}

// AckOutbox removes a delivered item and marks its job delivered. See
// Tx.AckOutbox.
func (db *DB) AckOutbox(ctx context.Context, k profile.Key, version int64) (deleted bool, err error) {
	err = db.WithTx(ctx, func(tx *Tx) error {
		deleted, err = tx.AckOutbox(ctx, k, version)
		return err
	})
	return deleted, err
}

// DropOutbox removes an item that can never be sent. See Tx.DropOutbox.
func (db *DB) DropOutbox(ctx context.Context, k profile.Key, version int64) (deleted bool, err error) {
	err = db.WithTx(ctx, func(tx *Tx) error {
		deleted, err = tx.DropOutbox(ctx, k, version)
		return err
	})
	return deleted, err
}

// RetryOutbox schedules another attempt. See Tx.RetryOutbox.
func (db *DB) RetryOutbox(ctx context.Context, k profile.Key, next time.Time) error {
	return db.WithTx(ctx, func(tx *Tx) error { return tx.RetryOutbox(ctx, k, next) })
}

// OutboxLen returns the number of queued profiles.
func (db *DB) OutboxLen(ctx context.Context) (n int, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		n, err = tx.OutboxLen(ctx)
		return err
	})
	return n, err
}

// EnqueueOutbox queues j for delivery, typically in the transaction that
// stores it. A profile already queued under j's key is replaced and its
// version bumped, so an acknowledgement of the older payload leaves the new
// one queued; the retry schedule (attempts, next try) and the creation time
// are kept, because a collector outage does not end when a profile changes.
// Enqueueing an identical payload again changes nothing. j must be valid as
// for PutJob (ErrInvalid otherwise).
func (t *Tx) EnqueueOutbox(ctx context.Context, j profile.Job) error {
	if err := validate(j); err != nil {
		return fmt.Errorf("enqueue %s: %w", keyString(j.Key), err)
	}
	payload, err := json.Marshal(Normalize(j))
	if err != nil {
		return fmt.Errorf("enqueue %s: encode: %w", keyString(j.Key), err)
	}
	now := time.Now().Unix()
	res, err := t.tx.ExecContext(ctx, `INSERT INTO outbox (cluster, job_id, node, payload, version, attempts, next_try, created_at)
		VALUES (?, ?, ?, ?, 1, 0, ?, ?)
		ON CONFLICT (cluster, job_id, node) DO UPDATE SET
		payload = excluded.payload, version = version + 1
		WHERE payload IS NOT excluded.payload`,
		j.Cluster, j.JobID, j.Node, payload, now, now)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", keyString(j.Key), classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", keyString(j.Key), classify(err))
	}
	if n > 0 {
		// A profile the collector does not have in this form: no longer
		// known delivered until it acknowledges this one.
		if _, err := t.tx.ExecContext(ctx, `UPDATE jobs SET delivered_at = 0 WHERE cluster = ? AND job_id = ? AND node = ?`,
			j.Cluster, j.JobID, j.Node); err != nil {
			return fmt.Errorf("enqueue %s: %w", keyString(j.Key), classify(err))
		}
	}
	return nil
}

// DueOutbox returns up to limit items (all when limit <= 0) whose next try
// is at or before now, the longest-waiting first.
func (t *Tx) DueOutbox(ctx context.Context, now time.Time, limit int) ([]OutboxItem, error) {
	q := `SELECT cluster, job_id, node, payload, version, attempts, next_try, created_at
		FROM outbox WHERE next_try <= ? ORDER BY next_try, created_at, cluster, job_id, node`
	args := []any{now.Unix()}
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("due outbox: %w", classify(err))
	}
	defer rows.Close()
	var items []OutboxItem
	for rows.Next() {
		var it OutboxItem
		var next, created int64
		if err := rows.Scan(&it.Key.Cluster, &it.Key.JobID, &it.Key.Node, &it.Payload, &it.Version,
			&it.Attempts, &next, &created); err != nil {
			return nil, fmt.Errorf("due outbox: %w", classify(err))
		}
		it.NextTry, it.CreatedAt = time.Unix(next, 0).UTC(), time.Unix(created, 0).UTC()
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due outbox: %w", classify(err))
	}
	return items, nil
}

// AckOutbox records that the collector acknowledged version of k's
// profile: it removes the item if it still holds that version's payload,
// marks the job delivered (jobs.delivered_at, what retention judges by),
// and reports whether it did. false means the profile was queued again
// since it was read (the newer version stays, to be sent, and the job is
// not known delivered) or is no longer queued.
func (t *Tx) AckOutbox(ctx context.Context, k profile.Key, version int64) (bool, error) {
	deleted, err := t.removeOutbox(ctx, k, version)
	if err != nil || !deleted {
		return deleted, err
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE jobs SET delivered_at = ? WHERE cluster = ? AND job_id = ? AND node = ?`,
		time.Now().Unix(), k.Cluster, k.JobID, k.Node); err != nil {
		return false, fmt.Errorf("ack outbox %s: %w", keyString(k), classify(err))
	}
	return true, nil
}

// DropOutbox removes the item with key k if it still holds version's
// payload, without marking the job delivered: for an item that can never
// be sent (undecodable). It reports whether it removed it.
func (t *Tx) DropOutbox(ctx context.Context, k profile.Key, version int64) (bool, error) {
	return t.removeOutbox(ctx, k, version)
}

func (t *Tx) removeOutbox(ctx context.Context, k profile.Key, version int64) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM outbox WHERE cluster = ? AND job_id = ? AND node = ? AND version = ?`,
		k.Cluster, k.JobID, k.Node, version)
	if err != nil {
		return false, fmt.Errorf("remove from outbox %s: %w", keyString(k), classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("remove from outbox %s: %w", keyString(k), classify(err))
	}
	return n == 1, nil
}

// RetryOutbox records a failed attempt for the item with key k and makes it
// due again at next. It returns ErrNotFound when k is not queued.
func (t *Tx) RetryOutbox(ctx context.Context, k profile.Key, next time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, next_try = ?
		WHERE cluster = ? AND job_id = ? AND node = ?`, next.Unix(), k.Cluster, k.JobID, k.Node)
	if err != nil {
		return fmt.Errorf("retry outbox %s: %w", keyString(k), classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("retry outbox %s: %w", keyString(k), classify(err))
	}
	if n == 0 {
		return fmt.Errorf("retry outbox %s: %w", keyString(k), ErrNotFound)
	}
	return nil
}

// OutboxLen returns the number of queued profiles.
func (t *Tx) OutboxLen(ctx context.Context) (int, error) {
	var n int
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		return 0, fmt.Errorf("outbox length: %w", classify(err))
	}
	return n, nil
}
