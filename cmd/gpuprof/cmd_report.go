package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/report"
	"github.com/gpuprof/gpuprof/store"
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
	fs.StringVar(&o.Month, "month", "", "the month, YYYY-MM, in the local time zone (default: the last complete month with jobs)")
	fs.StringVar(&o.Out, "out", ".", "directory for the report files")
	fs.StringSliceVar(&o.Formats, "format", []string{"html", "md", "json"}, "formats to write: html, md, json (comma-separated)")
	fs.BoolVar(&o.Anonymize, "anonymize", false, "replace user and account names with user-01…, account-01… throughout")
	fs.IntVar(&o.Compare, "compare", 6, "compare with up to this many earlier months (those with jobs)")
	fs.IntVar(&o.Top, "top", 10, "users and accounts listed by name")
	fs.StringVar(&o.Config, "analysis-config", "", "analysis thresholds (TOML, see contrib/analysis.toml.example; default: built-in)")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.StringVar(&o.Title, "title", "", "report title (default: \"GPU workload report, <Month YYYY>\")")
	fs.StringVar(&o.Cluster, "cluster", "", "the cluster to report on (default: each cluster whose jobs the month holds, a report for each)")
	fs.BoolVar(&o.Quiet, "quiet", false, "do not show the queue replay's progress (shown on a terminal's stderr when the plan runs over 2 s)")
	return cmd
}

// parseMonth returns the month's window [first day, first day of the next
// month) in loc; "" is the month before now's.
func parseMonth(s string, now time.Time, loc *time.Location) (analysis.Window, error) {
	var first time.Time
	if s == "" {
		n := now.In(loc)
		first = time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc).AddDate(0, -1, 0)
	} else {
		t, err := time.ParseInLocation("2006-01", s, loc)
		if err != nil {
			return analysis.Window{}, usagef("--month: want YYYY-MM, got %q", s)
		}
		first = t
	}
	return analysis.Window{From: first, To: first.AddDate(0, 1, 0)}, nil
}

func (o *reportOptions) run(ctx context.Context, g *globalOptions, stdout, stderr io.Writer) error {
	w, err := parseMonth(o.Month, time.Now(), time.Local)
	if err != nil {
		return err
	}
	formats, err := reportFormats(o.Formats)
	if err != nil {
		return err
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
	cluster := strings.ToLower(strings.TrimSpace(o.Cluster))
	if o.Month == "" {
		// Not the month before now blindly: the last complete one that has
		// jobs (a database whose last month is idle would give an empty
		// report).
		if w, err = monthly.LastWithJobs(ctx, src.Monthly(), w, cluster); err != nil {
			return err
		}
		printf(stdout, "No --month: reporting %s, the last complete month with jobs.\n", w.From.Format("2006-01"))
	}
	// A report is of one cluster: each cluster of the month in turn.
	clusters := []string{cluster}
	if cluster == "" {
		if clusters, err = src.Clusters(ctx, store.ViewFilter{Since: w.From, Until: w.To}); err != nil {
			return err
		}
		if len(clusters) == 0 {
			clusters = []string{""}
		}
	}
	if len(clusters) > 1 {
		printf(stdout, "The month holds jobs of %d clusters (%s): one report each.\n", len(clusters), termtext.Clean(strings.Join(clusters, ", ")))
	}
	for _, cl := range clusters {
		suffix := ""
		if len(clusters) > 1 {
			suffix = "-" + fileSafe(cl)
		}
		if err := o.one(ctx, src, w, cl, suffix, c, formats, stdout, stderr); err != nil {
			return err
		}
	}
	return nil
}

// one writes the report of cluster ("" for the one of the month's jobs,
// or this host's when there are none) in each format, to
// gpuprof-report-MONTH<suffix>.<format>.
func (o *reportOptions) one(ctx context.Context, src *jobsource.Source, w analysis.Window, cluster, suffix string, c analysis.Config, formats []string, stdout, stderr io.Writer) error {
	f := store.ViewFilter{Since: w.From, Until: w.To}
	if err := src.ForCluster(ctx, &f, cluster); err != nil {
		return err
	}
	cliview.WriteConfNote(stdout, src.Conf().Use)
	carbon, err := carbonOf(src.Config().Carbon)
	if err != nil {
		return err
	}
	progress := !o.Quiet && isTerminal(stderr)
	d, err := monthly.Build(ctx, src.Monthly(), monthly.Params{
		Window: w, Cluster: f.Cluster, Title: o.Title, Top: o.Top, Compare: o.Compare, Anonymize: o.Anonymize,
		Config: c, Admin: src.Identity().Admin, User: src.Identity().User, WhatIf: src.Conf().WhatIf(), Carbon: carbon, Sources: sourcesOf(src),
		StartProgress: func() (func(capacity.PlanProgress), func()) {
			prog := cliview.StartPlanProgress(stderr, progress)
			return prog.Func(), prog.Close
		},
	})
	if err != nil {
		return err
	}

	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	base := filepath.Join(o.Out, "gpuprof-report-"+d.Month+suffix)
	for _, f := range formats {
		path := base + "." + f
		if err := writeReportFile(path, f, d); err != nil {
			return err
		}
		printf(stdout, "%s\n", path)
	}
	return nil
}

func reportFormats(in []string) ([]string, error) {
	var out []string
	for _, f := range in {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case "markdown":
			f = "md"
		case "htm":
			f = "html"
		}
		if f != "html" && f != "md" && f != "json" {
			return nil, usagef("--format: want html, md or json, got %q", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, usagef("--format: no format given")
	}
	return out, nil
}

// writeReportFile writes one format through a temporary file, so a reader
// never sees half a report.
func writeReportFile(path, format string, d report.Data) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	switch format {
	case "html":
		err = report.WriteHTML(tmp, d)
	case "md":
		err = report.WriteMarkdown(tmp, d)
	case "json":
		err = report.WriteJSON(tmp, d)
	}
	if err != nil {
		_ = tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// sourcesOf says where the report's jobs came from (monthly.Build adds
// the slurm.conf and inventory notes).
func sourcesOf(src *jobsource.Source) report.Sources {
	var s report.Sources
	s.Collector, s.Database = src.Collector(), src.Database()
	if uid, scoped := src.ScopedUID(); scoped {
		s.Notes = append(s.Notes, fmt.Sprintf("only the jobs of %s (uid %d): the reader is not an admin", src.Identity().User, uid))
	}
	return s
}

// fileSafe is a cluster name as part of a file name: letters, digits,
// '.', '_' and '-' kept, anything else '_'.
func fileSafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return "_" + string(b)
	}
	return string(b)
}
