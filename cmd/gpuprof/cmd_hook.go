package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin"
	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/hooks"
)

func newHookCommand(g *globalOptions, name string) *cobra.Command {
	kind := hooks.Kind(name)
	var began string
	cmd := &cobra.Command{
		Use:   string(kind),
		Short: "slurmd " + string(kind) + " hook (always exits 0)",
		Long: "Run by slurmd as its " + string(kind) + ` (directly, or through contrib/slurm/` + string(kind) + `.sh).
It reads the job from the hook environment and tells the node agent; when the
agent is unreachable it spools what it knows for the agent, the node
database's one writer. It finishes within hooks.deadline and exits 0
whatever happens, so it never drains the node.
Log lines go to log_file (default: syslog), never to the job's output.`,
		Args: cobra.ArbitraryArgs, // slurmd passes none; a wrapper's extra ones are ignored
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt := hookRuntime(g, hooks.OSProcess())
			// gpuprof-hook's hand-over (cmd/gpuprof-hook): the time it
			// started, which the hook's deadline counts from. A bad value
			// counts from now.
			rt.Began, _ = time.Parse(time.RFC3339Nano, began)
			hooks.Run(cmd.Context(), kind, rt)
			return nil
		},
	}
	cmd.Flags().StringVar(&began, hookbin.BeganFlag, "", "when gpuprof-hook started the hook it hands over (RFC 3339)")
	_ = cmd.Flags().MarkHidden(hookbin.BeganFlag)
	return cmd
}

func newJobCompCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "jobcomp",
		Short: "slurmctld jobcomp/script hook: record the scheduler's view of a job (always exits 0)",
		Long: `Run by slurmctld as JobCompLoc with JobCompType=jobcomp/script (through
contrib/slurm/jobcomp.sh). It records the job's submit/start/end, limits,
state and exit from the jobcomp environment in the spool (spool_dir), within
jobcomp.deadline: slurmctld runs these scripts one at a time and waits for
each. The database's writer on this host takes the record from there: the
agent, gpuprof serve, or gpuprof ingest. It always exits 0.`,
		Args: cobra.ArbitraryArgs, // slurmd passes none; a wrapper's extra ones are ignored
		RunE: func(cmd *cobra.Command, _ []string) error {
			runHook(cmd.Context(), g, hooks.KindJobComp, hooks.OSProcess())
			return nil
		},
	}
}

// runHook runs a Slurm hook of kind in process p (hooks.Run: the deadline,
// the recovery of a panic, the outcome line; exit is called with 0 when
// the deadline passes or after a panic), wired as gpuprof-hook wires it.
func runHook(ctx context.Context, g *globalOptions, kind hooks.Kind, p hooks.Process) {
	hooks.Run(ctx, kind, hookRuntime(g, p))
}

// hookRuntime wires a hook to this binary (hookcmd.Runtime): it is the
// gpuprof the prolog starts as the agent and jobcomp as the AdminComment
// writer.
func hookRuntime(g *globalOptions, p hooks.Process) hooks.Runtime {
	self, _ := os.Executable()
	return hookcmd.Runtime(g, p, self)
}
