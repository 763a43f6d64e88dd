package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	// RunningName is a running job's name as squeue gave it when the
	// view was read (jobsource.Source fills it for the jobs of its own
	// cluster): RunningRecord's Name, since slurmd gives the prolog none.
	// "" when unknown; never stored.
	RunningName string `json:"-"`
}

// ErrBadFilter means a ViewFilter cannot be answered as given (an unknown
// sort key); asking again with the same filter is useless.
var ErrBadFilter = errors.New("invalid view filter")

// ParseStateFilter checks a ViewFilter.State a person typed: a Slurm
// state or its short form as sacct --state takes it
// (slurmext.ParseStateName), or "finished", the status of a GPU profile
// whose job ended, which selects jobs known only from profiles ("running"
// is RUNNING, which matches both). "" selects every state.
func ParseStateFilter(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if strings.EqualFold(strings.TrimSpace(s), profile.StatusFinished) {
		return profile.StatusFinished, nil
	}
	st, err := slurmext.ParseStateName(s)
	if err != nil {
		return "", fmt.Errorf("%w; or finished (jobs known only from a GPU profile whose epilog came)", err)
	}
	return string(st), nil
}

// The keys ViewFilter.Sort accepts. Each has a default direction, which
// ViewFilter.Asc reverses: descending (largest, newest first) for
// SortStart, SortElapsed, SortGPUs, SortVRAM and SortUtil; ascending
// (A to Z, lowest id first) for SortID, SortName, SortState and SortUser.
// Whatever the direction, jobs without the value come last, and ties are
// broken by cluster, then job id, in the key's direction.
const (
	// SortStart orders by the job's start: the scheduler's start, else its
	// submit time, else the earliest profile start. The default ("").
	SortStart = "start"
	// SortID orders by the numeric raw job id (SLURM_JOB_ID: each array
	// task and heterogeneous component has its own).
	SortID = "id"
	// SortName orders by the scheduler's job name, ASCII case folded;
	// profile-only jobs have no name.
	SortName = "name"
	// SortState orders by the scheduler state, ASCII case folded, or for a
	// profile-only job "running" when any node runs, else "finished".
	SortState = "state"
	// SortElapsed orders by run time: end (or ViewFilter.Now while running)
	// minus start, from the scheduler record, else from the profiles.
	SortElapsed = "elapsed"
	// SortGPUs orders by the number of GPUs the profiles observed, else the
	// number the scheduler record requested.
	SortGPUs = "gpus"
	// SortVRAM orders by the largest GPU memory peak over the job's GPUs
	// (bytes).
	SortVRAM = "vram"
	// SortUtil orders by the mean GPU utilisation over the job's GPUs.
	SortUtil = "util"
	// SortUser orders by the user name (the scheduler record's, else the
	// first node's profile's).
	SortUser = "user"
)

// SortKeys returns every key ViewFilter.Sort accepts, the default first:
// the cycle a user interface steps through.
func SortKeys() []string {
	return []string{SortStart, SortID, SortName, SortUser, SortState, SortElapsed, SortGPUs, SortVRAM, SortUtil}
}

// SortDescending reports the default direction of a sort key (see the
// Sort constants) and whether the key is known; "" is SortStart.
func SortDescending(key string) (desc, ok bool) {
	switch key {
	case "", SortStart, SortElapsed, SortGPUs, SortVRAM, SortUtil:
		return true, true
	case SortID, SortName, SortState, SortUser:
		return false, true
	}
	return false, false
}

