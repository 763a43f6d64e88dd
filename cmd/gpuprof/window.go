package main

import (
	"context"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/store"
)

// windowDefaultHelp ends the --since help of every command that analyses
// a period (plan, recommend, whatif, profiles): with no window given they
// all read the one default window, monthly.DefaultWindow's.
const windowDefaultHelp = " (with neither --since nor --until: the last complete month with jobs, as gpuprof report reports it; with none, the data's span; the output says which)"

// analyse reads the window f asks for, of one cluster (monthly.Analyse:
// the default window when f gives none, the cluster's own slurm.conf),
// and analyses it with c: profiles and recommend --no-simulate.
func analyse(ctx context.Context, g *globalOptions, f store.ViewFilter, local bool, cluster string, c analysis.Config) (monthly.Analysed, error) {
	src, err := openSource(ctx, g, local)
	if err != nil {
		return monthly.Analysed{}, err
	}
	defer src.Close()
	return monthly.Analyse(ctx, src.Scope(), askOf(f, cluster), c)
}

// askOf is what the flags f and --cluster ask of the window pipeline.
func askOf(f store.ViewFilter, cluster string) monthly.Ask {
	return monthly.Ask{Window: analysis.Window{From: f.Since, To: f.Until}, Cluster: cluster, User: f.User, WithSeries: f.WithSeries}
}
