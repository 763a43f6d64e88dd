package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// noticesOptions are the flags of gpuprof notices.
type noticesOptions struct {
	Since string
	Until string
	JSON  bool
	User  string
	Rule  string
	Local bool
}

func (o *noticesOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Since, "since", "", "only notices decided at or after this time: "+strings.TrimPrefix(sinceHelp, "only jobs running at or after this time: "))
	fs.StringVar(&o.Until, "until", "", "only notices decided before this time (the forms of --since)")
	fs.BoolVar(&o.JSON, "json", false, "print the notices as a JSON array (see docs/notices.md)")
	fs.StringVar(&o.User, "user", "", "only notices about this user's jobs")
	fs.StringVar(&o.Rule, "rule", "", "only notices of this rule: "+strings.Join(noticeRuleNames(), ", "))
	fs.BoolVar(&o.Local, "local", false, "read this host's notices (the local database, or the agent's query socket) even when a collector is configured")
}

// noticeRuleNames are the rules --rule takes.
func noticeRuleNames() []string {
	return []string{profile.RuleIdleGPU, profile.RuleIdleJob, profile.RuleOversized, profile.RuleUnusedGPUs, profile.RuleCancel}
}

// noticeQuery is what gpuprof notices selects: the jobs to read (by
// user and time) and, of their notices, those decided in [since, until)
// of rule ("" any).
type noticeQuery struct {
	jobs         store.ViewFilter
	since, until time.Time
	rule         string
}

// noticeFilter is q as the store's notices table is asked.
func (q noticeQuery) noticeFilter() store.NoticeFilter {
	return store.NoticeFilter{User: q.jobs.User, Rule: q.rule, Since: q.since, Until: q.until}
}

// query checks the flags; every malformed value is a usage error.
func (o *noticesOptions) query(now time.Time) (noticeQuery, error) {
	q := noticeQuery{rule: strings.TrimSpace(o.Rule)}
	if q.rule != "" && !slices.Contains(noticeRuleNames(), q.rule) {
		return q, usagef("--rule %q: want one of %s", clean(o.Rule, 40), strings.Join(noticeRuleNames(), ", "))
	}
	var err error
	if q.since, q.until, err = timeWindow(o.Since, o.Until, now); err != nil {
		return q, err
	}
	// A notice is decided while its job runs: the jobs running in the
	// window hold every notice of the window.
	q.jobs = store.ViewFilter{User: o.User, Since: q.since, Until: q.until}
	return q, nil
}

// noticeRow is one notice with the job it is about, as gpuprof notices
// lists it and --json prints it (docs/notices.md): the notice's own
// fields (rule, time, since, gpus, recipient, status, evidence, fix,
// detail) beside the job's.
type noticeRow struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"`
	// SlurmID is the job as Slurm shows it (53_1, 60+1); JobID the raw id.
	SlurmID string `json:"slurm_id"`
	Node    string `json:"node"`
	User    string `json:"user"`
	JobName string `json:"job_name,omitempty"`
	profile.Notice
}

// viewReader is the part of jobsource.Source gpuprof notices reads: every job a
// filter selects, scoped to the caller (see jobsource.Source).
type viewReader interface {
	Each(ctx context.Context, f store.ViewFilter, fn func(store.JobView) error) error
}

// noticeLookups is how many jobs listNotices looks up one by one; more are
// read in one pass over the window's jobs.
const noticeLookups = 100

