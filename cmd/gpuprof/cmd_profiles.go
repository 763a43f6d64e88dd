package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
)

type profilesOptions struct {
	JSON    bool
	User    string
	Since   string
	Until   string
	Top     int
	Config  string
	Local   bool
	Cluster string
}

func (o *profilesOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print {\"profiles\": [analysis.TaskProfile…], \"summary\": analysis.ClusterSummary, \"conf\": the cluster and its slurm.conf} as JSON")
	fs.StringVar(&o.User, "user", "", "only jobs of this user")
	fs.StringVar(&o.Since, "since", "", sinceHelp+windowDefaultHelp)
	fs.StringVar(&o.Until, "until", "", untilHelp)
	fs.IntVar(&o.Top, "top", 5, "explain this many tasks (largest GPU-hours first) in sentences")
	fs.StringVar(&o.Config, "analysis-config", "", "analysis thresholds (TOML, see contrib/analysis.toml.example; default: built-in)")
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.StringVar(&o.Cluster, "cluster", "", clusterHelp)
}

func newProfilesCommand(g *globalOptions) *cobra.Command {
	o := &profilesOptions{}
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "Recurring task profiles and a cluster summary",
		Long: `Groups the recorded jobs into recurring tasks (same user and normalised job
name, or the same array) and prints, per task, runs, GPU-hours, class, VRAM
peak, utilisation, run time and failure rate; then the cluster's GPU-hours by
class and by bottleneck and the queue wait per partition (docs/analysis.md
defines every number).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Top < 0 {
				return usagef("--top %d: want 0 (no sentences) or more tasks", o.Top)
			}
			jf := jobsOptions{User: o.User, Since: o.Since, Until: o.Until}
			f, err := jf.filter()
			if err != nil {
				return err
			}
			f.WithSeries = true // the memory floor (service detection) needs the series
			c, err := analysis.ConfigAt(o.Config)
			if err != nil {
				return err
			}
			// The analysis's own counting (in.Window, in.Now), so the
			// GPU-hours are the report's.
			a, err := analyse(cmd.Context(), g, f, o.Local, o.Cluster, c)
			if err != nil {
				return err
			}
			in := a.Input
			out := cliview.ToProfilesJSON(a.Findings, in.Conf)
			if o.JSON {
				return cliview.WriteJSON(cmd.OutOrStdout(), out)
			}
			cliview.WriteConfNote(cmd.OutOrStdout(), in.Conf)
			return cliview.WriteProfiles(cmd.OutOrStdout(), out, o.Top)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
