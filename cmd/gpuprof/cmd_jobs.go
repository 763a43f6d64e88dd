package main

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

type jobsOptions struct {
	JSON      bool
	User      string
	Account   string
	Partition string
	State     string
	Since     string
	Until     string
	Limit     int
	Text      string
	Sort      string
	Asc       bool
	Local     bool
	// Format is sacct-style --format: the table's columns (see
	// cliview.ParseJobsFormat); "help" lists them, as does HelpFormat.
	Format     string
	HelpFormat bool
	// AnalysisConfig holds the thresholds GPUS and UTIL are derived
	// under (classes.idle_util_max), as show and tui take them.
	AnalysisConfig string
}

func (o *jobsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print jobs as JSON (see docs/json.md)")
	fs.StringVar(&o.User, "user", "", "only jobs of this user")
	fs.StringVar(&o.Account, "account", "", "only jobs of this account")
	fs.StringVar(&o.Partition, "partition", "", "only jobs in this partition")
	fs.StringVar(&o.State, "state", "", "only jobs in this state, as sacct --state names it (COMPLETED or CD, FAILED or F, TIMEOUT or TO, …); running or finished also match jobs known only from profiles")
	fs.StringVar(&o.Since, "since", "", sinceHelp)
	fs.StringVar(&o.Until, "until", "", untilHelp)
	fs.IntVar(&o.Limit, "limit", 0, "at most this many jobs (0: all)")
	fs.StringVar(&o.Text, "text", "", "only jobs whose name, Slurm job id (53_1, 60+1) or raw job id contains this (case-insensitive)")
	fs.StringVar(&o.Sort, "sort", "", "order by one of: "+strings.Join(store.SortKeys(), ", ")+" (default start, newest first)")
	fs.BoolVar(&o.Asc, "reverse", false, "reverse the sort key's default direction")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.StringVarP(&o.Format, "format", "o", "", "the table's columns as sacct's --format takes them: names separated by commas, case-insensitive, each with an optional width (name%30 right-aligned, name%-30 left-aligned, a longer value cut with \"+\"); help lists them (default "+cliview.DefaultJobsFormat+")")
	fs.BoolVar(&o.HelpFormat, "helpformat", false, "list the columns --format takes and exit, as sacct --helpformat does")
	fs.StringVar(&o.AnalysisConfig, "analysis-config", "", "analysis thresholds (TOML; default: built in) for the GPUs used (idle_util_max), as show and tui take them")
}

// Help of the --since and --until flags every command that selects jobs
// by time shares.
const (
	sinceHelp = "only jobs running at or after this time: sacct's -S forms (2026-03-01[T08:30[:00]], 03/01[/26], now-7days, today, midnight, noon, 08:30, …), RFC 3339, or a span before now (30m, 12h, 7d, 2w)"
	untilHelp = "only jobs running before this time (the forms of --since)"
)

// filter checks the flags and turns them into the store's filter. Every
// malformed value is a usage error that says what is accepted.
func (o *jobsOptions) filter() (store.ViewFilter, error) {
	f := store.ViewFilter{User: o.User, Account: o.Account, Partition: o.Partition, Limit: o.Limit,
		Text: o.Text, Sort: o.Sort, Asc: o.Asc, WithSeries: o.JSON}
	if _, ok := store.SortDescending(o.Sort); !ok {
		return f, usagef("--sort: want one of %s, got %q", strings.Join(store.SortKeys(), ", "), o.Sort)
	}
	if o.Limit < 0 {
		return f, usagef("--limit %d: want 0 (every job) or a positive number of jobs", o.Limit)
	}
	var err error
	if f.State, err = store.ParseStateFilter(o.State); err != nil {
		return f, usagef("--state: %w", err)
	}
	if f.Since, f.Until, err = timeWindow(o.Since, o.Until, time.Now()); err != nil {
		return f, err
	}
	return f, nil
}