// ViewFilter selects jobs for ListViews. Zero fields select everything.
type ViewFilter struct {
	// Cluster and JobID match the key exactly: JobID is the raw id
	// (SLURM_JOB_ID), the one a profile knows.
	Cluster, JobID string
	// Job selects the jobs a Slurm job id names, as `sacct -j` does (see
	// slurmext.JobRef): "53_1" the job whose scheduler record is task 1
	// of array 53, "60+1" component 1 of heterogeneous job 60,
	// "53_[1-5%2]" the record of array 53's tasks not yet split off, and a
	// plain "53" the job with raw id 53 together with every task of array
	// 53 and every component of heterogeneous job 53. Only a scheduler
	// record knows array and heterogeneous ids: a job known from profiles
	// alone matches a plain id on its raw id and nothing else.
	Job *slurmext.JobRef
	// User, UID, Account and Partition match the scheduler record or, for
	// a job without one, the profile of its first node (earliest start):
	// Slurm gives every node of a job the same values.
	User, Account, Partition string
	UID                      *int
	// State matches the scheduler state case-insensitively (COMPLETED,
	// running, …) or, for a job without a scheduler record, the profile
	// status (running, finished) of any of its nodes.
	State string
	// Text matches jobs whose scheduler name, job id, display id (123_4),
	// user, account or partition contains it, ignoring the case of ASCII
	// letters (other letters match exactly); a job without a scheduler
	// record matches on its id and its profile's user, account and
	// partition. % and _ are plain characters.
	Text string
	// Since and Until select jobs whose [start, end] overlaps [Since, Until):
	// started before Until, and ended at or after Since or not ended. The
	// start is the sort time of ListViews (the scheduler's start, else its
	// submit time, else the earliest profile start); a job without one is
	// not selected by Until. A zero bound is open.
	Since, Until time.Time
	// Sort is the order of ListViews: one of SortKeys ("" is SortStart);
	// Asc reverses the key's default direction. Another value makes
	// ListViews fail with ErrBadFilter.
	Sort string
	Asc  bool
	// Now is when a running job's elapsed time ends for SortElapsed; zero
	// means the time of the call.
	Now time.Time
	// Limit bounds the page (0: no bound); Offset skips that many jobs.
	Limit, Offset int
	// AfterCluster and AfterJobID, when AfterJobID is set, start the page
	// right after that job in f's order (keyset paging): the rows an
	// Offset of its position + 1 gives, without reading the rows before
	// it, so a page deep in a long list costs what the first does. The job
	// need not match f, but must exist and, when UID is set, be that
	// uid's (else ErrNotFound, the same for both: see anchorKey); Offset
	// then counts from there. Ignored by CountViews and EachView.
	AfterCluster, AfterJobID string
	// WithSeries decodes each GPU's time series (see Filter.WithSeries).
	WithSeries bool
	// Lean reads only the scheduler fields the analysis reads
	// (analysisColumns: not Reason, NodeCount, CPUs, ReqTRES, AllocTRES,
	// GPUsFrom, CancelledBy, DerivedStatus/Signal,
	// Restarts, Source, which stay zero, and NodeList only for a job whose
	// start is its end, what slurmext.Started needs): the whole-period
	// readers of a month of a million jobs ask for it. Only EachView
	// honours it.
	Lean bool
}

// listViews returns the jobs f selects in f's order (f.Sort, f.Asc). The
// default is newest first: by the scheduler's start, else its submit time,
// else the earliest profile start; jobs with none of these last; ties by
// cluster, then job id, both descending. An unknown f.Sort is an error
// wrapping ErrBadFilter.
func (db *DB) listViews(ctx context.Context, f ViewFilter) (vs []JobView, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		vs, err = tx.listViews(ctx, f)
		return err
	})
	return vs, err
}

// countViews returns how many jobs f selects (f.Limit, f.Offset and the
// order are ignored): each (cluster, job id) once, whether it has a
// scheduler record, profiles, or both.
func (db *DB) countViews(ctx context.Context, f ViewFilter) (n int, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		n, err = tx.countViews(ctx, f)
		return err
	})
	return n, err
}

// getView returns one job with its series, or ErrNotFound when neither a
// scheduler record nor a profile of it exists.
func (db *DB) getView(ctx context.Context, cluster, jobID string) (v JobView, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		v, err = tx.getView(ctx, cluster, jobID)
		return err
	})
	return v, err
}

// listViews returns the jobs f selects in f's order; see DB.listViews.
func (t *Tx) listViews(ctx context.Context, f ViewFilter) ([]JobView, error) {
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

// countViews returns how many jobs f selects; see DB.countViews.
func (t *Tx) countViews(ctx context.Context, f ViewFilter) (int, error) {
	sc, sargs := schedConds(f)
	timed, untimed, timedArgs, untimedArgs := splitUntil(f, sc, sargs)
	q := `SELECT (SELECT count(*) FROM sched_jobs s` + where(timed) + `) +
		(SELECT count(*) FROM sched_jobs s` + where(untimed) + `)`
	args := slices.Concat(timedArgs, untimedArgs)
	if pc, pargs, ok := profileConds(f); ok {
		q += ` + (SELECT count(*) FROM jobs p` + where(pc) + `)`
		args = append(args, pargs...)
	}
	var n int
	if err := t.tx.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count views: %w", classify(err))
	}
	return n, nil
}

