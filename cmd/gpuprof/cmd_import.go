package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
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
which columns it expected and what line 1 holds; a refused import to a new
database path leaves no file there. A job with Start before Submit or End
before Start (by more than 60 s) is refused, counted and named; where most
lines are so, the columns are in another order and the text is refused
whole. A last line whose cluster appears on no other line is a file cut
short: refused and named. An empty file holds no jobs. Where step lines carry Slurm's own GPU readings (TRESUsageInMax
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
where the last one stopped. Jobs are stored in batches of 50,000, each
committed on its own, except in a database holding at most a quarter as
many jobs as the first batch (a first import): there the whole import is one
transaction that builds the job indexes once at its end, and an import
interrupted or failing on the database stores nothing (docs/sacct.md). Within text that fits, lines that cannot be
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
	cfg, err := g.Load()
	if err != nil {
		return err
	}
	cluster, err := history.ChooseCluster(o.Cluster, cfg)
	if err != nil {
		return usagef("--cluster %q: want a cluster name as Slurm records it (letters, digits, '-', '_', '.')", termtext.Short(o.Cluster, 64))
	}
	// A database this import creates is removed again, with its -wal and
	// -shm, when the import is refused or fails having stored nothing.
	_, statErr := os.Lstat(cfg.DB)
	isNew := errors.Is(statErr, fs.ErrNotExist)
	db, err := store.Open(ctx, cfg.DB, store.Options{BusyTimeout: 10 * time.Second})
	if err != nil {
		if isNew {
			_ = store.RemoveFiles(cfg.DB)
		}
		return err
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	res, err := importInto(ctx, db, cfg.Import.Sacct, cluster, o, stdout, stderr)
	if err != nil && isNew && res.Inserted == 0 && res.Updated == 0 {
		// Nothing was committed to the database this import created.
		closed = true
		if cerr := db.Close(); cerr == nil {
			_ = store.RemoveFiles(cfg.DB)
		}
	}
	return err
}

// importInto runs one import into db and prints what it did.
func importInto(ctx context.Context, db *store.DB, sacctPath string, cluster history.ImportCluster, o *importOptions, stdout, stderr io.Writer) (history.Result, error) {
	var err error
	var columns []string
	if o.Columns != "" {
		if o.File == "" {
			return history.Result{}, usagef("--columns describes the text of --file; gpuprof's own sacct run prints a header")
		}
		if o.Format == history.FormatJSON {
			return history.Result{}, usagef("--columns applies to text, not to sacct --json")
		}
		if columns, err = sacct.ParseColumns(o.Columns); err != nil {
			return history.Result{}, usagef("--columns: %v", err)
		}
	}

	src, done, wait, format, err := importInput(ctx, sacctPath, db, cluster.Name, o, stderr)
	if err != nil {
		return history.Result{}, err
	}
	defer done()

	opts := history.Options{Cluster: cluster.Name, Columns: columns}
	tty := isTerminal(stderr)
	if tty {
		opts.Progress = cliview.ImportProgress(stderr)
	}
	res, err := history.Import(ctx, db, src, format, opts)
	if tty {
		fmt.Fprintln(stderr)
	}
	if wait != nil {
		if werr := wait(); werr != nil && err == nil {
			err = werr
		}
	}
	if errors.Is(err, sacct.ErrLayout) && res.Read == 0 {
		return res, err // refused as a whole: no counts to show
	}
	cliview.ImportResult(stdout, stderr, res, cluster)
	return res, err
}

// importInput is what runImport reads: --file (or stdin), else a live
// sacct run over the import window (history.StartLive), with its format,
// the function that closes a file it opened and, for sacct, the wait for
// its exit. The window it imports is said on stderr.
func importInput(ctx context.Context, sacctPath string, db *store.DB, cluster string, o *importOptions, stderr io.Writer) (src io.Reader, done func(), wait func() error, format string, err error) {
	done, format = func() {}, o.Format
	if o.File != "" {
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
	}
	if format != history.FormatAuto && format != history.FormatText {
		return nil, done, nil, "", usagef("--format applies to --file only")
	}
	now := time.Now()
	since, until, err := timeWindow(o.Since, o.Until, now)
	if err != nil {
		return nil, done, nil, "", err // a usage error: unreadable, or a reversed window
	}
	live, err := history.StartLive(ctx, sacctPath, db, cluster, since, until, now)
	if errors.Is(err, history.ErrEmptyWindow) {
		return nil, done, nil, "", usagef("--since %s is not before now: nothing to import", termtext.Short(o.Since, 40))
	}
	if err != nil {
		return nil, done, nil, "", err
	}
	cliview.ImportWindow(stderr, cluster, live)
	return live.Out, done, live.Wait, history.FormatText, nil
}

// isTerminal reports whether w is a terminal (a progress line is shown
// there only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
