package monthly

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/termtext"
)

// Ask is what a command asks the pipeline about: a window and a cluster.
type Ask struct {
	// Window is the window given (--since, --until, --month); with both
	// ends zero, DefaultWindow's: the last complete month with jobs,
	// else the data's span.
	Window analysis.Window
	// Cluster is the cluster asked for (--cluster; "": the one of the
	// window's jobs).
	Cluster string
	// User keeps one user's jobs (profiles --user; "": every job the
	// caller may read).
	User string
	// WithSeries reads the GPUs' time series (the memory floor, service
	// detection and VRAM need read them).
	WithSeries bool
}

// Bound is the one way from an Ask to the jobs it reads: the window (the
// default one when none is given, and by which rule), sc bound to the
// one cluster of the answer with its own Slurm configuration
// (jobsource.Scope.Bind), and the query of the window's jobs of that
// cluster.
func Bound(ctx context.Context, sc jobsource.Scope, a Ask) (jobsource.Scope, jobsource.Query, analysis.WindowRule, error) {
	w, rule := a.Window, analysis.WindowGiven
	if w.From.IsZero() && w.To.IsZero() {
		var err error
		if w, rule, err = DefaultWindow(ctx, sc, time.Now(), a.Cluster); err != nil {
			return sc, jobsource.Query{}, rule, err
		}
	}
	q := jobsource.Query{User: a.User, Window: w, WithSeries: a.WithSeries}
	b, err := sc.Bind(ctx, q, a.Cluster)
	if err != nil {
		return sc, q, rule, err
	}
	q.Cluster, q.Jobs = b.Cluster, b.Jobs
	return b, q, rule, nil
}

// Analysed is the jobs an Ask read and what the analysis found in them.
type Analysed struct {
	Input    analysis.Input
	Findings analysis.Findings
}

// Analyse reads the jobs a asks for (Bound), lean (the analysis reads no
// TRES text, node list or reason), and analyses them with c: what gpuprof
// profiles and recommend --no-simulate answer.
func Analyse(ctx context.Context, sc jobsource.Scope, a Ask, c analysis.Config) (Analysed, error) {
	var out Analysed
	sc, q, rule, err := Bound(ctx, sc, a)
	if err != nil {
		return out, err
	}
	q.Lean = true
	out.Input, err = sc.Input(ctx, q, nil)
	out.Input.WindowRule = rule
	if err != nil {
		return out, err
	}
	out.Findings, err = analysis.Analyse(out.Input, c)
	return out, err
}

// WhatIfAnswer is a what-if's answer and by which rule its window was
// chosen.
type WhatIfAnswer struct {
	capacity.WhatIf
	Rule analysis.WindowRule
}

// WhatIf replays the jobs a asks for (Bound; in full: the replay reads
// node lists and pending reasons) on the cluster as its Slurm
// configuration and the recorded inventory describe it, and on the one p
// changes: what gpuprof whatif answers. It replays every user's jobs, so
// it is for admins only (store.Caller.RequireAdmin). c gives the shards
// per GPU assumed where slurm.conf gives none, as plan's.
func WhatIf(ctx context.Context, sc jobsource.Scope, a Ask, c analysis.Config, p capacity.WhatIfParams) (WhatIfAnswer, error) {
	var out WhatIfAnswer
	// A non-admin sees only their own jobs: their queue alone would
	// answer another question, silently.
	if err := sc.Caller.RequireAdmin("gpuprof whatif replays every user's jobs"); err != nil {
		return out, err
	}
	sc, q, rule, err := Bound(ctx, sc, a)
	if err != nil {
		return out, err
	}
	// The same assumption as plan, recommend and the report make.
	p.ShardsPerGPU = c.Counting.ShardsPerGPU
	rp := sc.Conf.WhatIf()
	p.SlurmNodes, p.Sched, p.SchedKnown = rp.SlurmNodes, rp.Sched, rp.SchedKnown
	in, err := sc.Input(ctx, q, nil)
	if err != nil {
		return out, err
	}
	in.WindowRule = rule
	out.Rule = rule
	if out.WhatIf, err = capacity.RunWhatIf(in, p); err != nil && in.Conf.NotUsed != "" {
		return out, fmt.Errorf("%w (%s)", err, termtext.Clean(in.Conf.NotUsed))
	}
	return out, err
}
