package main

import (
	"fmt"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/internal/present"
	"io"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/slurmext"
)

type planOptions struct {
	analysisOptions
	JSON      bool
	Growth    string
	Horizon   string
	NewDemand float64
	Headroom  string
}

// planJSON is the stable JSON shape of `gpuprof plan --json`
// (docs/json.md).
type planJSON struct {
	// Conf is the cluster planned for and the slurm.conf bound to it.
	Conf  analysis.ConfUse      `json:"conf"`
	Nodes []analysis.Node       `json:"nodes"`
	Plan  analysis.CapacityPlan `json:"plan"`
	// Simulated is the plan on the queue replay, with the verdict.
	Simulated capacity.SimPlan `json:"simulated"`
}

func newPlanCommand(g *globalOptions) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Capacity plan on a replay of the queue: policy first, then the smallest purchase per GPU model",
		Long: `Replays the window's jobs through a model of Slurm's scheduler (the what-if
simulator, docs/whatif.md), calibrated against what happened, and plans
against a target wait (plan.target_p95_wait, default p95 ≤ 1h in every
partition and GPU model):

  1. each recommendation's effect, replayed; those that help are the free
     changes, applied first;
  2. with them, the smallest purchase per GPU model that meets the target
     at the horizon (growth and new demand as configured);
  3. with no purchase, the month growth breaks the target and the order-by
     date before it (plan.lead_time_months);
  4. with [[plan.prices]], buying against renting, with the break-even
     utilisation.

The verdict names the binding constraint (a GPU model, GPU memory, storage
or policy). Below it, Little's law (λ, S, L, C_now, C_future, G) stays as an
average-based cross-check. The replay reads every user's jobs: for users who
see only their own, the plan is not simulated and says so.

Flags left unset take the [plan] section of --analysis-config (or the
built-in defaults).`,
		Example: `  gpuprof plan --growth 30% --horizon 12mo
  gpuprof plan --growth 0.5 --horizon 18mo --new-demand 8 --headroom 20%`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt, c, err := o.filterConfig()
			if err != nil {
				return err
			}
			p, err := o.params(c.Plan, cmd.Flags().Changed("new-demand"))
			if err != nil {
				return err
			}
			// Analyse computes the plan from the [plan] section: put the
			// flags there so the plan is computed once.
			c.Plan.Growth, c.Plan.HorizonMonths, c.Plan.NewDemand, c.Plan.Headroom = p.Growth, p.Months, p.NewDemand, p.Headroom
			if err := c.Validate(); err != nil {
				return usagef("%v", err)
			}
			pd, err := analyseAndPlan(cmd.Context(), g, flt, o.analysisOptions, c, p, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cp := pd.Findings.Plan
			if o.JSON {
				nodes := pd.Input.Nodes
				if nodes == nil {
					nodes = []analysis.Node{}
				}
				return cliview.WriteJSON(cmd.OutOrStdout(), planJSON{Conf: pd.Input.Conf, Nodes: nodes, Plan: cp, Simulated: pd.Sim})
			}
			writeSimPlan(cmd.OutOrStdout(), pd.Sim, pd.Findings.Recommendations)
			writePlan(cmd.OutOrStdout(), cp)
			cliview.Counting(cmd.OutOrStdout(), pd.Findings.Counting)
			return nil
		},
	}
	o.analysisOptions.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.BoolVar(&o.JSON, "json", false, `print {"nodes", "plan", "simulated"} as JSON (docs/json.md)`)
	fs.StringVar(&o.Growth, "growth", "", `demand growth per year: "30%" or "0.3" (default: the configuration's)`)
	fs.StringVar(&o.Horizon, "horizon", "", `how far ahead: "12mo", "18mo", "1y", "2y" (default: the configuration's)`)
	fs.Float64Var(&o.NewDemand, "new-demand", 0, "GPUs of new demand (new projects) at the horizon (default: the configuration's)")
	fs.StringVar(&o.Headroom, "headroom", "", `share of every GPU kept free for peaks: "20%" or "0.2" (default: the configuration's)`)
	return cmd
}

