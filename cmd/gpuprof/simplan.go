package main

import (
	"context"
	"fmt"
	"io"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// planned is an analysis with its simulated plan: the input (with what a
// replay reads), the findings, whose recommendations carry their
// simulated effects, and the plan.
type planned struct {
	in       analysis.Input
	findings analysis.Findings
	sim      capacity.SimPlan
}

// analyseAndPlan reads the jobs f selects, analyses them with c and makes
// the simulated plan with pp. The plan replays every user's jobs: for a
// caller who sees only their own, it is not simulated, and says so. A
// plan that runs long shows its progress on stderr when it is a terminal
// and o.Quiet is not set.
func analyseAndPlan(ctx context.Context, g *globalOptions, f store.ViewFilter, o analysisOptions, c analysis.Config, pp analysis.PlanParams, stderr io.Writer) (planned, error) {
	var out planned
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return out, err
	}
	defer src.Close()
	// One cluster, and only its own slurm.conf.
	if err := src.ForCluster(ctx, &f, o.Cluster); err != nil {
		return out, err
	}
	wp := src.Conf().WhatIf()
	// The replay reads node lists, node counts and pending reasons, which
	// the lean read leaves out; a window too large for the replay budget
	// even at its least is not replayed, so it keeps the lean read's speed.
	if n, err := src.Count(ctx, f); err == nil && !c.Plan.Replayable(n) {
		f.Lean = true
	}
	if out.in, err = src.InputOf(ctx, f, nil); err != nil {
		return out, err
	}
	if out.findings, err = analysis.Analyse(out.in, c); err != nil {
		return out, err
	}
	if !src.Identity().Admin {
		out.sim = capacity.NotSimulatedPlan(out.findings, pp, c,
			fmt.Sprintf("the plan replays every user's jobs: it is for root and admin_group (%s sees only their own)", termtext.Clean(src.Identity().User)))
		out.sim.Conf = out.in.Conf
		return out, nil
	}
	prog := startPlanProgress(stderr, !o.Quiet && isTerminal(stderr))
	defer prog.Close()
	out.sim, err = capacity.SimulatePlan(out.in, &out.findings, capacity.SimPlanParams{WhatIf: wp, Plan: pp, Progress: prog.Func()}, c)
	return out, err
}
