package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Filter selects profiles for ListJobs. Zero fields select everything.
type Filter struct {
	Cluster string
	Node    string
	JobID   string
	User    string
	Status  string // profile.StatusRunning or profile.StatusFinished
	UID     *int
	// Since and Until select jobs whose run overlaps [Since, Until): started
	// before Until, and ended at or after Since or not ended (running, or
	// end unknown). A zero bound is open.
	Since, Until time.Time
	// Limit bounds the number of profiles returned; 0 means no bound.
	Limit int
	// WithSeries decodes each GPU's time series; without it Series.Points
	// is nil, which keeps listing many profiles cheap.
	WithSeries bool
}

// PutJob stores j in its own transaction. See Tx.PutJob.
func (db *DB) PutJob(ctx context.Context, j profile.Job) error {
	return db.WithTx(ctx, func(tx *Tx) error { return tx.PutJob(ctx, j) })
}

// InsertJobIfAbsent stores j in its own transaction unless a profile with
// its key exists. See Tx.InsertJobIfAbsent.
func (db *DB) InsertJobIfAbsent(ctx context.Context, j profile.Job) (inserted bool, err error) {
	err = db.WithTx(ctx, func(tx *Tx) error {
		inserted, err = tx.InsertJobIfAbsent(ctx, j)
		return err
	})
	return inserted, err
}

// GetJob returns the profile with key k, or ErrNotFound.
func (db *DB) GetJob(ctx context.Context, k profile.Key) (j profile.Job, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		j, err = tx.GetJob(ctx, k)
		return err
	})
	return j, err
}

// RunningJobs returns the running profiles of a node with their series.
// An empty cluster or node matches any.
func (db *DB) RunningJobs(ctx context.Context, cluster, node string) (js []profile.Job, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		js, err = tx.RunningJobs(ctx, cluster, node)
		return err
	})
	return js, err
}

// ListJobs returns the profiles f selects, newest start first.
func (db *DB) ListJobs(ctx context.Context, f Filter) (js []profile.Job, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		js, err = tx.ListJobs(ctx, f)
		return err
	})
	return js, err
}

// PutJob inserts or replaces the profile with j's key, replacing all its
// GPU rows with j's. Delivery may repeat: putting the same profile twice
// leaves one copy. A finished profile is never replaced by one that is not
// finished: that returns ErrFinished and changes nothing.
func (t *Tx) PutJob(ctx context.Context, j profile.Job) error {
	if err := t.putJob(ctx, j, putReplace, nil); err != nil {
		return fmt.Errorf("put job %s: %w", keyString(j.Key), err)
	}
	return nil
}

// PutGrowingJob is PutJob for a writer that puts the same running profile
// again and again while its series only grows: the agent's flush. Of each
// GPU's series it writes only the chunks from the one holding the last
// point stored on: the points before it are taken to be as stored, which
// holds while the stored series has the same start and step and no more
// points than j's (points are only ever appended, or the last one merged
// into, until the step doubles). Where that does not hold (a new run, a
// coarser step, a GPU not stored yet) the GPU's series is written whole.
// Everything else is as PutJob.
func (t *Tx) PutGrowingJob(ctx context.Context, j profile.Job) error {
	if err := t.putJob(ctx, j, putGrowing, nil); err != nil {
		return fmt.Errorf("put job %s: %w", keyString(j.Key), err)
	}
	return nil
}

// InsertJobIfAbsent stores j only if no profile with its key exists, and
// reports whether it did. Hooks use it to record what they know without
// overwriting the agent's richer profile.
func (t *Tx) InsertJobIfAbsent(ctx context.Context, j profile.Job) (bool, error) {
	var inserted bool
	if err := t.putJob(ctx, j, putIfAbsent, &inserted); err != nil {
		return false, fmt.Errorf("insert job %s: %w", keyString(j.Key), err)
	}
	return inserted, nil
}

func keyString(k profile.Key) string {
	return k.Cluster + "/" + k.JobID + "/" + k.Node
}

const jobColumns = `cluster, job_id, node, "user", uid, gid, account, "partition", comment,
	"start", "end", status, source, exit_known, exit_status, exit_signal,
	partial, partial_reasons, sample_interval_ms, last_sample,
	driver, cuda_driver, io_scope, io_stall_s, io_seconds, alloc_known, alloc_shards`

