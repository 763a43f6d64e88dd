package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/slurmext"
)

func newHookCommand(g *globalOptions, kind string) *cobra.Command {
	return &cobra.Command{
		Use:   kind,
		Short: "slurmd " + kind + " hook (always exits 0)",
		Long: "Run by slurmd as its " + kind + ` (directly, or through contrib/slurm/` + kind + `.sh).
It reads the job from the hook environment and tells the node agent; when the
agent is unreachable it records what it can itself. It finishes within
hooks.deadline and exits 0 whatever happens, so it never drains the node.
Log lines go to log_file (default: syslog), never to the job's output.`,
		Args: cobra.ArbitraryArgs, // slurmd passes none; a wrapper's extra ones are ignored
		RunE: func(cmd *cobra.Command, _ []string) error {
			run := hooks.Epilog
			if kind == "prolog" {
				run = hooks.Prolog
			}
			runHook(cmd.Context(), g, kind, hooks.OSProcess(), withHookFault(kind, run))
			return nil
		},
	}
}

// hookFunc is a node hook's work: hooks.Prolog or hooks.Epilog.
type hookFunc func(context.Context, hooks.Deps) (hooks.Outcome, error)

// runHook runs a hook under a hard deadline: when the deadline passes, exit
// is called with 0 even if a cgo call (SQLite, NVML) is stuck (hooks.Guard).
// A panic is logged with its stack and exit is called with 0
// (hooks.Recovery).
func runHook(ctx context.Context, g *globalOptions, kind string, p hooks.Process, run hookFunc) {
	began := time.Now()
	rec := &hooks.Recovery{Job: hooks.EnvJobID(p.Getenv("SLURM_JOB_ID")), Exit: p.Exit}
	defer rec.Done()
	cfg, log, closeLog := hooks.Setup(kind, g.load, g.DB, g.level(), p)
	rec.Log, rec.CloseLog = log, closeLog
	ctx, stop := hooks.Guard(ctx, cfg.Hooks.Deadline.D(), log, rec.Job, p.Exit)
	defer stop()

	env, err := slurmext.ParseHookEnv(p.Getenv)
	if err != nil {
		log.Error("job not recorded: bad environment", "err", err)
		return
	}
	for _, p := range env.Problems {
		log.Warn("environment problem", "job", env.JobID, "problem", p)
	}
	self, _ := os.Executable()
	path, _ := g.configPath()
	d := hooks.Deps{
		Config:      cfg,
		ConfigPath:  path,
		Env:         env,
		Log:         log,
		Now:         time.Now,
		OpenSampler: func(ctx context.Context) (gpu.Sampler, error) { return openSampler(ctx, cfg, log) },
		Self:        self,
	}
	out, err := run(ctx, d)
	lvl := slog.LevelInfo
	if err != nil {
		lvl = slog.LevelError
	}
	log.Log(ctx, lvl, "done", "job", env.JobID, "via", string(out), "err", err, "took", time.Since(began).Round(time.Microsecond))
}
