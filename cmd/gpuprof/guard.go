package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/config"
)

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

// hookSetup loads the configuration and logger of a Slurm hook. A broken
// configuration file must not break jobs: the hook runs on the defaults and
// logs why. Hooks log to log_file, else syslog; never to stdout or stderr,
// which belong to Slurm.
func hookSetup(g *globalOptions, kind string) (config.Config, *slog.Logger, func()) {
	cfg, cfgErr := g.load()
	if cfgErr != nil {
		cfg = config.Default()
		if g.DB != "" {
			cfg.DB = g.DB
		}
	}
	dest := cfg.LogFile
	if dest == "" {
		dest = "syslog"
	}
	log, closeLog := newLogger(dest, io.Discard, g.level(), "hook", kind)
	if cfgErr != nil {
		log.Error("configuration unusable; using defaults", "err", cfgErr)
	}
	return cfg, log, closeLog
}
