package hooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/jobcomp"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Kind is a Slurm hook gpuprof runs as: slurmd's prolog and epilog,
// slurmctld's jobcomp.
type Kind string

// The hooks Run runs.
const (
	KindProlog  Kind = "prolog"
	KindEpilog  Kind = "epilog"
	KindJobComp Kind = "jobcomp"
)

// jobIDVar is the variable of the hook's environment that holds the job
// id, which the guard logs before the environment is parsed.
func (k Kind) jobIDVar() string {
	if k == KindJobComp {
		return "JOBID"
	}
	return "SLURM_JOB_ID"
}

func (k Kind) deadline(cfg config.Config) time.Duration {
	if k == KindJobComp {
		return cfg.JobComp.Deadline.D()
	}
	return cfg.Hooks.Deadline.D()
}

// Runtime is what Run takes from the command that runs a hook.
type Runtime struct {
	// Load reads the configuration; on an error the hook runs on the
	// defaults with DB (the command's --db) when given (Setup).
	Load  func() (config.Config, error)
	DB    string
	Level slog.Level
	// Process is the environment, the exit and the crash output.
	Process Process
	// ConfigPath and Self start the agent when the prolog may (Deps).
	ConfigPath string
	Self       string
	// OpenInventory opens the GPU inventory for the node hooks when the
	// agent does not answer. May be nil.
	OpenInventory func(ctx context.Context, cfg config.Config, log *slog.Logger) (gpu.Inventory, error)
	// Before runs just before the hook's work, once its environment is
	// read; nil in production (a test build injects its faults there).
	Before func()
	// AdminComment starts the writer of a finished job's AdminComment
	// after jobcomp recorded it (docs/notices.md). May be nil.
	AdminComment func(cfg config.Config, cluster, jobID string) error
	// Began, when set, is when gpuprof-hook started the hook it hands
	// over (--hook-began): the hook's deadline counts from then (but
	// leaves it at least half) and its took includes that time. Zero, in
	// the future or older than the deadline: the hook counts from now.
	Began time.Time
}

// Run is every Slurm hook's sequence: the recovery of a panic, the
// configuration and the log (Setup), the deadline (Guard), the hook's
// environment, its work (Prolog, Epilog or jobcomp.Record) and the one
// "done" line that says how the job was recorded and how long it took.
// It returns, or calls Process.Exit with 0, whatever happens: a failed hook
// drains a node or stalls slurmctld.
func Run(ctx context.Context, kind Kind, rt Runtime) {
	began := time.Now()
	p := rt.Process
	rec := &Recovery{Job: EnvJobID(p.Getenv(kind.jobIDVar())), Exit: p.Exit}
	defer rec.Done()
	cfg, log, closeLog := Setup(string(kind), rt.Load, rt.DB, rt.Level, p)
	rec.Log, rec.CloseLog = log, closeLog
	deadline := kind.deadline(cfg)
	if spent := began.Sub(rt.Began); !rt.Began.IsZero() && spent >= 0 && spent < deadline {
		began, deadline = rt.Began, max(deadline-spent, deadline/2)
	}
	ctx, stop := Guard(ctx, deadline, log, rec.Job, p.Exit)
	defer stop()

	done := func(attrs []any, via string, err error) {
		lvl := slog.LevelInfo
		if err != nil {
			lvl = slog.LevelError
		}
		log.Log(ctx, lvl, "done", append(attrs, "via", via, "err", err, "took", time.Since(began).Round(time.Microsecond))...)
	}
	switch kind {
	case KindProlog, KindEpilog:
		rt.node(ctx, kind, cfg, log, done)
	case KindJobComp:
		rt.jobComp(cfg, log, done)
	default:
		log.Error("job not recorded: unknown hook", "kind", string(kind))
	}
}

// node runs slurmd's prolog or epilog.
func (rt Runtime) node(ctx context.Context, kind Kind, cfg config.Config, log *slog.Logger, done func([]any, string, error)) {
	env, err := slurmext.ParseHookEnv(rt.Process.Getenv)
	if err != nil {
		log.Error("job not recorded: bad environment", "err", err)
		return
	}
	for _, p := range env.Problems {
		log.Warn("environment problem", "job", env.JobID, "problem", p)
	}
	d := Deps{Config: cfg, ConfigPath: rt.ConfigPath, Env: env, Log: log, Now: time.Now, Self: rt.Self}
	if rt.OpenInventory != nil {
		d.OpenInventory = func(ctx context.Context) (gpu.Inventory, error) { return rt.OpenInventory(ctx, cfg, log) }
	}
	work := Prolog
	if kind == KindEpilog {
		work = Epilog
	}
	if rt.Before != nil {
		rt.Before()
	}
	out, err := work(ctx, d)
	done([]any{"job", env.JobID}, string(out), err)
}

// jobComp runs slurmctld's jobcomp: the record goes to the spool
// (jobcomp.Record), then, for a job that ran and ended, the AdminComment
// writer starts.
func (rt Runtime) jobComp(cfg config.Config, log *slog.Logger, done func([]any, string, error)) {
	rec, problems, err := slurmext.ParseJobCompEnv(rt.Process.Getenv)
	if err != nil {
		log.Error("job not recorded: bad environment", "err", err)
		return
	}
	for _, p := range problems {
		log.Warn("environment problem", "job", rec.JobID, "problem", p)
	}
	rec.Cluster = slurmext.ClusterName(cfg.Cluster, rec.Cluster, cfg.SlurmConf)
	if rt.Before != nil {
		rt.Before()
	}
	out, err := jobcomp.Record(jobcomp.Deps{SpoolDir: cfg.SpoolDir, Log: log}, rec)
	done([]any{"job", rec.JobID, "state", rec.State}, string(out), err)
	if rt.AdminComment != nil && rec.State.IsFinal() && !rec.Start.IsZero() {
		if err := rt.AdminComment(cfg, rec.Cluster, rec.JobID); err != nil {
			log.Error("AdminComment writer not started", "job", rec.JobID, "err", err)
		}
	}
}
