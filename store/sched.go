package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// The scheduler's view of a job (slurmext.JobRecord) arrives from jobcomp at
// the end of every run and from sacct imports, in any order and often more
// than once. sched_events keeps each distinct report; sched_jobs keeps one
// merged record per (cluster, job id), recomputed from the stored merge and
// the new report on every put.

// readState reads a state column (or a record's state as a report gave
// it) through the one parse rule, slurmext.ParseState: "CANCELLED by 0"
// and "cancelled" are CANCELLED. Text it does not parse is kept as it is:
// an unknown state (not final, no outcome), shown as stored.
func readState(text string) slurmext.JobState {
	if text == "" {
		return ""
	}
	if st, _, err := slurmext.ParseState(text); err == nil {
		return st
	}
	return slurmext.JobState(text)
}

// NormalizeRecord returns r as the store gives it back: times cut to whole
// seconds in UTC (the zero time kept zero), the time limit cut to whole
// seconds and zero when Unlimited, TotalCPU cut to the millisecond (sacct's
// resolution), Slurm's readings zero where they are not valid, and the
// state read through slurmext.ParseState ("CANCELLED by 0" is CANCELLED).
func NormalizeRecord(r slurmext.JobRecord) slurmext.JobRecord {
	r.State = readState(string(r.State))
	r.Submit, r.Eligible = normTime(r.Submit), normTime(r.Eligible)
	r.Start, r.End = normTime(r.Start), normTime(r.End)
	r.TimeLimit = r.TimeLimit.Truncate(time.Second)
	if r.Unlimited || r.TimeLimit < 0 {
		r.TimeLimit = 0
	}
	if !r.SlurmGPUMemValid {
		r.SlurmGPUMem = 0
	}
	if !r.SlurmGPUUtilValid {
		r.SlurmGPUUtil = 0
	}
	u := &r.Usage
	u.TotalCPU = u.TotalCPU.Truncate(time.Millisecond)
	if !u.TotalCPUValid {
		u.TotalCPU = 0
	}
	if !u.MemPeakValid {
		u.MemPeak = 0
	}
	if !u.ReqMemValid {
		u.ReqMem = 0
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

// SchedReports returns every report of the scheduler's view of a job, in
// order of first arrival, each as it was first reported (normalised, see
// NormalizeRecord), or ErrNotFound. The merged record is GetSchedJob's.
func (db *DB) SchedReports(ctx context.Context, cluster, jobID string) (rs []slurmext.JobRecord, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		rs, err = tx.SchedReports(ctx, cluster, jobID)
		return err
	})
	return rs, err
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
// ReqShards, ReqTRES, GPUsFrom; one read from ReqTRES is taken over one
// read from AllocTRES, whichever report wins), the time limit (TimeLimit, Unlimited), the array and
// the heterogeneous-job ids are filled as groups. Slurm's accounting of a
// run (GPU readings; TotalCPU and the host memory peak of Usage) is filled
// from a report of the same run too, so jobcomp or a sacct -X import,
// which have none, never erase what an import with steps gave; the memory
// request (Usage.ReqMem) is filled from any report.
//
// Restarts is the largest of the counts reported and the number of distinct
// non-zero Start times ever reported for the job, minus one.
//
// Every report is kept (SchedReports returns them); a job's first report
// is kept as its sched_jobs row alone for as long as it is the only one
// and the row is unchanged, so importing a new job writes one row, not
// two.
//
// Cluster and JobID must be set, and Slurm's readings, when valid, finite,
// not negative and (memory) within int64 (ErrInvalid otherwise).
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
	if len(rs) >= schedChunk {
		if err := w.bulkSettings(ctx); err != nil {
			return 0, 0, 0, fmt.Errorf("put sched jobs: %w", err)
		}
	}
	// Reused from chunk to chunk: a record is hundreds of bytes, and a
	// slice grown by append for each chunk was most of what an import
	// allocated.
	fresh := make([]slurmext.JobRecord, 0, min(len(rs), schedChunk))
	var rest []slurmext.JobRecord
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
		// heard of the job, is inserted as is, without looking it up.
		// The others follow in order, each merged into what came before.
		fresh, rest = fresh[:0], rest[:0]
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

// Settings a bulk put gives the writer connection for the rest of its life
// (they are the connection's, not the transaction's: a rollback keeps
// them, and other connections never see them). Measured over a
// million-job import (docs/benchmarks.md):
//   - bulkCacheKiB of page cache (SQLite's default is 2 MiB): each new job
//     goes into seven indexes at places spread over them, and with the
//     default cache their pages are read back from the OS on nearly every
//     row (14 s of system time, 4 s with this cache). The cache fills only
//     as pages are read, so a small database never uses it.
//   - a checkpoint every bulkCheckpointPages pages of WAL (default 1000):
//     every batch of an import dirties more pages than that, so by default
//     each commit copies its pages into the database again and syncs it;
//     with this the same hot index pages are copied once for many batches
//     (42 s → 33 s). The WAL may grow to about 80 MiB between checkpoints;
//     durability is unchanged (a commit is in the WAL either way).
const (
	bulkCacheKiB        = 128 << 10
	bulkCheckpointPages = 20_000
)

// bulkSettings applies the settings above, where they are not larger
// already.
func (w *schedWriter) bulkSettings(ctx context.Context) error {
	var cache, checkpoint int64
	if err := w.tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		return classify(err)
	}
	if err := w.tx.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&checkpoint); err != nil {
		return classify(err)
	}
	// cache_size: negative in KiB, positive in pages.
	if cache > 0 && cache*int64(os.Getpagesize()/1024) < bulkCacheKiB || cache < 0 && -cache < bulkCacheKiB {
		if _, err := w.tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = -%d`, bulkCacheKiB)); err != nil {
			return classify(err)
		}
	}
	if checkpoint > 0 && checkpoint < bulkCheckpointPages {
		if _, err := w.tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, bulkCheckpointPages)); err != nil {
			return classify(err)
		}
	}
	return nil
}

func validRecord(r slurmext.JobRecord) error {
	switch {
	case r.Cluster == "" || r.JobID == "":
		return fmt.Errorf("%w: cluster and job id must both be set", ErrInvalid)
	case !slurmext.ValidJobID(r.JobID):
		return fmt.Errorf("%w: job id is not 1-64 characters of [A-Za-z0-9_.+-]", ErrInvalid)
	case r.SlurmGPUMemValid && r.SlurmGPUMem > math.MaxInt64:
		return fmt.Errorf("%w: Slurm GPU memory reading %d bytes", ErrInvalid, r.SlurmGPUMem)
	case r.SlurmGPUUtilValid && (math.IsNaN(r.SlurmGPUUtil) || math.IsInf(r.SlurmGPUUtil, 0) || r.SlurmGPUUtil < 0):
		return fmt.Errorf("%w: Slurm GPU utilisation reading %v", ErrInvalid, r.SlurmGPUUtil)
	case r.Usage.TotalCPUValid && r.Usage.TotalCPU < 0:
		return fmt.Errorf("%w: TotalCPU %v", ErrInvalid, r.Usage.TotalCPU)
	case r.Usage.MemPeakValid && r.Usage.MemPeak > math.MaxInt64, r.Usage.ReqMemValid && r.Usage.ReqMem > math.MaxInt64:
		return fmt.Errorf("%w: host memory %d or request %d bytes", ErrInvalid, r.Usage.MemPeak, r.Usage.ReqMem)
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

// SchedReports returns every report of a job; see DB.SchedReports.
func (t *Tx) SchedReports(ctx context.Context, cluster, jobID string) ([]slurmext.JobRecord, error) {
	rs, err := t.schedReports(ctx, cluster, jobID)
	if err != nil {
		return nil, fmt.Errorf("sched reports %s/%s: %w", cluster, jobID, err)
	}
	return rs, nil
}

func (t *Tx) schedReports(ctx context.Context, cluster, jobID string) ([]slurmext.JobRecord, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT payload FROM sched_events WHERE cluster = ? AND job_id = ? ORDER BY seq`, cluster, jobID)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var rs []slurmext.JobRecord
	for rows.Next() {
		var payload string
		if err := rows.Scan(&payload); err != nil {
			return nil, classify(err)
		}
		var r slurmext.JobRecord
		if err := json.Unmarshal([]byte(payload), &r); err != nil {
			return nil, fmt.Errorf("%w: report %d: %v", ErrCorrupt, len(rs)+1, err)
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if len(rs) > 0 {
		return rs, nil
	}
	// No report written: the row is the only one (see PutSchedJob).
	r, err := t.GetSchedJob(ctx, cluster, jobID)
	if err != nil {
		return nil, err
	}
	return []slurmext.JobRecord{r}, nil
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
	exit_status, exit_signal, derived_status, derived_signal, exit_unknown,
	node_list, node_count, cpus, req_gpus, req_gpu_type, req_shards, req_tres, alloc_tres, gpus_from,
	slurm_gpu_mem, slurm_gpu_util, total_cpu, host_mem_peak, req_mem, total_cpu_read, host_mem_peak_read,
	restarts, source, event_seq`

var upsertSchedSQL = `INSERT INTO sched_jobs (` + schedColumns + `, updated_at)
	VALUES (?` + strings.Repeat(",?", schedColumnCount-1) + `)
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
	derived_signal = excluded.derived_signal, exit_unknown = excluded.exit_unknown,
	node_list = excluded.node_list,
	node_count = excluded.node_count, cpus = excluded.cpus, req_gpus = excluded.req_gpus,
	req_gpu_type = excluded.req_gpu_type, req_shards = excluded.req_shards,
	req_tres = excluded.req_tres, alloc_tres = excluded.alloc_tres, gpus_from = excluded.gpus_from,
	slurm_gpu_mem = excluded.slurm_gpu_mem, slurm_gpu_util = excluded.slurm_gpu_util,
	total_cpu = excluded.total_cpu, host_mem_peak = excluded.host_mem_peak, req_mem = excluded.req_mem,
	total_cpu_read = excluded.total_cpu_read, host_mem_peak_read = excluded.host_mem_peak_read,
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
	conn  *sql.Conn // nil in a read transaction
	stmts map[string]*sql.Stmt
}

func (t *Tx) newSchedWriter() *schedWriter {
	return &schedWriter{tx: t.tx, conn: t.conn, stmts: map[string]*sql.Stmt{}}
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

// exec and queryRow run one statement of a row. They check ctx first and
// hand the driver a context that cannot be cancelled: go-sqlite3 runs each
// statement given a cancellable context on a goroutine of its own, to
// interrupt it on cancellation, and that hand-over cost more than the
// insert itself (a goroutine, a channel and a thread wake-up a row). A
// row's statement takes microseconds, so checking between rows stops an
// import as soon.
func (w *schedWriter) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := s.ExecContext(context.WithoutCancel(ctx), args...)
	return res, classify(err)
}

func (w *schedWriter) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryRowContext(context.WithoutCancel(ctx), args...), nil
}

