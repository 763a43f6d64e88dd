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
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/jobsource"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	// Installed directly as Prolog=/usr/local/bin/gpuprof, slurmd runs us
	// with no arguments: the hook context says which hook we are
	// (hookbin.Kind, the hook binaries' rule).
	if len(args) == 0 {
		if kind := hookbin.Kind(nil, os.Getenv); kind != "" {
			args = []string{kind}
		}
	}
	root := newCLI()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := exitCode(err)
	if code != exitOK && len(args) > 0 && isHook(args[0]) {
		// A hook exits 0 even when slurmd (or a wrapper) called it with
		// arguments or flags it does not know: a failed prolog or epilog
		// drains the node, a failed jobcomp is logged by slurmctld for
		// every job. cobra has printed the error to stderr, which the
		// contrib wrappers append to hooks.log.
		code = exitOK
	}
	os.Exit(code)
}

// newCLI is the root command as main runs it: newRootCommand with an
// unknown command made a usage error (exit 2) like an unknown flag. cobra
// reports one from its own argument check, a plain error (exit 1), when
// the root takes no arguments of its own; giving the root this check and a
// RunE that prints the help (what a bare "gpuprof" did) keeps cobra's
// "Did you mean" suggestions and the exit code the help promises.
func newCLI() *cobra.Command {
	root := newRootCommand()
	root.Args = unknownCommand
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return root
}

// unknownCommand is the root's argument check: any argument is a command
// gpuprof does not have.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, which it sets only on its own path
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 && !cmd.DisableSuggestions {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return usageError{fmt.Errorf("%s\nRun '%s --help' for the commands", msg, cmd.CommandPath())}
}

// isHook says whether command is one Slurm runs; those always exit 0.
func isHook(command string) bool {
	return command == "prolog" || command == "epilog" || command == "jobcomp"
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
	var several *jobsource.SeveralClustersError
	var unknown *jobsource.UnknownClusterError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.As(err, &several), errors.As(err, &unknown):
		return exitUsage
	case errors.Is(err, config.ErrConfig):
		return exitConfig
	}
	return exitError
}

type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// usageArgs makes an argument check's error a usage error (exit code 2),
// like a bad flag's.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
