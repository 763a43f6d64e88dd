package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
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
	fs.StringVar(&o.Rule, "rule", "", "only notices of this rule: "+strings.Join(profile.NoticeRules(), ", "))
	fs.BoolVar(&o.Local, "local", false, "read this host's notices (the local database, or the agent's query socket) even when a collector is configured")
}

// noticeQuery is what gpuprof notices selects: the jobs to read (by
// user and time) and, of their notices, those decided in [since, until)
// of rule ("" any).
type noticeQuery struct {
	jobs         store.ViewFilter
	since, until time.Time
	rule         string
}

// query checks the flags; every malformed value is a usage error.
func (o *noticesOptions) query(now time.Time) (noticeQuery, error) {
	q := noticeQuery{rule: strings.TrimSpace(o.Rule)}
	if q.rule != "" && !slices.Contains(profile.NoticeRules(), q.rule) {
		return q, usagef("--rule %q: want one of %s", termtext.Short(o.Rule, 40), strings.Join(profile.NoticeRules(), ", "))
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

// noticeRow is one notice with the job it is about (notice.Row), as
// listNotices returns it.
type noticeRow = notice.Row

// listNotices reads the notices q selects that the caller may see, newest
// first (jobsource.Source.Notices).
func listNotices(ctx context.Context, src *jobsource.Source, q noticeQuery) ([]noticeRow, error) {
	return src.Notices(ctx, jobsource.NoticeQuery{Jobs: q.jobs, Since: q.since, Until: q.until, Rule: q.rule})
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
				return cliview.NoticesJSON(cmd.OutOrStdout(), rows)
			}
			return cliview.Notices(cmd.OutOrStdout(), rows, q.since, nil)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(newNoticesDigestCommand(g))
	return cmd
}