const insertJobSQL = `INSERT INTO jobs (` + jobColumns + `, updated_at)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

const upsertJobSQL = insertJobSQL + `
	ON CONFLICT (cluster, job_id, node) DO UPDATE SET
	"user" = excluded."user", uid = excluded.uid, gid = excluded.gid,
	account = excluded.account, "partition" = excluded."partition",
	comment = excluded.comment, "start" = excluded."start", "end" = excluded."end",
	status = excluded.status, source = excluded.source,
	exit_known = excluded.exit_known, exit_status = excluded.exit_status,
	exit_signal = excluded.exit_signal, partial = excluded.partial,
	partial_reasons = excluded.partial_reasons,
	sample_interval_ms = excluded.sample_interval_ms,
	last_sample = excluded.last_sample, driver = excluded.driver,
	cuda_driver = excluded.cuda_driver, io_scope = excluded.io_scope,
	io_stall_s = excluded.io_stall_s, io_seconds = excluded.io_seconds,
	alloc_known = excluded.alloc_known, alloc_shards = excluded.alloc_shards,
	updated_at = excluded.updated_at`

const insertGPUSQL = `INSERT INTO job_gpus (cluster, job_id, node, uuid, position,
	slurm_index, minor, model, memory_total, shared, samples,
	util_mean, util_p50, util_p95, util_max, idle_fraction, mem_peak,
	energy_j, max_temp_c, xid_count, idle_allocation, preallocated, state, series_points,
	activity_scope, activity_seconds, sm_mean, sm_p95, tensor_mean, tensor_p95, dram_mean, dram_p95)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// putMode is how putJob treats a profile already stored under j's key.
type putMode int

const (
	putReplace  putMode = iota // replace it, series and all
	putIfAbsent                // leave it, and write nothing
	putGrowing                 // replace it, rewriting only the series chunks that can have changed
)

