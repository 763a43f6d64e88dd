// Command gpuprof records per-job GPU profiles on Slurm clusters: the node
// agent, the slurmd hooks, the simulated GPU node and the query commands.
//
// This package only wires cobra commands to the packages that do the work:
// flags → options → run functions. Exit codes are mapped in one place
// (exitCode) and documented in the root command's help.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpuprof/gpuprof/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	// Installed directly as Prolog=/usr/local/sbin/gpuprof, slurmd runs us
	// with no arguments: the hook context says which hook we are.
	if len(args) == 0 {
		switch os.Getenv("SLURM_SCRIPT_CONTEXT") {
		case "prolog_slurmd":
			args = []string{"prolog"}
		case "epilog_slurmd":
			args = []string{"epilog"}
		}
	}
	root := newRootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	os.Exit(exitCode(err))
}

// Exit codes, documented in the root command's help.
const (
	exitOK     = 0
	exitError  = 1
	exitUsage  = 2
	exitConfig = 3
)

func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, config.ErrConfig):
		return exitConfig
	}
	return exitError
}

type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }
