package main

import (
	"context"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/jobend"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

func newMailProgCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "mailprog [flags] -- -s SUBJECT RECIPIENT",
		Short: "Slurm's MailProg: the job-end mail, with the job's GPU summary appended",
		Long: `Run by slurmctld as MailProg (through contrib/slurm/mailprog.sh, which
passes Slurm's arguments after "--"). Every mail goes to mail_prog.mailer
(default /usr/bin/mail, Slurm's own default) with exactly Slurm's
arguments and body. A mail that reports a run (SLURM_JOB_MAIL_TYPE Ended,
Failed, Requeued, Reached time limit, Reached N% of time limit) gets the
job's GPU summary appended to its body, when gpuprof finds it within
mail_prog.deadline (5 s); otherwise, and on any failure of gpuprof, the
mail goes out unchanged and the reason is logged. It reads the jobs as
whoever runs it (SlurmUser: an admin_group member, or the database's
owner, reads every job).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := runMailProg(cmd.Context(), g, args, hooks.OSProcess())
			os.Exit(code)
			return nil
		},
	}
}

// runMailProg sends Slurm's mail (args: Slurm's argv after the program)
// and returns the exit status: the mailer's, or 1 when it could not be
// run.
func runMailProg(ctx context.Context, g *globalOptions, args []string, p hooks.Process) int {
	cfg, log, closeLog := hooks.Setup("mailprog", g.Load, g.DB, g.Level(), p)
	defer closeLog()
	m := jobend.MailProg{
		Mailer:   cfg.MailProg.Mailer,
		Deadline: cfg.MailProg.Deadline.D(),
		Log:      log,
		Exec:     syscall.Exec,
		Stdin:    os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Env: os.Environ(), Getenv: p.Getenv,
		Summary: func(ctx context.Context, jobID string) (string, error) {
			deadline, _ := ctx.Deadline()
			// Leave a fifth of the time to build and send the mail.
			until := deadline.Add(-time.Until(deadline) / 5)
			v, found, err := jobSummaryView(ctx, g, slurmext.ClusterName(cfg.Cluster, p.Getenv(slurmext.MailEnvCluster), cfg.SlurmConf), jobID, until, 250*time.Millisecond)
			if !found {
				return "", err
			}
			return jobend.Summarise(v, analysis.DefaultConfig(), nil).MailText(nil), nil
		},
	}
	if m.Mailer == "" {
		m.Mailer = jobend.DefaultMailer
	}
	defer func() {
		// A mail is never lost to a bug of gpuprof's: the one recover
		// outside the hooks hands the mail over as Slurm wrote it.
		if r := recover(); r != nil {
			log.Error("mailprog panicked; sending the mail unchanged", "panic", r, "stack", string(debug.Stack()))
			_ = syscall.Exec(m.Mailer, append([]string{m.Mailer}, args...), m.Env)
		}
	}()
	code, err := m.Run(ctx, args)
	if err != nil {
		log.Error("mailprog", "err", err)
	}
	return code
}

// jobSummaryView reads job id of cluster through the configured source
// (the collector, or the local database) until its profiles are closed
// or until (jobend.Await), every so often.
func jobSummaryView(ctx context.Context, g *globalOptions, cluster, jobID string, until time.Time, every time.Duration) (v store.JobView, found bool, err error) {
	src, err := openSource(ctx, g, false)
	if err != nil {
		return v, false, err
	}
	defer src.Close()
	src.SkipNames()
	return jobend.Await(ctx, src.Job, cluster, jobID, until, every)
}
