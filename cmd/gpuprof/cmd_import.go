package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/store"
)

type importOptions struct {
	File   string
	Format string
	Since  string
	Until  string
}

func (o *importOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "file", "", "read sacct output from this file (- for stdin) instead of running sacct")
	fs.StringVar(&o.Format, "format", "auto", "format of --file: auto, text (sacct -P) or json (sacct --json)")
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

  SLURM_TIME_FORMAT=%s sacct -a -X -P --noheader --format=<fields> -S SINCE -E UNTIL

With --file it reads sacct -P text or sacct --json output (Slurm 22.05–25.x).
Re-importing a window changes nothing; without --since the import continues
where the last one stopped. Lines that cannot be parsed are reported with
their line number and skipped. A progress line (jobs/s) is shown on a
terminal.`,
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
	cluster := clusterName(cfg, "")
	db, err := store.Open(ctx, cfg.DB, store.Options{BusyTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()

	var src io.Reader
	var wait func() error
	format := o.Format
	switch {
	case o.File != "":
		if o.Since != "" || o.Until != "" {
			return usagef("--since/--until select what sacct prints; with --file the file decides")
		}
		f := os.Stdin
		if o.File != "-" {
			if f, err = os.Open(o.File); err != nil {
				return err
			}
			defer f.Close()
		}
		src = f
	default:
		if format != "auto" && format != "text" {
			return usagef("--format applies to --file only")
		}
		format = history.FormatText
		until := time.Now()
		if o.Until != "" {
			if until, err = parseTime(o.Until); err != nil {
				return usagef("--until: %v", err)
			}
		}
		var since time.Time
		if o.Since != "" {
			if since, err = parseTime(o.Since); err != nil {
				return usagef("--since: %v", err)
			}
		} else {
			mark, err := db.GetImportMark(ctx, cluster, history.Source)
			if err != nil {
				return err
			}
			since = until.AddDate(0, 0, -90)
			if !mark.IsZero() {
				since = mark.Add(-time.Hour) // overlap: jobs end out of order; re-importing is harmless
			}
		}
		cmd := history.SacctCommand(ctx, cfg.Import.Sacct, since, until)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("run sacct: %w", err)
		}
		src = out
		wait = func() error {
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("sacct: %w: %s", err, strings.TrimSpace(errb.String()))
			}
			return nil
		}
		fmt.Fprintf(stderr, "importing jobs of cluster %s from %s to %s\n", cluster,
			since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	br := bufio.NewReaderSize(src, 1<<20)
	if format == "auto" {
		head, _ := br.Peek(512)
		format = history.DetectFormat(head)
	}

	opts := history.Options{Cluster: cluster}
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
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
