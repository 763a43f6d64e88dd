package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// The scheduler's view of a job (slurmext.JobRecord) arrives from jobcomp at
// the end of every run and from sacct imports, in any order and often more
// than once. sched_events keeps each distinct report; sched_jobs keeps one
// merged record per (cluster, job id), recomputed from the stored merge and
// the new report on every put.

// nonFinalStates are the states after which a job may still run (again).
// Every other state, including ones this gpuprof does not know, is final.
var nonFinalStates = map[string]bool{
	"PENDING": true, "RUNNING": true, "REQUEUED": true, "REQUEUE_HOLD": true,
	"REQUEUE_FED": true, "RESIZING": true, "SUSPENDED": true,
}

// finalState reports whether state ends the job. An empty state is not final:
// a record that does not say how the job ended must not settle it.
func finalState(state string) bool {
	f := strings.Fields(state)
	return len(f) > 0 && !nonFinalStates[strings.ToUpper(f[0])]
}

// NormalizeRecord returns r as the store gives it back: times cut to whole
// seconds in UTC (the zero time kept zero), the time limit cut to whole
// seconds and zero when Unlimited.
func NormalizeRecord(r slurmext.JobRecord) slurmext.JobRecord {
	r.Submit, r.Eligible = normTime(r.Submit), normTime(r.Eligible)
	r.Start, r.End = normTime(r.Start), normTime(r.End)
	r.TimeLimit = r.TimeLimit.Truncate(time.Second)
	if r.Unlimited || r.TimeLimit < 0 {
		r.TimeLimit = 0
	}
	return r
}

// PutSchedJob records one report of the scheduler's view in its own
// transaction. See Tx.PutSchedJob.
func (db *DB) PutSchedJob(ctx context.Context, r slurmext.JobRecord) error {
	return db.WithTx(ctx, func(tx *Tx) error { return tx.PutSchedJob(ctx, r) })
}

// PutSchedJobs records many reports in one transaction. See Tx.PutSchedJobs.
func (db *DB) PutSchedJobs(ctx context.Context, rs []slurmext.JobRecord) (inserted, updated, unchanged int, err error) {
	err = db.WithTx(ctx, func(tx *Tx) error {
		inserted, updated, unchanged, err = tx.PutSchedJobs(ctx, rs)
		return err
	})
	return inserted, updated, unchanged, err
}

// GetSchedJob returns the merged scheduler record of a job, or ErrNotFound.
func (db *DB) GetSchedJob(ctx context.Context, cluster, jobID string) (r slurmext.JobRecord, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		r, err = tx.GetSchedJob(ctx, cluster, jobID)
		return err
	})
	return r, err
}

// GetImportMark returns where the importer source of cluster stopped: the
// mark last set, or the zero time when none was.
func (db *DB) GetImportMark(ctx context.Context, cluster, source string) (t time.Time, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		t, err = tx.GetImportMark(ctx, cluster, source)
		return err
	})
	return t, err
}

// SetImportMark sets the import mark in its own transaction. Importers call
// Tx.SetImportMark in the transaction of the records instead.
func (db *DB) SetImportMark(ctx context.Context, cluster, source string, t time.Time) error {
	return db.WithTx(ctx, func(tx *Tx) error { return tx.SetImportMark(ctx, cluster, source, t) })
}

