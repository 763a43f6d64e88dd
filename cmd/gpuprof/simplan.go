package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// replayParams reads what a queue replay needs from the configuration:
// slurm.conf's GPU nodes and its scheduler settings (Slurm's defaults when
// there is no slurm.conf).
func replayParams(g *globalOptions) (analysis.WhatIfParams, error) {
	var p analysis.WhatIfParams
	cfg, err := g.load()
	if err != nil {
		return p, err
	}
	p.SlurmNodes = readSlurmNodes(cfg.SlurmConf)
	if cfg.SlurmConf != "" {
		if fh, err := os.Open(cfg.SlurmConf); err == nil {
			sc, rerr := slurmext.ReadSchedConf(fh)
			fh.Close()
			if rerr != nil {
				return p, fmt.Errorf("read %s: %w", cfg.SlurmConf, rerr)
			}
			p.Sched, p.SchedKnown = sc, true
		}
	}
	return p, nil
}

// planned is an analysis with its simulated plan: the input (with what a
// replay reads), the findings, whose recommendations carry their
// simulated effects, and the plan.
type planned struct {
	in       analysis.Input
	findings analysis.Findings
	sim      analysis.SimPlan
}

// analyseAndPlan reads the jobs f selects, analyses them with c and makes
// the simulated plan with pp. The plan replays every user's jobs: for a
// caller who sees only their own, it is not simulated, and says so.
func analyseAndPlan(ctx context.Context, g *globalOptions, f store.ViewFilter, local bool, c analysis.Config, pp analysis.PlanParams) (planned, error) {
	var out planned
	wp, err := replayParams(g)
	if err != nil {
		return out, err
	}
	src, err := openSource(ctx, g, local)
	if err != nil {
		return out, err
	}
	defer src.Close()
	// The replay reads node lists, node counts and pending reasons, which
	// the lean read leaves out; a window too large for the replay budget
	// even at its least is not replayed, so it keeps the lean read's speed.
	if n, err := src.Count(ctx, f); err == nil && !c.Plan.Replayable(n) {
		f.Lean = true
	}
	if out.in, err = src.inputOf(ctx, f, nil); err != nil {
		return out, err
	}
	if out.findings, err = analysis.Analyse(out.in, c); err != nil {
		return out, err
	}
	if !src.id.Admin {
		out.sim = analysis.NotSimulatedPlan(out.findings, pp, c,
			fmt.Sprintf("the plan replays every user's jobs: it is for root and admin_group (%s sees only their own)", termtext.Clean(src.id.User)))
		return out, nil
	}
	out.sim, err = analysis.SimulatePlan(out.in, &out.findings, analysis.SimPlanParams{WhatIf: wp, Plan: pp}, c)
	return out, err
}
