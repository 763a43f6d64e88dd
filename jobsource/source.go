package jobsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os/user"
	"slices"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/tui"
)

// Source reads job views from the collector, from the agent's local
// query socket or from the local database, for every reader (jobs, show,
// profiles, recommend, plan, report, notices, tui). The rule "users see
// only their own jobs" is the store's (store.Reader), applied where the
// data is: the collector's from the caller's munge identity, the agent's
// query socket's from the caller's uid as the kernel reports it
// (SO_PEERCRED), the local path's from the caller decided once in
// Open (store.DB.OwnerCaller: an admin, or the database file's
// owner, reads every row). The database file's own permissions decide who
// can open it at all: root, and admin_group where the file's group is
// theirs.
type Source struct {
	client *collect.Client // nil: local database
	// db is the local database, read through Reader only.
	db *store.DB
	// caller is who reads, decided once (Open, ForCaller): the local
	// reads are scoped to caller.UID unless caller.Admin; through a client
	// the server decides, and caller only shapes the TUI's prompts.
	caller store.Caller
	cfg    config.Config
	// cluster, when not "", is forced into every query (tui --cluster).
	cluster string
	// noNames: no squeue for running jobs' names (SkipNames).
	noNames bool
	// adminWarning says why no one but root is an admin (AdminWarning).
	adminWarning error
}

// Options say how Open chooses.
type Options struct {
	Local  bool          // --local: never the collector
	DBFlag bool          // --db named the file: that file or nothing
	UID    int           // the caller
	Munge  collect.Munge // how the collector's client proves the caller
}

// Open opens the configured job source for the caller o.UID: the
// collector when one is configured; else the database when the caller
// can open it; else, for anyone but root reading the configured
// database, the agent's query socket (query_socket), found without any
// setting on a single host.
func Open(ctx context.Context, cfg config.Config, o Options) (*Source, error) {
	// An unknown admin_group: only root is an admin (store.Admins's one
	// policy), and the source keeps the warning for the command to print.
	isAdmin, adminErr := store.Admins(cfg.AdminGroup, cfg.Serve.SlurmUser)
	uid := o.UID
	s := &Source{caller: store.CallerOf(uid, userName(uid), isAdmin), cfg: cfg, adminWarning: adminErr}
	if cfg.Collector != "" && !o.Local && !o.DBFlag {
		s.client = &collect.Client{URL: cfg.Collector, Munge: o.Munge}
		return s, nil
	}
	db, dbErr := store.Open(ctx, cfg.DB, store.Options{ReadOnly: true, BusyTimeout: 2 * time.Second})
	if dbErr == nil {
		s.db = db
		s.caller = db.OwnerCaller(uid, s.caller.User, isAdmin)
		return s, nil
	}
	denied := errors.Is(dbErr, fs.ErrPermission)
	if uid == 0 && !denied || o.DBFlag || cfg.QuerySocket == "" ||
		!(denied || errors.Is(dbErr, fs.ErrNotExist)) {
		// Root can open any file (uid 0 denied is no root: a user's
		// namespace, `unshare -Ur`, whose real uid the socket reports);
		// --db names another file than the one the agent serves; a
		// damaged or foreign file is not the socket's business.
		return nil, dbErr
	}
	if err := probeSocket(cfg.QuerySocket); err != nil {
		return nil, fmt.Errorf("%w; and the agent's query socket %s does not answer (%v): is `gpuprof agent` running on this host? "+
			"Ask an admin to start it (systemctl start gpuprof-agent). The database is readable by root and admin_group only; "+
			"users read their own jobs through the agent", dbErr, cfg.QuerySocket, err)
	}
	// The agent decides who the caller is and what they may see; the
	// identity here only shapes the TUI's prompts.
	s.client = collect.NewLocalClient(cfg.QuerySocket)
	return s, nil
}

// ForCaller is a Source over db read as c, a caller already decided (Open
// decides it for the commands; tests name it).
func ForCaller(db *store.DB, c store.Caller) *Source {
	return &Source{db: db, caller: c}
}

// probeSocket checks that something accepts connections on the unix
// socket at path.
func probeSocket(path string) error {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// userName is the login name of uid, or the uid as text.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func (s *Source) Close() error {
	if s.db != nil {
		return s.db.Close()
	}
	return nil
}