// listNotices reads the notices q selects that the caller may see, newest
// first (ties by cluster, job, node, rule): from the database's notices
// table when src reads the database (scoped to the caller's uid like its
// jobs, see jobsource.Source), else from the profiles the collector or the
// agent's query socket serves, which carry their notices and are scoped
// there.
func listNotices(ctx context.Context, src *jobsource.Source, q noticeQuery) ([]noticeRow, error) {
	reader := src.Reader()
	if reader == nil {
		return collectNotices(ctx, src, q)
	}
	recs, err := reader.ListNotices(ctx, q.noticeFilter())
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
		err := src.Each(ctx, q.jobs, func(v store.JobView) error {
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
			vs, err := src.Jobs(ctx, store.ViewFilter{Cluster: k.cluster, JobID: k.id, Limit: 1})
			if err != nil {
				return nil, err
			}
			if len(vs) > 0 {
				views[k] = &vs[0]
			}
		}
	}
	rows := make([]noticeRow, 0, len(recs))
	for _, r := range recs {
		v := views[jobKey{r.Cluster, r.JobID}]
		row := noticeRow{Cluster: r.Cluster, JobID: r.JobID, SlurmID: r.JobID, Node: r.Node, User: r.User, Notice: r.Notice}
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
func collectNotices(ctx context.Context, src viewReader, q noticeQuery) ([]noticeRow, error) {
	var rows []noticeRow
	err := src.Each(ctx, q.jobs, func(v store.JobView) error {
		name, user := "", ""
		if v.Sched != nil {
			name, user = v.Sched.Name, v.Sched.User
		}
		for _, p := range v.Profiles {
			u := cmp.Or(user, p.User)
			for _, n := range p.Notices {
				if q.rule != "" && n.Rule != q.rule {
					continue
				}
				if (!q.since.IsZero() && n.Time.Before(q.since)) || (!q.until.IsZero() && !n.Time.Before(q.until)) {
					continue
				}
				rows = append(rows, noticeRow{Cluster: v.Cluster, JobID: v.JobID, SlurmID: v.SlurmID(), Node: p.Node,
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
func sortNotices(rows []noticeRow) {
	slices.SortStableFunc(rows, func(a, b noticeRow) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.JobID, b.JobID),
			strings.Compare(a.Node, b.Node), strings.Compare(a.Rule, b.Rule))
	})
}

func newNoticesCommand(g *globalOptions) *cobra.Command {
	o := &noticesOptions{}
	cmd := &cobra.Command{
		Use:   "notices",
		Short: "List the notices sent to users about idle or oversized GPU allocations, and why",
		Long: `Lists the notices the agents decided about running jobs, newest first:
when, which job and user, the rule (an idle GPU, every GPU of the job
idle, a small share of a large GPU, several GPUs asked for and one used,
the idle-job cancel action), the GPUs, what became of it (sent, or why
not: daily cap, opted out, no address, mail failed; the cancel action's
outcome), what was seen and the sbatch option that would avoid it.

A user who is not root or in admin_group sees only notices about their own
jobs, read the way gpuprof jobs reads them: from gpuprof serve with
"collector" configured (munge), else from the local database, or through
the agent's query socket. See docs/notices.md.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := o.query(time.Now())
			if err != nil {
				return err
			}
			src, err := openSource(cmd.Context(), g, o.Local)
			if err != nil {
				return err
			}
			defer src.Close()
			rows, err := listNotices(cmd.Context(), src, q)
			if err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(cmd.OutOrStdout(), nonNilRows(rows))
			}
			return writeNotices(cmd.OutOrStdout(), rows, q, nil)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(newNoticesDigestCommand(g))
	return cmd
}

func nonNilRows(rows []noticeRow) []noticeRow {
	if rows == nil {
		return []noticeRow{}
	}
	return rows
}

// writeNotices prints rows, each as a heading line (time, job, node,
// user, rule in words, GPUs, status in words) with what was seen, the fix
// and, for a notice not sent, why, on the lines below; then how many of
// each status. Instants are sacct's, in loc (nil: local).
func writeNotices(w io.Writer, rows []noticeRow, q noticeQuery, loc *time.Location) error {
	if len(rows) == 0 {
		switch {
		case !q.since.IsZero():
			printf(w, "No notices since %s.\n", slurmext.FormatTime(q.since, loc))
		default:
			printf(w, "No notices.\n")
		}
		return nil
	}
	for i, r := range rows {
		if i > 0 {
			printf(w, "\n")
		}
		job := "job " + clean(r.SlurmID, 64)
		if r.SlurmID != r.JobID {
			job += " (raw id " + clean(r.JobID, 64) + ")"
		}
		gpus := "GPUs -"
		if len(r.GPUs) > 0 {
			gpus = "GPU"
			if len(r.GPUs) > 1 {
				gpus = "GPUs"
			}
			gpus += " " + slurmext.FormatIndexList(r.GPUs)
		}
		status := analysis.NoticeStatusWords(r.Status)
		if r.Status == profile.NoticeSent && r.Recipient != "" {
			status += " to " + clean(r.Recipient, 120)
		}
		printf(w, "%s  %s on %s  user %s  %s  %s  %s\n", slurmext.FormatTime(r.Time, loc), job, clean(r.Node, 64),
			orDash(clean(r.User, 32)), analysis.NoticeRuleWords(r.Rule), gpus, clean(status, 200))
		if r.JobName != "" {
			printf(w, "    job name:  %s\n", clean(r.JobName, 120))
		}
		if r.Evidence != "" {
			printf(w, "    seen:      %s\n", clean(r.Evidence, 600))
		}
		if !r.Since.IsZero() {
			printf(w, "    since:     %s\n", slurmext.FormatTime(r.Since, loc))
		}
		if r.Fix != "" {
			printf(w, "    next time: %s\n", clean(r.Fix, 200))
		}
		if r.Detail != "" {
			printf(w, "    detail:    %s\n", clean(r.Detail, 400))
		}
	}
	printf(w, "\n%s\n", noticeCounting(rows))
	return nil
}

// noticeCounting is the last line of the listing: "3 notices: 2 sent, 1
// not sent: daily cap".
func noticeCounting(rows []noticeRow) string {
	counts := map[string]int{}
	var order []string
	for _, r := range rows {
		if counts[r.Status] == 0 {
			order = append(order, r.Status)
		}
		counts[r.Status]++
	}
	slices.SortFunc(order, func(a, b string) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(a, b))
	})
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[s], analysis.NoticeStatusWords(s))
	}
	word := "notices"
	if len(rows) == 1 {
		word = "notice"
	}
	return fmt.Sprintf("%d %s: %s", len(rows), word, strings.Join(parts, ", "))
}
