package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// JobView is one job as the controller knows it: the scheduler's view
// merged with the GPU profiles of every node it ran on. Either part may be
// missing: no jobcomp configured (profiles only), or sacct history of jobs
// that ran before gpuprof did (scheduler view only).
type JobView struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"`
	// Sched is the merged scheduler record; nil when no report arrived.
	Sched *slurmext.JobRecord `json:"sched,omitempty"`
	// Profiles are the per-node profiles ordered by node; empty when no GPU
	// readings exist.
	Profiles []profile.Job `json:"profiles"`
}

// ViewFilter selects jobs for ListViews. Zero fields select everything.
type ViewFilter struct {
	Cluster, JobID string
	// User, UID, Account and Partition match the scheduler record or, for
	// a job without one, the profile of its first node (earliest start):
	// Slurm gives every node of a job the same values.
	User, Account, Partition string
	UID                      *int
	// State matches the scheduler state case-insensitively (COMPLETED,
	// running, …) or, for a job without a scheduler record, the profile
	// status (running, finished) of any of its nodes.
	State string
	// Since and Until select jobs whose [start, end] overlaps [Since, Until):
	// started before Until, and ended at or after Since or not ended. The
	// start is the sort time of ListViews (the scheduler's start, else its
	// submit time, else the earliest profile start); a job without one is
	// not selected by Until. A zero bound is open.
	Since, Until time.Time
	// Limit bounds the page (0: no bound); Offset skips that many jobs.
	Limit, Offset int
	// WithSeries decodes each GPU's time series (see Filter.WithSeries).
	WithSeries bool
}

// ListViews returns the jobs f selects, newest first: by the scheduler's
// start, else its submit time, else the earliest profile start; jobs with
// none of these last; ties by cluster, then job id, both descending.
func (db *DB) ListViews(ctx context.Context, f ViewFilter) (vs []JobView, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		vs, err = tx.ListViews(ctx, f)
		return err
	})
	return vs, err
}

// GetView returns one job with its series, or ErrNotFound when neither a
// scheduler record nor a profile of it exists.
func (db *DB) GetView(ctx context.Context, cluster, jobID string) (v JobView, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		v, err = tx.GetView(ctx, cluster, jobID)
		return err
	})
	return v, err
}

// ListViews returns the jobs f selects, newest first; see DB.ListViews.
func (t *Tx) ListViews(ctx context.Context, f ViewFilter) ([]JobView, error) {
	keys, err := t.viewKeys(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list views: %w", err)
	}
	vs, err := t.loadViews(ctx, keys, f.WithSeries)
	if err != nil {
		return nil, fmt.Errorf("list views: %w", err)
	}
	return vs, nil
}

// GetView returns one job with its series, or ErrNotFound.
func (t *Tx) GetView(ctx context.Context, cluster, jobID string) (JobView, error) {
	vs, err := t.loadViews(ctx, []viewKey{{cluster, jobID}}, true)
	if err != nil {
		return JobView{}, fmt.Errorf("get view %s/%s: %w", cluster, jobID, err)
	}
	if vs[0].Sched == nil && len(vs[0].Profiles) == 0 {
		return JobView{}, fmt.Errorf("get view %s/%s: %w", cluster, jobID, ErrNotFound)
	}
	return vs[0], nil
}

type viewKey struct{ cluster, jobID string }

// sortKey is a key with its sort time (NULL when the job has no time).
type sortKey struct {
	viewKey
	t sql.NullInt64
}

// before reports whether a comes before b in the views' order: newest
// first, no time last, ties by cluster then job id, descending (so that the
// order is an index order, see 0002_sched.sql).
func (a sortKey) before(b sortKey) bool {
	if a.t.Valid != b.t.Valid {
		return a.t.Valid
	}
	if a.t.Int64 != b.t.Int64 {
		return a.t.Int64 > b.t.Int64
	}
	if a.cluster != b.cluster {
		return a.cluster > b.cluster
	}
	return a.jobID > b.jobID
}

// viewKeys returns the keys of the page f selects. They come from two
// disjoint arms, each with f pushed down and read in index order: jobs with
// a scheduler record (matched on it), then jobs with profiles only (matched
// on those). With a page size, each arm stops after Offset+Limit keys, and
// the second reads only profiles at least as new as the first arm's last
// key: in a controller database where jobcomp reports every job, the
// profile arm then touches a page's worth of rows, not the whole table.
func (t *Tx) viewKeys(ctx context.Context, f ViewFilter) ([]viewKey, error) {
	offset := max(f.Offset, 0)
	want := 0 // keys each arm needs; 0: all
	if f.Limit > 0 {
		want = offset + f.Limit
	}
	sched, err := t.schedKeys(ctx, f, want)
	if err != nil {
		return nil, err
	}
	var cutoff *int64
	if want > 0 && len(sched) == want && sched[want-1].t.Valid {
		cutoff = &sched[want-1].t.Int64
	}
	prof, err := t.profileKeys(ctx, f, want, cutoff)
	if err != nil {
		return nil, err
	}
	all := append(sched, prof...)
	slices.SortFunc(all, func(a, b sortKey) int {
		switch {
		case a.before(b):
			return -1
		case b.before(a):
			return 1
		}
		return 0
	})
	if offset >= len(all) {
		return nil, nil
	}
	all = all[offset:]
	if f.Limit > 0 && len(all) > f.Limit {
		all = all[:f.Limit]
	}
	keys := make([]viewKey, len(all))
	for i, k := range all {
		keys[i] = k.viewKey
	}
	return keys, nil
}

