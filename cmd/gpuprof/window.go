package main

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/store"
)

// windowDefaultHelp ends the --since help of every command that analyses
// a period (plan, recommend, whatif, profiles): with no window given they
// all read the one default window, monthly.DefaultWindow's.
const windowDefaultHelp = " (with neither --since nor --until: the last complete month with jobs, as gpuprof report reports it; with none, the data's span; the output says which)"

// defaultWindow gives f the default window (monthly.DefaultWindow: the
// last complete month with jobs of cluster, else the data's span) when
// neither --since nor --until (nor --month) set it, and says by which
// rule f's window was chosen.
func defaultWindow(ctx context.Context, src *jobsource.Source, f *store.ViewFilter, cluster string) (analysis.WindowRule, error) {
	if !f.Since.IsZero() || !f.Until.IsZero() {
		return analysis.WindowGiven, nil
	}
	w, rule, err := monthly.DefaultWindow(ctx, src.Monthly(), time.Now(), cluster)
	if err != nil {
		return rule, err
	}
	f.Since, f.Until = w.From, w.To
	return rule, nil
}
