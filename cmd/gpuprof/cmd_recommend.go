package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/store"
)

// analysisOptions are the flags recommend and plan share: which jobs to
// read and with which thresholds.
type analysisOptions struct {
	Since   string
	Until   string
	Config  string
	Local   bool
	Cluster string
	// Quiet hides the simulated plan's progress (shown on a terminal).
	Quiet bool
}

func (o *analysisOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Since, "since", "", sinceHelp+windowDefaultHelp)
	fs.StringVar(&o.Until, "until", "", untilHelp)
	fs.StringVar(&o.Cluster, "cluster", "", clusterHelp)
	fs.StringVar(&o.Config, "analysis-config", "", "analysis thresholds (TOML, see contrib/analysis.toml.example; default: built-in)")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.BoolVar(&o.Quiet, "quiet", false, "do not show the queue replay's progress (shown on a terminal's stderr when the plan runs over 2 s)")
}

// filterConfig is the jobs the flags select and the analysis
// configuration.
func (o *analysisOptions) filterConfig() (store.ViewFilter, analysis.Config, error) {
	jf := jobsOptions{Since: o.Since, Until: o.Until}
	f, err := jf.filter()
	if err != nil {
		return f, analysis.Config{}, err
	}
	// The memory floor (service detection, VRAM need) needs the series.
	f.WithSeries = true
	c, err := analysis.ConfigAt(o.Config)
	if err != nil {
		return f, c, err
	}
	return f, c, nil
}

type recommendOptions struct {
	analysisOptions
	JSON       bool
	Emit       string
	NoSimulate bool
}

func newRecommendCommand(g *globalOptions) *cobra.Command {
	o := &recommendOptions{}
	cmd := &cobra.Command{
		Use:   "recommend",
		Short: "Changes to queues, partitions, QOS and GPU sharing the recorded jobs justify",
		Long: `Analyses the recorded jobs and prints each change the data justifies: what to
change, why (the numbers), the expected effect, a confidence that reflects
the sample size, and the exact slurm.conf / gres.conf lines and sacctmgr
commands; then the rules that found nothing to change, with why.

Each recommendation is replayed on the queue simulator (docs/whatif.md):
its expected effect is the simulated change in queue wait of the jobs it is
about, with the spread over seeds and the replay's calibration error; one
that does not help, or harms the queue as a whole, says so. The replay
reads every user's jobs, so for a user who sees only their own it is not
run; --no-simulate skips it.

--emit slurm prints only the configuration, grouped by where it goes, as a
script for an administrator to review and apply.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Emit != "" && o.Emit != "slurm" {
				return usagef("--emit: unknown format %q (want slurm)", o.Emit)
			}
			if o.Emit != "" && o.JSON {
				return usagef("--emit and --json exclude each other")
			}
			flt, c, err := o.filterConfig()
			if err != nil {
				return err
			}
			var in analysis.Input
			var f analysis.Findings
			var sim *capacity.SimPlan
			if o.NoSimulate || o.Emit != "" {
				a, err := analyse(cmd.Context(), g, flt, o.Local, o.Cluster, c)
				if err != nil {
					return err
				}
				in, f = a.Input, a.Findings
			} else {
				pd, err := analyseAndPlan(cmd.Context(), g, flt, o.analysisOptions, c, c.Plan.Params(), false, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				in, f, sim = pd.Input, pd.Findings, &pd.Sim
			}
			w := cmd.OutOrStdout()
			switch {
			case o.Emit == "slurm":
				_, err = io.WriteString(w, analysis.EmitSlurm(f.Recommendations))
				return err
			case o.JSON:
				return cliview.WriteJSON(w, cliview.ToRecommendJSON(in, f))
			}
			cliview.WriteRecommendations(w, in, f, sim)
			return nil
		},
	}
	o.analysisOptions.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"nodes", "recommendations", "no_change"} as JSON (docs/json.md)`)
	cmd.Flags().BoolVar(&o.NoSimulate, "no-simulate", false, "do not replay the queue for each recommendation's effect (faster on very large windows)")
	cmd.Flags().StringVar(&o.Emit, "emit", "", `print only the configuration: "slurm" (sacctmgr commands, slurm.conf and gres.conf lines, scontrol commands)`)
	return cmd
}
