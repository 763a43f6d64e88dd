package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

type showOptions struct {
	JSON           bool
	Local          bool
	AnalysisConfig string
}

func (o *showOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print a JSON array (one element per job the id names)")
	fs.StringVar(&o.AnalysisConfig, "analysis-config", "", "analysis thresholds (TOML; default: built in) for the class, bottlenecks and notes")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
}

func newShowCommand(g *globalOptions) *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show JOBID",
		Short: "Show one job: scheduler view and its profile on every node it ran on",
		Long: `Shows a job by its id as Slurm prints it: an array task (53_1), a
heterogeneous job component (60+1), or a raw job id (58, SLURM_JOB_ID),
and prints both the Slurm id and the raw id. As with sacct -j, an array
job id (53) shows every task of the array and a heterogeneous job id every
component; the same id on several clusters shows each. Array and
heterogeneous ids are known from a jobcomp record or an sacct import; a job
known only from its GPU profile is found by its raw id.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), g, o, args[0], cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// runShow prints the jobs id names (see newShowCommand). An id that is no
// job id is a usage error; one that names no job the caller may see is
// "not found", the same answer whether the job is absent or someone
// else's.
func runShow(ctx context.Context, g *globalOptions, o *showOptions, id string, w io.Writer) error {
	ref, err := slurmext.ParseJobRef(id)
	if err != nil {
		return usagef("%w", err)
	}
	c := analysis.DefaultConfig()
	if o.AnalysisConfig != "" {
		if c, err = analysis.LoadConfig(o.AnalysisConfig); err != nil {
			return err
		}
	}
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return err
	}
	defer src.Close()
	views, err := src.Jobs(ctx, store.ViewFilter{Job: &ref, WithSeries: true})
	if err != nil {
		return err
	}
	if len(views) == 0 {
		return jobNotFound{ref}
	}
	sortBySlurmID(views)
	carbon, err := showCarbonOf(g)
	if err != nil {
		return err
	}
	// The read time: a running job's elapsed time counts to it.
	now := time.Now()
	if o.JSON {
		out := cliview.JobsJSON(views, c, now)
		carbon.SetJSON(out, views, c)
		return cliview.WriteJSON(w, out)
	}
	types := monthly.NewInventories(src.Scope())
	cliview.Show(w, ref, views, c, carbon, func(cluster string) []analysis.GPUType { return types.GPUTypes(ctx, cluster) }, now)
	return nil
}

// jobNotFound is show's answer when an id names no job the caller may
// see; it wraps store.ErrNotFound.
type jobNotFound struct{ ref slurmext.JobRef }

func (e jobNotFound) Error() string {
	if e.ref.Plain() {
		return fmt.Sprintf("job %s: not found", e.ref)
	}
	return fmt.Sprintf("job %s: not found (array and heterogeneous job ids come from a jobcomp record or an sacct import; a job with a GPU profile alone is found by its raw id)", e.ref)
}

func (e jobNotFound) Unwrap() error { return store.ErrNotFound }

// showCarbonOf reads the configured emission factor for show; none when
// the configuration has none (or cannot be read: show reads its jobs
// without it, and the error shows there).
func showCarbonOf(g *globalOptions) (cliview.ShowCarbon, error) {
	cfg, err := g.Load()
	if err != nil {
		return cliview.ShowCarbon{}, nil
	}
	carbon, err := carbonOf(cfg.Carbon)
	if err != nil {
		return cliview.ShowCarbon{}, err
	}
	return cliview.ShowCarbon{Carbon: carbon, Now: time.Now()}, nil
}
