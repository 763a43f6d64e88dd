package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"syscall"

	"github.com/gpuprof/gpuprof/termtext"
)

// The access rule: an admin reads every user's jobs and notices, anyone
// else only their own. It is applied here, beside the data, and nowhere
// else: the store's job-view and notice readers are unexported, and a
// Reader, scoped to one Caller, is the only way to them (the raw profile
// rows the recording path reads, GetJob, ListJobs and RunningJobs, stay
// exported for the agent, ingest and the collector's merge; internal/archtest
// keeps every other package from them). The collector and the
// agent's query socket make a Reader per request for the caller its
// credential or the kernel names, the commands one for whoever runs them.

// Caller is who reads: what the access rule needs to know of them.
type Caller struct {
	// UID is the caller's uid; a Caller who is not an admin reads the
	// jobs and notices of this uid only.
	UID int
	// User is the caller's login name, "" when not known (the collector
	// knows a munge credential's uid only). A filter on the caller's own
	// name is dropped for the uid (ViewFilter.ScopedTo), so that their jobs
	// known by uid alone stay in.
	User string
	// Admin reads every user's jobs.
	Admin bool
}

// System is the daemons' own reading (the agent's pending notices, the
// collector's gauges): every row, for no user. Commands never read as
// System (internal/archtest): they read as the caller who runs them.
var System = Caller{Admin: true}

// AdminGroup returns the rule's admin test for the configuration's
// admin_group: root, or a member of group ("": root only).
func AdminGroup(group string) (func(uid int) bool, error) {
	if group == "" {
		return func(uid int) bool { return uid == 0 }, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return nil, fmt.Errorf("admin group: %w", err)
	}
	return func(uid int) bool {
		if uid == 0 {
			return true
		}
		u, err := user.LookupId(strconv.Itoa(uid))
		if err != nil {
			return false
		}
		if u.Gid == g.Gid {
			return true
		}
		ids, err := u.GroupIds()
		return err == nil && slices.Contains(ids, g.Gid)
	}, nil
}

// Admins returns the rule's admin test for the configuration:
// AdminGroup's (root and admin_group's members), and the SlurmUser
// (serve.slurm_user), who runs slurmctld's MailProg and jobcomp and so
// reads every job for the job-end mail's summary and the AdminComment.
// Slurm already trusts that account with every job (it can modify or
// cancel any); a SlurmUser unknown on this host adds no one.
//
// An admin_group this host does not know has one policy, the same for
// the commands, serve and the agent's query socket: no one is an admin
// but root (not the SlurmUser either), and the error, an
// *UnknownAdminGroupError, says so for the caller to log; the test
// returned is never nil. Refusing admin fails closed: a typo in
// admin_group hides other users' jobs and never shows them.
func Admins(group, slurmUser string) (func(uid int) bool, error) {
	inGroup, err := AdminGroup(group)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // AdminGroup's "admin group: " said again
		}
		return rootOnly, &UnknownAdminGroupError{Group: group, Err: err}
	}
	slurmUID := -1
	if slurmUser != "" {
		if u, err := user.Lookup(slurmUser); err == nil {
			if id, err := strconv.Atoi(u.Uid); err == nil {
				slurmUID = id
			}
		}
	}
	return func(uid int) bool { return (slurmUID >= 0 && uid == slurmUID) || inGroup(uid) }, nil
}

// rootOnly is the admin test when admin_group cannot be resolved.
func rootOnly(uid int) bool { return uid == 0 }

// UnknownAdminGroupError says that admin_group names no group this host
// knows, so that only root reads every user's jobs (Admins).
type UnknownAdminGroupError struct {
	Group string
	Err   error
}

func (e *UnknownAdminGroupError) Error() string {
	return fmt.Sprintf("admin_group %q: %v: only root reads every user's jobs", e.Group, e.Err)
}

func (e *UnknownAdminGroupError) Unwrap() error { return e.Err }

// ErrAdminOnly is what RequireAdmin's refusal wraps.
var ErrAdminOnly = errors.New("for root and admin_group only")

