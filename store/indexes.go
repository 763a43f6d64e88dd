package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// index is one secondary index of the current schema.
type index struct {
	name string
	on   string // what follows ON in its CREATE INDEX
}

// createSQL creates the index unless it exists.
func (i index) createSQL() string { return "CREATE INDEX IF NOT EXISTS " + i.name + " ON " + i.on }

// schedIndexes are sched_jobs' secondary indexes as the current schema has
// them (0002_sched.sql and 0003_sched_gpu.sql made them; a test holds the
// migrations and this list to each other, so a migration that changes one
// must change it here too). They are the home of the definitions that
// BulkLoad drops and builds again and that Open re-creates where they are
// missing.
//
// Each filter of the views (user, uid, account, partition, state) leads an
// index that then follows the views' sort order, newest first with ties by
// cluster and job id; sched_jobs_when is that order unfiltered; array and
// het serve job ids as Slurm shows them ("53_1", "60+1"). None is used by
// the writes of an import: those find a job by the primary key (job_id,
// cluster), and its reports by sched_events' UNIQUE key.
var schedIndexes = []index{
	{"sched_jobs_when", `sched_jobs (coalesce("start", submit), cluster, job_id)`},
	{"sched_jobs_user", `sched_jobs ("user", coalesce("start", submit), cluster, job_id)`},
	{"sched_jobs_uid", `sched_jobs (uid, coalesce("start", submit), cluster, job_id)`},
	{"sched_jobs_account", `sched_jobs (account, coalesce("start", submit), cluster, job_id)`},
	{"sched_jobs_partition", `sched_jobs ("partition", coalesce("start", submit), cluster, job_id)`},
	{"sched_jobs_state", `sched_jobs (state, coalesce("start", submit), cluster, job_id)`},
	{"sched_jobs_array", `sched_jobs (array_job_id, array_task_id)`},
	{"sched_jobs_het", `sched_jobs (het_job_id, het_offset)`},
}

// schedIndexNames is the SQL list of schedIndexes' names, quoted.
func schedIndexNames() string {
	names := make([]string, len(schedIndexes))
	for i, ix := range schedIndexes {
		names[i] = "'" + ix.name + "'"
	}
	return strings.Join(names, ", ")
}

// schedIndexesPresentSQL counts the indexes of schedIndexes that exist.
var schedIndexesPresentSQL = `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sched_jobs' AND name IN (` +
	schedIndexNames() + `)`

// createSchedIndexes creates those of schedIndexes that do not exist, in
// transaction tx.
func createSchedIndexes(ctx context.Context, tx *sql.Tx) error {
	for _, ix := range schedIndexes {
		if _, err := tx.ExecContext(ctx, ix.createSQL()); err != nil {
			return fmt.Errorf("create index %s: %w", ix.name, classify(err))
		}
	}
	return nil
}

// dropSchedIndexes drops schedIndexes, in transaction tx.
func dropSchedIndexes(ctx context.Context, tx *sql.Tx) error {
	for _, ix := range schedIndexes {
		if _, err := tx.ExecContext(ctx, "DROP INDEX IF EXISTS "+ix.name); err != nil {
			return fmt.Errorf("drop index %s: %w", ix.name, classify(err))
		}
	}
	return nil
}
