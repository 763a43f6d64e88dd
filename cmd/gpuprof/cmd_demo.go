package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/demo"
	"github.com/gpuprof/gpuprof/internal/present"
)

type demoMonthOptions struct {
	Out      string
	Seed     uint64
	Start    string
	Months   int
	Days     int
	Interval time.Duration
}

func (o *demoMonthOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Out, "out", "demo-out", "directory for month.db (unless --db names it) and the simulated nodes' state (OUT/month-sim)")
	fs.Uint64Var(&o.Seed, "seed", 1, "workload seed: the same seed and --start give the same months")
	fs.StringVar(&o.Start, "start", "", "first day of submissions, YYYY-MM-DD (UTC; default: the first day of the month --months before the current one, so that the last simulated month is the last complete one)")
	fs.IntVar(&o.Months, "months", 1, "calendar months of job submissions from --start")
	fs.IntVar(&o.Days, "days", 0, "days of job submissions from --start, instead of --months")
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
		Short: "Simulate a month (or --months) of a small GPU cluster into OUT/month.db",
		Long: `Simulates a small cluster (two 4×H100 nodes, a 4×A100 node, a 2×L40S node)
and eleven users in three accounts for --months calendar months (or --days
days) from --start on a virtual clock, through the real recording path: a
simulated GPU node and the node agent per node, the prolog's and epilog's
requests to it, and the jobcomp hook's record of each job. By default the
last month simulated is the last complete calendar month before today, so
that "gpuprof report" without --month reports it. An earlier simulation
there is replaced. The result is OUT/month.db (or --db); read it with
"gpuprof profiles --db OUT/month.db" or "gpuprof jobs --db OUT/month.db".`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			start, days, err := demo.Span(o.Start, o.Months, o.Days, time.Now())
			if err != nil {
				return usageError{err}
			}
			db := g.DB
			if db == "" {
				db = filepath.Join(o.Out, "month.db")
			}
			s, err := demo.Month(cmd.Context(), demo.MonthOptions{Dir: filepath.Join(o.Out, "month-sim"), DB: db, Seed: o.Seed,
				Start: start, Days: days, Interval: o.Interval})
			if err != nil {
				return fmt.Errorf("demo month: %w", err)
			}
			printf(cmd.OutOrStdout(), "demo month: %d nodes, %d jobs (%d failed, %d timed out), %s GPU-hours allocated, %s to %s; %d sampling ticks in %s.\ndatabase: %s\n",
				s.Nodes, s.Jobs, s.Failed, s.TimedOut, present.GPUHours(math.Round(s.GPUHours)),
				s.Start.Format(time.DateOnly), s.End.Format("2006-01-02T15:04:05"), s.Ticks, s.Wall.Round(100*time.Millisecond), s.DB)
			return nil
		},
	}
	o.AddFlags(month.Flags())
	cmd.AddCommand(month)
	cmd.AddCommand(newDemoConfCommand())
	return cmd
}

// newDemoConfCommand writes the simulated cluster's slurm.conf and
// gres.conf, which make demo points its configuration at: nothing in the
// demo reads /etc/slurm, so its answers are the same on every machine.
func newDemoConfCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "conf",
		Short: "Write the simulated cluster's slurm.conf and gres.conf into --out",
		Long: `Writes OUT/slurm.conf and OUT/gres.conf: the demo cluster (cluster "demo",
two 4×H100 nodes, a 4×A100 node and a 2×L40S node; partitions gpu and l40s;
submission order with backfill, the scheduler "gpuprof demo month"
simulates) as Slurm would describe it, with device files OUT/dev/nvidia0…
and slurmd's spool OUT/slurmd. make demo points its configuration at them
(slurm_conf, [clusters.demo], hooks.gres_conf), so the demo's answers do not
depend on the slurm.conf of the machine it runs on.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := filepath.Abs(out)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			files := map[string]string{
				"slurm.conf": demo.SlurmConf(nil, filepath.Join(dir, "slurmd")),
				"gres.conf":  demo.GresConf(nil, filepath.Join(dir, "dev")),
			}
			for _, name := range []string{"slurm.conf", "gres.conf"} {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
					return err
				}
				printf(cmd.OutOrStdout(), "%s\n", p)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "demo-out", "directory for slurm.conf and gres.conf")
	return cmd
}
