package main

import (
	"context"
	"log/slog"
	"time"
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