const (
	currentSQL = `SELECT ` + schedColumns + `, updated_at FROM sched_jobs WHERE cluster = ? AND job_id = ?`
	knownSQL   = `SELECT k.cluster, k.job_id FROM ` + keyTable + ` k
		WHERE EXISTS (SELECT 1 FROM sched_jobs s WHERE s.cluster = k.cluster AND s.job_id = k.job_id)
		OR EXISTS (SELECT 1 FROM sched_events e WHERE e.cluster = k.cluster AND e.job_id = k.job_id)`
	// What put needs to know of a job's stored reports, in one look at
	// them: how many, their distinct non-zero starts, whether start ?4 is
	// among them, and the seq of the report with key ?1..?6 (see evKey),
	// if stored.
	eventsSQL = `SELECT count(*), count(DISTINCT nullif("start", 0)), coalesce(max("start" = ?4), 0),
		max(CASE WHEN state = ?3 AND "start" = ?4 AND "end" = ?5 AND source = ?6 THEN seq END)
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

// insertFresh inserts jobs that have neither a record nor a report yet.
// Each row is its job's single report (see PutSchedJob), so nothing goes
// to sched_events: a bulk import of new jobs costs little more than
// SQLite's own work on the rows and their indexes.
//
// One row a statement: an INSERT of many rows makes SQLite keep a
// statement journal (a temporary file of every page the statement changes,
// to undo it alone on a constraint error), which cost more than the calls
// it saved (measured over a million jobs: the same CPU time as 32 rows a
// statement with that journal in memory, 10 s less than with it on disk).
//
// The rows go to the driver itself, on the transaction's connection
// (Tx.conn), not through database/sql: database/sql converts and checks
// each of a row's 48 values, and go-sqlite3's Exec binds them with one cgo
// call each, which together cost more than SQLite's insert of the row
// (docs/benchmarks.md, "The sacct import through the driver"). The
// driver's Query binds, steps and resets a statement of standard values
// (string, int64, float64, bool, nil: all setSchedArgs gives) in one
// cgo call, and its Close resets it; the values bound are the same either
// way.
func (w *schedWriter) insertFresh(ctx context.Context, rs []slurmext.JobRecord) error {
	if len(rs) == 0 {
		return nil
	}
	if w.conn == nil {
		return errors.New("insert sched jobs: not a write transaction")
	}
	now := time.Now().Unix()
	err := w.conn.Raw(func(dc any) error {
		// The connection outlives its transaction: database/sql rolls a
		// transaction back on its own when the context it began with
		// ends, and rows inserted after that would be committed one by
		// one. Raw holds the connection's lock until it returns, so no
		// rollback can come between this check and the rows.
		if ac, ok := dc.(interface{ AutoCommit() bool }); !ok || ac.AutoCommit() {
			return fmt.Errorf("insert sched jobs: %w", sql.ErrTxDone)
		}
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("insert sched jobs: driver connection %T cannot prepare", dc)
		}
		ds, err := pc.PrepareContext(ctx, insertSchedSQL)
		if err != nil {
			return classify(err)
		}
		defer ds.Close()
		q, ok := ds.(driver.StmtQueryContext)
		if !ok {
			return fmt.Errorf("insert sched jobs: driver statement %T cannot query", ds)
		}
		// One args for every row: setSchedArgs keeps the values a row
		// repeats from the row before.
		args := make([]any, schedColumnCount)
		args[schedColumnCount-1] = now
		nv := make([]driver.NamedValue, schedColumnCount)
		for i := range nv {
			nv[i].Ordinal = i + 1
		}
		// Checked between rows, and a context that cannot be cancelled
		// handed on (see exec).
		qctx := context.WithoutCancel(ctx)
		for _, r := range rs {
			if err := ctx.Err(); err != nil {
				return err
			}
			setSchedArgs(args, NormalizeRecord(r), 1)
			for i, a := range args {
				nv[i].Value = a
			}
			rows, err := q.QueryContext(qctx, nv)
			if err == nil {
				err = rows.Close()
			}
			if err != nil {
				return fmt.Errorf("job %s/%s: %w", r.Cluster, r.JobID, classify(err))
			}
		}
		return nil
	})
	return err
}

const (
	eventColumns     = `cluster, job_id, state, "start", "end", source, seq, reported_at, payload`
	schedColumnCount = 48 // schedColumns and updated_at
)

var insertSchedSQL = `INSERT INTO sched_jobs (` + schedColumns + `, updated_at) VALUES (?` + strings.Repeat(",?", schedColumnCount-1) + `)`

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// stored is a job's merged record as stored.
type stored struct {
	rec       slurmext.JobRecord
	seq       int64 // its winning report
	updatedAt int64
}

// put records r as a report and merges it into its job's record.
func (w *schedWriter) put(ctx context.Context, r slurmext.JobRecord) (putResult, error) {
	if err := validRecord(r); err != nil {
		return 0, err
	}
	r = NormalizeRecord(r)
	now := time.Now().Unix()

	row, err := w.queryRow(ctx, currentSQL, r.Cluster, r.JobID)
	if err != nil {
		return 0, err
	}
	var cur stored
	cur.rec, cur.seq, err = scanSched(row, &cur.updatedAt)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	var curp *stored
	if found {
		curp = &cur
	}
	seq, starts, unwritten, err := w.event(ctx, r, curp, now)
	if err != nil {
		return 0, err
	}
	merged, mergedSeq := r, seq
	if found {
		if recordWins(r, seq, cur.rec, cur.seq) {
			merged = fill(r, cur.rec)
		} else {
			merged, mergedSeq = fill(cur.rec, r), cur.seq
		}
		merged.Restarts = max(merged.Restarts, cur.rec.Restarts, r.Restarts)
	}
	merged.Restarts = max(merged.Restarts, starts-1)
	if found && merged == cur.rec && mergedSeq == cur.seq {
		return putUnchanged, nil
	}
	switch {
	case unwritten == firstReport && merged != r:
		// The row will not be the report itself: keep the report.
		if err := w.insertEvent(ctx, r, seq, now); err != nil {
			return 0, err
		}
	case unwritten == rowReport:
		// The same report again, with other fields: the row changes, so
		// the report it stood for is written out first.
		if err := w.writeOut(ctx, &cur); err != nil {
			return 0, err
		}
	}
	if _, err := w.exec(ctx, upsertSchedSQL, append(schedArgs(merged, mergedSeq), now)...); err != nil {
		return 0, err
	}
	if found {
		return putUpdated, nil
	}
	return putInserted, nil
}

// evKey is the key of report r in sched_events.
func evKey(r slurmext.JobRecord) []any {
	return []any{r.Cluster, r.JobID, string(r.State), unixOrZero(r.Start), unixOrZero(r.End), r.Source}
}

// unwritten says which report event left out of sched_events.
type unwritten int

const (
	allWritten  unwritten = iota
	firstReport           // r, a new job's first report
	rowReport             // the report the job's row stands for, which r repeats
)

// event records r as a report of its job (cur: the stored record, nil for
// a new job) unless the same report exists, and returns the report's seq
// and the number of distinct non-zero starts reported for the job (0 when
// the report was known: the count cannot have changed, and the stored
// record already reflects it).
//
// A row without reports in sched_events is its own single report (see
// 0003_sched_gpu.sql). So a new job's first report is not written
// (firstReport): the caller writes it only when the row it stores differs
// from the report. When another report of such a job arrives, the row's is
// written out first; when the same one arrives again (rowReport), the
// caller writes the row's out only if it changes the row.
func (w *schedWriter) event(ctx context.Context, r slurmext.JobRecord, cur *stored, now int64) (seq int64, starts int, left unwritten, err error) {
	key := evKey(r)
	row, err := w.queryRow(ctx, eventsSQL, key...)
	if err != nil {
		return 0, 0, 0, err
	}
	var n int64
	var seen bool
	var known sql.NullInt64
	if err := row.Scan(&n, &starts, &seen, &known); err != nil {
		return 0, 0, 0, classify(err)
	}
	if known.Valid {
		return known.Int64, 0, allWritten, nil
	}
	start := unixOrZero(r.Start)
	switch {
	case n == 0 && cur == nil:
		left = firstReport
	case n == 0:
		if slices.Equal(evKey(cur.rec), key) {
			return cur.seq, 0, rowReport, nil
		}
		if err := w.writeOut(ctx, cur); err != nil {
			return 0, 0, 0, err
		}
		n = 1
		if s := unixOrZero(cur.rec.Start); s != 0 {
			starts, seen = 1, s == start
		}
	}
	if start != 0 && !seen {
		starts++
	}
	seq = n + 1
	if left != firstReport {
		if err := w.insertEvent(ctx, r, seq, now); err != nil {
			return 0, 0, 0, err
		}
	}
	return seq, starts, left, nil
}

// writeOut stores the report a row without reports stands for: the row
// itself, as first stored.
func (w *schedWriter) writeOut(ctx context.Context, cur *stored) error {
	if cur.seq != 1 {
		// Only a job's first report goes unwritten; anything else is a
		// database this gpuprof did not write.
		return fmt.Errorf("%w: job %s/%s has no reports but its record is report %d",
			ErrCorrupt, cur.rec.Cluster, cur.rec.JobID, cur.seq)
	}
	return w.insertEvent(ctx, cur.rec, 1, cur.updatedAt)
}

// insertEvent stores report r of its job as number seq.
func (w *schedWriter) insertEvent(ctx context.Context, r slurmext.JobRecord, seq, at int64) error {
	payload, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	_, err = w.exec(ctx, insertEventSQL, append(evKey(r), seq, at, string(payload))...)
	return err
}

// recordWins reports whether the new report r (the job's report number
// rSeq) beats the stored merge cur (won by report curSeq); see PutSchedJob.
func recordWins(r slurmext.JobRecord, rSeq int64, cur slurmext.JobRecord, curSeq int64) bool {
	later := rSeq >= curSeq // the same report again carries its latest payload
	// Both states went through readState (NormalizeRecord, scanSched).
	rFinal, curFinal := r.State.IsFinal(), cur.State.IsFinal()
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
	// The request as a group; one read from ReqTRES over one read from
	// AllocTRES (slurmext.RequestedGPUs' order).
	noRequest := w.ReqGPUs == 0 && w.ReqTRES == "" && w.ReqShards == 0 && w.ReqGPUType == "" && w.GPUsFrom == ""
	if noRequest || (w.GPUsFrom == slurmext.GPUsFromAllocTRES && l.GPUsFrom == slurmext.GPUsFromReqTRES) {
		w.ReqGPUs, w.ReqGPUType, w.ReqShards, w.ReqTRES, w.GPUsFrom = l.ReqGPUs, l.ReqGPUType, l.ReqShards, l.ReqTRES, l.GPUsFrom
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
		if !w.SlurmGPUMemValid {
			w.SlurmGPUMem, w.SlurmGPUMemValid = l.SlurmGPUMem, l.SlurmGPUMemValid
		}
		if !w.SlurmGPUUtilValid {
			w.SlurmGPUUtil, w.SlurmGPUUtilValid = l.SlurmGPUUtil, l.SlurmGPUUtilValid
		}
		// The accounting of the run: a report without it (jobcomp, sacct
		// -X) does not erase the one an import with steps gave.
		wu, lu := &w.Usage, l.Usage
		if !wu.TotalCPUValid {
			wu.TotalCPU, wu.TotalCPUValid = lu.TotalCPU, lu.TotalCPUValid
		}
		if !wu.MemPeakValid {
			wu.MemPeak, wu.MemPeakValid = lu.MemPeak, lu.MemPeakValid
		}
		// Read by either report: an import with steps read what sacct had.
		wu.TotalCPURead = wu.TotalCPURead || lu.TotalCPURead
		wu.MemPeakRead = wu.MemPeakRead || lu.MemPeakRead
	}
	if !w.Usage.ReqMemValid {
		w.Usage.ReqMem, w.Usage.ReqMemValid = l.Usage.ReqMem, l.Usage.ReqMemValid
	}
	if w.ExitUnknown && !l.ExitUnknown {
		// A report without an exit code (a narrower sacct layout) does not
		// erase the one another report gave.
		w.ExitStatus, w.ExitSignal, w.DerivedStatus, w.DerivedSignal = l.ExitStatus, l.ExitSignal, l.DerivedStatus, l.DerivedSignal
		w.ExitUnknown = false
	}
	str(&w.Source, l.Source)
	return w
}

func schedArgs(r slurmext.JobRecord, seq int64) []any {
	args := make([]any, schedColumnCount-1, schedColumnCount)
	setSchedArgs(args, r, seq)
	return args
}

// setSchedArgs sets args[:schedColumnCount-1] to the values of
// schedColumns for r. Numbers go as int64: database/sql converts any other
// integer type by reflection, one allocation each. A value equal to the one
// args holds already, of the same type (the row before's, when args is
// reused), is kept as it is: putting a string or a number into an any
// allocates, and a bulk insert's rows repeat most of their values (the
// cluster, a partition, a state; -1 for the ids a job has not).
func setSchedArgs(args []any, r slurmext.JobRecord, seq int64) {
	args = args[:schedColumnCount-1]
	k := 0
	str := func(v string) {
		if old, ok := args[k].(string); !ok || old != v {
			args[k] = v
		}
		k++
	}
	num := func(v int64) {
		if old, ok := args[k].(int64); !ok || old != v {
			args[k] = v
		}
		k++
	}
	float := func(v float64) {
		// Compared by their bits: -0 and NaN are not == to what
		// would be bound.
		if old, ok := args[k].(float64); !ok || math.Float64bits(old) != math.Float64bits(v) {
			args[k] = v
		}
		k++
	}
	null := func() { args[k] = nil; k++ }
	flag := func(v bool) { args[k] = v; k++ } // a bool in an any allocates nothing
	i := func(n int) { num(int64(n)) }
	unix := func(t time.Time) {
		if t.IsZero() {
			null()
		} else {
			num(t.Unix())
		}
	}

	str(r.Cluster)
	str(r.JobID)
	same := func(v string, col int) {
		// A value equal to another column's of this row (a plain job's
		// display id is its id; AllocTRES mostly is ReqTRES) takes that
		// column's.
		if s, ok := args[col].(string); ok && s == v {
			args[k] = args[col]
			k++
			return
		}
		str(v)
	}
	same(r.DisplayID, 1)
	str(r.ArrayJobID)
	i(r.ArrayTaskID)
	str(r.ArrayTaskSpec)
	str(r.HetJobID)
	i(r.HetOffset)
	str(r.Name)
	str(r.User)
	i(r.UID)
	str(r.Account)
	str(r.Partition)
	str(r.QOS)
	str(string(r.State))
	i(r.CancelledBy)
	str(r.Reason)
	unix(r.Submit)
	unix(r.Eligible)
	unix(r.Start)
	unix(r.End)
	if !r.Unlimited && r.TimeLimit > 0 {
		num(int64(r.TimeLimit / time.Second))
	} else {
		null()
	}
	flag(r.Unlimited)
	i(r.ExitStatus)
	i(r.ExitSignal)
	i(r.DerivedStatus)
	i(r.DerivedSignal)
	flag(r.ExitUnknown)
	str(r.NodeList)
	i(r.NodeCount)
	i(r.CPUs)
	i(r.ReqGPUs)
	str(r.ReqGPUType)
	i(r.ReqShards)
	str(r.ReqTRES)
	same(r.AllocTRES, k-1)
	str(r.GPUsFrom)
	// NULL: not recorded, or not reported.
	if r.SlurmGPUMemValid {
		num(int64(r.SlurmGPUMem)) // validRecord keeps it within int64
	} else {
		null()
	}
	if r.SlurmGPUUtilValid {
		float(r.SlurmGPUUtil)
	} else {
		null()
	}
	u := r.Usage
	if u.TotalCPUValid {
		float(u.TotalCPU.Seconds())
	} else {
		null()
	}
	if u.MemPeakValid {
		num(int64(u.MemPeak)) // validRecord keeps it within int64
	} else {
		null()
	}
	if u.ReqMemValid {
		num(int64(u.ReqMem))
	} else {
		null()
	}
	flag(u.TotalCPURead)
	flag(u.MemPeakRead)
	i(r.Restarts)
	str(r.Source)
	num(seq)
}

type scanner interface {
	Scan(dest ...any) error
}

// scanSched reads one row of schedColumns (plus extra trailing columns into
// extra) and returns the record and the seq of its winning report.
// sql.ErrNoRows is returned unwrapped.
func scanSched(s scanner, extra ...any) (slurmext.JobRecord, int64, error) {
	var r slurmext.JobRecord
	var submit, eligible, start, end, limit, gpuMem sql.NullInt64
	var gpuUtil, totalCPU sql.NullFloat64
	var memPeak, reqMem sql.NullInt64
	var seq int64
	var state string
	dest := []any{
		&r.Cluster, &r.JobID, &r.DisplayID, &r.ArrayJobID, &r.ArrayTaskID, &r.ArrayTaskSpec,
		&r.HetJobID, &r.HetOffset, &r.Name, &r.User, &r.UID, &r.Account, &r.Partition, &r.QOS,
		&state, &r.CancelledBy, &r.Reason, &submit, &eligible, &start, &end, &limit, &r.Unlimited,
		&r.ExitStatus, &r.ExitSignal, &r.DerivedStatus, &r.DerivedSignal, &r.ExitUnknown,
		&r.NodeList, &r.NodeCount, &r.CPUs, &r.ReqGPUs, &r.ReqGPUType, &r.ReqShards, &r.ReqTRES, &r.AllocTRES, &r.GPUsFrom,
		&gpuMem, &gpuUtil, &totalCPU, &memPeak, &reqMem, &r.Usage.TotalCPURead, &r.Usage.MemPeakRead, &r.Restarts, &r.Source, &seq,
	}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return r, 0, err
		}
		return r, 0, classify(err)
	}
	r.State = readState(state)
	setSchedNullable(&r, submit, eligible, start, end, limit, gpuMem, gpuUtil)
	setUsage(&r.Usage, totalCPU, memPeak, reqMem)
	return r, seq, nil
}

// setUsage fills a record's HostUsage from its columns; NULL stays unknown.
func setUsage(u *slurmext.HostUsage, totalCPU sql.NullFloat64, memPeak, reqMem sql.NullInt64) {
	if totalCPU.Valid && totalCPU.Float64 >= 0 && totalCPU.Float64 < math.MaxInt64/1e9 {
		u.TotalCPU, u.TotalCPUValid = time.Duration(math.Round(totalCPU.Float64*1e3))*time.Millisecond, true
	}
	if memPeak.Valid && memPeak.Int64 >= 0 {
		u.MemPeak, u.MemPeakValid = uint64(memPeak.Int64), true
	}
	if reqMem.Valid && reqMem.Int64 >= 0 {
		u.ReqMem, u.ReqMemValid = uint64(reqMem.Int64), true
	}
}