// PutSchedJob records one report r of the scheduler's view of a job and
// merges it into the job's record. It is idempotent: putting a record that
// is already reflected changes nothing, not even updated_at.
//
// Which report wins, whatever the arrival order:
//   - A final state (anything but PENDING, RUNNING, REQUEUED, REQUEUE_HOLD,
//     REQUEUE_FED, RESIZING, SUSPENDED) beats a non-final one, unless the
//     non-final one has a later Start: the job was requeued and started
//     again.
//   - Between two final reports the later End wins; between two non-final
//     ones the later Start. On a tie the later report wins, where reports are
//     ordered by their first arrival, so re-sending an old report does not
//     bring it back.
//
// Fields the winner lacks (empty strings, zero times and counts, -1 ids) are
// filled from the loser: jobcomp has no TRES, sacct has. The state and what
// belongs to it (CancelledBy, exit and derived codes) are the winner's
// alone. What describes one run (Start, End, NodeList, NodeCount, CPUs,
// AllocTRES, Reason) is filled only from a report of the same run (same
// Start, or no Start and the same End), so a requeued job's new run never
// gets its previous run's end or nodes. The request (ReqGPUs, ReqGPUType,
// ReqShards, ReqTRES), the time limit (TimeLimit, Unlimited), the array and
// the heterogeneous-job ids are filled as groups.
//
// Restarts is the largest of the counts reported and the number of distinct
// non-zero Start times ever reported for the job, minus one.
//
// Cluster and JobID must be set (ErrInvalid otherwise).
func (t *Tx) PutSchedJob(ctx context.Context, r slurmext.JobRecord) error {
	w := t.newSchedWriter()
	defer w.close()
	if _, err := w.put(ctx, r); err != nil {
		return fmt.Errorf("put sched job %s/%s: %w", r.Cluster, r.JobID, err)
	}
	return nil
}

// PutSchedJobs records rs in order, as PutSchedJob would one by one, with
// statements prepared once: the bulk path of sacct imports. It returns how
// many sched_jobs rows were inserted, changed and left unchanged (a report
// that adds a new event but loses every field counts as unchanged). On
// error, return it from the transaction's function: part of rs may have
// been written.
func (t *Tx) PutSchedJobs(ctx context.Context, rs []slurmext.JobRecord) (inserted, updated, unchanged int, err error) {
	w := t.newSchedWriter()
	defer w.close()
	for len(rs) > 0 {
		chunk := rs[:min(len(rs), schedChunk)]
		rs = rs[len(chunk):]
		for _, r := range chunk {
			if err := validRecord(r); err != nil {
				return inserted, updated, unchanged, fmt.Errorf("put sched job %s/%s: %w", r.Cluster, r.JobID, err)
			}
		}
		known, err := w.known(ctx, chunk)
		if err != nil {
			return inserted, updated, unchanged, fmt.Errorf("put sched jobs: %w", err)
		}
		// A job's first record in the chunk, when the database has never
		// heard of the job, is inserted as is, many rows per statement.
		// The others follow in order, each merged into what came before.
		var fresh, rest []slurmext.JobRecord
		for _, r := range chunk {
			if k := (viewKey{r.Cluster, r.JobID}); !known[k] {
				known[k] = true
				fresh = append(fresh, r)
			} else {
				rest = append(rest, r)
			}
		}
		if err := w.insertFresh(ctx, fresh); err != nil {
			return inserted, updated, unchanged, fmt.Errorf("put sched jobs: %w", err)
		}
		inserted += len(fresh)
		for _, r := range rest {
			res, err := w.put(ctx, r)
			if err != nil {
				return inserted, updated, unchanged, fmt.Errorf("put sched job %s/%s: %w", r.Cluster, r.JobID, err)
			}
			switch res {
			case putInserted:
				inserted++
			case putUpdated:
				updated++
			default:
				unchanged++
			}
		}
	}
	return inserted, updated, unchanged, nil
}

// schedChunk is how many records PutSchedJobs looks up and inserts at once.
const schedChunk = 512

func validRecord(r slurmext.JobRecord) error {
	if r.Cluster == "" || r.JobID == "" {
		return fmt.Errorf("%w: cluster and job id must both be set", ErrInvalid)
	}
	return nil
}

// GetSchedJob returns the merged scheduler record of a job, or ErrNotFound.
func (t *Tx) GetSchedJob(ctx context.Context, cluster, jobID string) (slurmext.JobRecord, error) {
	row := t.tx.QueryRowContext(ctx, `SELECT `+schedColumns+` FROM sched_jobs WHERE cluster = ? AND job_id = ?`, cluster, jobID)
	r, _, err := scanSched(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, fmt.Errorf("get sched job %s/%s: %w", cluster, jobID, ErrNotFound)
	case err != nil:
		return r, fmt.Errorf("get sched job %s/%s: %w", cluster, jobID, err)
	}
	return r, nil
}