// timeWindow parses --since and --until (either may be empty: an open
// end) and refuses a window that ends before it begins.
func timeWindow(since, until string, now time.Time) (from, to time.Time, err error) {
	if since != "" {
		if from, err = slurmext.ParseTimeSpec(since, now); err != nil {
			return from, to, usagef("--since: %v", err)
		}
	}
	if until != "" {
		if to, err = slurmext.ParseTimeSpec(until, now); err != nil {
			return from, to, usagef("--until: %v", err)
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return from, to, usagef("--since %s (%s) is not before --until %s (%s): no job runs in that window; swap them or widen it",
			termtext.Short(since, 40), slurmext.FormatTime(from, nil), termtext.Short(until, 40), slurmext.FormatTime(to, nil))
	}
	return from, to, nil
}

func newJobsCommand(g *globalOptions) *cobra.Command {
	o := &jobsOptions{}
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List jobs — scheduler view and GPU profiles — newest first",
		Long: `Lists jobs newest first, each with the scheduler's view (from jobcomp or an
sacct import) and the GPU profile of every node it ran on, and says which
part is missing. A user who is not root or in admin_group sees only their
own jobs. With "collector" configured the list comes from gpuprof serve
(authenticated with munge), else from the local database, or, for a user
who cannot open it, through the agent's query socket (query_socket), which
answers with that user's own jobs.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.HelpFormat || strings.EqualFold(strings.TrimSpace(o.Format), "help") {
				return cliview.JobsFormatHelp(cmd.OutOrStdout())
			}
			fields, err := cliview.ParseJobsFormat(o.Format)
			if err != nil {
				return usagef("%w", err)
			}
			f, err := o.filter()
			if err != nil {
				return err
			}
			c, err := analysis.ConfigAt(o.AnalysisConfig)
			if err != nil {
				return err
			}
			views, err := listViews(cmd.Context(), g, f, o.Local)
			if err != nil {
				return err
			}
			if o.JSON {
				return cliview.WriteJSON(cmd.OutOrStdout(), cliview.JobsJSON(views, c, time.Now()))
			}
			return cliview.JobsTable(cmd.OutOrStdout(), views, fields, c, time.Now())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// sortBySlurmID orders views by cluster, then as Slurm lists jobs (53_1,
// 53_2, 53_10; slurmext.CompareJobIDs), then by raw id.
func sortBySlurmID(views []store.JobView) {
	slices.SortStableFunc(views, func(a, b store.JobView) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), slurmext.CompareJobIDs(a.SlurmID(), b.SlurmID()), strings.Compare(a.JobID, b.JobID))
	})
}

func newIngestCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest",
		Short: "Write spooled records (kept while the database was busy) into the database",
		Long: `Hooks and jobcomp never write the database: they spool. The agent (on a GPU
node) and serve (on a collector) store the spool on their own; where neither
runs, gpuprof-import.service runs this before each sacct import. Run it by
hand when the agent is stopped and the spool directory holds records.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			db, err := store.Open(cmd.Context(), cfg.DB, store.Options{BusyTimeout: 5 * time.Second})
			if err != nil {
				return err
			}
			defer db.Close()
			log, closeLog := newLogger(cfg.LogFile, os.Stderr, g.Level(), "component", "ingest")
			defer closeLog()
			n, err := ingest.DrainSpool(cmd.Context(), db, spool.Dir{Path: cfg.SpoolDir}, ingest.Options{Outbox: cfg.Collector != ""}, log)
			printf(cmd.OutOrStdout(), "%d records ingested\n", n)
			return err
		},
	}
}

// listViews reads the jobs f selects from the configured source; see
// jobsource.Source for who sees what.
func listViews(ctx context.Context, g *globalOptions, f store.ViewFilter, local bool) ([]store.JobView, error) {
	src, err := openSource(ctx, g, local)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return src.Jobs(ctx, f)
}
