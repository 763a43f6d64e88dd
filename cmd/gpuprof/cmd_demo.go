package main

import (
	"math"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/demo"
)

type demoMonthOptions struct {
	Out      string
	Seed     uint64
	Days     int
	Interval time.Duration
}

func (o *demoMonthOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Out, "out", "demo-out", "directory for month.db (unless --db names it) and the simulated nodes' state (OUT/month-sim)")
	fs.Uint64Var(&o.Seed, "seed", 1, "workload seed: the same seed gives the same month")
	fs.IntVar(&o.Days, "days", 30, "days of job submissions")
	fs.DurationVar(&o.Interval, "interval", 2*time.Minute, "the agent's sampling interval on the virtual clock")
}

func newDemoCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Demonstrations that need no Slurm, GPU or root",
	}
	o := &demoMonthOptions{}
	month := &cobra.Command{
		Use:   "month",
		Short: "Simulate a month of a small GPU cluster into OUT/month.db",
		Long: `Simulates a small cluster (two 4×H100 nodes, a 4×A100 node, a 2×L40S node)
and eleven users in three accounts for --days days on a virtual clock,
through the real recording path: a simulated GPU node and the node agent per
node, the prolog's and epilog's requests to it, and the jobcomp hook's
record of each job. An earlier month there is replaced. The result is
OUT/month.db (or --db); read it with
"gpuprof profiles --db OUT/month.db" or "gpuprof jobs --db OUT/month.db".`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Days < 1 {
				return usagef("--days must be at least 1")
			}
			db := g.DB
			if db == "" {
				db = filepath.Join(o.Out, "month.db")
			}
			s, err := demo.Month(cmd.Context(), demo.MonthOptions{Dir: filepath.Join(o.Out, "month-sim"), DB: db, Seed: o.Seed, Days: o.Days, Interval: o.Interval})
			if err != nil {
				return err
			}
			printf(cmd.OutOrStdout(), "demo month: %d nodes, %d jobs (%d failed, %d timed out), %s GPU-hours allocated, %s to %s; %d sampling ticks in %s.\ndatabase: %s\n",
				s.Nodes, s.Jobs, s.Failed, s.TimedOut, hours(math.Round(s.GPUHours)),
				s.Start.Format("2006-01-02"), s.End.Format("2006-01-02 15:04"), s.Ticks, s.Wall.Round(100*time.Millisecond), s.DB)
			return nil
		},
	}
	o.AddFlags(month.Flags())
	cmd.AddCommand(month)
	return cmd
}