// getView returns one job with its series, or ErrNotFound.
func (t *Tx) getView(ctx context.Context, cluster, jobID string) (JobView, error) {
	vs, err := t.loadViews(ctx, []viewKey{{cluster, jobID}}, true)
	if err != nil {
		return JobView{}, fmt.Errorf("get view %s/%s: %w", cluster, jobID, err)
	}
	if vs[0].Sched == nil && len(vs[0].Profiles) == 0 {
		return JobView{}, fmt.Errorf("get view %s/%s: %w", cluster, jobID, ErrNotFound)
	}
	return vs[0], nil
}

// SlurmID is the job's id as Slurm prints it ("53_1", "60+1"; see
// slurmext.JobRecord.SlurmID), or the raw id when no scheduler record
// names it otherwise: a profile knows only the raw id.
func (v JobView) SlurmID() string {
	if v.Sched != nil {
		return v.Sched.SlurmID()
	}
	return v.JobID
}

type viewKey struct{ cluster, jobID string }

// sortKey is a key with its sort value: num for numeric keys (times,
// counts, bytes), str for text keys; invalid (NULL) when the job has none.
type sortKey struct {
	viewKey
	num sql.NullFloat64
	str sql.NullString
}

// order is a sort key's comparison, the Go twin of the arms' ORDER BY
// (see orderBy): both must agree for pages cut from each arm to merge.
type order struct {
	text, desc bool
}

// compare orders a before b (negative) when a comes first: a value before
// none, then by value, cluster and job id (byte order, as SQLite's BINARY
// collation), reversed when descending.
func (o order) compare(a, b sortKey) int {
	av, bv := a.num.Valid, b.num.Valid
	if o.text {
		av, bv = a.str.Valid, b.str.Valid
	}
	if av != bv {
		if av {
			return -1
		}
		return 1
	}
	c := 0
	if av {
		if o.text {
			c = strings.Compare(a.str.String, b.str.String)
		} else {
			c = cmp.Compare(a.num.Float64, b.num.Float64)
		}
	}
	if c == 0 {
		c = strings.Compare(a.cluster, b.cluster)
	}
	if c == 0 {
		c = strings.Compare(a.jobID, b.jobID)
	}
	if o.desc {
		c = -c
	}
	return c
}

// dir is the SQL direction of o.
func (o order) dir() string {
	if o.desc {
		return " DESC"
	}
	return " ASC"
}

// orderBy is o as an ORDER BY clause over columns k, cluster and job_id
// (qualified by alias a when not empty).
func (o order) orderBy(a string) string {
	if a != "" {
		a += "."
	}
	d := o.dir()
	return ` ORDER BY k IS NULL, k` + d + `, ` + a + `cluster` + d + `, ` + a + `job_id` + d
}

// seek is the condition (with its arguments) that keeps the rows of an
// arm that come after anchor in o: expr is the arm's sort value, a its
// table alias. It is compare's "anchor before row" in SQL: a value before
// none, then by value, cluster and job id, reversed when descending.
// nullable says whether expr can be NULL in this arm.
func (o order) seek(expr, a string, anchor sortKey, nullable bool) (string, []any) {
	op := ">"
	if o.desc {
		op = "<"
	}
	rest := `(` + a + `.cluster, ` + a + `.job_id) ` + op + ` (?, ?)`
	valid, val := anchor.num.Valid, any(anchor.num.Float64)
	if o.text {
		valid, val = anchor.str.Valid, any(anchor.str.String)
	} else if f := anchor.num.Float64; f == float64(int64(f)) {
		val = int64(f) // an integer compares with an indexed integer column as one
	}
	if !valid {
		// After a job without a value: only other jobs without one, by key.
		return `(` + expr + ` IS NULL AND ` + rest + `)`, []any{anchor.cluster, anchor.jobID}
	}
	cond := `(` + expr + `, ` + a + `.cluster, ` + a + `.job_id) ` + op + ` (?, ?, ?)`
	if nullable {
		cond = `(` + expr + ` IS NULL OR ` + cond + `)`
	}
	return cond, []any{val, anchor.cluster, anchor.jobID}
}