const (
	// schedWhen is the sort time of a job with a scheduler record that has
	// one; sched_jobs_when indexes it.
	schedWhen = `coalesce(s."start", s.submit)`
	// profileWhen is the sort time of a job with a scheduler record that
	// has neither start nor submit time: its earliest profile start.
	profileWhen = `(SELECT min(p."start") FROM jobs p WHERE p.cluster = s.cluster AND p.job_id = s.job_id)`
	// viewOrder is the order of sortKey.before for an arm's key columns.
	viewOrder = ` ORDER BY t DESC, cluster DESC, job_id DESC`
)

// addJobFilters adds the conditions both tables answer the same way, on
// the columns of the table aliased a.
func addJobFilters(a string, f ViewFilter, add func(cond string, v any)) {
	if f.Cluster != "" {
		add(a+".cluster = ?", f.Cluster)
	}
	if f.JobID != "" {
		add(a+".job_id = ?", f.JobID)
	}
	if f.User != "" {
		add(a+`."user" = ?`, f.User)
	}
	if f.Account != "" {
		add(a+".account = ?", f.Account)
	}
	if f.Partition != "" {
		add(a+`."partition" = ?`, f.Partition)
	}
	if f.UID != nil {
		add(a+".uid = ?", *f.UID)
	}
}

// schedKeys returns the first want (all when 0) keys of jobs with a
// scheduler record that f selects. Records without start and submit time
// (rare) take the earliest profile start; they are a second, small arm so
// the first can follow the index.
func (t *Tx) schedKeys(ctx context.Context, f ViewFilter, want int) ([]sortKey, error) {
	var conds []string
	var args []any
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	addJobFilters("s", f, add)
	if f.State != "" {
		add("s.state = ?", f.State) // NOCASE column
	}
	if !f.Since.IsZero() {
		add(`(s."end" IS NULL OR s."end" >= ?)`, f.Since.Unix())
	}
	// The start of the window's overlap is the sort time in both arms.
	timedConds, untimedConds := slices.Concat(conds, []string{schedWhen + " IS NOT NULL"}), slices.Concat(conds, []string{schedWhen + " IS NULL"})
	timedArgs, untimedArgs := args, args
	if !f.Until.IsZero() {
		timedConds, timedArgs = append(timedConds, schedWhen+" < ?"), append(slices.Clip(timedArgs), ceilUnix(f.Until))
		untimedConds, untimedArgs = append(untimedConds, profileWhen+" < ?"), append(slices.Clip(untimedArgs), ceilUnix(f.Until))
	}
	limit, limitArgs := "", []any(nil)
	if want > 0 {
		limit, limitArgs = " LIMIT ?", []any{want}
	}
	timed := `SELECT s.cluster AS cluster, s.job_id AS job_id, ` + schedWhen + ` AS t FROM sched_jobs s` +
		where(timedConds) + ` ORDER BY ` + schedWhen + ` DESC, s.cluster DESC, s.job_id DESC` + limit
	untimed := `SELECT s.cluster AS cluster, s.job_id AS job_id, ` + profileWhen + ` AS t
		FROM sched_jobs s` + where(untimedConds) + viewOrder + limit
	q := `SELECT * FROM (` + timed + `) UNION ALL SELECT * FROM (` + untimed + `)` + viewOrder + limit
	all := slices.Concat(timedArgs, limitArgs, untimedArgs, limitArgs, limitArgs)
	return t.queryKeys(ctx, q, all...)
}

