package jobsource

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

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
	reader := s.Reader()
	if reader == nil {
		return collectNotices(ctx, s, q)
	}
	recs, err := reader.ListNotices(ctx, store.NoticeFilter{User: q.Jobs.User, Rule: q.Rule, Since: q.Since, Until: q.Until})
	if err != nil {
		return nil, err
	}
	// The job's Slurm id and name, from its view; a notice may precede its
	// job's first write (the agent claims it first), and then has only
	// its own.
	type jobKey struct{ cluster, id string }
	views := map[jobKey]*store.JobView{}
	for _, r := range recs {
		views[jobKey{r.Cluster, r.JobID}] = nil
	}
	if len(views) > noticeLookups {
		// Many jobs: one pass over the window's jobs beats a query each.
		err := s.Each(ctx, q.Jobs, func(v store.JobView) error {
			if _, want := views[jobKey{v.Cluster, v.JobID}]; want {
				views[jobKey{v.Cluster, v.JobID}] = &v
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		for k := range views {
			vs, err := s.Jobs(ctx, store.ViewFilter{Cluster: k.cluster, JobID: k.id, Limit: 1})
			if err != nil {
				return nil, err
			}
			if len(vs) > 0 {
				views[k] = &vs[0]
			}
		}
	}
	rows := make([]notice.Row, 0, len(recs))
	for _, r := range recs {
		v := views[jobKey{r.Cluster, r.JobID}]
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
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortNotices(rows)
	return rows, nil
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
