package jobsource

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// Scope is what the window pipeline (package monthly) reads through: one
// caller, as the store's access rule sees them, the jobs that caller may
// read (the collector, the local database or the agent's query socket,
// already scoped), and, once bound (Bind), the one cluster an answer is
// for with its own Slurm configuration. Source.Scope hands it out; the
// pipeline takes it and asks it for windows of jobs (Query), and nothing
// else reads a window (internal/archtest).
type Scope struct {
	// Caller is who reads: an admin reads every user's jobs, anyone
	// else their own (through a client the server decides, by the same
	// rule, and Caller says whom it decides for).
	Caller store.Caller
	// Cluster is the cluster Bind chose ("" before: every cluster the
	// caller may read).
	Cluster string
	// Conf is Cluster's Slurm configuration as Bind bound it (BindConf;
	// nil before Bind).
	Conf *Conf
	// Jobs is how many jobs of Cluster the window Bind was given holds,
	// when they were counted to choose it (0: not counted).
	Jobs int
	// Collector is the collector's URL the jobs are read from, Database
	// the local database's path ("" when not read there).
	Collector, Database string
	r                   Reads
}

// Query is what the pipeline asks a Scope for: the jobs of a window, of
// the scope's cluster (or Cluster), and how much of each.
type Query struct {
	// Cluster is the cluster read ("": the scope's, every cluster
	// before Bind).
	Cluster string
	// User keeps the jobs of one user ("": every job the caller may
	// read).
	User   string
	Window analysis.Window
	// WithSeries reads the GPUs' time series (the memory floor needs
	// them); Lean leaves out the TRES text, node lists and pending
	// reasons, which only the queue replay reads.
	WithSeries, Lean bool
	// Jobs is how many jobs the query selects, when already counted:
	// Input sizes the input by it instead of counting again (0: not
	// counted).
	Jobs int
	// Now is the input's clock: jobs still running count up to it (zero:
	// the time of the read).
	Now time.Time
	// Newest, when above 0, reads only the newest Newest jobs, in the
	// jobs list's order, a page at a time: a view that must answer
	// quickly (the TUI's summary) reads no more.
	Newest int
	// ConfOfRead binds, once the jobs are read, the Slurm configuration
	// of the one cluster they are of (none when they are of several or of
	// none; a file that cannot be read is said, analysis.ConfUse.NotUsed,
	// not an error): a read not bound before (the TUI's summary, whose
	// cluster is that of the jobs it read).
	ConfOfRead bool
}

// Reads is what a Scope reads through: the Source's scoped reader, or a
// test's.
type Reads interface {
	// Count is how many jobs q selects.
	Count(ctx context.Context, q Query) (int, error)
	// Input reads every job q selects into the analysis input, whose
	// window is q's, whose clock is now and whose Slurm configuration is
	// conf (nil: none). each, when not nil, is given every job's record
	// and profiles from the same pass.
	Input(ctx context.Context, q Query, conf *Conf, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error)
	// Clusters names the clusters of the jobs q selects, sorted, and,
	// when they are one, how many jobs it has there (0: not counted).
	Clusters(ctx context.Context, q Query) ([]string, int, error)
	// Bind chooses the cluster of an answer about the jobs q selects
	// (cluster; "": the one of q's jobs, else the database's or this
	// host's) and binds its Slurm configuration, with how many jobs of it
	// q selects when they were counted to choose it (0: not counted).
	Bind(ctx context.Context, q Query, cluster string) (string, *Conf, int, error)
	// InputAndNotices is Input (no Slurm configuration: every cluster's
	// jobs) with, from the same pass, the notices decided in q's window
	// that the caller may see, newest first (ties by cluster, job, node,
	// rule).
	InputAndNotices(ctx context.Context, q Query) (analysis.Input, []notice.Row, error)
	// Newest is when the newest job q selects started, as the jobs list
	// orders them (the scheduler's start, else its submit time, else its
	// earliest profile's start); zero when q selects none.
	Newest(ctx context.Context, q Query) (time.Time, error)
}

// NewScope is the scope of c reading through r (tests; Source.Scope for
// the commands).
func NewScope(c store.Caller, collector, database string, r Reads) Scope {
	return Scope{Caller: c, Collector: collector, Database: database, r: r}
}

// Scope is the caller's scope over every cluster they may read, not yet
// bound to one.
func (s *Source) Scope() Scope {
	return NewScope(s.caller, s.Collector(), s.Database(), sourceReads{s})
}