// Reader is the local database's reader for the caller Open decided:
// every row for an admin, else the jobs of uid alone; nil when the jobs
// are read through a client (the collector or the query socket), whose
// server scopes them.
func (s *Source) Reader() *store.Reader {
	if s.db == nil {
		return nil
	}
	return s.db.ReaderFor(s.caller)
}

// Identity is who the caller is as Open decided (the TUI's identity is
// the store's Caller).
func (s *Source) Identity() store.Caller { return s.caller }

// AdminWarning is why no one but root (and the database's owner) reads
// every user's jobs, when admin_group names no group this host knows
// (store.Admins); nil else.
func (s *Source) AdminWarning() error { return s.adminWarning }

// Config is the configuration the source was opened with.
func (s *Source) Config() config.Config { return s.cfg }

// SetCluster forces cluster into every query ("" none: tui --cluster).
func (s *Source) SetCluster(cluster string) { s.cluster = cluster }

// Collector is the collector's URL the jobs are read from ("" when they
// are read locally or through the query socket).
func (s *Source) Collector() string {
	if s.client == nil {
		return ""
	}
	return s.client.URL
}

// Database is the path of the local database read ("" when the jobs are
// read through a client).
func (s *Source) Database() string {
	if s.db == nil {
		return ""
	}
	return s.db.Path()
}

// ScopedUID is the uid the local reads are scoped to; false for an admin
// or a client.
func (s *Source) ScopedUID() (int, bool) { return s.Scope().ScopedUID() }

// scope applies --cluster to f.
func (s *Source) scope(f store.ViewFilter) store.ViewFilter {
	if s.cluster != "" {
		f.Cluster = s.cluster
	}
	return f
}

// Jobs implements tui.Source.
//
// A running job without a scheduler record gets its name from squeue
// (nameRunning).
func (s *Source) Jobs(ctx context.Context, f store.ViewFilter) ([]store.JobView, error) {
	var vs []store.JobView
	var err error
	if s.client != nil {
		if s.cluster != "" {
			f.Cluster = s.cluster
		}
		vs, err = s.client.Jobs(ctx, f)
	} else {
		vs, err = s.Reader().ListViews(ctx, s.scope(f))
	}
	if err == nil && !s.noNames {
		s.nameRunning(ctx, vs)
	}
	return vs, err
}

// SkipNames turns nameRunning off for a reader that polls one job and
// needs no name (the job-end mail and AdminComment), so that it does not
// run squeue on every read.
func (s *Source) SkipNames() { s.noNames = true }

// Each calls fn with every job f selects, one at a time, in no particular
// order (f.Limit and f.Offset ignored): what the analysis reads, without
// holding every view (and its time series) at once.
func (s *Source) Each(ctx context.Context, f store.ViewFilter, fn func(store.JobView) error) error {
	f.Limit, f.Offset, f.AfterCluster, f.AfterJobID = 0, 0, "", ""
	if s.client == nil {
		return s.Reader().EachView(ctx, s.scope(f), fn)
	}
	if s.cluster != "" {
		f.Cluster = s.cluster
	}
	return s.client.Each(ctx, f, fn)
}

// inputSized reads every job f selects into the analysis input, whose
// window is f's Since and Until (zero ends: the data's own), whose Now is
// now, so jobs still running count up to it, and whose Slurm
// configuration is conf (nil: none), sized for n jobs as the caller
// counted them (0: not counted, so counted here). each, when not nil,
// sees every view of the same pass (the report tallies notices from it,
// the digest its day's notices). Scope.Input is the pipeline's way in.
func (s *Source) inputSized(ctx context.Context, f store.ViewFilter, now time.Time, n int, conf *Conf, each func(store.JobView)) (analysis.Input, error) {
	limitMemory()
	b := analysis.NewInputBuilder()
	if conf != nil {
		b.SetConf(conf.Use, conf.Nodes)
	}
	// Converting into an array of the right size saves holding a month's
	// jobs twice at the end; the count is a hint (jobs may arrive between
	// the two reads).
	if n == 0 {
		if c, err := s.Count(ctx, f); err == nil {
			n = c
		}
	}
	b.Reserve(n)
	err := s.Each(ctx, f, func(v store.JobView) error {
		b.Add(v.Sched, v.Profiles)
		if each != nil {
			each(v)
		}
		return nil
	})
	// Input waits for the conversions even after an error.
	in := b.Input(analysis.Window{From: f.Since, To: f.Until}, now)
	if err != nil {
		return analysis.Input{}, err
	}
	return in, nil
}

