package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/jobcomp"
	"github.com/gpuprof/gpuprof/slurmext"
)

func newJobCompCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "jobcomp",
		Short: "slurmctld jobcomp/script hook: record the scheduler's view of a job (always exits 0)",
		Long: `Run by slurmctld as JobCompLoc with JobCompType=jobcomp/script (through
contrib/slurm/jobcomp.sh). It records the job's submit/start/end, limits,
state and exit from the jobcomp environment in the central database, within
jobcomp.deadline: slurmctld runs these scripts one at a time and waits for
each, so when the database does not answer in time the record goes to the
spool (spool_dir) and is ingested later. It always exits 0.`,
		Args: cobra.ArbitraryArgs, // slurmd passes none; a wrapper's extra ones are ignored
		RunE: func(cmd *cobra.Command, _ []string) error {
			runJobComp(cmd.Context(), g, hooks.OSProcess(), withJobCompFault(jobcomp.Record))
			return nil
		},
	}
}

// jobCompFunc is jobcomp's work: jobcomp.Record.
type jobCompFunc func(context.Context, jobcomp.Deps, slurmext.JobRecord) (jobcomp.Outcome, error)

// runJobComp records the job slurmctld describes in p's environment, within
// jobcomp.deadline (exit is called with 0 when it passes, whatever is
// stuck). A panic is logged with its stack and exit is called with 0: the
// guard of the node hooks (hooks.Guard, hooks.Recovery).
func runJobComp(ctx context.Context, g *globalOptions, p hooks.Process, record jobCompFunc) {
	began := time.Now()
	guardRec := &hooks.Recovery{Job: hooks.EnvJobID(p.Getenv("JOBID")), Exit: p.Exit}
	defer guardRec.Done()
	cfg, log, closeLog := hooks.Setup("jobcomp", g.load, g.DB, g.level(), p)
	guardRec.Log, guardRec.CloseLog = log, closeLog
	ctx, stop := hooks.Guard(ctx, cfg.JobComp.Deadline.D(), log, guardRec.Job, p.Exit)
	defer stop()

	rec, problems, err := slurmext.ParseJobCompEnv(p.Getenv)
	if err != nil {
		log.Error("job not recorded: bad environment", "err", err)
		return
	}
	for _, p := range problems {
		log.Warn("environment problem", "job", rec.JobID, "problem", p)
	}
	rec.Cluster = slurmext.ClusterName(cfg.Cluster, rec.Cluster, cfg.SlurmConf)
	out, err := record(ctx, jobcomp.Deps{DB: cfg.DB, SpoolDir: cfg.SpoolDir, Log: log}, rec)
	lvl := slog.LevelInfo
	if err != nil {
		lvl = slog.LevelError
	}
	log.Log(ctx, lvl, "done", "job", rec.JobID, "state", rec.State, "via", string(out), "err", err, "took", time.Since(began).Round(time.Microsecond))
	if rec.State.IsFinal() && !rec.Start.IsZero() {
		if err := startAdminComment(g, cfg, rec.Cluster, rec.JobID); err != nil {
			log.Error("AdminComment writer not started", "job", rec.JobID, "err", err)
		}
	}
}
