package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/store"
)

type whatifOptions struct {
	Since, Until, Month string
	Cluster             string
	Local               bool
	JSON                bool
	ListNodes           bool
	JobStarts           bool
	Add, Remove         []string
	Partitions, QOS     []string
	Nodes               []string
	Growth, Horizon     string
	Target              string
	Seeds               int
	// Config is the analysis configuration ([counting] shards_per_gpu:
	// the shards per GPU assumed where slurm.conf gives none), as plan's.
	Config string
}

func newWhatifCommand(g *globalOptions) *cobra.Command {
	o := &whatifOptions{}
	cmd := &cobra.Command{
		Use:   "whatif",
		Short: "Replay the recorded queue on today's cluster, calibrated, and on a changed one",
		Long: `Replays the window's GPU jobs (their eligible times, time limits, GPUs with
their type, nodes and run times as recorded) through a model of Slurm's
scheduler: the main scheduler, conservative backfill on the time limits,
priority/basic or multifactor priority, partitions and QOS limits
(docs/whatif.md).

First it replays today's configuration and compares it with what happened:
per partition the wait p50/p95 replayed and observed, the mean absolute
error of start times and the rank correlation of the start order. An answer
whose calibration misses the documented thresholds (relative to --target)
is marked unreliable, with what the data shows that the model does not
know; a partition whose observed waits the replay reproduces less than
half of is named, even when the error is small against the target.

Then, with changes, the same jobs on the changed cluster: GPUs added or
removed, a partition changed or added, QOS limits, and demand growth. Each
answer is the median and p10–p90 over --seeds runs, per partition and per
GPU model.

It answers for one cluster (--cluster, needed when the window holds jobs
of several) with that cluster's own slurm.conf: a slurm.conf whose
ClusterName is another cluster's is not used, and the answer says so
(docs/configuration.md). The cluster's nodes are --node when given, else
the recorded GPU inventory (profiles, with slurm.conf's GPU nodes), else
slurm.conf's GPU nodes. A job the cluster (or the changed
one) could never start is left out and counted with why; a window with no
job left is an error that says why. It replays every user's jobs, so it is
for root and admin_group.`,
		Example: `  gpuprof whatif --month 2026-11
  gpuprof whatif --month 2026-11 --add 2xH100
  gpuprof whatif --since 2026-11-01 --until 2026-12-01 --remove 1xA100 --seeds 10
  gpuprof whatif --month 2026-11 --growth 30% --horizon 12mo
  gpuprof whatif --month 2026-11 --partition debug:Nodes=gpu01,MaxTime=1:00:00,PriorityTier=2
  gpuprof whatif --month 2026-11 --qos normal:MaxTRESPerUser=gres/gpu=4`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWhatif(cmd.Context(), g, o, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Month, "month", "", "the window: a month, YYYY-MM, in the local time zone (or --since/--until; none: the last complete month with jobs, as gpuprof report, else the data's span)")
	fs.StringVar(&o.Since, "since", "", sinceHelp+windowDefaultHelp)
	fs.StringVar(&o.Until, "until", "", untilHelp)
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs even when a collector is configured")
	fs.StringVar(&o.Cluster, "cluster", "", clusterHelp)
	fs.BoolVar(&o.JSON, "json", false, "print the answer as JSON (docs/json.md)")
	fs.BoolVar(&o.JobStarts, "job-starts", false, "with --json: list each replayed job's start in every seeded run (baseline.job_starts, changed.job_starts), to compare a prediction job by job; not with --growth")
	fs.BoolVar(&o.ListNodes, "list-nodes", false, "list each node of the replayed cluster (default: a summary per GPU model and partitions)")
	fs.StringArrayVar(&o.Add, "add", nil, `add GPUs: "2xH100" or "2xH100:partition" (repeatable; the model by GRES type or name)`)
	fs.StringArrayVar(&o.Remove, "remove", nil, `remove GPUs: "1xA100" (repeatable)`)
	fs.StringArrayVar(&o.Partitions, "partition", nil, `change or add a partition: "NAME:Nodes=…,MaxTime=…,PriorityTier=…" (repeatable)`)
	fs.StringArrayVar(&o.QOS, "qos", nil, `set a QOS's limits: "NAME:MaxTRESPerUser=gres/gpu=4,MaxJobsPerUser=2,GrpTRES=gres/gpu=8,Priority=10" (repeatable)`)
	fs.StringArrayVar(&o.Nodes, "node", nil, `the cluster's nodes, in place of the inventory (profiles, slurm.conf): "gpu[01-02]:4xh100[:partition]" (repeatable)`)
	fs.StringVar(&o.Growth, "growth", "", `demand growth per year: "30%" or "0.3" (with --horizon)`)
	fs.StringVar(&o.Horizon, "horizon", "", `how far ahead the growth goes: "12mo", "1y"`)
	fs.IntVar(&o.Seeds, "seeds", 5, "seeded runs per answer (1–100)")
	fs.StringVar(&o.Config, "analysis-config", "", "analysis settings (TOML, see contrib/analysis.toml.example; default: built-in): [counting] shards_per_gpu, as plan's")
	fs.StringVar(&o.Target, "target", "", `the p95 wait the answer is for, e.g. "30m": the calibration's thresholds are relative to it (default: plan.target_p95_wait's, 1h)`)
	return cmd
}

// params turns the flags into the what-if's parameters (the window and
// the changes), refusing what they cannot mean.
func (o *whatifOptions) params() (capacity.WhatIfParams, store.ViewFilter, error) {
	var p capacity.WhatIfParams
	var f store.ViewFilter
	if o.Seeds < 1 || o.Seeds > 100 {
		return p, f, usagef("--seeds: want 1 to 100, got %d", o.Seeds)
	}
	p.Seeds = o.Seeds
	if o.JobStarts && !o.JSON {
		return p, f, usagef("--job-starts goes with --json")
	}
	if o.JobStarts && o.Growth != "" {
		return p, f, usagef("--job-starts lists recorded jobs: not with --growth, whose added copies are none")
	}
	p.JobStarts = o.JobStarts
	if o.Target != "" {
		d, err := time.ParseDuration(o.Target)
		if err != nil || d <= 0 {
			return p, f, usagef("--target: want a positive duration such as \"1h\" or \"30m\", got %q", o.Target)
		}
		p.Target = d
	}
	if o.Month != "" {
		if o.Since != "" || o.Until != "" {
			return p, f, usagef("--month excludes --since and --until")
		}
		w, err := parseMonth(o.Month, time.Now(), time.Local)
		if err != nil {
			return p, f, err
		}
		f.Since, f.Until = w.From, w.To
	} else {
		jf := jobsOptions{Since: o.Since, Until: o.Until}
		var err error
		if f, err = jf.filter(); err != nil {
			return p, f, err
		}
	}
	if (o.Growth == "") != (o.Horizon == "") {
		return p, f, usagef("--growth and --horizon go together")
	}
	specs := capacity.Specs{Add: o.Add, Remove: o.Remove, Partitions: o.Partitions, QOS: o.QOS, Nodes: o.Nodes, Growth: o.Growth, Horizon: o.Horizon}
	if err := capacity.ParseSpecs(specs, &p); err != nil {
		var se *capacity.SpecError
		if errors.As(err, &se) {
			return p, f, usagef("--%s: %v", se.Spec, se.Err)
		}
		return p, f, usagef("%v", err)
	}
	return p, f, nil
}

func runWhatif(ctx context.Context, g *globalOptions, o *whatifOptions, w io.Writer) error {
	p, f, err := o.params()
	if err != nil {
		return err
	}
	src, err := openSource(ctx, g, o.Local)
	if err != nil {
		return err
	}
	defer src.Close()
	c, err := analysis.ConfigAt(o.Config)
	if err != nil {
		return err
	}
	res, err := monthly.WhatIf(ctx, src.Scope(), askOf(f, o.Cluster), c, p)
	if err != nil {
		return err
	}
	rule := res.Rule
	if o.JSON {
		return cliview.WriteJSON(w, res.WhatIf)
	}
	if r := rule.Words(); r != "" {
		// The window replayed was the default one (monthly.DefaultWindow).
		printf(w, "Window: %s.\n", r)
	}
	cliview.WriteWhatIf(w, res.WhatIf, o.ListNodes)
	return nil
}
