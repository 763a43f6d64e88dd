package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// eachView calls fn with every job f selects — the same jobs as ListViews
// with the same profiles, in no particular order; f.Limit, f.Offset,
// f.Sort, f.Asc and the After fields are ignored. It reads each table in
// one filtered pass rather than job by job (ListViews orders every key and
// then looks each job up), and hands the views over one at a time, so a
// caller who keeps less than the whole view (the analysis keeps a summary
// of each GPU, not its time series) never holds them all: what a whole
// month (the report) wants. fn runs
// inside the read transaction and must not use the database; its error
// stops the reading and is returned.
func (db *DB) eachView(ctx context.Context, f ViewFilter, fn func(JobView) error) error {
	if f.Lean {
		split, err := db.splitPoint(ctx)
		if err != nil {
			return fmt.Errorf("all views: %w", err)
		}
		if split > 0 {
			return db.eachViewSplit(ctx, f, split, fn)
		}
	}
	return db.read(ctx, func(tx *Tx) error { return tx.eachView(ctx, f, fn) })
}

// splitPoint returns the rowid at which a lean read splits the scheduler
// records in two, or 0 when there are too few to be worth it.
func (db *DB) splitPoint(ctx context.Context) (int64, error) {
	least := int64(db.splitMin)
	if least <= 0 {
		least = defaultSplitReadMin
	}
	var lo, hi sql.NullInt64
	if err := db.r.QueryRowContext(ctx, `SELECT min(rowid), max(rowid) FROM sched_jobs`).Scan(&lo, &hi); err != nil {
		return 0, classify(err)
	}
	if !lo.Valid || hi.Int64-lo.Int64+1 < least {
		return 0, nil
	}
	return lo.Int64 + (hi.Int64-lo.Int64+1)/2, nil
}