// newestPage is how many jobs a page of a read of the newest jobs
// (Query.Newest) holds.
const newestPage = 500

// inputNewest reads the jobs f selects into the analysis input, whose
// window is f's and whose Now is now, as q asks: the newest q.Newest of
// them (every one when 0; at most q.Jobs when counted) in the jobs
// list's order, a page at a time (Jobs: a running job named as the list
// names it), and, with q.ConfOfRead, the Slurm configuration of the one
// cluster they are of (ClusterConf), else conf (nil: none). each, when
// not nil, sees every view read.
func (s *Source) inputNewest(ctx context.Context, f store.ViewFilter, now time.Time, q Query, conf *Conf, each func(store.JobView)) (analysis.Input, error) {
	b := analysis.NewInputBuilder()
	if conf != nil && !q.ConfOfRead {
		b.SetConf(conf.Use, conf.Nodes)
	}
	n := q.Newest
	if n <= 0 {
		n = math.MaxInt
	}
	upTo := n // the pages asked for, the last one whole as the count may be late
	if q.Jobs > 0 {
		upTo = min(n, q.Jobs)
	}
	var clusters []string
	var err error
	for off := 0; off < upTo; off += newestPage {
		page := f
		page.Offset, page.Limit = off, min(newestPage, n-off)
		var vs []store.JobView
		if vs, err = s.Jobs(ctx, page); err != nil {
			break
		}
		for _, v := range vs {
			if !slices.Contains(clusters, v.Cluster) {
				clusters = append(clusters, v.Cluster)
			}
			b.Add(v.Sched, v.Profiles)
			if each != nil {
				each(v)
			}
		}
		if len(vs) < page.Limit {
			break
		}
	}
	if q.ConfOfRead && len(clusters) == 1 {
		b.SetConf(s.ClusterConf(clusters[0]))
	}
	// Input waits for the conversions even after an error.
	in := b.Input(analysis.Window{From: f.Since, To: f.Until}, now)
	if err != nil {
		return analysis.Input{}, err
	}
	return in, nil
}

// Count implements tui.Source.
func (s *Source) Count(ctx context.Context, f store.ViewFilter) (int, error) {
	if s.client != nil {
		if s.cluster != "" {
			f.Cluster = s.cluster
		}
		return s.client.Count(ctx, f)
	}
	return s.Reader().CountViews(ctx, s.scope(f))
}

// Job implements tui.Source: one job with its series, through the same
// scoping as Jobs (a job id of someone else's job is "not found").
func (s *Source) Job(ctx context.Context, cluster, jobID string) (store.JobView, error) {
	vs, err := s.Jobs(ctx, store.ViewFilter{Cluster: cluster, JobID: jobID, WithSeries: true, Limit: 1})
	if err != nil {
		return store.JobView{}, err
	}
	if len(vs) == 0 {
		return store.JobView{}, fmt.Errorf("job %s: %w", jobID, store.ErrNotFound)
	}
	return vs[0], nil
}

// ClusterConf is the Slurm configuration bound to cluster's jobs
// (BindConf), nil nodes when none is used or it cannot be read (said in
// NotUsed): what a read bound after it (Query.ConfOfRead: the TUI's
// summary) counts with.
func (s *Source) ClusterConf(cluster string) (analysis.ConfUse, []slurmext.NodeGres) {
	c, err := BindConf(cluster, s.cfg)
	if err != nil {
		return analysis.ConfUse{Cluster: cluster, NotUsed: err.Error() + ": not used"}, nil
	}
	return c.Use, c.Nodes
}

// viewStart is the sort time of the first of vs as ListViews orders by
// it: the scheduler's start, else its submit time, else the earliest
// profile start; zero when none.
func viewStart(vs []store.JobView) time.Time {
	if len(vs) == 0 {
		return time.Time{}
	}
	v := vs[0]
	if v.Sched != nil && !v.Sched.Start.IsZero() {
		return v.Sched.Start
	}
	if v.Sched != nil && !v.Sched.Submit.IsZero() {
		return v.Sched.Submit
	}
	var t time.Time
	for _, p := range v.Profiles {
		if !p.Start.IsZero() && (t.IsZero() || p.Start.Before(t)) {
			t = p.Start
		}
	}
	return t
}

var _ tui.Source = (*Source)(nil)