// RequireAdmin is the one check of an answer that reads every user's
// jobs (what says which: "gpuprof whatif replays every user's jobs"):
// nil for an admin, else the one sentence that refuses it, naming the
// caller, who sees only their own.
func (c Caller) RequireAdmin(what string) error {
	if c.Admin {
		return nil
	}
	return fmt.Errorf("%s: it is %w (%s sees only their own)", what, ErrAdminOnly, termtext.Clean(c.User))
}

// CallerOf is uid, named user, as the rule sees them: an admin when
// isAdmin says so (nil: root only).
func CallerOf(uid int, user string, isAdmin func(uid int) bool) Caller {
	if isAdmin == nil {
		return Caller{UID: uid, User: user, Admin: uid == 0}
	}
	return Caller{UID: uid, User: user, Admin: isAdmin(uid)}
}

// OwnerCaller is CallerOf for a command that opened the database file
// itself: whoever owns the file is an admin too (they could read every
// row with sqlite3 anyway). The file's own permissions decide who could
// open it at all.
func (db *DB) OwnerCaller(uid int, user string, isAdmin func(uid int) bool) Caller {
	c := CallerOf(uid, user, isAdmin)
	if !c.Admin && ownsFile(db.path, uid) {
		c.Admin = true
	}
	return c
}

// ownsFile reports whether uid owns the file at path.
func ownsFile(path string, uid int) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == uid
}

// Reader reads the jobs and notices its Caller may see: every row for an
// admin, else the caller's own, whatever a filter asks for (a job of
// someone else's reads as absent). It holds no resources: the DB it
// reads stays its opener's to close.
type Reader struct {
	db *DB
	c  Caller
}

// ReaderFor returns the reader of c's jobs and notices.
func (db *DB) ReaderFor(c Caller) *Reader { return &Reader{db: db, c: c} }

// Caller returns whom r reads for.
func (r *Reader) Caller() Caller { return r.c }

// Path returns the absolute path of the database file.
func (r *Reader) Path() string { return r.db.path }

// views scopes f to the caller.
func (r *Reader) views(f ViewFilter) ViewFilter {
	if r.c.Admin {
		return f
	}
	return f.ScopedTo(r.c.UID, r.c.User)
}

// notices scopes f to the caller.
func (r *Reader) notices(f NoticeFilter) NoticeFilter {
	if r.c.Admin {
		return f
	}
	return f.ScopedTo(r.c.UID, r.c.User)
}

// ListViews returns the jobs f selects that the caller may read, in f's
// order (f.Sort, f.Asc). The default is newest first: by the scheduler's
// start, else its submit time, else the earliest profile start; jobs with
// none of these last; ties by cluster, then job id, both descending. An
// unknown f.Sort is an error wrapping ErrBadFilter.
func (r *Reader) ListViews(ctx context.Context, f ViewFilter) ([]JobView, error) {
	return r.db.listViews(ctx, r.views(f))
}

// CountViews returns how many jobs ListViews would return without f.Limit
// and f.Offset.
func (r *Reader) CountViews(ctx context.Context, f ViewFilter) (int, error) {
	return r.db.countViews(ctx, r.views(f))
}

// EachView calls fn with every job f selects that the caller may read —
// the same jobs as ListViews with the same profiles, in no particular
// order; f.Limit, f.Offset, f.Sort, f.Asc and the After fields are
// ignored. It reads each table in one filtered pass and hands the views
// over one at a time, so a caller who keeps less than the whole view never
// holds them all (a month's report). fn runs inside the read transaction
// and must not use the database; its error stops the reading and is
// returned.
func (r *Reader) EachView(ctx context.Context, f ViewFilter, fn func(JobView) error) error {
	return r.db.eachView(ctx, r.views(f), fn)
}

// ListNotices returns the notices f selects that the caller may read
// (those of their own jobs), newest first (ties by cluster, job, node,
// rule).
func (r *Reader) ListNotices(ctx context.Context, f NoticeFilter) ([]NoticeRecord, error) {
	return r.db.listNotices(ctx, r.notices(f))
}

// CountNotices returns how many notices ListNotices would return without
// f.Limit.
func (r *Reader) CountNotices(ctx context.Context, f NoticeFilter) (int, error) {
	return r.db.countNotices(ctx, r.notices(f))
}
