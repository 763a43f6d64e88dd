package monthly

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/report"
	"github.com/gpuprof/gpuprof/slurmext"
)

// ParseMonth is the month s names (YYYY-MM, in loc) as the window [its
// first day, the next month's first day); "" is the month before now's.
// The month is the report's unit, so its syntax lives with the pipeline
// that walks months (LastWithJobs, the earlier months compared).
func ParseMonth(s string, now time.Time, loc *time.Location) (analysis.Window, error) {
	var first time.Time
	if s == "" {
		n := now.In(loc)
		first = time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc).AddDate(0, -1, 0)
	} else {
		t, err := time.ParseInLocation("2006-01", s, loc)
		if err != nil {
			return analysis.Window{}, fmt.Errorf("want YYYY-MM, got %q", s)
		}
		first = t
	}
	return analysis.Window{From: first, To: first.AddDate(0, 1, 0)}, nil
}

// Month is a run of gpuprof report: the month chosen and the clusters
// whose jobs it holds, one report each, made in turn (Bind, then Build)
// so that each is written before the next is read.
type Month struct {
	// Window is the month.
	Window analysis.Window
	// Chosen says the month was chosen (Params.Latest): the last
	// complete one with jobs.
	Chosen bool
	// Clusters are the clusters reported on, one report each: the one
	// asked for, else those whose jobs the month holds (none: the one
	// Bind chooses, named "").
	Clusters []string
	sc       jobsource.Scope
	p        Params
	// counted is how many jobs the month's one cluster has, when counted
	// to name it (0: not counted).
	counted int
}

// Reports starts the reports of a month: of p.Cluster, else of each
// cluster whose jobs p.Window holds. With p.Latest, the month is the last
// complete one with jobs at or before p.Window (LastWithJobs). sc is the
// caller's scope, not yet bound; the rest of p is each report's (Build).
func Reports(ctx context.Context, sc jobsource.Scope, p Params) (*Month, error) {
	cluster := slurmext.NormalClusterName(p.Cluster)
	m := &Month{Window: p.Window, sc: sc, p: p}
	if p.Latest {
		// Not the month before now blindly: the last complete one that has
		// jobs (a database whose last month is idle would give an empty
		// report), by the rule every analysing command defaults to.
		rule, err := analysis.WindowGiven, error(nil)
		if m.Window, rule, err = defaultFrom(ctx, sc, m.Window, cluster); err != nil {
			return nil, err
		}
		if rule != analysis.WindowLastMonth {
			// A report is of a month: the data's span, the rule's other
			// answer, is no month.
			return nil, fmt.Errorf("no jobs in the %d complete months up to %s: nothing to report (choose a month with --month: the current month so far is --month %s; gpuprof plan plans on the data's span)",
				monthsBack, p.Window.From.Format("2006-01"), p.Window.To.Format("2006-01"))
		}
		m.p.Rule, m.Chosen = rule, true
	}
	// A report is of one cluster: each cluster of the month in turn.
	m.Clusters = []string{cluster}
	if cluster == "" {
		var err error
		if m.Clusters, m.counted, err = sc.Clusters(ctx, jobsource.Query{Window: m.Window}); err != nil {
			return nil, err
		}
		if len(m.Clusters) == 0 {
			m.Clusters = []string{""}
		}
	}
	return m, nil
}

// Bind binds the scope to the i'th of m.Clusters (its Conf says whether
// and why its slurm.conf is used).
func (m *Month) Bind(ctx context.Context, i int) (jobsource.Scope, error) {
	b, err := m.sc.Bind(ctx, jobsource.Query{Window: m.Window}, m.Clusters[i])
	if err != nil {
		return b, err
	}
	if len(m.Clusters) == 1 && b.Cluster == m.Clusters[i] {
		// The count that named the month's one cluster sizes its read.
		b.Jobs = max(b.Jobs, m.counted)
	}
	return b, nil
}

// Build makes the report of the i'th cluster, bound by Bind, and the
// suffix of its file names ("" for a report of the month's one cluster,
// report.ClusterSuffix for one of several).
func (m *Month) Build(ctx context.Context, bound jobsource.Scope, i int) (report.Data, string, error) {
	q := m.p
	q.Window = m.Window
	d, err := Build(ctx, bound, q)
	suffix := ""
	if len(m.Clusters) > 1 {
		suffix = report.ClusterSuffix(m.Clusters[i])
	}
	return d, suffix, err
}

// originOf says where the report's jobs came from (Build adds the
// slurm.conf and inventory notes).
func originOf(sc jobsource.Scope) report.Sources {
	var s report.Sources
	s.Collector, s.Database = sc.Collector, sc.Database
	if uid, scoped := sc.ScopedUID(); scoped {
		s.Notes = append(s.Notes, fmt.Sprintf("only the jobs of %s (uid %d): the reader is not an admin", sc.Caller.User, uid))
	}
	return s
}
