package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/cliview"
)

type planOptions struct {
	analysisOptions
	JSON      bool
	Growth    string
	Horizon   string
	NewDemand float64
	Headroom  string
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
     at the horizon (new demand as configured; growth as --growth or
     plan.growth sets it, else the trend of the cluster's own whole months
     where the database holds at least three, else plan.growth's default,
     and the plan says which);
  3. with no purchase, the month growth breaks the target and the order-by
     date before it (plan.lead_time_months);
  4. with [[plan.prices]], buying against renting, with the break-even
     utilisation.

The verdict names the binding constraint (a GPU model, GPU memory, storage
or policy). Below it, Little's law (λ, S, L, C_now, C_future, G) stays as an
average-based cross-check. The replay reads every user's jobs: for users who
see only their own, the plan is not simulated and says so.

Without --since or --until it plans on the window every analysing command
defaults to: the last complete month with jobs, the month gpuprof report
reports, else (no complete month has jobs) the data's span; its "Data
window" line, the "of data" figure included, is the report's
(docs/report.md, "The window analysed").

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
			// Unless --growth or plan.growth sets it, the growth is the
			// trend of the cluster's own whole months, where there are
			// enough (monthly.PlanGrowth).
			c.Plan.GrowthSet = c.Plan.GrowthSet || o.Growth != ""
			if err := c.Validate(); err != nil {
				return usagef("%v", err)
			}
			pd, err := analyseAndPlan(cmd.Context(), g, flt, o.analysisOptions, c, p, true, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if o.JSON {
				return cliview.WriteJSON(cmd.OutOrStdout(), cliview.ToPlanJSON(pd.Input, pd.Findings.Plan, pd.Sim))
			}
			cliview.WriteSimPlan(cmd.OutOrStdout(), pd.Sim, pd.Findings.Recommendations)
			cliview.WritePlan(cmd.OutOrStdout(), pd.Findings.Plan)
			cliview.Counting(cmd.OutOrStdout(), pd.Findings.Counting)
			return nil
		},
	}
	o.analysisOptions.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.BoolVar(&o.JSON, "json", false, `print {"nodes", "plan", "simulated"} as JSON (docs/json.md)`)
	fs.StringVar(&o.Growth, "growth", "", `demand growth per year: "30%" or "0.3" (default: the configuration's plan.growth, else the cluster's own trend over at least 3 whole months, else 30%)`)
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