// of gives q the scope's cluster when it names none.
func (sc Scope) of(q Query) Query {
	if q.Cluster == "" {
		q.Cluster = sc.Cluster
	}
	return q
}

// Count is how many jobs q selects.
func (sc Scope) Count(ctx context.Context, q Query) (int, error) {
	return sc.r.Count(ctx, sc.of(q))
}

// Input reads every job q selects into the analysis input, with the
// scope's Slurm configuration; each, when not nil, sees every job of the
// same pass.
func (sc Scope) Input(ctx context.Context, q Query, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	return sc.r.Input(ctx, sc.of(q), sc.Conf, each)
}

// InputAndNotices reads every job q selects into the analysis input and,
// from the same pass, the notices decided in q's window
// (Reads.InputAndNotices): the admins' digest of a day.
func (sc Scope) InputAndNotices(ctx context.Context, q Query) (analysis.Input, []notice.Row, error) {
	return sc.r.InputAndNotices(ctx, sc.of(q))
}

// Newest is when the newest job q selects started (Reads.Newest).
func (sc Scope) Newest(ctx context.Context, q Query) (time.Time, error) {
	return sc.r.Newest(ctx, sc.of(q))
}

// Clusters names the clusters of the jobs q selects (Reads.Clusters).
func (sc Scope) Clusters(ctx context.Context, q Query) ([]string, int, error) {
	return sc.r.Clusters(ctx, q)
}

// Bind is the scope bound to one cluster of the jobs q selects (cluster,
// else theirs: Reads.Bind), with its Slurm configuration.
func (sc Scope) Bind(ctx context.Context, q Query, cluster string) (Scope, error) {
	name, conf, n, err := sc.r.Bind(ctx, q, cluster)
	if err != nil {
		return sc, err
	}
	sc.Cluster, sc.Conf, sc.Jobs = name, conf, n
	return sc, nil
}

// ScopedUID is the uid the local reads are scoped to; false for an admin
// or a client (whose server scopes them).
func (sc Scope) ScopedUID() (int, bool) {
	if sc.Database == "" || sc.Caller.Admin {
		return 0, false
	}
	return sc.Caller.UID, true
}

// sourceReads is a Source as a Scope reads it.
type sourceReads struct{ s *Source }

func (r sourceReads) filter(q Query) store.ViewFilter {
	return store.ViewFilter{Cluster: q.Cluster, User: q.User, Since: q.Window.From, Until: q.Window.To, WithSeries: q.WithSeries, Lean: q.Lean}
}

func (r sourceReads) Count(ctx context.Context, q Query) (int, error) {
	return r.s.Count(ctx, r.filter(q))
}

func (r sourceReads) Input(ctx context.Context, q Query, conf *Conf, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	var fn func(store.JobView)
	if each != nil {
		fn = func(v store.JobView) { each(v.Sched, v.Profiles) }
	}
	if q.Newest > 0 || q.ConfOfRead {
		return r.s.inputNewest(ctx, r.filter(q), readTime(q), q, conf, fn)
	}
	return r.s.inputSized(ctx, r.filter(q), readTime(q), q.Jobs, conf, fn)
}

func (r sourceReads) InputAndNotices(ctx context.Context, q Query) (analysis.Input, []notice.Row, error) {
	f := r.filter(q)
	jobs := store.ViewFilter{Cluster: f.Cluster, User: f.User, Since: f.Since, Until: f.Until}
	return r.s.inputAndNotices(ctx, f, readTime(q), NoticeQuery{Jobs: jobs, Since: f.Since, Until: f.Until})
}

// readTime is q's clock: Now, else the time of the read.
func readTime(q Query) time.Time {
	if q.Now.IsZero() {
		return time.Now()
	}
	return q.Now
}

func (r sourceReads) Clusters(ctx context.Context, q Query) ([]string, int, error) {
	return r.s.clusters(ctx, r.filter(q))
}

func (r sourceReads) Newest(ctx context.Context, q Query) (time.Time, error) {
	f := r.filter(q)
	f.Limit = 1
	vs, err := r.s.Jobs(ctx, f)
	if err != nil {
		return time.Time{}, err
	}
	return viewStart(vs), nil
}

func (r sourceReads) Bind(ctx context.Context, q Query, cluster string) (string, *Conf, int, error) {
	return r.s.forCluster(ctx, r.filter(q), cluster)
}

// ConfUse says whether and why the bound cluster's slurm.conf is used.
func (sc Scope) ConfUse() analysis.ConfUse {
	if sc.Conf == nil {
		return analysis.ConfUse{Cluster: sc.Cluster}
	}
	return sc.Conf.Use
}
