package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/config"
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
			runJobComp(cmd.Context(), g, os.Getenv, os.Exit)
			return nil
		},
	}
}

func runJobComp(ctx context.Context, g *globalOptions, getenv func(string) string, exit func(int)) {
	began := time.Now()
	cfg, log, closeLog := hookSetup(g, "jobcomp")
	defer closeLog()
	ctx, stop := guard(ctx, cfg.JobComp.Deadline.D(), log, getenv("JOBID"), exit)
	defer stop()

	rec, problems, err := slurmext.ParseJobCompEnv(getenv)
	if err != nil {
		log.Error("job not recorded: bad environment", "err", err)
		return
	}
	for _, p := range problems {
		log.Warn("environment problem", "job", rec.JobID, "problem", p)
	}
	rec.Cluster = clusterName(cfg, rec.Cluster)
	out, err := jobcomp.Record(ctx, jobcomp.Deps{DB: cfg.DB, SpoolDir: cfg.SpoolDir, Log: log}, rec)
	lvl := slog.LevelInfo
	if err != nil {
		lvl = slog.LevelError
	}
	log.Log(ctx, lvl, "done", "job", rec.JobID, "state", rec.State, "via", string(out), "err", err, "took", time.Since(began).Round(time.Microsecond))
}

// clusterName picks the cluster for records written outside a node hook
// (jobcomp, sacct import) by the one rule, slurmext.ClusterName.
func clusterName(cfg config.Config, fromSlurm string) string {
	return slurmext.ClusterName(cfg.Cluster, fromSlurm, cfg.SlurmConf)
}
