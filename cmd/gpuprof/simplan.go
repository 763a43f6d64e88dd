package main

import (
	"context"
	"io"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/store"
)

// analyseAndPlan reads the jobs f selects of one cluster, with only its
// own slurm.conf, in the default window when f has none (defaultWindow),
// and analyses and plans them (monthly.AnalyseAndPlan). A
// plan that runs long shows its progress on stderr when it is a terminal
// and o.Quiet is not set.
func analyseAndPlan(ctx context.Context, g *globalOptions, f store.ViewFilter, o analysisOptions, c analysis.Config, pp analysis.PlanParams, history bool, stderr io.Writer) (monthly.Planned, error) {
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return monthly.Planned{}, err
	}
	defer src.Close()
	rule, err := defaultWindow(ctx, src, &f, o.Cluster)
	if err != nil {
		return monthly.Planned{}, err
	}
	return monthly.AnalyseAndPlan(ctx, src.Monthly(), monthly.PlanParams{
		Query:  monthly.Query{Cluster: o.Cluster, Window: analysis.Window{From: f.Since, To: f.Until}, Rule: rule, WithSeries: f.WithSeries},
		Config: c, Plan: pp, History: history,
		StartProgress: func() (func(capacity.PlanProgress), func()) {
			prog := cliview.StartPlanProgress(stderr, !o.Quiet && isTerminal(stderr))
			return prog.Func(), prog.Close
		},
	})
}
