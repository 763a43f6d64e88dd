package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/jobend"
	"github.com/gpuprof/gpuprof/jobend/commentqueue"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

func newAdminCommentCommand(g *globalOptions) *cobra.Command {
	var cluster string
	var drain bool
	cmd := &cobra.Command{
		Use:   "admincomment [JOBID | --drain]",
		Short: "Write a finished job's GPU summary as its AdminComment in Slurm's accounting (always exits 0)",
		Long: `When jobcomp.admin_comment is on, gpuprof jobcomp queues every job that
ended (spool_dir/admincomment) and starts, detached, one
"gpuprof admincomment --drain" unless one runs: it works the queue once a
second until it is empty. For each job it waits up to
jobcomp.admin_comment_wait from the job's end for the nodes to close the
job's profile, then writes the job's summary (gpuprof:v1:…,
docs/notices.md) with sacctmgr -i modify job where jobid=JOBID set
AdminComment=… — unless the job's AdminComment (read with sacct) is
another tool's, which is left as it is. With a JOBID, it does the same for
that job alone (an admin may run it by hand). It runs as SlurmUser (who
may modify a job's AdminComment) and always exits 0; what it did is
logged.`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if drain {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			if drain {
				drainAdminComments(cmd.Context(), g, hooks.OSProcess())
				return nil
			}
			runAdminComment(cmd.Context(), g, cluster, args[0], hooks.OSProcess())
			return nil
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "the job's cluster (default: the configured one)")
	cmd.Flags().BoolVar(&drain, "drain", false, "work the queue jobcomp fills until it is empty (started by jobcomp)")
	return cmd
}

// runAdminComment writes job id's AdminComment (see the command's help).
func runAdminComment(ctx context.Context, g *globalOptions, cluster, jobID string, p hooks.Process) {
	cfg, log, closeLog := hooks.Setup("admincomment", g.Load, g.DB, g.Level(), p)
	defer closeLog()
	log = log.With("job", jobID)
	if cluster == "" {
		cluster = slurmext.ClusterName(cfg.Cluster, "", cfg.SlurmConf)
	}
	wait := cfg.JobComp.AdminCommentWait.D()
	ctx, cancel := context.WithTimeout(ctx, wait+20*time.Second)
	defer cancel()
	// Once a second, for up to admin_comment_wait: one job, by hand.
	v, found, err := jobSummaryView(ctx, g, cluster, jobID, time.Now().Add(wait), time.Second)
	if !found {
		log.Warn("AdminComment not written: job not read", "err", err)
		return
	}
	annotate(ctx, cfg, v, jobID, log)
}

// drainAdminComments works the AdminComment queue until it is empty, one
// pass a second, reading the database once per pass; it returns at once
// when another drainer holds the queue.
func drainAdminComments(ctx context.Context, g *globalOptions, p hooks.Process) {
	cfg, log, closeLog := hooks.Setup("admincomment", g.Load, g.DB, g.Level(), p)
	defer closeLog()
	wait := cfg.JobComp.AdminCommentWait.D()
	q := hookcmd.AdminCommentQueue(cfg)
	ran, err := q.Drain(ctx, time.Second, func(ctx context.Context, jobs []commentqueue.Job) (done []commentqueue.Job) {
		src, err := openSource(ctx, g, false)
		if err != nil {
			log.Error("AdminComment queue: database not read", "err", err)
		} else {
			defer src.Close()
			src.SkipNames()
		}
		for _, j := range jobs {
			if ctx.Err() != nil {
				break
			}
			late := time.Since(j.Queued) > wait
			if src == nil {
				if late {
					log.Warn("AdminComment not written: job not read", "job", j.JobID, "err", err)
					done = append(done, j)
				}
				continue
			}
			v, ferr := src.Job(ctx, j.Cluster, j.JobID)
			switch {
			case ferr != nil && late:
				log.Warn("AdminComment not written: job not read", "job", j.JobID, "err", ferr)
				done = append(done, j)
			case ferr == nil && (late || jobend.Closed(v)):
				annotate(ctx, cfg, v, j.JobID, log.With("job", j.JobID))
				done = append(done, j)
			}
		}
		return done
	})
	switch {
	case err != nil:
		log.Error("AdminComment queue", "dir", q.Dir, "err", err)
	case !ran:
		log.Debug("AdminComment queue drained by another")
	}
}

// annotate writes v's summary as job id's AdminComment and logs what it did.
func annotate(ctx context.Context, cfg config.Config, v store.JobView, jobID string, log *slog.Logger) {
	s := jobend.Summarise(v, analysis.DefaultConfig(), nil)
	acct := jobend.Accounting{Sacct: cfg.Import.Sacct, Sacctmgr: cfg.JobComp.Sacctmgr, Timeout: 10 * time.Second}
	text := s.AdminComment()
	err := acct.Annotate(ctx, v.Cluster, jobID, text)
	switch {
	case errors.Is(err, jobend.ErrForeignComment):
		log.Info("AdminComment left as it is", "why", err)
	case err != nil:
		log.Error("AdminComment not written", "err", err)
	default:
		log.Info("AdminComment written", "comment", text)
	}
}
