package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/jobend"
	"github.com/gpuprof/gpuprof/slurmext"
)

func newAdminCommentCommand(g *globalOptions) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:   "admincomment JOBID",
		Short: "Write a finished job's GPU summary as its AdminComment in Slurm's accounting (always exits 0)",
		Long: `Started by gpuprof jobcomp, detached, for every job when
jobcomp.admin_comment is on; an admin may run it by hand. It waits up to
jobcomp.admin_comment_wait for the nodes to close the job's profile, then
writes the job's summary (gpuprof:v1:…, docs/notices.md) with
sacctmgr -i modify job where jobid=JOBID set AdminComment=… — unless the
job's AdminComment (read with sacct) is another tool's, which is left as
it is. It runs as SlurmUser (who may modify a job's AdminComment) and
always exits 0; what it did is logged.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			runAdminComment(cmd.Context(), g, cluster, args[0], hooks.OSProcess())
			return nil
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "the job's cluster (default: the configured one)")
	return cmd
}

// runAdminComment writes job id's AdminComment (see the command's help).
func runAdminComment(ctx context.Context, g *globalOptions, cluster, jobID string, p hooks.Process) {
	cfg, log, closeLog := hooks.Setup("admincomment", g.load, g.DB, g.level(), p)
	defer closeLog()
	log = log.With("job", jobID)
	if cluster == "" {
		cluster = slurmext.ClusterName(cfg.Cluster, "", cfg.SlurmConf)
	}
	wait := cfg.JobComp.AdminCommentWait.D()
	ctx, cancel := context.WithTimeout(ctx, wait+20*time.Second)
	defer cancel()
	// Once a second: one such reader runs per job that ended, for up to
	// admin_comment_wait each.
	v, found, err := jobSummaryView(ctx, g, cluster, jobID, time.Now().Add(wait), time.Second)
	if !found {
		log.Warn("AdminComment not written: job not read", "err", err)
		return
	}
	s := jobend.Summarise(v, analysis.DefaultConfig(), nil)
	acct := jobend.Accounting{Sacct: cfg.Import.Sacct, Sacctmgr: cfg.JobComp.Sacctmgr, Timeout: 10 * time.Second}
	text := s.AdminComment()
	err = acct.Annotate(ctx, v.Cluster, jobID, text)
	switch {
	case errors.Is(err, jobend.ErrForeignComment):
		log.Info("AdminComment left as it is", "why", err)
	case err != nil:
		log.Error("AdminComment not written", "err", err)
	default:
		log.Info("AdminComment written", "comment", text)
	}
}

// startAdminComment starts `gpuprof admincomment` for job id detached
// (its own session, no pipe shared with slurmctld) when
// jobcomp.admin_comment is on, and does not wait for it: jobcomp runs
// one job at a time, and the summary waits for the nodes' epilogs.
func startAdminComment(g *globalOptions, cfg config.Config, cluster, jobID string) error {
	if !cfg.JobComp.AdminComment {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"admincomment", "--cluster", cluster}
	if p, explicit := g.configPath(); explicit {
		args = append(args, "--config", p)
	}
	if g.DB != "" {
		args = append(args, "--db", g.DB)
	}
	cmd := exec.Command(self, append(args, "--", jobID)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// No stdin, stdout or stderr: the jobcomp wrapper reads its own
	// pipe to the end, which a child holding it would keep open.
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
