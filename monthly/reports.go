package monthly

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
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

// Reader is who reads the jobs, and from where.
type Reader struct {
	// Collector is the collector's URL, Database the local database's
	// path ("" when the jobs are not read there).
	Collector, Database string
	// Admin says the reader may read every user's jobs; User names them.
	Admin bool
	User  string
	// Scoped says the local reads are of UID's jobs only.
	Scoped bool
	UID    int
}

// Bound is the cluster a report is of, its slurm.conf bound to what the
// Source reads.
type Bound struct {
	Cluster string
	// Conf says whether and why the cluster's slurm.conf is used.
	Conf analysis.ConfUse
	// WhatIf are its nodes and scheduler for the replay.
	WhatIf capacity.WhatIfParams
	// Jobs is how many jobs of the cluster w holds, when they were
	// counted to choose it (0: not counted).
	Jobs int
}

// ClusterSource is a Source that also names the clusters of a month and
// binds one cluster's slurm.conf: what Reports reads through.
type ClusterSource interface {
	Source
	// Reader is who reads, and from where.
	Reader() Reader
	// Clusters names the clusters of the jobs in w, sorted, and, when
	// they are one, how many jobs it has there (0: not counted).
	Clusters(ctx context.Context, w analysis.Window) ([]string, int, error)
	// Bind chooses the cluster of a report of w (cluster; "": the one of
	// w's jobs, else the database's or this host's) and binds its
	// slurm.conf, so that Input reads it.
	Bind(ctx context.Context, w analysis.Window, cluster string) (Bound, error)
}

// Out is what Reports tells its caller, who prints and writes.
type Out struct {
	// Chosen is told the month chosen when Params.Latest asked for one.
	Chosen func(w analysis.Window)
	// Several is told the clusters when the month holds jobs of several
	// (one report each).
	Several func(clusters []string)
	// Bound is told how each cluster's slurm.conf is used, as it is bound.
	Bound func(analysis.ConfUse)
	// Write takes each report as it is made; suffix ends its file names
	// ("" for a report of the month's one cluster, report.ClusterSuffix
	// for one of several).
	Write func(d report.Data, suffix string) error
}

// Reports makes the reports of a month: of p.Cluster, else of each
// cluster whose jobs p.Window holds (one each; none: the cluster Bind
// chooses). With p.Latest, the month is the last complete one with jobs
// at or before p.Window (LastWithJobs). Who reads (Admin, User, Sources)
// comes from src.Reader and each cluster's slurm.conf from src.Bind; the
// rest of p is each report's (Build).
func Reports(ctx context.Context, src ClusterSource, p Params, out Out) error {
	cluster := slurmext.NormalClusterName(p.Cluster)
	w := p.Window
	if p.Latest {
		// Not the month before now blindly: the last complete one that has
		// jobs (a database whose last month is idle would give an empty
		// report), by the rule every analysing command defaults to.
		rule, err := analysis.WindowGiven, error(nil)
		if w, rule, err = defaultFrom(ctx, src, w, cluster); err != nil {
			return err
		}
		if rule != analysis.WindowLastMonth {
			// A report is of a month: the data's span, the rule's other
			// answer, is no month.
			return fmt.Errorf("no jobs in the %d complete months up to %s: nothing to report (choose a month with --month: the current month so far is --month %s; gpuprof plan plans on the data's span)",
				monthsBack, p.Window.From.Format("2006-01"), p.Window.To.Format("2006-01"))
		}
		p.Rule = rule
		if out.Chosen != nil {
			out.Chosen(w)
		}
	}
	// A report is of one cluster: each cluster of the month in turn.
	clusters, counted := []string{cluster}, 0
	if cluster == "" {
		var err error
		if clusters, counted, err = src.Clusters(ctx, w); err != nil {
			return err
		}
		if len(clusters) == 0 {
			clusters = []string{""}
		}
	}
	if len(clusters) > 1 && out.Several != nil {
		out.Several(clusters)
	}
	r := src.Reader()
	for _, cl := range clusters {
		b, err := src.Bind(ctx, w, cl)
		if err != nil {
			return err
		}
		if out.Bound != nil {
			out.Bound(b.Conf)
		}
		q := p
		q.Window, q.Cluster, q.WhatIf = w, b.Cluster, b.WhatIf
		q.Admin, q.User, q.Sources = r.Admin, r.User, originOf(r)
		q.Jobs = b.Jobs
		if len(clusters) == 1 && b.Cluster == cl {
			// The count that named the month's one cluster sizes its read.
			q.Jobs = max(q.Jobs, counted)
		}
		d, err := Build(ctx, src, q)
		if err != nil {
			return err
		}
		suffix := ""
		if len(clusters) > 1 {
			suffix = report.ClusterSuffix(cl)
		}
		if err := out.Write(d, suffix); err != nil {
			return err
		}
	}
	return nil
}

// originOf says where the report's jobs came from (Build adds the
// slurm.conf and inventory notes).
func originOf(r Reader) report.Sources {
	var s report.Sources
	s.Collector, s.Database = r.Collector, r.Database
	if r.Scoped {
		s.Notes = append(s.Notes, fmt.Sprintf("only the jobs of %s (uid %d): the reader is not an admin", r.User, r.UID))
	}
	return s
}
