package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gpuprof/gpuprof/profile"
)

// ErrOwner means a profile names another owner for its job than the one
// the database already holds for that job.
var ErrOwner = errors.New("the job belongs to another user")

// CheckOwner returns an error wrapping ErrOwner when j names another
// owner (uid) for its job than the database already gives it: the
// scheduler record's uid when jobcomp or sacct reported the job (Slurm's
// own word), else the uid of the job's finished profiles on any node, else
// that of its running profiles on other nodes. j's own node's running
// profile decides nothing: a job an agent found before its prolog is
// provisional, and the prolog's owner replaces the one it guessed.
//
// A writer that takes profiles from elsewhere (the collector, from nodes)
// calls it before PutJob in the same transaction, so that a node's
// credential cannot hand another user's job, or its readings, to someone
// else, nor take a finished job back.
func (t *Tx) CheckOwner(ctx context.Context, j profile.Job) error {
	var uid int
	err := t.tx.QueryRowContext(ctx, `SELECT uid FROM sched_jobs WHERE cluster = ? AND job_id = ? AND uid >= 0`,
		j.Cluster, j.JobID).Scan(&uid)
	switch {
	case err == nil:
		if uid != j.UID {
			return fmt.Errorf("job %s/%s: %w: Slurm's record names uid %d, the profile of node %s uid %d",
				j.Cluster, j.JobID, ErrOwner, uid, j.Node, j.UID)
		}
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("owner of job %s/%s: %w", j.Cluster, j.JobID, classify(err))
	}
	var node string
	err = t.tx.QueryRowContext(ctx, `SELECT uid, node FROM jobs WHERE cluster = ? AND job_id = ?
		AND (status = ? OR node <> ?) AND uid <> ? LIMIT 1`,
		j.Cluster, j.JobID, profile.StatusFinished, j.Node, j.UID).Scan(&uid, &node)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("owner of job %s/%s: %w", j.Cluster, j.JobID, classify(err))
	}
	return fmt.Errorf("job %s/%s: %w: the profile of node %s names uid %d, this one of node %s uid %d",
		j.Cluster, j.JobID, ErrOwner, node, uid, j.Node, j.UID)
}
