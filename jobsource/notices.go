package jobsource

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/store"
)

// NoticeQuery is what gpuprof notices selects: the jobs to read (by user
// and time) and, of their notices, those decided in [Since, Until) of
// Rule ("" any).
type NoticeQuery struct {
	Jobs         store.ViewFilter
	Since, Until time.Time
	Rule         string
}

// viewReader is the part of a Source the notices are read through when
// they come with the profiles: every job a filter selects, scoped to the
// caller.
type viewReader interface {
	Each(ctx context.Context, f store.ViewFilter, fn func(store.JobView) error) error
}

// noticeLookups is how many jobs Notices looks up one by one; more are
// read in one pass over the window's jobs.
const noticeLookups = 100

// Notices reads the notices q selects that the caller may see, newest
// first (ties by cluster, job, node, rule): from the database's notices
// table when s reads the database (scoped to the caller's uid like its
// jobs), else from the profiles the collector or the agent's query
// socket serves, which carry their notices and are scoped there.
func (s *Source) Notices(ctx context.Context, q NoticeQuery) ([]notice.Row, error) {
	if s.Reader() == nil {
		return collectNotices(ctx, s, q)
	}
	nj, err := s.noticeRecords(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(nj.views) > noticeLookups {
		// Many jobs: one pass over the window's jobs beats a query each.
		err := s.Each(ctx, q.Jobs, func(v store.JobView) error {
			nj.see(v)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return nj.rows(ctx, s)
}

// inputAndNotices reads the jobs f selects into the analysis input with
// the clock at now (inputSized) and, from the same pass, the notices q
// selects (Notices, newest first): the jobs are read once where Input
// and Notices would read them twice. q.Jobs must select the jobs f does.
func (s *Source) inputAndNotices(ctx context.Context, f store.ViewFilter, now time.Time, q NoticeQuery) (analysis.Input, []notice.Row, error) {
	if s.Reader() == nil {
		// Through a client the notices come with the profiles.
		var rows []notice.Row
		in, err := s.inputSized(ctx, f, now, 0, nil, func(v store.JobView) { rows = appendNotices(rows, v, q) })
		if err != nil {
			return analysis.Input{}, nil, err
		}
		sortNotices(rows)
		return in, rows, nil
	}
	nj, err := s.noticeRecords(ctx, q)
	if err != nil {
		return analysis.Input{}, nil, err
	}
	in, err := s.inputSized(ctx, f, now, 0, nil, func(v store.JobView) {
		nj.see(v)
	})
	if err != nil {
		return analysis.Input{}, nil, err
	}
	rows, err := nj.rows(ctx, s)
	return in, rows, err
}

// jobKey names a job: its cluster and raw id.
type jobKey struct{ cluster, id string }

// noticeJobs are the notices read from the database with the view of the
// job each is about, nil until seen.
type noticeJobs struct {
	recs  []store.NoticeRecord
	views map[jobKey]*store.JobView
	seen  int
}

// noticeRecords reads the notices q selects from the database.
func (s *Source) noticeRecords(ctx context.Context, q NoticeQuery) (*noticeJobs, error) {
	recs, err := s.Reader().ListNotices(ctx, store.NoticeFilter{User: q.Jobs.User, Rule: q.Rule, Since: q.Since, Until: q.Until})
	if err != nil {
		return nil, err
	}
	nj := &noticeJobs{recs: recs, views: map[jobKey]*store.JobView{}}
	for _, r := range recs {
		nj.views[jobKey{r.Cluster, r.JobID}] = nil
	}
	return nj, nil
}

// see keeps v when a notice is about it.
func (nj *noticeJobs) see(v store.JobView) {
	k := jobKey{v.Cluster, v.JobID}
	if old, want := nj.views[k]; want {
		if old == nil {
			nj.seen++
		}
		nj.views[k] = &v
	}
}

// rows are the notices with their jobs' Slurm ids and names, newest
// first. A notice may precede its job's first write (the agent claims it
// first), and then has only its own. Jobs not seen are looked up one by
// one when there are few (noticeLookups).
func (nj *noticeJobs) rows(ctx context.Context, s *Source) ([]notice.Row, error) {
	var lookup []jobKey
	if len(nj.views) <= noticeLookups && nj.seen < len(nj.views) {
		for k, v := range nj.views {
			if v == nil {
				lookup = append(lookup, k)
			}
		}
	}
	for _, k := range lookup {
		vs, err := s.Jobs(ctx, store.ViewFilter{Cluster: k.cluster, JobID: k.id, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(vs) > 0 {
			nj.views[k] = &vs[0]
		}
	}
	rows := make([]notice.Row, 0, len(nj.recs))
	for _, r := range nj.recs {
		v := nj.views[jobKey{r.Cluster, r.JobID}]
		row := notice.Row{Cluster: r.Cluster, JobID: r.JobID, SlurmID: r.JobID, Node: r.Node, User: r.User, Notice: r.Notice}
		if v != nil {
			row.SlurmID = v.SlurmID()
			if v.Sched != nil {
				row.JobName = v.Sched.Name
				row.User = cmp.Or(v.Sched.User, row.User)
			}
		}
		rows = append(rows, row)
	}
	sortNotices(rows)
	return rows, nil
}

// collectNotices reads the notices q selects from the profiles of the
// jobs src gives the caller, newest first (ties by cluster, job, node,
// rule). Who sees which jobs is the source's rule: a user sees only
// notices about their own.
func collectNotices(ctx context.Context, src viewReader, q NoticeQuery) ([]notice.Row, error) {
	var rows []notice.Row
	err := src.Each(ctx, q.Jobs, func(v store.JobView) error {
		rows = appendNotices(rows, v, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortNotices(rows)
	return rows, nil
}

// appendNotices appends the notices q selects that v's profiles carry.
func appendNotices(rows []notice.Row, v store.JobView, q NoticeQuery) []notice.Row {
	name, user := "", ""
	if v.Sched != nil {
		name, user = v.Sched.Name, v.Sched.User
	}
	for _, p := range v.Profiles {
		u := cmp.Or(user, p.User)
		for _, n := range p.Notices {
			if q.Rule != "" && n.Rule != q.Rule {
				continue
			}
			if (!q.Since.IsZero() && n.Time.Before(q.Since)) || (!q.Until.IsZero() && !n.Time.Before(q.Until)) {
				continue
			}
			rows = append(rows, notice.Row{Cluster: v.Cluster, JobID: v.JobID, SlurmID: v.SlurmID(), Node: p.Node,
				User: u, JobName: name, Notice: n})
		}
	}
	return rows
}

// sortNotices orders rows newest first, ties by cluster, job id, node and
// rule.
func sortNotices(rows []notice.Row) {
	slices.SortStableFunc(rows, func(a, b notice.Row) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.JobID, b.JobID),
			strings.Compare(a.Node, b.Node), strings.Compare(a.Rule, b.Rule))
	})
}
