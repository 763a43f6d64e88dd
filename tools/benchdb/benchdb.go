// Package benchdb fills a gpuprof database with a million jobs for the
// benchmarks of the paths that read it (store paging, the terminal UI).
// It writes rows with SQL, not through the store's write path, so the
// fixture takes seconds rather than hours; the caller creates the schema
// first (store.Open). Its scheduler rows have no sched_events rows and
// event_seq 1: since schema 3 that is how the store keeps a job's only
// report, so the fixture is what an import of these jobs leaves; Slurm's
// GPU readings are left unknown (NULL). It is test support, not product
// code.
package benchdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// The fixture's shape.
const (
	// Jobs is the number of scheduler records.
	Jobs = 1_000_000
	// Target is the user who has one job in a hundred (10,000 records)
	// plus 310 profile-only jobs: TargetJobs in all.
	Target     = "target"
	TargetUID  = 4242
	TargetJobs = 10_310
	// Cluster is every job's cluster.
	Cluster = "lab"
)

// Fill writes into db (a database with the store's current schema):
// Jobs scheduler records starting at base, 30 s apart (see FillEvery), job i running
// i % 97 + 1 minutes, one in a hundred of user Target, the rest spread
// over 500 users; and about 20,000 profiles with one GPU each: half of
// Target's jobs, every 80th other job and 1,000 jobs without a scheduler
// record (310 of them Target's).
func Fill(ctx context.Context, db *sql.DB, base time.Time) error {
	return FillEvery(ctx, db, base, 30*time.Second)
}

// FillEvery is Fill with the jobs' starts every apart instead of 30 s
// (2.6 s puts the million jobs into one month).
func FillEvery(ctx context.Context, db *sql.DB, base time.Time, every time.Duration) error {
	if every < time.Second {
		return fmt.Errorf("benchdb: jobs at least 1 s apart, not %v", every)
	}
	step := every.Milliseconds()
	g := profile.NewGPU(gpu.Device{UUID: "GPU-x", Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}, 0, base, time.Second, profile.DefaultMaxPoints)
	state, err := json.Marshal(g)
	if err != nil {
		return err
	}
	// A cache that holds the indexes being built saves most of the time.
	if _, err := db.ExecContext(ctx, "PRAGMA cache_size = -524288"); err != nil {
		return err
	}
	b := base.Unix()
	stmts := []struct {
		q    string
		args []any
	}{
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
		INSERT INTO sched_jobs (cluster, job_id, display_id, name, "user", uid, account, "partition", state,
			submit, "start", "end", time_limit, req_gpus, event_seq, updated_at)
		SELECT 'lab', CAST(1000000 + i AS TEXT), CAST(1000000 + i AS TEXT), 'train-' || (i % 1000),
			CASE WHEN i % 100 = 7 THEN 'target' ELSE 'u' || (i % 500) END,
			CASE WHEN i % 100 = 7 THEN 4242 ELSE 10000 + i % 500 END,
			'acct' || (i % 20), 'gpu', CASE WHEN i % 50 = 0 THEN 'FAILED' ELSE 'COMPLETED' END,
			? + ? * i / 1000 - 60, ? + ? * i / 1000, ? + ? * i / 1000 + 60 * (i % 97 + 1), 14400, 1 + i % 4, 1, ?
		FROM n`, []any{b, step, b, step, b, step, b}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1000999)
		INSERT INTO jobs (cluster, job_id, node, "user", uid, gid, account, "partition", "start", "end",
			status, source, updated_at)
		SELECT 'lab', CAST(1000000 + i AS TEXT), 'gpu01',
			CASE WHEN i % 100 = 7 OR (i >= 1000000 AND i % 10 < 3) THEN 'target' ELSE 'u' || (i % 500) END,
			CASE WHEN i % 100 = 7 OR (i >= 1000000 AND i % 10 < 3) THEN 4242 ELSE 10000 + i % 500 END,
			100, 'acct' || (i % 20), 'gpu', ? + ? * i / 1000, ? + ? * i / 1000 + 60 * (i % 97 + 1), 'finished', 'hook', ?
		FROM n WHERE i % 200 = 7 OR i % 80 = 1 OR i >= 1000000`, []any{b, step, b, step, b}},
		{`INSERT INTO job_gpus (cluster, job_id, node, uuid, position, slurm_index, minor, model, memory_total,
			shared, samples, util_mean, mem_peak, xid_count, idle_allocation, preallocated, state)
		SELECT cluster, job_id, node, 'GPU-' || job_id, 0, 0, 0, 'NVIDIA H100 80GB HBM3', 85899345920,
			0, 100, (CAST(job_id AS INTEGER) * 7) % 101, ((CAST(job_id AS INTEGER) * 13) % 80) * 1073741824, 0, 0, 0, ?
		FROM jobs`, []any{string(state)}},
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return fmt.Errorf("benchdb statement %d: %w", i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "ANALYZE")
	return err
}
