package main

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

// hookProcess is what a Slurm hook command takes from its process: the
// environment, the way out, and the process-wide crash output. Tests
// replace each part; osHookProcess is the real one.
type hookProcess struct {
	getenv func(string) string
	// exit ends the process with a code; the watchdog and a recovered
	// panic call it with 0.
	exit func(int)
	// syslog connects to the local syslog; nil means log/syslog's.
	syslog func() (io.WriteCloser, error)
	// crashOutput, when set, is given the hook's log file so that a crash
	// no recover can catch (a panic in a goroutine of a library, a fatal
	// runtime error, a segfault in cgo) still leaves its stack there, not
	// only on stderr, which Slurm does not keep.
	crashOutput func(*os.File)
}

// osHookProcess is the process a hook really runs in.
func osHookProcess() hookProcess {
	return hookProcess{
		getenv: os.Getenv,
		exit:   os.Exit,
		crashOutput: func(f *os.File) {
			_ = debug.SetCrashOutput(f, debug.CrashOptions{})
		},
	}
}

// guard bounds a Slurm hook in time: exit(0) is called when deadline
// passes, whatever is stuck (a cgo call to SQLite or NVML cannot be
// interrupted), and the returned context ends a tenth earlier so the normal
// paths finish and log first. Call stop when done.
func guard(ctx context.Context, deadline time.Duration, log *slog.Logger, job string, exit func(int)) (context.Context, func()) {
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

// hookRecovery turns a panic on a hook's own goroutine into a logged error
// and exit 0, and closes the hook's log last. It is gpuprof's one recover
// (docs: no recover hiding bugs, except in the hooks): a failed prolog or
// epilog drains the node, and a failed jobcomp is reported by slurmctld for
// every job. Panics in goroutines a hook starts itself are recovered where
// they start (hooks.Deps); what nothing can recover (a library's goroutine,
// a fatal runtime error, a segfault in cgo) leaves its stack in the log
// file through crashOutput and its exit status to the contrib wrappers,
// which exit 0.
type hookRecovery struct {
	job  string // for the log: envJobID of the environment's job id
	exit func(int)
	// log and closeLog are set once the hook's logger is open.
	log      *slog.Logger
	closeLog func()
}

// envJobID is the job id a hook's environment gives (SLURM_JOB_ID, JOBID)
// as the guard and the recovery log it before the environment is parsed:
// the value when it is a job id (slurmext.ValidJobID), else "".
func envJobID(v string) string {
	if slurmext.ValidJobID(v) {
		return v
	}
	return ""
}

// done must be deferred directly, before anything else the hook defers
// (`defer rec.done()`), so that it runs last: the log is still open when a
// panic is written to it.
func (r *hookRecovery) done() {
	p := recover()
	log, closeLog := r.log, r.closeLog
	if p != nil && log == nil {
		// The panic came before the logger existed (loading the
		// configuration): log where the defaults say.
		log, _, closeLog = hookLog{SpoolDir: config.Default().SpoolDir}.open("hook", "setup")
	}
	if p != nil {
		log.Error("hook panicked; exiting 0 so Slurm does not fail the node or the job",
			"job", r.job, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
	if closeLog != nil {
		closeLog()
	}
	if p != nil {
		r.exit(0)
	}
}

// hookSetup loads the configuration and logger of a Slurm hook. A broken
// configuration file must not break jobs: the hook runs on the defaults and
// logs why. Hooks log to log_file, else syslog, else spool_dir/hooks.log
// (hookLog); never to stdout or stderr, which belong to Slurm.
func hookSetup(g *globalOptions, kind string, p hookProcess) (config.Config, *slog.Logger, func()) {
	cfg, cfgErr := g.load()
	if cfgErr != nil {
		cfg = config.Default()
		if g.DB != "" {
			cfg.DB = g.DB
		}
	}
	log, file, closeLog := hookLog{Dest: cfg.LogFile, SpoolDir: cfg.SpoolDir, Level: g.level(), Syslog: p.syslog}.open("hook", kind)
	if file != nil && p.crashOutput != nil {
		p.crashOutput(file)
	}
	if cfgErr != nil {
		log.Error("configuration unusable; using defaults", "err", cfgErr)
	}
	return cfg, log, closeLog
}
