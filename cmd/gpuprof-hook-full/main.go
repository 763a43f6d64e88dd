// Command gpuprof-hook-full runs gpuprof's Slurm hooks whole:
// `gpuprof-hook-full prolog|epilog|jobcomp [--config F] [--db D]
// [--log-level L]` is `gpuprof prolog|epilog|jobcomp` with the same flags,
// the same hook (hookcmd.Runtime, hooks.Run) and the same log lines, in a
// binary that links nothing else: gpuprof links plotting, the TUI,
// Prometheus and the man-page generator, whose initialisers run before
// main in every process, and starts through the dynamic loader (cgo).
//
// gpuprof-hook, the thin hook slurmd runs, hands it what the agent does not
// take: jobcomp, a prolog or epilog with no agent, or one the agent
// refused (cmd/gpuprof-hook; without this binary beside it, gpuprof). With
// --hook-began (hidden), the hook's deadline and took count from when
// gpuprof-hook began (hooks.Runtime.Began).
//
// The prolog starts the agent and jobcomp the AdminComment writer with the
// gpuprof binary that goes with this one (hookbin.GPUProfFor). Like
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
	"time"

	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin"
	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/hooks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], hooks.OSProcess(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: gpuprof-hook-full prolog|epilog|jobcomp [--config FILE] [--db PATH] [--log-level LEVEL]

Runs gpuprof's slurmd prolog or epilog or slurmctld's jobcomp hook, as
"gpuprof prolog|epilog|jobcomp" does (see their help); always exits 0.
`

// run runs the hook args name in process p and returns the exit code.
func run(ctx context.Context, args []string, p hooks.Process, stdout, stderr io.Writer) int {
	var o hookcmd.Options
	var began string
	fs := pflag.NewFlagSet("gpuprof-hook-full", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	fs.StringVar(&began, hookbin.BeganFlag, "", "when gpuprof-hook started the hook it hands over (RFC 3339)")
	_ = fs.MarkHidden(hookbin.BeganFlag)
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		_, _ = io.WriteString(stdout, usage+"\nFlags:\n"+fs.FlagUsages())
		return 0
	}
	kind := hooks.Kind(hookbin.Kind(fs.Args(), p.Getenv))
	if kind == "" {
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
	rt := hookcmd.Runtime(&o, p, hookbin.GPUProfFor(self))
	rt.Began, _ = time.Parse(time.RFC3339Nano, began) // a bad value counts from now
	hooks.Run(ctx, kind, rt)
	return 0
}