// anchorKey returns the sort value of job (cluster, jobID) in spec's
// order, as the arm it belongs to computes it: its scheduler record's, or
// for a job known only from profiles, its first node's.
//
// With uid set (a reader scoped to their own jobs, ScopedTo) a job that
// is not that uid's — by the same rule the filter's UID matches: the
// scheduler record's uid, else the first node's — is ErrNotFound, worded
// as for a job that does not exist: were it anything else, a cursor would
// tell a user which of other users' job ids exist and, in a sorted order,
// how their values compare with the user's own.
func (t *Tx) anchorKey(ctx context.Context, spec sortSpec, cluster, jobID string, uid *int) (sortKey, error) {
	schedExpr, profExpr := spec.sched, spec.prof
	if schedExpr == "" { // the start order's arms
		schedExpr, profExpr = `coalesce(`+schedWhen+`, `+profileWhen+`)`, `p."start"`
	}
	// owner is NULL (every job matches) for an unscoped reader.
	var owner any
	if uid != nil {
		owner = *uid
	}
	q := `SELECT s.cluster, s.job_id, ` + schedExpr + ` FROM sched_jobs s WHERE s.cluster = ?1 AND s.job_id = ?2
			AND (?3 IS NULL OR s.uid = ?3)
		UNION ALL SELECT c, j, k FROM (SELECT p.cluster AS c, p.job_id AS j, ` + profExpr + ` AS k, p.uid AS u FROM jobs p
			WHERE p.cluster = ?1 AND p.job_id = ?2
			AND NOT EXISTS (SELECT 1 FROM sched_jobs s WHERE s.cluster = p.cluster AND s.job_id = p.job_id)
			ORDER BY coalesce(p."start", 9e18), p.node LIMIT 1) WHERE ?3 IS NULL OR u = ?3`
	keys, err := t.queryKeys(ctx, spec.order, q, cluster, jobID, owner)
	if err != nil {
		return sortKey{}, err
	}
	if len(keys) == 0 {
		return sortKey{}, fmt.Errorf("page after job %s/%s: %w", cluster, jobID, ErrNotFound)
	}
	return keys[0], nil
}

// sortSpec is how a sort key is computed in each arm: on the scheduler
// record (alias s) and on a profile-only job's first node (alias p).
type sortSpec struct {
	order
	sched, prof string
}

// sortSpecFor returns the spec of f.Sort in f's direction, or an error
// wrapping ErrBadFilter. The spec of SortStart has no expressions: that
// order has arms of its own (startKeys).
func sortSpecFor(f ViewFilter) (sortSpec, error) {
	desc, ok := SortDescending(f.Sort)
	if !ok {
		return sortSpec{}, fmt.Errorf("%w: unknown sort key %q (want one of %s)", ErrBadFilter, f.Sort, strings.Join(SortKeys(), ", "))
	}
	now := f.Now
	if now.IsZero() {
		now = time.Now()
	}
	o := order{desc: desc != f.Asc}
	gpus := func(a string) string {
		return `(SELECT %s FROM job_gpus g WHERE g.cluster = ` + a + `.cluster AND g.job_id = ` + a + `.job_id)`
	}
	// A job's elapsed time over its nodes: first start to last end.
	nowS := strconv.FormatInt(now.Unix(), 10)
	nodesElapsed := func(a string) string {
		return `(SELECT max(max(coalesce(q."end", ` + nowS + `)) - min(q."start"), 0) FROM jobs q
			WHERE q.cluster = ` + a + `.cluster AND q.job_id = ` + a + `.job_id)`
	}
	switch f.Sort {
	case "", SortStart:
		return sortSpec{order: o}, nil // viewKeys's own arms, see startKeys
	case SortID:
		return sortSpec{o, `CAST(s.job_id AS INTEGER)`, `CAST(p.job_id AS INTEGER)`}, nil
	case SortName:
		o.text = true
		return sortSpec{o, `nullif(lower(s.name), '')`, `NULL`}, nil
	case SortUser:
		o.text = true
		return sortSpec{o, `nullif(s."user", '')`, `nullif(p."user", '')`}, nil
	case SortState:
		o.text = true
		return sortSpec{o, `lower(s.state)`, `CASE WHEN EXISTS (SELECT 1 FROM jobs q
			WHERE q.cluster = p.cluster AND q.job_id = p.job_id AND q.status = 'running')
			THEN 'running' ELSE 'finished' END`}, nil
	case SortElapsed:
		return sortSpec{o, `CASE WHEN s."start" IS NOT NULL
			THEN max(coalesce(s."end", ` + nowS + `) - s."start", 0) ELSE ` + nodesElapsed("s") + ` END`,
			nodesElapsed("p")}, nil
	case SortGPUs:
		return sortSpec{o, `coalesce(` + fmt.Sprintf(gpus("s"), "nullif(count(*), 0)") + `, s.req_gpus)`,
			fmt.Sprintf(gpus("p"), "count(*)")}, nil
	case SortVRAM:
		return sortSpec{o, fmt.Sprintf(gpus("s"), "max(g.mem_peak)"), fmt.Sprintf(gpus("p"), "max(g.mem_peak)")}, nil
	case SortUtil:
		return sortSpec{o, fmt.Sprintf(gpus("s"), "avg(g.util_mean)"), fmt.Sprintf(gpus("p"), "avg(g.util_mean)")}, nil
	}
	// SortDescending knows a key this switch does not: a bug, not a bad filter.
	return sortSpec{}, fmt.Errorf("sort key %q has no expression", f.Sort)
}

