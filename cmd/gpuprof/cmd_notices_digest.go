package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/termtext"
)

// digestOptions are the flags of gpuprof notices digest.
type digestOptions struct {
	To             string
	Day            string
	DryRun         bool
	Local          bool
	AnalysisConfig string
}

func (o *digestOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.To, "to", "", "the admins' address the digest is mailed to (required unless --dry-run)")
	fs.StringVar(&o.Day, "day", "today", "the day: any form --since takes (2026-12-03, yesterday, today, 12/03); the whole local day that holds it")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the message instead of mailing it")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs even when a collector is configured")
	fs.StringVar(&o.AnalysisConfig, "analysis-config", "", "analysis thresholds (TOML; default: built in)")
}

func newNoticesDigestCommand(g *globalOptions) *cobra.Command {
	o := &digestOptions{}
	cmd := &cobra.Command{
		Use:   "digest --to ADDRESS [--day DAY]",
		Short: "Mail the admins one day's idle GPUs: who held them, the GPU-hours idle, the notices sent",
		Long: `Sums one local day (today unless --day names another) of every user's jobs:
the GPU-hours each user held and how many of them were idle (as the monthly
report counts them: each GPU's idle fraction × its hours in the day), most
idle first, with the day's notices. It mails the digest to --to through the
mail program of the [notices] configuration, or prints it with --dry-run.
Run it from cron after midnight with --day yesterday. For admins only.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDigest(cmd.Context(), g, o, time.Now(), cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// runDigest builds the digest for o's day and mails or prints it.
func runDigest(ctx context.Context, g *globalOptions, o *digestOptions, now time.Time, out io.Writer) error {
	if o.To == "" && !o.DryRun {
		return usagef("--to: the admins' address is required (or --dry-run to print the digest)")
	}
	if !o.DryRun {
		if _, err := notice.ParseRecipient(o.To); err != nil {
			return usagef("--to: %v", err)
		}
	}
	w, err := notice.DayWindow(o.Day, now)
	if err != nil {
		return usagef("--day: %v", err)
	}
	c, err := analysis.ConfigAt(o.AnalysisConfig)
	if err != nil {
		return err
	}
	cfg, err := g.Load()
	if err != nil {
		return err
	}
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return err
	}
	defer src.Close()
	// It is about every user's jobs: for admins only (monthly.Digest).
	d, err := monthly.Digest(ctx, src.Scope(), w, now, c)
	if err != nil {
		return err
	}
	var body strings.Builder
	d.WriteBody(&body)
	if o.DryRun {
		to := o.To
		if to == "" {
			to = "(no --to)"
		}
		printf(out, "To: %s\nSubject: %s\n\n%s", termtext.Short(to, 200), d.Subject(), body.String())
		return nil
	}
	if err := notice.SendDigest(ctx, cfg.Notices, o.To, d.Subject(), body.String(), now); err != nil {
		return err
	}
	printf(out, "digest of %s mailed to %s\n", w.From.Format("2006-01-02"), termtext.Short(o.To, 200))
	return nil
}
