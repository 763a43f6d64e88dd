package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/internal/present"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
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

// errDigestNotAdmin is the digest's refusal for a caller who is not an
// admin: it is about every user's jobs.
var errDigestNotAdmin = errors.New("notices digest: for admins only (root, the database's owner or admin_group): it names every user's idle GPUs")

// dayWindow is the local day [00:00, next 00:00) that holds the instant
// spec names.
func dayWindow(spec string, now time.Time) (analysis.Window, error) {
	t, err := slurmext.ParseTimeSpec(spec, now)
	if err != nil {
		return analysis.Window{}, usagef("--day: %v", err)
	}
	t = t.In(now.Location())
	from := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, now.Location())
	return analysis.Window{From: from, To: from.AddDate(0, 0, 1)}, nil
}

// digest is what the admins' message says about one day: the sums and
// the notices decided that day, oldest first.
type digest struct {
	notice.Digest
	Notices []noticeRow
}

// buildDigest reads the day's jobs from src (every user's: the caller is
// an admin) and the notices decided that day, and sums them
// (notice.SummariseDay).
func buildDigest(ctx context.Context, src *jobsource.Source, w analysis.Window, now time.Time, c analysis.Config) (digest, error) {
	var clusters []string
	seen := map[string]bool{}
	in, err := src.InputAt(ctx, store.ViewFilter{Since: w.From, Until: w.To, Lean: true}, now, func(v store.JobView) {
		if !seen[v.Cluster] {
			seen[v.Cluster] = true
			clusters = append(clusters, v.Cluster)
		}
	})
	if err != nil {
		return digest{}, err
	}
	rows, err := listNotices(ctx, src, noticeQuery{jobs: store.ViewFilter{Since: w.From, Until: w.To}, since: w.From, until: w.To})
	if err != nil {
		return digest{}, err
	}
	// Oldest first in a day's account.
	slices.Reverse(rows)
	counted := make([]notice.DigestNotice, len(rows))
	for i, r := range rows {
		counted[i] = notice.DigestNotice{User: r.User, Cluster: r.Cluster}
	}
	return digest{Digest: notice.SummariseDay(in, w, now, clusters, counted, c), Notices: rows}, nil
}

// subject is the digest's mail subject.
func (d digest) subject() string {
	where := "the cluster"
	if len(d.Clusters) > 0 {
		where = strings.Join(d.Clusters, ", ")
	}
	return fmt.Sprintf("gpuprof: idle GPUs on %s, %s", cliview.Clean(where, 80), d.Window.From.Format("2006-01-02"))
}

// writeBody writes the digest's text: the day's idle GPU-hours, the users
// who held idle GPUs (most idle first) and the notices sent.
func (d digest) writeBody(w io.Writer) {
	day := d.Window.From.Format("2006-01-02")
	upTo := ""
	if d.Now.Before(d.Window.To) {
		upTo = " up to " + d.Now.Format("15:04")
	}
	printf(w, "Idle GPUs on %s%s (local time), from gpuprof's readings.\n\n", day, upTo)
	if d.HeldHours == 0 && len(d.Notices) == 0 {
		printf(w, "No GPU was held that day.\n")
		return
	}
	share := ""
	if d.Measured > 0 {
		share = fmt.Sprintf(" (%s of the %s GPU-hours with readings)", present.Percent(d.IdleHours/d.Measured), present.GPUHours(d.Measured))
	}
	printf(w, "%s GPU-hours were held by %s; %s GPU-hours of them were idle%s.\n",
		present.GPUHours(d.HeldHours), present.Count(d.Jobs, "job", "jobs"), present.GPUHours(d.IdleHours), share)
	if len(d.Users) == 0 {
		printf(w, "\nNobody held an idle GPU.\n")
	} else {
		printf(w, "\nWho held idle GPUs:\n\n")
		tb := cliview.NewTable("USER", "IDLE GPU-HOURS", "HELD GPU-HOURS", "JOBS", "NOTICES")
		tb.Right[1], tb.Right[2], tb.Right[3], tb.Right[4] = true, true, true, true
		for _, u := range d.Users {
			tb.Row(cliview.OrDash(cliview.Clean(u.Name, 32)), present.GPUHours(u.IdleHours), present.GPUHours(u.HeldHours),
				fmt.Sprint(u.Jobs), fmt.Sprint(u.Notices))
		}
		_ = tb.Write(w)
	}
	if len(d.Notices) == 0 {
		printf(w, "\nNo notices that day.\n")
		return
	}
	printf(w, "\nNotices that day (%s):\n\n", noticeCounting(d.Notices))
	for _, r := range d.Notices {
		printf(w, "%s  job %s  user %s  %s  %s\n", r.Time.In(d.Window.From.Location()).Format("15:04:05"),
			cliview.Clean(r.SlurmID, 64), cliview.OrDash(cliview.Clean(r.User, 32)), analysis.NoticeRuleWords(r.Rule),
			analysis.NoticeStatusWords(r.Status))
		if r.Evidence != "" {
			printf(w, "    %s\n", cliview.Clean(r.Evidence, 300))
		}
	}
	printf(w, "\ngpuprof notices --since %s --until %s lists them with their fixes.\n",
		day, d.Window.To.Format("2006-01-02"))
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
	w, err := dayWindow(o.Day, now)
	if err != nil {
		return err
	}
	c, err := analysis.ConfigAt(o.AnalysisConfig)
	if err != nil {
		return err
	}
	cfg, err := g.load()
	if err != nil {
		return err
	}
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return err
	}
	defer src.Close()
	if !src.Identity().Admin {
		return errDigestNotAdmin
	}
	d, err := buildDigest(ctx, src, w, now, c)
	if err != nil {
		return err
	}
	var body strings.Builder
	d.writeBody(&body)
	if o.DryRun {
		to := o.To
		if to == "" {
			to = "(no --to)"
		}
		printf(out, "To: %s\nSubject: %s\n\n%s", cliview.Clean(to, 200), d.subject(), body.String())
		return nil
	}
	if err := notice.SendDigest(ctx, cfg.Notices, o.To, d.subject(), body.String(), now); err != nil {
		return err
	}
	printf(out, "digest of %s mailed to %s\n", w.From.Format("2006-01-02"), cliview.Clean(o.To, 200))
	return nil
}
