package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/report"
	"github.com/gpuprof/gpuprof/termtext"
)

type reportOptions struct {
	Month     string
	Out       string
	Formats   []string
	Anonymize bool
	Compare   int
	Top       int
	Config    string
	Local     bool
	Title     string
	Cluster   string
	// Quiet hides the simulated plan's progress (shown on a terminal).
	Quiet bool
}

func newReportCommand(g *globalOptions) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Monthly workload report for purchasing decisions (HTML with charts, Markdown, JSON)",
		Long: `Writes the month's workload report: GPU-hours allocated and used, queue wait
per partition, work by task class, account and user, bottlenecks, the
notices sent to users about idle or oversized GPUs and the GPU time they
freed (docs/notices.md), GPU-hours lost to failed, timed-out and cancelled
jobs, the month against earlier
months, the capacity plan on a replay of the queue (as gpuprof plan makes
it: its verdict, each recommendation's simulated effect, the smallest
purchase per GPU model with a chart of the predicted wait against GPUs
added, the month growth breaks the target and the order-by date, buy
against rent, and Little's law as the cross-check by averages), the
recommendations with their configuration, and how every number was
computed. The plan takes the [plan] section of --analysis-config; it
replays every user's jobs, so for a user who is not an admin it is not
simulated and the report says so.

The HTML is one self-contained file (charts as inline SVG, no scripts, no
network) that prints to PDF; the Markdown is for wikis and mail; the JSON
(docs/json.md) for other tools. Every number comes from the analysis
(docs/analysis.md); the report only presents it. A user who is not an admin
gets a report of their own jobs.

A report is of one cluster, with that cluster's own slurm.conf (a
slurm.conf whose ClusterName is another cluster's is not used, and the
report says so; docs/configuration.md). A month holding jobs of several
clusters gives one report per cluster, gpuprof-report-MONTH-CLUSTER.*;
--cluster writes only that cluster's.`,
		Example: `  gpuprof report --month 2026-11 --out /srv/reports
  gpuprof report --month 2026-11 --format md --anonymize`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), g, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Month, "month", "", "the month, YYYY-MM, in the local time zone (default: the last complete month with jobs, the window plan, recommend, whatif and profiles read without --since/--until)")
	fs.StringVar(&o.Out, "out", ".", "directory for the report files")
	fs.StringSliceVar(&o.Formats, "format", []string{"html", "md", "json"}, "formats to write: html, md, json (comma-separated)")
	fs.BoolVar(&o.Anonymize, "anonymize", false, "replace user and account names with user-01…, account-01… throughout")
	fs.IntVar(&o.Compare, "compare", monthly.CompareMonths, "compare with up to this many earlier months (those with jobs)")
	fs.IntVar(&o.Top, "top", 10, "users and accounts listed by name")
	fs.StringVar(&o.Config, "analysis-config", "", "analysis thresholds (TOML, see contrib/analysis.toml.example; default: built-in)")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.StringVar(&o.Title, "title", "", "report title (default: \"GPU workload report, <Month YYYY>\")")
	fs.StringVar(&o.Cluster, "cluster", "", "the cluster to report on (default: each cluster whose jobs the month holds, a report for each)")
	fs.BoolVar(&o.Quiet, "quiet", false, "do not show the queue replay's progress (shown on a terminal's stderr when the plan runs over 2 s)")
	return cmd
}

// parseMonth is monthly.ParseMonth, whose error is --month's usage error
// (report and what-if take --month).
func parseMonth(s string, now time.Time, loc *time.Location) (analysis.Window, error) {
	w, err := monthly.ParseMonth(s, now, loc)
	if err != nil {
		return w, usagef("--month: %v", err)
	}
	return w, nil
}

func (o *reportOptions) run(ctx context.Context, g *globalOptions, stdout, stderr io.Writer) error {
	w, err := parseMonth(o.Month, time.Now(), time.Local)
	if err != nil {
		return err
	}
	formats, err := report.Formats(o.Formats)
	if err != nil {
		return usagef("--format: %v", err)
	}
	if o.Top < 1 {
		return usagef("--top: want at least 1, got %d", o.Top)
	}
	if o.Compare < 0 {
		return usagef("--compare: want 0 or more, got %d", o.Compare)
	}
	c, err := analysis.ConfigAt(o.Config)
	if err != nil {
		return err
	}
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return err
	}
	defer src.Close()
	carbon, err := carbonOf(src.Config().Carbon)
	if err != nil {
		return err
	}
	m, err := monthly.Reports(ctx, src.Scope(), monthly.Params{
		Window: w, Latest: o.Month == "", Cluster: o.Cluster, Title: o.Title, Top: o.Top, Compare: o.Compare,
		Anonymize: o.Anonymize, Config: c, Carbon: carbon,
		Progress: cliview.PlanProgressOn{W: stderr, On: !o.Quiet && isTerminal(stderr)},
	})
	if err != nil {
		return err
	}
	if m.Chosen {
		printf(stdout, "No --month: reporting %s, the last complete month with jobs.\n", m.Window.From.Format("2006-01"))
	}
	if len(m.Clusters) > 1 {
		printf(stdout, "The month holds jobs of %d clusters (%s): one report each.\n", len(m.Clusters), termtext.Clean(strings.Join(m.Clusters, ", ")))
	}
	for i := range m.Clusters {
		b, err := m.Bind(ctx, i)
		if err != nil {
			return err
		}
		cliview.WriteConfNote(stdout, b.ConfUse())
		d, suffix, err := m.Build(ctx, b, i)
		if err != nil {
			return err
		}
		if err := report.WriteFiles(o.Out, formats, d, suffix, func(path string) { printf(stdout, "%s\n", path) }); err != nil {
			return err
		}
	}
	return nil
}