// params merges the flags over the configuration's [plan] section.
func (o *planOptions) params(c analysis.PlanConfig, newDemandSet bool) (analysis.PlanParams, error) {
	p := analysis.PlanParams{Growth: c.Growth, Months: c.HorizonMonths, NewDemand: c.NewDemand, Headroom: c.Headroom}
	var err error
	if o.Growth != "" {
		if p.Growth, err = capacity.ParseGrowth(o.Growth); err != nil {
			return p, usagef("--growth: %v", err)
		}
	}
	if o.Horizon != "" {
		if p.Months, err = capacity.ParseHorizon(o.Horizon); err != nil {
			return p, usagef("--horizon: %v", err)
		}
	}
	if newDemandSet {
		if !(o.NewDemand >= 0) || math.IsInf(o.NewDemand, 0) {
			return p, usagef("--new-demand: want a number of GPUs ≥ 0, got %v", o.NewDemand)
		}
		p.NewDemand = o.NewDemand
	}
	if o.Headroom != "" {
		if p.Headroom, err = capacity.ParseFraction(o.Headroom); err != nil {
			return p, usagef("--headroom: %v", err)
		}
		if p.Headroom < 0 || p.Headroom >= 1 {
			return p, usagef("--headroom: want at least 0%% and under 100%%, got %s", o.Headroom)
		}
	}
	return p, nil
}

// writePlan writes the average-based cross-check (Little's law).
func writePlan(w io.Writer, cp analysis.CapacityPlan) {
	p := cp.Params
	printf(w, "\nCross-check by averages (Little's law; it ignores when demand arrives, so it cannot see queues at peak hours): headroom %s.\n",
		present.Percent(p.Headroom))
	if cp.PeriodHours <= 0 {
		printf(w, "%s\n", cp.CrossCheck)
		return
	}
	printf(w, "Period: %s to %s (%s hours).\n\n", slurmext.FormatTime(cp.Window.From, nil), slurmext.FormatTime(cp.Window.To, nil), present.GPUHours(cp.PeriodHours))
	tw := cliview.NewTable("CLASS", "JOBS", "λ (JOBS/H)", "S (H)", "GPUS/JOB", "L = λ·S·GPUS", "PEAK GPUS")
	for _, l := range cp.Classes {
		tw.Row(l.Class.String(), strconv.Itoa(l.Jobs), fmt.Sprintf("%.3f", l.ArrivalRate), fmt.Sprintf("%.2f", l.ServiceTime),
			fmt.Sprintf("%.2f", l.MeanGPUs), fmt.Sprintf("%.2f", l.Concurrency), fmt.Sprintf("%g", l.PeakGPUs))
	}
	_ = tw.Write(w)
	printf(w, "\nC_now    = Σ L = GPU-hours / period = %.2f GPUs on average (observed peak %g at once)\n", cp.CNow, cp.PeakGPUs)
	printf(w, "C_future = C_now·(1+g)^(T/12) + C_new = %.2f·(1+%.2f)^(%d/12) + %g = %.2f GPUs\n",
		cp.CNow, p.Growth, p.Months, p.NewDemand, cp.CFuture)
	printf(w, "Q_safe   = 1 − headroom = 1 − %.2f = %.2f\n", p.Headroom, cp.QSafe)
	printf(w, "G        = ceil(C_future / Q_safe) = ceil(%.2f / %.2f) = %d GPUs\n", cp.CFuture, cp.QSafe, cp.GPUsNeeded)
	switch inv := cp.Inventory; {
	case cp.CurrentGPUs > 0:
		printf(w, "GPUs now = %d (from %s)\n", cp.CurrentGPUs, cliview.Clean(inv.Source, 120))
	case inv.Misfit != "":
		printf(w, "GPUs now: unknown (%s)\n", cliview.Clean(inv.Misfit, 600))
	default:
		printf(w, "GPUs now: unknown (no inventory: no profiled GPUs, no GPU node in the cluster's slurm.conf)\n")
	}
	if cp.Scaling.Valid {
		printf(w, "Multi-GPU scaling efficiency: %s over %d tasks\n", present.Percent(cp.Scaling.Efficiency), cp.Scaling.Tasks)
	}
	printf(w, "%s\n", cp.CrossCheck)
	if len(cp.Evidence) > 0 {
		printf(w, "Measured:\n")
		for _, e := range cp.Evidence {
			printf(w, "- %s\n", sentence(e))
		}
	}
}