// viewKeys returns the keys of the page f selects. They come from two
// disjoint arms, each with f pushed down and cut to Offset+Limit keys in
// f's order: jobs with a scheduler record (matched on it), then jobs with
// profiles only (matched on those). Sorted by start, each arm reads in
// index order and the second reads only profiles no further down the order
// than the first arm's last key: in a controller database where jobcomp
// reports every job, the profile arm then touches a page's worth of rows,
// not the whole table. Other keys are computed for every job the filter
// selects (a user's jobs: thousands, fine; the whole table: seconds).
func (t *Tx) viewKeys(ctx context.Context, f ViewFilter) ([]viewKey, error) {
	spec, err := sortSpecFor(f)
	if err != nil {
		return nil, err
	}
	offset := max(f.Offset, 0)
	want := 0 // keys each arm needs; 0: all
	if f.Limit > 0 {
		want = offset + f.Limit
	}
	var after *sortKey
	if f.AfterJobID != "" {
		a, err := t.anchorKey(ctx, spec, f.AfterCluster, f.AfterJobID, f.UID)
		if err != nil {
			return nil, err
		}
		after = &a
	}
	var all []sortKey
	if spec.sched == "" {
		all, err = t.startKeys(ctx, f, spec.order, want, after)
	} else {
		all, err = t.sortedKeys(ctx, f, spec, want, after)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, spec.compare)
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

// likeEscape is the escape character of the LIKE patterns of containsLike.
const likeEscape = `\`

// containsLike is the LIKE pattern (with ESCAPE likeEscape) for values
// containing s, its own %, _ and escape characters taken literally.
func containsLike(s string) string {
	r := strings.NewReplacer(likeEscape, likeEscape+likeEscape, "%", likeEscape+"%", "_", likeEscape+"_")
	return "%" + r.Replace(s) + "%"
}

// schedConds returns the conditions of f on a scheduler record (alias s),
// all but Until, which depends on which sort time the record has (see
// splitUntil).
func schedConds(f ViewFilter) ([]string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	addJobFilters("s", f, add)
	if f.State != "" {
		add("s.state = ?", f.State) // NOCASE column
	}
	if r := f.Job; r != nil {
		switch {
		case r.ArrayTaskID >= 0:
			conds, args = append(conds, `s.array_job_id = ? AND s.array_task_id = ?`), append(args, r.Base, r.ArrayTaskID)
		case r.ArrayTaskSpec != "":
			conds, args = append(conds, `s.array_job_id = ? AND s.array_task_spec = ?`), append(args, r.Base, r.ArrayTaskSpec)
		case r.HetOffset >= 0:
			conds, args = append(conds, `s.het_job_id = ? AND s.het_offset = ?`), append(args, r.Base, r.HetOffset)
		default:
			conds, args = append(conds, `(s.job_id = ? OR s.array_job_id = ? OR s.het_job_id = ?)`), append(args, r.Base, r.Base, r.Base)
		}
	}
	if f.Text != "" {
		like := containsLike(f.Text)
		conds = append(conds, `(s.name LIKE ? ESCAPE '`+likeEscape+`' OR s.job_id LIKE ? ESCAPE '`+likeEscape+`'
			OR s.display_id LIKE ? ESCAPE '`+likeEscape+`' OR s."user" LIKE ? ESCAPE '`+likeEscape+`'
			OR s.account LIKE ? ESCAPE '`+likeEscape+`' OR s."partition" LIKE ? ESCAPE '`+likeEscape+`')`)
		args = append(args, like, like, like, like, like, like)
	}
	if !f.Since.IsZero() {
		add(`(s."end" IS NULL OR s."end" >= ?)`, f.Since.Unix())
	}
	return conds, args
}

// splitUntil splits the scheduler records conds selects into those with a
// sort time of their own (timed) and those without, which take their
// earliest profile start (untimed), and applies f.Until to each.
func splitUntil(f ViewFilter, conds []string, args []any) (timed, untimed []string, timedArgs, untimedArgs []any) {
	timed, untimed = slices.Concat(conds, []string{schedWhen + " IS NOT NULL"}), slices.Concat(conds, []string{schedWhen + " IS NULL"})
	timedArgs, untimedArgs = slices.Clip(args), slices.Clip(args)
	if !f.Until.IsZero() {
		timed, timedArgs = append(timed, schedWhen+" < ?"), append(timedArgs, ceilUnix(f.Until))
		untimed, untimedArgs = append(untimed, profileWhen+" < ?"), append(untimedArgs, ceilUnix(f.Until))
	}
	return timed, untimed, timedArgs, untimedArgs
}

// profileConds returns the conditions of f on jobs with profiles and no
// scheduler record, on the row of the job's first node (alias p: earliest
// start, then node name), which also carries the job-wide fields (user,
// uid, account, partition) the filter matches. Status differs between
// nodes: a job matches a status when any node has it. ok is false when no
// such job can match (f.State is a scheduler state).
func profileConds(f ViewFilter) (conds []string, args []any, ok bool) {
	status := strings.ToLower(f.State)
	if f.State != "" && status != profile.StatusRunning && status != profile.StatusFinished {
		return nil, nil, false // a scheduler state: only scheduler records have it
	}
	if f.Job != nil && !f.Job.Plain() {
		return nil, nil, false // an array or het id: only scheduler records have it
	}
	sameJob := `q.cluster = p.cluster AND q.job_id = p.job_id`
	conds = []string{
		`NOT EXISTS (SELECT 1 FROM sched_jobs s WHERE s.cluster = p.cluster AND s.job_id = p.job_id)`,
		// p is the job's first node; a missing start counts as latest.
		`NOT EXISTS (SELECT 1 FROM jobs q WHERE ` + sameJob + `
			AND (coalesce(q."start", 9e18), q.node) < (coalesce(p."start", 9e18), p.node))`,
	}
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	addJobFilters("p", f, add)
	if f.Job != nil {
		add("p.job_id = ?", f.Job.Base)
	}
	switch status {
	case profile.StatusRunning:
		// Few profiles run at a time: start from them (jobs_status).
		add(`(p.cluster, p.job_id) IN (SELECT cluster, job_id FROM jobs WHERE status = ?)`, status)
	case profile.StatusFinished:
		// Nearly all have finished: follow the time order, check each.
		add(`EXISTS (SELECT 1 FROM jobs q WHERE `+sameJob+` AND q.status = ?)`, status)
	}
	if f.Text != "" {
		like := containsLike(f.Text)
		conds = append(conds, `(p.job_id LIKE ? ESCAPE '`+likeEscape+`' OR p."user" LIKE ? ESCAPE '`+likeEscape+`'
			OR p.account LIKE ? ESCAPE '`+likeEscape+`' OR p."partition" LIKE ? ESCAPE '`+likeEscape+`')`)
		args = append(args, like, like, like, like)
	}
	if !f.Until.IsZero() {
		add(`p."start" < ?`, ceilUnix(f.Until))
	}
	if !f.Since.IsZero() {
		add(`EXISTS (SELECT 1 FROM jobs q WHERE `+sameJob+` AND (q."end" IS NULL OR q."end" >= ?))`, f.Since.Unix())
	}
	return conds, args, true
}

// startKeys returns the first want (all when 0) keys of each arm in start
// order o. Records without start and submit time (rare) take the earliest
// profile start; they are a third, small arm so the first can follow the
// index (sched_jobs_when and the filters' indexes of 0002_sched.sql).
func (t *Tx) startKeys(ctx context.Context, f ViewFilter, o order, want int, after *sortKey) ([]sortKey, error) {
	sc, sargs := schedConds(f)
	timedConds, untimedConds, timedArgs, untimedArgs := splitUntil(f, sc, sargs)
	if after != nil {
		// The timed arm has no NULL times: its seek is the index's range.
		cond, args := o.seek(schedWhen, "s", *after, false)
		timedConds, timedArgs = append(timedConds, cond), append(timedArgs, args...)
		cond, args = o.seek(profileWhen, "s", *after, true)
		untimedConds, untimedArgs = append(untimedConds, cond), append(untimedArgs, args...)
	}
	limit, limitArgs := "", []any(nil)
	if want > 0 {
		limit, limitArgs = " LIMIT ?", []any{want}
	}
	d := o.dir()
	// No NULL times here: the plain ORDER BY is the index's.
	timed := `SELECT s.cluster AS cluster, s.job_id AS job_id, ` + schedWhen + ` AS k FROM sched_jobs s` +
		where(timedConds) + ` ORDER BY ` + schedWhen + d + `, s.cluster` + d + `, s.job_id` + d + limit
	untimed := `SELECT s.cluster AS cluster, s.job_id AS job_id, ` + profileWhen + ` AS k
		FROM sched_jobs s` + where(untimedConds) + o.orderBy("") + limit
	q := `SELECT * FROM (` + timed + `) UNION ALL SELECT * FROM (` + untimed + `)`
	sched, err := t.queryKeys(ctx, o, q, slices.Concat(timedArgs, limitArgs, untimedArgs, limitArgs)...)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(sched, o.compare)
	if want > 0 && len(sched) > want {
		sched = sched[:want]
	}
	pc, pargs, ok := profileConds(f)
	if !ok {
		return sched, nil
	}
	if after != nil {
		cond, args := o.seek(`p."start"`, "p", *after, true)
		pc, pargs = append(pc, cond), append(pargs, args...)
	}
	// Profiles further down the order than the want-th record cannot make
	// the page; a NULL start is last, so never makes it either.
	if want > 0 && len(sched) == want && sched[want-1].num.Valid {
		cut := int64(sched[want-1].num.Float64)
		if o.desc {
			pc, pargs = append(pc, `p."start" >= ?`), append(pargs, cut)
		} else {
			pc, pargs = append(pc, `p."start" <= ?`), append(pargs, cut)
		}
	}
	q = `SELECT p.cluster, p.job_id, p."start" AS k FROM jobs p` + where(pc)
	if o.desc {
		// Index order (jobs_start); NULL starts are last anyway.
		q += ` ORDER BY p."start" DESC, p.cluster DESC, p.job_id DESC`
	} else {
		q += o.orderBy("p")
	}
	if want > 0 {
		q, pargs = q+" LIMIT ?", append(pargs, want)
	}
	prof, err := t.queryKeys(ctx, o, q, pargs...)
	if err != nil {
		return nil, err
	}
	return append(sched, prof...), nil
}

// sortedKeys returns the first want (all when 0) keys of each arm in the
// order of spec, a key other than the start.
func (t *Tx) sortedKeys(ctx context.Context, f ViewFilter, spec sortSpec, want int, after *sortKey) ([]sortKey, error) {
	sc, args := schedConds(f)
	if !f.Until.IsZero() {
		// splitUntil's two conditions in one (coalesce stops at the first
		// value, so the subquery runs only for untimed records).
		sc, args = append(sc, `coalesce(`+schedWhen+`, `+profileWhen+`) < ?`), append(slices.Clip(args), ceilUnix(f.Until))
	}
	if after != nil {
		cond, sargs := spec.seek(spec.sched, "s", *after, true)
		sc, args = append(sc, cond), append(slices.Clip(args), sargs...)
	}
	limit := ""
	if want > 0 {
		limit = " LIMIT " + strconv.Itoa(want)
	}
	q := `SELECT s.cluster, s.job_id, ` + spec.sched + ` AS k FROM sched_jobs s` + where(sc) + spec.orderBy("s") + limit
	sched, err := t.queryKeys(ctx, spec.order, q, args...)
	if err != nil {
		return nil, err
	}
	pc, pargs, ok := profileConds(f)
	if !ok {
		return sched, nil
	}
	if after != nil {
		cond, args := spec.seek(spec.prof, "p", *after, true)
		pc, pargs = append(pc, cond), append(pargs, args...)
	}
	q = `SELECT p.cluster, p.job_id, ` + spec.prof + ` AS k FROM jobs p` + where(pc) + spec.orderBy("p") + limit
	prof, err := t.queryKeys(ctx, spec.order, q, pargs...)
	if err != nil {
		return nil, err
	}
	return append(sched, prof...), nil
}

// queryKeys runs q, whose rows are cluster, job id and the sort value of
// order o.
func (t *Tx) queryKeys(ctx context.Context, o order, q string, args ...any) ([]sortKey, error) {
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var keys []sortKey
	for rows.Next() {
		var k sortKey
		var v any = &k.num
		if o.text {
			v = &k.str
		}
		if err := rows.Scan(&k.cluster, &k.jobID, v); err != nil {
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

// loadViews returns a view for each key, in order, in three queries: the
// scheduler records, the profiles with their GPUs, then their notices.
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
	rows, err = t.tx.QueryContext(ctx, `SELECT `+prefixed("j", jobColumns)+`, g.uuid, g.state, `+seriesColumn(withSeries)+`
		FROM `+keyTable+` k JOIN jobs j ON j.cluster = k.cluster AND j.job_id = k.job_id
		LEFT JOIN job_gpus g ON g.cluster = j.cluster AND g.job_id = j.job_id AND g.node = j.node
		ORDER BY j.cluster, j.job_id, j.node, g.position`, string(kj))
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var uuid, state, points sql.NullString
		j, err := scanJob(rows, &uuid, &state, &points)
		if err != nil {
			return nil, err
		}
		if i, ok := index[viewKey{j.Cluster, j.JobID}]; ok {
			if vs[i].Profiles, err = addProfileRow(vs[i].Profiles, j, uuid, state, points); err != nil {
				return nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if err := rows.Close(); err != nil {
		return nil, classify(err)
	}

	err = t.viewNotices(ctx, `FROM `+keyTable+` k JOIN notices n ON n.cluster = k.cluster AND n.job_id = k.job_id`,
		[]any{string(kj)}, func(k viewKey) []profile.Job {
			if i, ok := index[k]; ok {
				return vs[i].Profiles
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("notices: %w", err)
	}
	return vs, nil
}

// viewNotices adds the notices that from (a FROM clause over the notices
// table aliased n, with its args) selects to the profiles of their node,
// oldest first as Tx.list gives them: profilesOf returns a job's profiles
// (nil when the job is not being read), to which each notice is added in
// place. A notice whose node has no profile is left out, as Tx.list does:
// the agent claims a notice before its job's first flush.
func (t *Tx) viewNotices(ctx context.Context, from string, args []any, profilesOf func(viewKey) []profile.Job) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+prefixed("n", noticeColumns)+` `+from+`
		ORDER BY n."time", n.rule`, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanNotice(rows)
		if err != nil {
			return err
		}
		ps := profilesOf(viewKey{r.Cluster, r.JobID})
		for i := range ps {
			if ps[i].Node == r.Node {
				ps[i].Notices = append(ps[i].Notices, r.Notice)
				break
			}
		}
	}
	return classify(rows.Err())
}

// addProfileRow adds one row of a profile query (jobs LEFT JOIN job_gpus,
// ordered by job, node and GPU position) to its job's profiles: the row's
// node starts a new profile unless it is the last one's, and its GPU, when
// it has one, is decoded onto that profile.
func addProfileRow(ps []profile.Job, j profile.Job, uuid, state, points sql.NullString) ([]profile.Job, error) {
	if n := len(ps); n == 0 || ps[n-1].Node != j.Node {
		ps = append(ps, j)
	}
	if !uuid.Valid {
		return ps, nil
	}
	g, err := decodeGPU(state.String, points)
	if err != nil {
		return ps, fmt.Errorf("job %s gpu %s: %w", keyString(j.Key), uuid.String, err)
	}
	g.UUID = uuid.String
	p := &ps[len(ps)-1]
	p.GPUs = append(p.GPUs, g)
	return ps, nil
}

// prefixed qualifies each column of a column list with table alias a.
func prefixed(a, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = a + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// ScopedTo restricts f to the jobs of uid, the rule for a reader who is not
// an admin: whatever else f asks for, only that uid's jobs match. A User
// filter naming the reader's own login (user) is dropped, since the uid
// selects the same jobs and its index alone serves the query faster than
// both together.
func (f ViewFilter) ScopedTo(uid int, user string) ViewFilter {
	f.UID = &uid
	if user != "" && f.User == user {
		f.User = ""
	}
	return f
}
