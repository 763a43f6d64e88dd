package hooks

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
)

// The guard of every Slurm hook (prolog, epilog and jobcomp): a failed hook
// drains the node or stalls slurmctld, so a hook exits 0 whatever happens
// to it — within its deadline (Guard), after a panic (Recovery) and on a
// broken configuration (Setup) — and logs why, never to stdout or stderr
// (LogDest).

// Process is what a Slurm hook command takes from its process: the
// environment, the way out, and the process-wide crash output. Tests
// replace each part; OSProcess is the real one.
type Process struct {
	Getenv func(string) string
	// Exit ends the process with a code; the watchdog and a recovered
	// panic call it with 0.
	Exit func(int)
	// Syslog connects to the local syslog; nil means log/syslog's.
	Syslog func() (io.WriteCloser, error)
	// CrashOutput, when set, is given the hook's log file so that a crash
	// no recover can catch (a panic in a goroutine of a library, a fatal
	// runtime error, a segfault in cgo) still leaves its stack there, not
	// only on stderr, which Slurm does not keep.
	CrashOutput func(*os.File)
}

// OSProcess is the process a hook really runs in.
func OSProcess() Process {
	return Process{
		Getenv: os.Getenv,
		Exit:   os.Exit,
		CrashOutput: func(f *os.File) {
			_ = debug.SetCrashOutput(f, debug.CrashOptions{})
		},
	}
}

// Guard bounds a Slurm hook in time: exit(0) is called when deadline
// passes, whatever is stuck (a cgo call to SQLite or NVML cannot be
// interrupted), and the returned context ends a tenth earlier so the normal
// paths finish and log first. Call stop when done.
func Guard(ctx context.Context, deadline time.Duration, log *slog.Logger, job string, exit func(int)) (context.Context, func()) {
	watchdog := time.AfterFunc(deadline, func() {
		log.Error("deadline reached; exiting 0", "job", job, "deadline", deadline)
		exit(0)
	})
	ctx, cancel := context.WithTimeout(ctx, deadline*9/10)
	return ctx, func() {
		cancel()
		watchdog.Stop()
	}
}

// Recovery turns a panic on a hook's own goroutine into a logged error and
// exit 0, and closes the hook's log last. It is gpuprof's one recover
// (docs: no recover hiding bugs, except in the hooks): a failed prolog or
// epilog drains the node, and a failed jobcomp is reported by slurmctld for
// every job. Panics in goroutines a hook starts itself are recovered where
// they start (Deps); what nothing can recover (a library's goroutine, a
// fatal runtime error, a segfault in cgo) leaves its stack in the log file
// through Process.CrashOutput and its exit status to the contrib wrappers,
// which exit 0.
type Recovery struct {
	Job  string // for the log: EnvJobID of the environment's job id
	Exit func(int)
	// Log and CloseLog are set once the hook's logger is open.
	Log      *slog.Logger
	CloseLog func()
}

// EnvJobID is the job id a hook's environment gives (SLURM_JOB_ID, JOBID)
// as the guard and the recovery log it before the environment is parsed:
// the value when it is a job id (slurmext.ValidJobID), else "".
func EnvJobID(v string) string {
	if slurmext.ValidJobID(v) {
		return v
	}
	return ""
}

// Done must be deferred directly, before anything else the hook defers
// (`defer rec.Done()`), so that it runs last: the log is still open when a
// panic is written to it.
func (r *Recovery) Done() {
	p := recover()
	log, closeLog := r.Log, r.CloseLog
	if p != nil && log == nil {
		// The panic came before the logger existed (loading the
		// configuration): log where the defaults say.
		log, _, closeLog = LogDest{SpoolDir: config.Default().SpoolDir}.Open("hook", "setup")
	}
	if p != nil {
		log.Error("hook panicked; exiting 0 so Slurm does not fail the node or the job",
			"job", r.Job, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
	if closeLog != nil {
		closeLog()
	}
	if p != nil {
		r.Exit(0)
	}
}

// Setup loads the configuration (load) and opens the logger of a Slurm
// hook of kind. A broken configuration file must not break jobs: the hook
// runs on the defaults, with db (the command's --db) when given, and logs
// why. Hooks log to log_file, else syslog, else spool_dir/hooks.log
// (LogDest); never to stdout or stderr, which belong to Slurm.
func Setup(kind string, load func() (config.Config, error), db string, level slog.Level, p Process) (config.Config, *slog.Logger, func()) {
	cfg, cfgErr := load()
	if cfgErr != nil {
		cfg = config.Default()
		if db != "" {
			cfg.DB = db
		}
	}
	log, file, closeLog := LogDest{Dest: cfg.LogFile, SpoolDir: cfg.SpoolDir, Level: level, Syslog: p.Syslog}.Open("hook", kind)
	if file != nil && p.CrashOutput != nil {
		p.CrashOutput(file)
	}
	if cfgErr != nil {
		log.Error("configuration unusable; using defaults", "err", cfgErr)
	}
	return cfg, log, closeLog
}