// GetImportMark returns where the importer source of cluster stopped: the
// mark last set, or the zero time when none was.
func (t *Tx) GetImportMark(ctx context.Context, cluster, source string) (time.Time, error) {
	var end sql.NullInt64
	err := t.tx.QueryRowContext(ctx, `SELECT last_end FROM import_state WHERE cluster = ? AND source = ?`,
		cluster, source).Scan(&end)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("get import mark %s/%s: %w", cluster, source, classify(err))
	}
	return timeOrZero(end), nil
}

// SetImportMark records that the importer source of cluster has committed
// every record ending at or before t. Set it in the transaction that puts
// those records, so a crash loses both or neither and a resumed import
// starts exactly where the last one stopped. The zero time clears the mark.
func (t *Tx) SetImportMark(ctx context.Context, cluster, source string, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO import_state (cluster, source, last_end, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (cluster, source) DO UPDATE SET last_end = excluded.last_end, updated_at = excluded.updated_at`,
		cluster, source, unixOrNull(at), time.Now().Unix())
	if err != nil {
		return fmt.Errorf("set import mark %s/%s: %w", cluster, source, classify(err))
	}
	return nil
}

const schedColumns = `cluster, job_id, display_id, array_job_id, array_task_id, array_task_spec,
	het_job_id, het_offset, name, "user", uid, account, "partition", qos,
	state, cancelled_by, reason, submit, eligible, "start", "end", time_limit, unlimited,
	exit_status, exit_signal, derived_status, derived_signal,
	node_list, node_count, cpus, req_gpus, req_gpu_type, req_shards, req_tres, alloc_tres,
	restarts, source, event_seq`

const upsertSchedSQL = `INSERT INTO sched_jobs (` + schedColumns + `, updated_at)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (cluster, job_id) DO UPDATE SET
	display_id = excluded.display_id, array_job_id = excluded.array_job_id,
	array_task_id = excluded.array_task_id, array_task_spec = excluded.array_task_spec,
	het_job_id = excluded.het_job_id, het_offset = excluded.het_offset, name = excluded.name,
	"user" = excluded."user", uid = excluded.uid, account = excluded.account,
	"partition" = excluded."partition", qos = excluded.qos, state = excluded.state,
	cancelled_by = excluded.cancelled_by, reason = excluded.reason,
	submit = excluded.submit, eligible = excluded.eligible,
	"start" = excluded."start", "end" = excluded."end", time_limit = excluded.time_limit,
	unlimited = excluded.unlimited, exit_status = excluded.exit_status,
	exit_signal = excluded.exit_signal, derived_status = excluded.derived_status,
	derived_signal = excluded.derived_signal, node_list = excluded.node_list,
	node_count = excluded.node_count, cpus = excluded.cpus, req_gpus = excluded.req_gpus,
	req_gpu_type = excluded.req_gpu_type, req_shards = excluded.req_shards,
	req_tres = excluded.req_tres, alloc_tres = excluded.alloc_tres,
	restarts = excluded.restarts, source = excluded.source, event_seq = excluded.event_seq,
	updated_at = excluded.updated_at`

type putResult int

const (
	putUnchanged putResult = iota
	putInserted
	putUpdated
)

// schedWriter holds the statements of PutSchedJob and PutSchedJobs, each
// prepared on first use and then reused for the rest of the call, so a bulk
// import pays for parsing them once and a single put only for those it
// needs.
type schedWriter struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (t *Tx) newSchedWriter() *schedWriter {
	return &schedWriter{tx: t.tx, stmts: map[string]*sql.Stmt{}}
}

func (w *schedWriter) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, classify(err)
	}
	w.stmts[query] = s
	return s, nil
}

func (w *schedWriter) close() {
	for _, s := range w.stmts {
		s.Close()
	}
}

func (w *schedWriter) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := s.ExecContext(ctx, args...)
	return res, classify(err)
}

func (w *schedWriter) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	s, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryRowContext(ctx, args...), nil
}

const (
	currentSQL = `SELECT ` + schedColumns + ` FROM sched_jobs WHERE cluster = ? AND job_id = ?`
	knownSQL   = `SELECT k.cluster, k.job_id FROM ` + keyTable + ` k
		WHERE EXISTS (SELECT 1 FROM sched_jobs s WHERE s.cluster = k.cluster AND s.job_id = k.job_id)
		OR EXISTS (SELECT 1 FROM sched_events e WHERE e.cluster = k.cluster AND e.job_id = k.job_id)`
	eventSeqSQL = `SELECT seq FROM sched_events
		WHERE cluster = ? AND job_id = ? AND state = ? AND "start" = ? AND "end" = ? AND source = ?`
	// Reports so far, distinct non-zero starts, and whether start ?3 is
	// among them.
	eventCountsSQL = `SELECT count(*), count(DISTINCT nullif("start", 0)), coalesce(max("start" = ?3), 0)
		FROM sched_events WHERE cluster = ?1 AND job_id = ?2`
	insertEventSQL = `INSERT INTO sched_events (` + eventColumns + `) VALUES (?,?,?,?,?,?,?,?,?)`
)

// known returns which of the jobs of rs have a sched_jobs row or a report,
// in one query: a bulk import of new jobs then skips looking each one up.
func (w *schedWriter) known(ctx context.Context, rs []slurmext.JobRecord) (map[viewKey]bool, error) {
	pairs := make([][2]string, len(rs))
	for i, r := range rs {
		pairs[i] = [2]string{r.Cluster, r.JobID}
	}
	kj, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("encode keys: %w", err)
	}
	st, err := w.stmt(ctx, knownSQL)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, string(kj))
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	known := make(map[viewKey]bool, len(rs))
	for rows.Next() {
		var k viewKey
		if err := rows.Scan(&k.cluster, &k.jobID); err != nil {
			return nil, classify(err)
		}
		known[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return known, nil
}

// insertFresh inserts jobs that have neither a record nor a report yet,
// each once, freshRows to a statement: a bulk import of new jobs costs
// little more than SQLite's own work on the rows and their indexes.
func (w *schedWriter) insertFresh(ctx context.Context, rs []slurmext.JobRecord) error {
	now := time.Now().Unix()
	events := make([]any, 0, freshRows*eventColumnCount)
	jobs := make([]any, 0, freshRows*schedColumnCount)
	for len(rs) > 0 {
		batch := rs[:min(len(rs), freshRows)]
		rs = rs[len(batch):]
		events, jobs = events[:0], jobs[:0]
		for _, r := range batch {
			r = NormalizeRecord(r)
			payload, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("job %s/%s: encode record: %w", r.Cluster, r.JobID, err)
			}
			events = append(events, r.Cluster, r.JobID, r.State, unixOrZero(r.Start), unixOrZero(r.End), r.Source,
				1, now, string(payload))
			jobs = append(append(jobs, schedArgs(r, 1)...), now)
		}
		// Statements are kept by their text: the full-size ones are
		// prepared once a call, a short last batch gets its own.
		if _, err := w.exec(ctx, insertRowsSQL("sched_events", eventColumns, eventColumnCount, len(batch)), events...); err != nil {
			return err
		}
		if _, err := w.exec(ctx, insertRowsSQL("sched_jobs", schedColumns+", updated_at", schedColumnCount, len(batch)), jobs...); err != nil {
			return err
		}
	}
	return nil
}

const (
	eventColumns     = `cluster, job_id, state, "start", "end", source, seq, reported_at, payload`
	eventColumnCount = 9
	schedColumnCount = 39 // schedColumns and updated_at
	// freshRows is how many new jobs one INSERT writes; 39 parameters a
	// row stays far below SQLite's limit of 32766 a statement.
	freshRows = 32
)

// insertRowsSQL is an INSERT of rows rows of n columns into table.
func insertRowsSQL(table, columns string, n, rows int) string {
	row := "(" + strings.Repeat("?,", n-1) + "?)"
	return "INSERT INTO " + table + " (" + columns + ") VALUES " + strings.Repeat(row+",", rows-1) + row
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// put records r as a report and merges it into its job's record.
func (w *schedWriter) put(ctx context.Context, r slurmext.JobRecord) (putResult, error) {
	if err := validRecord(r); err != nil {
		return 0, err
	}
	r = NormalizeRecord(r)
	payload, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encode record: %w", err)
	}
	now := time.Now().Unix()
	evKey := []any{r.Cluster, r.JobID, r.State, unixOrZero(r.Start), unixOrZero(r.End), r.Source}

	row, err := w.queryRow(ctx, currentSQL, r.Cluster, r.JobID)
	if err != nil {
		return 0, err
	}
	cur, curSeq, err := scanSched(row)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	seq, starts, err := w.event(ctx, r, evKey, now, payload)
	if err != nil {
		return 0, err
	}
	merged, mergedSeq := r, seq
	if found {
		if recordWins(r, seq, cur, curSeq) {
			merged = fill(r, cur)
		} else {
			merged, mergedSeq = fill(cur, r), curSeq
		}
		merged.Restarts = max(merged.Restarts, cur.Restarts, r.Restarts)
	}
	merged.Restarts = max(merged.Restarts, starts-1)
	if found && merged == cur && mergedSeq == curSeq {
		return putUnchanged, nil
	}
	if _, err := w.exec(ctx, upsertSchedSQL, append(schedArgs(merged, mergedSeq), now)...); err != nil {
		return 0, err
	}
	if found {
		return putUpdated, nil
	}
	return putInserted, nil
}

// event records r as a report of its job unless the same report exists,
// and returns the report's seq and the number of distinct non-zero starts
// reported for the job (0 when the report was known: the count cannot have
// changed, and the stored record already reflects it).
func (w *schedWriter) event(ctx context.Context, r slurmext.JobRecord, evKey []any, now int64, payload []byte) (seq int64, starts int, err error) {
	row, err := w.queryRow(ctx, eventSeqSQL, evKey...)
	if err != nil {
		return 0, 0, err
	}
	err = row.Scan(&seq)
	if err == nil {
		return seq, 0, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, classify(err)
	}
	var n int64
	var seen bool
	start := unixOrZero(r.Start)
	if row, err = w.queryRow(ctx, eventCountsSQL, r.Cluster, r.JobID, start); err != nil {
		return 0, 0, err
	}
	if err := row.Scan(&n, &starts, &seen); err != nil {
		return 0, 0, classify(err)
	}
	if start != 0 && !seen {
		starts++
	}
	seq = n + 1
	if _, err := w.exec(ctx, insertEventSQL, append(evKey, seq, now, string(payload))...); err != nil {
		return 0, 0, err
	}
	return seq, starts, nil
}

// recordWins reports whether the new report r (the job's report number
// rSeq) beats the stored merge cur (won by report curSeq); see PutSchedJob.
func recordWins(r slurmext.JobRecord, rSeq int64, cur slurmext.JobRecord, curSeq int64) bool {
	later := rSeq >= curSeq // the same report again carries its latest payload
	rFinal, curFinal := finalState(r.State), finalState(cur.State)
	switch {
	case rFinal && !curFinal:
		return !cur.Start.After(r.Start)
	case !rFinal && curFinal:
		return r.Start.After(cur.Start)
	case rFinal: // both final
		if !r.End.Equal(cur.End) {
			return r.End.After(cur.End)
		}
		return later
	default: // both running or waiting
		if !r.Start.Equal(cur.Start) {
			return r.Start.After(cur.Start)
		}
		return later
	}
}

// fill returns w with what it lacks taken from l; see PutSchedJob for which
// fields and why.
func fill(w, l slurmext.JobRecord) slurmext.JobRecord {
	str := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	tm := func(dst *time.Time, src time.Time) {
		if dst.IsZero() {
			*dst = src
		}
	}
	num := func(dst *int, src int) {
		if *dst == 0 {
			*dst = src
		}
	}
	str(&w.DisplayID, l.DisplayID)
	if w.ArrayJobID == "" && l.ArrayJobID != "" {
		w.ArrayJobID, w.ArrayTaskID, w.ArrayTaskSpec = l.ArrayJobID, l.ArrayTaskID, l.ArrayTaskSpec
	}
	if w.HetJobID == "" && l.HetJobID != "" {
		w.HetJobID, w.HetOffset = l.HetJobID, l.HetOffset
	}
	str(&w.Name, l.Name)
	str(&w.User, l.User)
	if w.UID < 0 {
		w.UID = l.UID
	}
	str(&w.Account, l.Account)
	str(&w.Partition, l.Partition)
	str(&w.QOS, l.QOS)
	tm(&w.Submit, l.Submit)
	tm(&w.Eligible, l.Eligible)
	if w.TimeLimit == 0 && !w.Unlimited {
		w.TimeLimit, w.Unlimited = l.TimeLimit, l.Unlimited
	}
	if w.ReqGPUs == 0 && w.ReqTRES == "" && w.ReqShards == 0 && w.ReqGPUType == "" {
		w.ReqGPUs, w.ReqGPUType, w.ReqShards, w.ReqTRES = l.ReqGPUs, l.ReqGPUType, l.ReqShards, l.ReqTRES
	}
	// The same run: the same start, or a winner that lacks the start but
	// ended when the loser did.
	if w.Start.Equal(l.Start) || (w.Start.IsZero() && !w.End.IsZero() && w.End.Equal(l.End)) {
		tm(&w.Start, l.Start)
		tm(&w.End, l.End)
		str(&w.NodeList, l.NodeList)
		num(&w.NodeCount, l.NodeCount)
		num(&w.CPUs, l.CPUs)
		str(&w.AllocTRES, l.AllocTRES)
		str(&w.Reason, l.Reason)
	}
	str(&w.Source, l.Source)
	return w
}

func schedArgs(r slurmext.JobRecord, seq int64) []any {
	var limit any
	if !r.Unlimited && r.TimeLimit > 0 {
		limit = int64(r.TimeLimit / time.Second)
	}
	return []any{
		r.Cluster, r.JobID, r.DisplayID, r.ArrayJobID, r.ArrayTaskID, r.ArrayTaskSpec,
		r.HetJobID, r.HetOffset, r.Name, r.User, r.UID, r.Account, r.Partition, r.QOS,
		r.State, r.CancelledBy, r.Reason, unixOrNull(r.Submit), unixOrNull(r.Eligible), unixOrNull(r.Start), unixOrNull(r.End),
		limit, r.Unlimited, r.ExitStatus, r.ExitSignal, r.DerivedStatus, r.DerivedSignal,
		r.NodeList, r.NodeCount, r.CPUs, r.ReqGPUs, r.ReqGPUType, r.ReqShards, r.ReqTRES, r.AllocTRES,
		r.Restarts, r.Source, seq,
	}
}

type scanner interface {
	Scan(dest ...any) error
}

// scanSched reads one row of schedColumns (plus extra trailing columns into
// extra) and returns the record and the seq of its winning report.
// sql.ErrNoRows is returned unwrapped.
func scanSched(s scanner, extra ...any) (slurmext.JobRecord, int64, error) {
	var r slurmext.JobRecord
	var submit, eligible, start, end, limit sql.NullInt64
	var seq int64
	dest := []any{
		&r.Cluster, &r.JobID, &r.DisplayID, &r.ArrayJobID, &r.ArrayTaskID, &r.ArrayTaskSpec,
		&r.HetJobID, &r.HetOffset, &r.Name, &r.User, &r.UID, &r.Account, &r.Partition, &r.QOS,
		&r.State, &r.CancelledBy, &r.Reason, &submit, &eligible, &start, &end, &limit, &r.Unlimited,
		&r.ExitStatus, &r.ExitSignal, &r.DerivedStatus, &r.DerivedSignal,
		&r.NodeList, &r.NodeCount, &r.CPUs, &r.ReqGPUs, &r.ReqGPUType, &r.ReqShards, &r.ReqTRES, &r.AllocTRES,
		&r.Restarts, &r.Source, &seq,
	}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return r, 0, err
		}
		return r, 0, classify(err)
	}
	r.Submit, r.Eligible, r.Start, r.End = timeOrZero(submit), timeOrZero(eligible), timeOrZero(start), timeOrZero(end)
	if limit.Valid {
		r.TimeLimit = time.Duration(limit.Int64) * time.Second
	}
	return r, seq, nil
}