func (t *Tx) putJob(ctx context.Context, j profile.Job, mode putMode, inserted *bool) error {
	ifAbsent := mode == putIfAbsent
	if err := validate(j); err != nil {
		return err
	}
	j = Normalize(j)
	// Encode before writing anything so a bad GPU fails the call early.
	gpuArgs := make([][]any, len(j.GPUs))
	for i := range j.GPUs {
		args, err := gpuRow(j.Key, i, &j.GPUs[i])
		if err != nil {
			return err
		}
		gpuArgs[i] = args
	}
	reasons, err := json.Marshal(nonNil(j.PartialReasons))
	if err != nil {
		return fmt.Errorf("encode partial reasons: %w", err)
	}
	args := []any{
		j.Cluster, j.JobID, j.Node, j.User, j.UID, j.GID, j.Account, j.Partition, j.Comment,
		unixOrNull(j.Start), unixOrNull(j.End), j.Status, j.Source, j.ExitKnown, j.ExitStatus, j.ExitSignal,
		j.Partial, string(reasons), j.SampleInterval.Milliseconds(), unixOrNull(j.LastSample),
		j.Driver, j.CUDADriver, j.IO.Scope, j.IO.StallSeconds, j.IO.Seconds, j.AllocKnown, j.Shards,
		time.Now().Unix(),
	}

	// stored is the series each GPU has in the database, read before its
	// row is replaced; nil writes every series whole.
	var stored map[string]seriesMark
	if ifAbsent {
		res, err := t.tx.ExecContext(ctx, insertJobSQL+` ON CONFLICT (cluster, job_id, node) DO NOTHING`, args...)
		if err != nil {
			return classify(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return classify(err)
		}
		*inserted = n == 1
		if n == 0 {
			return nil
		}
	} else {
		var status string
		var end sql.NullInt64
		err := t.tx.QueryRowContext(ctx, `SELECT status, "end" FROM jobs WHERE cluster = ? AND job_id = ? AND node = ?`,
			j.Cluster, j.JobID, j.Node).Scan(&status, &end)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return classify(err)
		case status == profile.StatusFinished && j.Status != profile.StatusFinished &&
			!(end.Valid && j.Start.Unix() > end.Int64):
			// A late snapshot of the run that finished. A run that started
			// after that one ended is the job running again (requeued):
			// its profile replaces the earlier run's.
			return ErrFinished
		}
		if _, err := t.tx.ExecContext(ctx, upsertJobSQL, args...); err != nil {
			return classify(err)
		}
		if mode == putGrowing {
			if stored, err = t.storedSeries(ctx, j.Key); err != nil {
				return err
			}
		}
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM job_gpus WHERE cluster = ? AND job_id = ? AND node = ?`,
			j.Cluster, j.JobID, j.Node); err != nil {
			return classify(err)
		}
	}
	if err := t.putNotices(ctx, j); err != nil {
		return err
	}
	if len(gpuArgs) > 0 {
		stmt, err := t.tx.PrepareContext(ctx, insertGPUSQL)
		if err != nil {
			return classify(err)
		}
		defer stmt.Close()
		for i, a := range gpuArgs {
			if _, err := stmt.ExecContext(ctx, a...); err != nil {
				return fmt.Errorf("gpu %s: %w", j.GPUs[i].UUID, classify(err))
			}
		}
	}
	return t.putSeries(ctx, j, stored)
}

// maxShards bounds a profile's shard count: Slurm's counts are 32-bit,
// and no node offers more shards than this.
const maxShards = 1 << 20

func validate(j profile.Job) error {
	var problems []string
	if j.Cluster == "" || j.JobID == "" || j.Node == "" {
		problems = append(problems, "cluster, job id and node must all be set")
	} else if !slurmext.ValidJobID(j.JobID) {
		problems = append(problems, "job id is not 1-64 characters of [A-Za-z0-9_.+-]")
	}
	if j.Status != profile.StatusRunning && j.Status != profile.StatusFinished {
		problems = append(problems, fmt.Sprintf("status %q", j.Status))
	}
	if !finite(j.IO.StallSeconds) || !finite(j.IO.Seconds) {
		problems = append(problems, "non-finite IO wait")
	}
	if j.Shards < 0 || j.Shards > maxShards || j.Shards > 0 && !j.AllocKnown {
		problems = append(problems, fmt.Sprintf("shards %d (allocation known: %t)", j.Shards, j.AllocKnown))
	}
	seen := make(map[string]bool, len(j.GPUs))
	for _, g := range j.GPUs {
		switch {
		case g.UUID == "":
			problems = append(problems, "GPU without UUID")
		case seen[g.UUID]:
			problems = append(problems, "GPU "+g.UUID+" twice")
		case !finite(g.EnergyJ):
			problems = append(problems, "GPU "+g.UUID+": non-finite energy")
		}
		seen[g.UUID] = true
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// gpuRow returns the job_gpus row of g: the summary columns from profile's
// own methods, NULL where the value was not measured, g as JSON without its
// series points, and the number of those.
func gpuRow(k profile.Key, pos int, g *profile.GPU) ([]any, error) {
	// The points go to gpu_series (putSeries); the state keeps the rest.
	rest := *g
	rest.Series.Points = nil
	state, err := json.Marshal(&rest)
	if err != nil {
		return nil, fmt.Errorf("encode gpu %s: %w", g.UUID, err)
	}
	var utilMean, utilP50, utilP95, utilMax, idle, memPeak, energy, temp any
	if mean, ok := g.UtilMean(); ok {
		utilMean = mean
		utilMax = int64(g.UtilMax)
	}
	if p, ok := g.UtilPercentile(50); ok {
		utilP50 = int64(p)
	}
	if p, ok := g.UtilPercentile(95); ok {
		utilP95 = int64(p)
	}
	if f, ok := g.IdleFraction(); ok {
		idle = f
	}
	if g.MemSamples > 0 {
		memPeak = clampInt64(g.MemPeak)
	}
	if g.EnergyValid {
		energy = g.EnergyJ
	}
	if g.TempValid {
		temp = int64(g.MaxTempC)
	}
	row := []any{
		k.Cluster, k.JobID, k.Node, g.UUID, pos,
		g.SlurmIndex, g.Minor, g.Model, clampInt64(g.MemoryTotal), g.Shared, g.Samples,
		utilMean, utilP50, utilP95, utilMax, idle, memPeak,
		energy, temp, g.XIDCount, g.IdleAllocation, g.Preallocated, string(state), len(g.Series.Points),
	}
	return append(row, activityColumns(g.Activity)...), nil
}

// activityColumns are migration 0008's columns of a GPU's activity: its
// scope, the seconds it covers, mean and p95 of SM, tensor and DRAM
// activity, NULL where not measured.
func activityColumns(a *profile.Activity) []any {
	if a == nil {
		return []any{"", nil, nil, nil, nil, nil, nil, nil}
	}
	out := []any{a.Scope, a.Seconds}
	for _, st := range []profile.ActivityStat{a.SM, a.Tensor, a.DRAM} {
		var mean, p95 any
		if m, ok := st.Mean(); ok {
			mean = m
		}
		if p, ok := st.Percentile(95); ok {
			p95 = p
		}
		out = append(out, mean, p95)
	}
	return out
}

// clampInt64 fits a byte count into SQLite's signed integers. Real values
// are far below the bound; the exact value stays in the state JSON.
func clampInt64(u uint64) int64 {
	return int64(min(u, math.MaxInt64))
}

func unixOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Unix()
}

func timeOrZero(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(n.Int64, 0).UTC()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// GetJob returns the profile with key k, or ErrNotFound.
func (t *Tx) GetJob(ctx context.Context, k profile.Key) (profile.Job, error) {
	js, err := t.list(ctx, Filter{Cluster: k.Cluster, Node: k.Node, JobID: k.JobID, WithSeries: true}, true)
	if err != nil {
		return profile.Job{}, fmt.Errorf("get job %s: %w", keyString(k), err)
	}
	if len(js) == 0 {
		return profile.Job{}, fmt.Errorf("get job %s: %w", keyString(k), ErrNotFound)
	}
	return js[0], nil
}

// RunningJobs returns the running profiles of a node with their series.
// An empty cluster or node matches any.
func (t *Tx) RunningJobs(ctx context.Context, cluster, node string) ([]profile.Job, error) {
	js, err := t.list(ctx, Filter{Cluster: cluster, Node: node, Status: profile.StatusRunning, WithSeries: true}, false)
	if err != nil {
		return nil, fmt.Errorf("running jobs: %w", err)
	}
	return js, nil
}

// ListJobs returns the profiles f selects, newest start first (ties by
// cluster, job id, node).
func (t *Tx) ListJobs(ctx context.Context, f Filter) ([]profile.Job, error) {
	js, err := t.list(ctx, f, false)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return js, nil
}

// where builds the WHERE clause of f. With exact, empty key fields match
// only empty values (GetJob); otherwise they match anything.
func (f Filter) where(exact bool) (string, []any) {
	var conds []string
	var args []any
	eq := func(col, v string) {
		if v != "" || exact {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("cluster", f.Cluster)
	eq("node", f.Node)
	eq("job_id", f.JobID)
	if f.User != "" {
		conds = append(conds, `"user" = ?`)
		args = append(args, f.User)
	}
	if f.Status != "" {
		conds = append(conds, "status = ?")
		args = append(args, f.Status)
	}
	if f.UID != nil {
		conds = append(conds, "uid = ?")
		args = append(args, *f.UID)
	}
	if !f.Until.IsZero() {
		conds = append(conds, `"start" < ?`)
		args = append(args, ceilUnix(f.Until))
	}
	if !f.Since.IsZero() {
		conds = append(conds, `("end" IS NULL OR "end" >= ?)`)
		args = append(args, f.Since.Unix())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ceilUnix rounds up so a stored whole second s satisfies s < Until exactly
// when the job's (truncated) start is before Until.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

const jobOrder = ` ORDER BY "start" DESC, cluster, job_id, node`

func (t *Tx) list(ctx context.Context, f Filter, exact bool) ([]profile.Job, error) {
	where, args := f.where(exact)
	sel := where + jobOrder
	if f.Limit > 0 {
		sel += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs`+sel, args...)
	if err != nil {
		return nil, classify(err)
	}
	var js []profile.Job
	index := map[profile.Key]int{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		index[j.Key] = len(js)
		js = append(js, j)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if len(js) == 0 {
		return nil, nil
	}
	rows, err = t.tx.QueryContext(ctx, `SELECT g.cluster, g.job_id, g.node, g.uuid, g.state, `+seriesColumn(f.WithSeries)+`
		FROM job_gpus g JOIN (SELECT cluster, job_id, node FROM jobs`+sel+`) j
		ON g.cluster = j.cluster AND g.job_id = j.job_id AND g.node = j.node
		ORDER BY g.cluster, g.job_id, g.node, g.position`, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k profile.Key
		var uuid, state string
		var points sql.NullString
		if err := rows.Scan(&k.Cluster, &k.JobID, &k.Node, &uuid, &state, &points); err != nil {
			return nil, classify(err)
		}
		g, err := decodeGPU(state, points)
		if err != nil {
			return nil, fmt.Errorf("job %s gpu %s: %w", keyString(k), uuid, err)
		}
		g.UUID = uuid
		if i, ok := index[k]; ok {
			js[i].GPUs = append(js[i].GPUs, g)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if err := t.jobNotices(ctx, js, index, sel, args); err != nil {
		return nil, fmt.Errorf("notices: %w", err)
	}
	return js, nil
}

// scanJob reads one row of jobColumns, and extra trailing columns into
// extra.
func scanJob(rows scanner, extra ...any) (profile.Job, error) {
	var j profile.Job
	var start, end, last sql.NullInt64
	var reasons string
	var intervalMS int64
	err := rows.Scan(append([]any{&j.Cluster, &j.JobID, &j.Node, &j.User, &j.UID, &j.GID, &j.Account, &j.Partition, &j.Comment,
		&start, &end, &j.Status, &j.Source, &j.ExitKnown, &j.ExitStatus, &j.ExitSignal,
		&j.Partial, &reasons, &intervalMS, &last,
		&j.Driver, &j.CUDADriver, &j.IO.Scope, &j.IO.StallSeconds, &j.IO.Seconds, &j.AllocKnown, &j.Shards}, extra...)...)
	if err != nil {
		return j, classify(err)
	}
	j.Start, j.End, j.LastSample = timeOrZero(start), timeOrZero(end), timeOrZero(last)
	j.SampleInterval = time.Duration(intervalMS) * time.Millisecond
	if err := json.Unmarshal([]byte(reasons), &j.PartialReasons); err != nil {
		return j, fmt.Errorf("job %s: partial reasons: %w", keyString(j.Key), err)
	}
	if len(j.PartialReasons) == 0 {
		j.PartialReasons = nil
	}
	return j, nil
}

// decodeGPU decodes a GPU's state and, when valid, its series points
// (seriesColumn's chunks); without them Series.Points is nil.
func decodeGPU(state string, points sql.NullString) (profile.GPU, error) {
	var g profile.GPU
	if err := json.Unmarshal([]byte(state), &g); err != nil {
		return g, fmt.Errorf("decode state: %w", err)
	}
	g.Series.Points = nil
	if points.Valid {
		pts, err := decodeSeries(points.String)
		if err != nil {
			return g, fmt.Errorf("decode series: %w", err)
		}
		g.Series.Points = pts
	}
	return g, nil
}

// Normalize returns j as the store gives it back: every time (the job's
// start, end and last sample, each GPU's first and last sample and XID
// times, each notice's time and since) cut to whole seconds in UTC, the
// zero time kept zero; the sample
// interval cut to whole milliseconds; empty lists (partial reasons, GPUs,
// XIDs, process names) nil. Sub-second precision is dropped on purpose: the columns are
// unix seconds for SQL, and the series is per second at best. j itself is
// not modified.
func Normalize(j profile.Job) profile.Job {
	j.Start, j.End, j.LastSample = normTime(j.Start), normTime(j.End), normTime(j.LastSample)
	j.SampleInterval = j.SampleInterval.Truncate(time.Millisecond)
	if len(j.PartialReasons) == 0 {
		j.PartialReasons = nil
	} else {
		j.PartialReasons = append([]string(nil), j.PartialReasons...)
	}
	if len(j.Notices) == 0 {
		j.Notices = nil
	} else {
		ns := make([]profile.Notice, len(j.Notices))
		for i, n := range j.Notices {
			n.Time, n.Since = normTime(n.Time), normTime(n.Since)
			if len(n.GPUs) == 0 {
				n.GPUs = nil
			}
			ns[i] = n
		}
		j.Notices = ns
	}
	if len(j.GPUs) == 0 {
		j.GPUs = nil
		return j
	}
	gs := make([]profile.GPU, len(j.GPUs))
	for i, g := range j.GPUs {
		g.FirstSample, g.LastSample = normTime(g.FirstSample), normTime(g.LastSample)
		if len(g.XIDs) == 0 {
			g.XIDs = nil
		} else {
			xs := make([]profile.XID, len(g.XIDs))
			for k, x := range g.XIDs {
				xs[k] = profile.XID{Code: x.Code, Time: normTime(x.Time)}
			}
			g.XIDs = xs
		}
		if len(g.Processes) == 0 {
			g.Processes = nil
		}
		gs[i] = g
	}
	j.GPUs = gs
	return j
}

func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(t.Unix(), 0).UTC()
}

// DeleteRunningJob removes the profile with key k (and its GPU rows) if it
// is still running, and reports whether it did. The agent calls it when it
// learns that a job it recorded under a guessed key (the host name before
// slurmd's node name reached it) belongs under another: the profile moves,
// it is not duplicated. A finished profile is never deleted.
func (t *Tx) DeleteRunningJob(ctx context.Context, k profile.Key) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM jobs WHERE cluster = ? AND job_id = ? AND node = ? AND status = ?`,
		k.Cluster, k.JobID, k.Node, profile.StatusRunning)
	if err != nil {
		return false, fmt.Errorf("delete running job %s: %w", keyString(k), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete running job %s: %w", keyString(k), err)
	}
	if n > 0 {
		// Its notices move with the profile (the agent writes them under
		// the new key in the same transaction).
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM notices WHERE cluster = ? AND job_id = ? AND node = ?`,
			k.Cluster, k.JobID, k.Node); err != nil {
			return false, fmt.Errorf("delete running job %s: notices: %w", keyString(k), classify(err))
		}
	}
	return n > 0, nil
}
