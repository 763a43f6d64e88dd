// Command gpuprof-hook runs gpuprof's Slurm hooks alone: `gpuprof-hook
// prolog|epilog|jobcomp [--config F] [--db D] [--log-level L]` is
// `gpuprof prolog|epilog|jobcomp` with the same flags, the same hook
// (hookcmd.Runtime, hooks.Run) and the same log lines, in a binary that
// links nothing else. slurmd waits for every prolog and epilog; gpuprof
// links plotting, the TUI, Prometheus and the man-page generator, whose
// initialisers run before main in every process, a hook's too (issue #41:
// a hook starts as fast as a small program). contrib/slurm/hook.sh runs it
// when it is installed with gpuprof (docs/packaging.md).
//
// The prolog starts the agent and jobcomp the AdminComment writer with the
// gpuprof binary that goes with this one (hookcmd.GPUProfFor). Like
// gpuprof's hooks it exits 0 whatever happens, a bad flag included; only a
// missing or unknown hook name is a usage error (exit 2).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/hooks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], hooks.OSProcess(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: gpuprof-hook prolog|epilog|jobcomp [--config FILE] [--db PATH] [--log-level LEVEL]

Runs gpuprof's slurmd prolog or epilog or slurmctld's jobcomp hook, as
"gpuprof prolog|epilog|jobcomp" does (see their help); always exits 0.
`

// run runs the hook args name in process p and returns the exit code.
func run(ctx context.Context, args []string, p hooks.Process, stdout, stderr io.Writer) int {
	var o hookcmd.Options
	fs := pflag.NewFlagSet("gpuprof-hook", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		_, _ = io.WriteString(stdout, usage+"\nFlags:\n"+fs.FlagUsages())
		return 0
	}
	kind, ok := hookKind(fs.Args(), p.Getenv)
	if !ok {
		_, _ = fmt.Fprintf(stderr, "Error: no hook named (prolog, epilog or jobcomp)\n%s", usage)
		return 2
	}
	if err != nil {
		// As gpuprof's hooks: the error on stderr (the contrib wrapper
		// appends it to hooks.log), no hook run, exit 0 (a failed prolog
		// drains the node).
		_, _ = fmt.Fprintf(stderr, "Error: %v\n", err)
		return 0
	}
	self, _ := os.Executable()
	hooks.Run(ctx, kind, hookcmd.Runtime(&o, p, hookcmd.GPUProfFor(self)))
	return 0
}

// hookKind is the hook args name; with no argument, the one slurmd's
// SLURM_SCRIPT_CONTEXT says (installed directly as Prolog= or Epilog=, as
// gpuprof is). Arguments after the name are ignored, as gpuprof ignores
// them.
func hookKind(args []string, getenv func(string) string) (hooks.Kind, bool) {
	if len(args) == 0 {
		switch getenv("SLURM_SCRIPT_CONTEXT") {
		case "prolog_slurmd":
			return hooks.KindProlog, true
		case "epilog_slurmd":
			return hooks.KindEpilog, true
		}
		return "", false
	}
	switch k := hooks.Kind(args[0]); k {
	case hooks.KindProlog, hooks.KindEpilog, hooks.KindJobComp:
		return k, true
	}
	return "", false
}
