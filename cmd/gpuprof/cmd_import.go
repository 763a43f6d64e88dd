package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/internal/present"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

type importOptions struct {
	Cluster string
	File    string
	Format  string
	Columns string
	Since   string
	Until   string
}

func (o *importOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "file", "", "read sacct output from this file (- for stdin) instead of running sacct")
	fs.StringVar(&o.Cluster, "cluster", "", "the cluster of the jobs whose input names none (no Cluster column; default: this host's, as the configuration names it)")
	fs.StringVar(&o.Format, "format", "auto", "format of --file: auto, text (sacct -P) or json (sacct --json)")
	fs.StringVar(&o.Columns, "columns", "", "the sacct --format list of --file text that has no header line (default: gpuprof's own)")
	fs.StringVar(&o.Since, "since", "", "start of the window (default: where the last import stopped, else 90 days ago)")
	fs.StringVar(&o.Until, "until", "", "end of the window (default: now)")
}

func newImportCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Backfill the scheduler's view of past jobs",
	}
	o := &importOptions{}
	sacct := &cobra.Command{
		Use:   "sacct",
		Short: "Import job history from sacct (live, or from a file)",
		Long: `Imports the scheduler's view of past jobs (submit, start, end, limits, state,
exit, requested GPUs) so queue and partition analysis works before any GPU
profile exists. Without --file it runs

  SLURM_TIME_FORMAT=%s sacct -a -P --format=<fields> --state=<final states> -S SINCE -E UNTIL

With --file it reads sacct -P (or -p) text or sacct --json output (Slurm
22.05–25.x). Text is read by its header line: the columns may come in any
order and any subset that names JobID or JobIDRaw, unknown columns are read
past, and several sacct outputs concatenated, each with its own header and
--format, are read as one. Text without a header (sacct --noheader) is read
with gpuprof's own columns, or with those named by --columns, exactly as
given to sacct --format:

  sacct -a -X -P --noheader --format=JobIDRaw,State,Start,End > jobs.txt
  gpuprof import sacct --file jobs.txt --columns JobIDRaw,State,Start,End

Text that does not fit the columns it is read with (most of its first lines
with another number of columns, or no job ids, states or times where the
columns say they are: another --format, or another tool's output) is
refused as a whole: nothing is imported and the command exits 1, saying
which columns it expected and what line 1 holds. An empty file holds no
jobs. Where step lines carry Slurm's own GPU readings (TRESUsageInMax
gres/gpumem, TRESUsageInAve gres/gpuutil; Slurm 23.02+ with GPU accounting),
they are imported with their job, and so are its CPU time and host memory
peak (the sum of the steps' TotalCPU, the highest step MaxRSS, or the mem
of TRESUsageInMax) and its request (ReqMem), from which gpuprof show
prints CPU efficiency, TotalCPU / (Elapsed x AllocCPUS). Text without step
lines (sacct -X) or without these columns leaves them unknown, never 0;
a malformed value is reported with its line and column and left unknown.
See docs/sacct.md.

GPUs and shards are read from ReqTRES, else from AllocTRES (an export
without ReqTRES); the summary says which for how many jobs. A UTF-8 byte
order mark is dropped. A job id the input holds more than once with
different content (not the same line twice, nor a requeued job's runs) is
reported with the first few ids; which line is kept is the merge rule of
docs/sacct.md, "Duplicate job ids".

Jobs whose input names no cluster (text without a Cluster column, or an
empty one) are imported as --cluster, else as the cluster the
configuration names (the cluster setting, else ClusterName of
slurm_conf, else the one [clusters.NAME] section, else "default"); the
summary says how many and as which. Import another cluster's trace with
--cluster: the analysis binds only that cluster's own slurm.conf to its
jobs (docs/configuration.md).

Re-importing a window changes nothing; without --since the import continues
where the last one stopped. Within text that fits, lines that cannot be
parsed are reported with their line number and skipped. A progress line
(jobs/s) is shown on a terminal.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runImport(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(sacct.Flags())
	cmd.AddCommand(sacct)
	return cmd
}

func runImport(ctx context.Context, g *globalOptions, o *importOptions, stdout, stderr io.Writer) error {
	cfg, err := g.load()
	if err != nil {
		return err
	}
	cluster, origin, err := importCluster(cfg, o.Cluster)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.DB, store.Options{BusyTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()

	var columns []string
	if o.Columns != "" {
		if o.File == "" {
			return usagef("--columns describes the text of --file; gpuprof's own sacct run prints a header")
		}
		if o.Format == history.FormatJSON {
			return usagef("--columns applies to text, not to sacct --json")
		}
		if columns, err = slurmext.ParseSacctColumns(o.Columns); err != nil {
			return usagef("--columns: %v", err)
		}
	}

	src, done, wait, format, err := importInput(ctx, cfg.Import.Sacct, db, cluster, o, stderr)
	if err != nil {
		return err
	}
	defer done()
	br := bufio.NewReaderSize(src, 1<<20)
	if format == "auto" {
		head, _ := br.Peek(512)
		format = history.DetectFormat(head)
	}

	opts := history.Options{Cluster: cluster, Columns: columns}
	tty := isTerminal(stderr)
	if tty {
		opts.Progress = func(read int, el time.Duration) {
			fmt.Fprintf(stderr, "\r%d jobs  %.0f jobs/s ", read, float64(read)/max(el.Seconds(), 1e-3))
		}
	}
	res, err := history.Import(ctx, db, br, format, opts)
	if tty {
		fmt.Fprintln(stderr)
	}
	if wait != nil {
		if werr := wait(); werr != nil && err == nil {
			err = werr
		}
	}
	if errors.Is(err, slurmext.ErrSacctLayout) && res.Read == 0 {
		return err // refused as a whole: no counts to show
	}
	writeImportResult(stdout, stderr, res, cluster, origin)
	return err
}

// importInput is what runImport reads: --file (or stdin), else a live
// sacct run over the import window (history.Window), with its format,
// the function that closes a file it opened and, for sacct, the wait for
// its exit. The window it imports is said on stderr.
func importInput(ctx context.Context, sacctPath string, db *store.DB, cluster string, o *importOptions, stderr io.Writer) (src io.Reader, done func(), wait func() error, format string, err error) {
	done, format = func() {}, o.Format
	switch {
	case o.File != "":
		if o.Since != "" || o.Until != "" {
			return nil, done, nil, "", usagef("--since/--until select what sacct prints; with --file the file decides")
		}
		f := os.Stdin
		if o.File != "-" {
			if f, err = os.Open(o.File); err != nil {
				return nil, done, nil, "", err
			}
			done = func() { f.Close() }
		}
		return f, done, nil, format, nil
	default:
		if format != "auto" && format != "text" {
			return nil, done, nil, "", usagef("--format applies to --file only")
		}
		now := time.Now()
		since, until, err := timeWindow(o.Since, o.Until, now)
		if err != nil {
			return nil, done, nil, "", err // a usage error: unreadable, or a reversed window
		}
		since, until, err = history.Window(ctx, db, cluster, since, until, now)
		if errors.Is(err, history.ErrEmptyWindow) {
			return nil, done, nil, "", usagef("--since %s is not before now: nothing to import", cliview.Clean(o.Since, 40))
		}
		if err != nil {
			return nil, done, nil, "", err
		}
		if src, wait, err = history.StartSacct(ctx, sacctPath, since, until); err != nil {
			return nil, done, nil, "", err
		}
		fmt.Fprintf(stderr, "importing jobs of cluster %s from %s to %s\n", cluster,
			since.Format(time.RFC3339), until.Format(time.RFC3339))
		return src, done, wait, history.FormatText, nil
	}
}

// writeImportResult prints what an import did: the records skipped and
// the notes on stderr, the counts, the jobs filed under the default
// cluster, where GPU counts came from and the duplicate ids on stdout.
func writeImportResult(stdout, stderr io.Writer, res history.Result, cluster, origin string) {
	for _, p := range res.Problems {
		fmt.Fprintf(stderr, "skipped: %v\n", p)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if more := res.NoteCount - len(res.Notes); more > 0 {
		fmt.Fprintf(stderr, "… and %d more notes\n", more)
	}
	fmt.Fprintf(stdout, "%d jobs read: %d new, %d updated, %d unchanged; %d skipped; %.0f jobs/s\n",
		res.Read, res.Inserted, res.Updated, res.Unchanged, res.Skipped,
		float64(res.Read)/max(res.Took.Seconds(), 1e-3))
	if res.Unnamed > 0 {
		fmt.Fprintf(stdout, "%d %s no cluster (no Cluster column): imported as cluster %s (%s)\n",
			res.Unnamed, present.Plural(res.Unnamed, "job names", "jobs name"), cliview.Clean(cluster, 64), origin)
	}
	if line := gpuSourcesLine(res.GPUsFrom); line != "" {
		fmt.Fprintln(stdout, line)
	}
	if res.Conflicts > 0 {
		ids := make([]string, len(res.ConflictIDs))
		for i, id := range res.ConflictIDs {
			ids[i] = cliview.Clean(id, 64)
		}
		list := strings.Join(ids, ", ")
		if res.Conflicts > len(ids) {
			list = "first: " + list
		}
		fmt.Fprintf(stdout, "%d job %s more than once with different content (%s); the one kept is decided as docs/sacct.md says (\"Duplicate job ids\")\n",
			res.Conflicts, present.Plural(res.Conflicts, "id appears", "ids appear"), list)
	}
}

// importCluster is the cluster of the imported jobs whose input names
// none, and what chose it: --cluster, else the cluster the configuration
// names (the cluster setting, else slurm_conf's ClusterName, else its one
// [clusters.NAME] section), else "default".
func importCluster(cfg config.Config, flag string) (name, origin string, err error) {
	if flag != "" {
		name = strings.ToLower(strings.TrimSpace(flag))
		if !slurmext.ValidJobID(name) || strings.Contains(name, "+") {
			return "", "", usagef("--cluster %q: want a cluster name as Slurm records it (letters, digits, '-', '_', '.')", cliview.Clean(flag, 64))
		}
		return name, "--cluster", nil
	}
	if c := strings.ToLower(strings.TrimSpace(cfg.Cluster)); c != "" {
		return c, "the cluster setting; --cluster NAME imports them as another", nil
	}
	if c, err := jobsource.FileClusterName(cfg.SlurmConf); err == nil && c != "" {
		return c, "ClusterName of " + cliview.Clean(cfg.SlurmConf, 200) + "; --cluster NAME imports them as another", nil
	}
	if len(cfg.Clusters) == 1 {
		for c := range cfg.Clusters {
			return c, "the one [clusters." + c + "] section of the configuration; --cluster NAME imports them as another", nil
		}
	}
	return slurmext.DefaultCluster, "nothing names this host's cluster; --cluster NAME imports them as another", nil
}

// gpuSourcesLine says where the imported jobs' GPU counts came from
// (slurmext.RequestedGPUs): "" when no job was read.
func gpuSourcesLine(s history.GPUSources) string {
	var parts []string
	jobs := " jobs"
	if s.ReqTRES > 0 {
		parts = append(parts, fmt.Sprintf("from ReqTRES for %d%s", s.ReqTRES, present.Plural(s.ReqTRES, " job", jobs)))
		jobs = ""
	}
	if s.AllocTRES > 0 {
		parts = append(parts, fmt.Sprintf("from AllocTRES for %d%s (no ReqTRES)", s.AllocTRES, present.Plural(s.AllocTRES, " job", jobs)))
		jobs = ""
	}
	if s.Neither > 0 {
		parts = append(parts, fmt.Sprintf("from neither column for %d%s (no GPU counted)", s.Neither, present.Plural(s.Neither, " job", jobs)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "GPUs and shards read " + strings.Join(parts, ", ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