// eachViewSplit reads the scheduler records below and from split on two
// read connections at once (reading a month of a million records is what
// a whole-period analysis waits for, and one scan keeps one core busy) and
// hands every view to fn from this goroutine, in no particular order. Each
// half is its own read transaction: a job is read once, in one of them.
// The jobs known only from profiles come with the first half.
func (db *DB) eachViewSplit(ctx context.Context, f ViewFilter, split int64, fn func(JobView) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	views := make(chan JobView, 1024)
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for part := range 2 {
		wg.Go(func() {
			err := db.read(ctx, func(tx *Tx) error {
				return tx.eachViewPart(ctx, f, part, split, func(v JobView) error {
					select {
					case views <- v:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				})
			})
			if err != nil {
				cancel() // the other half stops too
			}
			errs <- err
		})
	}
	go func() {
		wg.Wait()
		close(views)
	}()
	var fnErr error
	for v := range views {
		if fnErr != nil {
			continue // drain: the readers stop at the cancelled context
		}
		if fnErr = fn(v); fnErr != nil {
			cancel()
		}
	}
	if fnErr != nil {
		return fnErr
	}
	for range 2 {
		if err := <-errs; err != nil {
			return fmt.Errorf("all views: %w", err)
		}
	}
	return nil
}

// eachView calls fn with every job f selects; see DB.eachView.
func (t *Tx) eachView(ctx context.Context, f ViewFilter, fn func(JobView) error) error {
	if err := t.eachViewWhole(ctx, f, fn); err != nil {
		return fmt.Errorf("all views: %w", err)
	}
	return nil
}

func (t *Tx) eachViewWhole(ctx context.Context, f ViewFilter, fn func(JobView) error) error {
	return t.eachViewPart(ctx, f, 0, 0, fn)
}

// eachViewPart is eachViewWhole over part 0 (rowids below split, and the jobs
// known only from profiles) or part 1 (rowids from split on) of the
// scheduler records; split 0 means all of them in part 0.
func (t *Tx) eachViewPart(ctx context.Context, f ViewFilter, part int, split int64, fn func(JobView) error) error {
	if _, err := sortSpecFor(ViewFilter{Sort: f.Sort}); err != nil {
		return err // a bad key is as wrong here as in ListViews
	}
	// The jobs with a scheduler record that match on it (sortedKeys'
	// conditions), and those known only from profiles that match on their
	// first node (profileConds).
	sc, sargs := schedConds(f)
	if !f.Until.IsZero() {
		sc, sargs = append(sc, `coalesce(`+schedWhen+`, `+profileWhen+`) < ?`), append(slices.Clip(sargs), ceilUnix(f.Until))
	}
	switch {
	case split > 0 && part == 0:
		sc, sargs = append(slices.Clip(sc), `s.rowid < ?`), append(slices.Clip(sargs), split)
	case split > 0:
		sc, sargs = append(slices.Clip(sc), `s.rowid >= ?`), append(slices.Clip(sargs), split)
	}
	pc, pargs, profOnly := profileConds(f)
	if part != 0 {
		profOnly = false
	}

	// First every profile of those jobs, whatever its node's own times,
	// keyed by job: profiles are far fewer than scheduler records, and each
	// is checked with a lookup of its job, not a scan.
	member := `EXISTS (SELECT 1 FROM sched_jobs s WHERE s.cluster = j.cluster AND s.job_id = j.job_id` + and(sc) + `)`
	args := slices.Clip(sargs)
	if profOnly {
		member = `(` + member + ` OR (j.cluster, j.job_id) IN (SELECT p.cluster, p.job_id FROM jobs p` + where(pc) + `))`
		args = append(args, pargs...)
	}
	profiles, err := t.profilesWhere(ctx, member, args, f.WithSeries)
	if err != nil {
		return err
	}

	columns, scan := prefixed("s", schedColumns), func(rows *sql.Rows) (slurmext.JobRecord, error) {
		r, _, err := scanSched(rows)
		return r, err
	}
	if f.Lean {
		columns, scan = prefixed("s", analysisColumns)+", "+leanNodeList, scanAnalysis
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT `+columns+` FROM sched_jobs s`+where(sc), sargs...)
	if err != nil {
		return classify(err)
	}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			rows.Close()
			return err
		}
		k := viewKey{r.Cluster, r.JobID}
		ps := profiles[k]
		delete(profiles, k) // handed over: fn may keep it, this need not
		if err := fn(JobView{Cluster: r.Cluster, JobID: r.JobID, Sched: &r, Profiles: ps}); err != nil {
			rows.Close()
			return err
		}
	}
	if err := rows.Close(); err != nil {
		return classify(err)
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	if !profOnly {
		return nil
	}
	rows, err = t.tx.QueryContext(ctx, `SELECT p.cluster, p.job_id FROM jobs p`+where(pc), pargs...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k viewKey
		if err := rows.Scan(&k.cluster, &k.jobID); err != nil {
			return classify(err)
		}
		if err := fn(JobView{Cluster: k.cluster, JobID: k.jobID, Profiles: profiles[k]}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	return nil
}

// and is conds as " AND c1 AND c2 …", to extend a WHERE clause.
func and(conds []string) string {
	var b strings.Builder
	for _, c := range conds {
		b.WriteString(" AND ")
		b.WriteString(c)
	}
	return b.String()
}

// profilesWhere returns the profiles (jobs rows with their GPUs and
// notices) that satisfy cond on the jobs table aliased j, grouped by job,
// each job's nodes in node order, GPUs in position order and notices
// oldest first. The notices are one more query, not one per job.
func (t *Tx) profilesWhere(ctx context.Context, cond string, args []any, withSeries bool) (map[viewKey][]profile.Job, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+prefixed("j", jobColumns)+`, g.uuid, g.state, `+seriesColumn(withSeries)+`
		FROM jobs j LEFT JOIN job_gpus g ON g.cluster = j.cluster AND g.job_id = j.job_id AND g.node = j.node
		WHERE `+cond+`
		ORDER BY j.cluster, j.job_id, j.node, g.position`, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := map[viewKey][]profile.Job{}
	for rows.Next() {
		var uuid, state, points sql.NullString
		j, err := scanJob(rows, &uuid, &state, &points)
		if err != nil {
			return nil, err
		}
		k := viewKey{j.Cluster, j.JobID}
		if out[k], err = addProfileRow(out[k], j, uuid, state, points); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if err := rows.Close(); err != nil {
		return nil, classify(err)
	}
	// The notices table is small beside the jobs (a few notices a day per
	// user at most) and a notice's job is in out or not: reading it whole
	// costs less than evaluating cond a second time (for a job known only
	// from profiles it scans every profile).
	err = t.viewNotices(ctx, `FROM notices n`, nil, func(k viewKey) []profile.Job { return out[k] })
	if err != nil {
		return nil, fmt.Errorf("notices: %w", err)
	}
	return out, nil
}

// analysisColumns are the scheduler columns the analysis reads
// (analysis.FromView, the report, the TUI's list) and what a job's Slurm
// id needs (an unsplit array's task list): ViewFilter.Lean. The
// long text columns (TRES, node list, reason) are half of what a month's
// scan would otherwise copy out of SQLite. The node list is read only for
// a job whose start is its end: what slurmext.Started needs to tell a job
// cancelled while pending (no nodes) from one that ran under a second.
const analysisColumns = `cluster, job_id, display_id, array_job_id, array_task_id, array_task_spec,
	het_job_id, het_offset, name, "user", uid, account, "partition", qos,
	state, submit, eligible, "start", "end", time_limit, unlimited,
	exit_status, exit_signal, exit_unknown, req_gpus, req_gpu_type, req_shards,
	slurm_gpu_mem, slurm_gpu_util`

// leanNodeList follows analysisColumns in a lean read of sched_jobs s.
const leanNodeList = `CASE WHEN s."start" = s."end" THEN s.node_list ELSE '' END`

// scanAnalysis reads a row of analysisColumns and leanNodeList; the other fields keep the
// values a record has when the scheduler did not report them.
func scanAnalysis(rows *sql.Rows) (slurmext.JobRecord, error) {
	r := slurmext.JobRecord{CancelledBy: -1}
	var submit, eligible, start, end, limit, gpuMem sql.NullInt64
	var gpuUtil sql.NullFloat64
	var state string
	if err := rows.Scan(&r.Cluster, &r.JobID, &r.DisplayID, &r.ArrayJobID, &r.ArrayTaskID, &r.ArrayTaskSpec,
		&r.HetJobID, &r.HetOffset, &r.Name, &r.User, &r.UID, &r.Account, &r.Partition, &r.QOS,
		&state, &submit, &eligible, &start, &end, &limit, &r.Unlimited,
		&r.ExitStatus, &r.ExitSignal, &r.ExitUnknown, &r.ReqGPUs, &r.ReqGPUType, &r.ReqShards,
		&gpuMem, &gpuUtil, &r.NodeList); err != nil {
		return r, classify(err)
	}
	r.State = readState(state)
	setSchedNullable(&r, submit, eligible, start, end, limit, gpuMem, gpuUtil)
	return r, nil
}

// setSchedNullable sets the record's fields whose columns may be NULL
// (unknown): the times, the limit and Slurm's GPU readings.
func setSchedNullable(r *slurmext.JobRecord, submit, eligible, start, end, limit, gpuMem sql.NullInt64, gpuUtil sql.NullFloat64) {
	r.Submit, r.Eligible, r.Start, r.End = timeOrZero(submit), timeOrZero(eligible), timeOrZero(start), timeOrZero(end)
	if limit.Valid {
		r.TimeLimit = time.Duration(limit.Int64) * time.Second
	}
	if gpuMem.Valid && gpuMem.Int64 >= 0 {
		r.SlurmGPUMem, r.SlurmGPUMemValid = uint64(gpuMem.Int64), true
	}
	if gpuUtil.Valid {
		r.SlurmGPUUtil, r.SlurmGPUUtilValid = gpuUtil.Float64, true
	}
}