// profileKeys returns the first want (all when 0) keys of jobs with
// profiles and no scheduler record that f selects, no older than cutoff
// when that is set. A job's sort time is its earliest node start; it is
// read from that node's row (the "first node": earliest start, then node
// name), which also carries the job-wide fields (user, uid, account,
// partition) the filter matches. Status differs between nodes: a job
// matches a status when any node has it.
func (t *Tx) profileKeys(ctx context.Context, f ViewFilter, want int, cutoff *int64) ([]sortKey, error) {
	status := strings.ToLower(f.State)
	if f.State != "" && status != profile.StatusRunning && status != profile.StatusFinished {
		return nil, nil // a scheduler state: only scheduler records have it
	}
	sameJob := `q.cluster = p.cluster AND q.job_id = p.job_id`
	conds := []string{
		`NOT EXISTS (SELECT 1 FROM sched_jobs s WHERE s.cluster = p.cluster AND s.job_id = p.job_id)`,
		// p is the job's first node; a missing start counts as latest.
		`NOT EXISTS (SELECT 1 FROM jobs q WHERE ` + sameJob + `
			AND (coalesce(q."start", 9e18), q.node) < (coalesce(p."start", 9e18), p.node))`,
	}
	var args []any
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	addJobFilters("p", f, add)
	switch status {
	case profile.StatusRunning:
		// Few profiles run at a time: start from them (jobs_status).
		add(`(p.cluster, p.job_id) IN (SELECT cluster, job_id FROM jobs WHERE status = ?)`, status)
	case profile.StatusFinished:
		// Nearly all have finished: follow the time order, check each.
		add(`EXISTS (SELECT 1 FROM jobs q WHERE `+sameJob+` AND q.status = ?)`, status)
	}
	if !f.Until.IsZero() {
		add(`p."start" < ?`, ceilUnix(f.Until))
	}
	if !f.Since.IsZero() {
		add(`EXISTS (SELECT 1 FROM jobs q WHERE `+sameJob+` AND (q."end" IS NULL OR q."end" >= ?))`, f.Since.Unix())
	}
	if cutoff != nil {
		add(`p."start" >= ?`, *cutoff)
	}
	q := `SELECT p.cluster, p.job_id, p."start" AS t FROM jobs p` + where(conds) +
		` ORDER BY p."start" DESC, p.cluster DESC, p.job_id DESC`
	if want > 0 {
		q += " LIMIT ?"
		args = append(args, want)
	}
	return t.queryKeys(ctx, q, args...)
}

func (t *Tx) queryKeys(ctx context.Context, q string, args ...any) ([]sortKey, error) {
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var keys []sortKey
	for rows.Next() {
		var k sortKey
		if err := rows.Scan(&k.cluster, &k.jobID, &k.t); err != nil {
			return nil, classify(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return keys, nil
}

func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// keyTable turns the page's keys into rows for a join: one JSON parameter
// instead of two per key, so a page of any size is one statement.
const keyTable = `(SELECT value ->> 0 AS cluster, value ->> 1 AS job_id FROM json_each(?))`

// loadViews returns a view for each key, in order, in two queries: the
// scheduler records, then the profiles with their GPUs.
func (t *Tx) loadViews(ctx context.Context, keys []viewKey, withSeries bool) ([]JobView, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	pairs := make([][2]string, len(keys))
	vs := make([]JobView, len(keys))
	index := make(map[viewKey]int, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.cluster, k.jobID}
		vs[i] = JobView{Cluster: k.cluster, JobID: k.jobID}
		index[k] = i
	}
	kj, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("encode keys: %w", err)
	}

	rows, err := t.tx.QueryContext(ctx, `SELECT `+prefixed("s", schedColumns)+`
		FROM `+keyTable+` k JOIN sched_jobs s ON s.cluster = k.cluster AND s.job_id = k.job_id`, string(kj))
	if err != nil {
		return nil, classify(err)
	}
	for rows.Next() {
		r, _, err := scanSched(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if i, ok := index[viewKey{r.Cluster, r.JobID}]; ok {
			vs[i].Sched = &r
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}

	// One row per GPU (or one with NULL GPU columns for a profile without
	// GPUs), ordered so that a node's rows are adjacent: the job columns
	// repeat on each and the first makes the profile.
	rows, err = t.tx.QueryContext(ctx, `SELECT `+prefixed("j", jobColumns)+`, g.uuid, g.state
		FROM `+keyTable+` k JOIN jobs j ON j.cluster = k.cluster AND j.job_id = k.job_id
		LEFT JOIN job_gpus g ON g.cluster = j.cluster AND g.job_id = j.job_id AND g.node = j.node
		ORDER BY j.cluster, j.job_id, j.node, g.position`, string(kj))
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var uuid, state sql.NullString
		j, err := scanJob(rows, &uuid, &state)
		if err != nil {
			return nil, err
		}
		i, ok := index[viewKey{j.Cluster, j.JobID}]
		if !ok {
			continue
		}
		ps := &vs[i].Profiles
		if n := len(*ps); n == 0 || (*ps)[n-1].Node != j.Node {
			*ps = append(*ps, j)
		}
		if !uuid.Valid {
			continue
		}
		g, err := decodeGPU(state.String, withSeries)
		if err != nil {
			return nil, fmt.Errorf("job %s gpu %s: %w", keyString(j.Key), uuid.String, err)
		}
		g.UUID = uuid.String
		p := &(*ps)[len(*ps)-1]
		p.GPUs = append(p.GPUs, g)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return vs, nil
}

// prefixed qualifies each column of a column list with table alias a.
func prefixed(a, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = a + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
