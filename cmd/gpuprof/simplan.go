package main

import (
	"context"
	"io"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/store"
)

// analyseAndPlan reads the jobs f selects of one cluster, with only its
// own slurm.conf, in the default window when f has none, and analyses
// and plans them (monthly.AnalyseAndPlan). A plan that runs long shows
// its progress on stderr when it is a terminal and o.Quiet is not set.
func analyseAndPlan(ctx context.Context, g *globalOptions, f store.ViewFilter, o analysisOptions, c analysis.Config, pp analysis.PlanParams, history bool, stderr io.Writer) (monthly.Planned, error) {
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return monthly.Planned{}, err
	}
	defer src.Close()
	return monthly.AnalyseAndPlan(ctx, src.Scope(), monthly.PlanParams{
		Ask:    monthly.Ask{Window: analysis.Window{From: f.Since, To: f.Until}, Cluster: o.Cluster, WithSeries: f.WithSeries},
		Config: c, Plan: pp, History: history,
		Progress: cliview.PlanProgressOn{W: stderr, On: !o.Quiet && isTerminal(stderr)},
	})
}
