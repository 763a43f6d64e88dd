package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/gpuprof/gpuprof/cliview"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

type whatifOptions struct {
	Since, Until, Month string
	Cluster             string
	Local               bool
	JSON                bool
	Add, Remove         []string
	Partitions, QOS     []string
	Nodes               []string
	Growth, Horizon     string
	Target              string
	Seeds               int
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
	fs.StringVar(&o.Month, "month", "", "the window: a month, YYYY-MM, in the local time zone (or --since/--until)")
	fs.StringVar(&o.Since, "since", "", sinceHelp)
	fs.StringVar(&o.Until, "until", "", untilHelp)
	fs.BoolVar(&o.Local, "local", false, "read this host's jobs even when a collector is configured")
	fs.StringVar(&o.Cluster, "cluster", "", clusterHelp)
	fs.BoolVar(&o.JSON, "json", false, "print the answer as JSON (docs/json.md)")
	fs.StringArrayVar(&o.Add, "add", nil, `add GPUs: "2xH100" or "2xH100:partition" (repeatable; the model by GRES type or name)`)
	fs.StringArrayVar(&o.Remove, "remove", nil, `remove GPUs: "1xA100" (repeatable)`)
	fs.StringArrayVar(&o.Partitions, "partition", nil, `change or add a partition: "NAME:Nodes=…,MaxTime=…,PriorityTier=…" (repeatable)`)
	fs.StringArrayVar(&o.QOS, "qos", nil, `set a QOS's limits: "NAME:MaxTRESPerUser=gres/gpu=4,MaxJobsPerUser=2,GrpTRES=gres/gpu=8,Priority=10" (repeatable)`)
	fs.StringArrayVar(&o.Nodes, "node", nil, `the cluster's nodes, in place of the inventory (profiles, slurm.conf): "gpu[01-02]:4xh100[:partition]" (repeatable)`)
	fs.StringVar(&o.Growth, "growth", "", `demand growth per year: "30%" or "0.3" (with --horizon)`)
	fs.StringVar(&o.Horizon, "horizon", "", `how far ahead the growth goes: "12mo", "1y"`)
	fs.IntVar(&o.Seeds, "seeds", 5, "seeded runs per answer (1–100)")
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
	if !src.Identity().Admin {
		// A non-admin sees only their own jobs: their queue alone would
		// answer another question, silently.
		return fmt.Errorf("gpuprof whatif replays every user's jobs: it is for root and admin_group (%s sees only their own)", termtext.Clean(src.Identity().User))
	}
	// One cluster, and only its own slurm.conf.
	if err := src.ForCluster(ctx, &f, o.Cluster); err != nil {
		return err
	}
	rp := src.Conf().WhatIf()
	p.SlurmNodes, p.Sched, p.SchedKnown = rp.SlurmNodes, rp.Sched, rp.SchedKnown
	in, err := src.InputOf(ctx, f, nil)
	if err != nil {
		return err
	}
	res, err := capacity.RunWhatIf(in, p)
	if err != nil {
		if in.Conf.NotUsed != "" {
			return fmt.Errorf("%w (%s)", err, termtext.Clean(in.Conf.NotUsed))
		}
		return err
	}
	if o.JSON {
		return cliview.WriteJSON(w, res)
	}
	writeWhatIf(w, res)
	return nil
}

func writeWhatIf(w io.Writer, r capacity.WhatIf) {
	writeConfNote(w, r.Conf)
	printf(w, "What-if replay of %s to %s: %d GPU %s (%d arrived, %d running and %d pending at the start).\n",
		slurmext.FormatTime(r.Window.From, nil), slurmext.FormatTime(r.Window.To, nil), r.Jobs.Replayed, present.Plural(r.Jobs.Replayed, "job", "jobs"), r.Jobs.Arrived, r.Jobs.RunningAtStart, r.Jobs.PendingAtStart)
	if lo := r.Jobs.LeftOutWords(); lo != "" {
		printf(w, "Left out: %s\n", termtext.Clean(lo))
	}
	s := r.Scheduler
	printf(w, "Scheduler (%s): %s, backfill %s", s.Source, s.Priority, onOff(s.Backfill))
	if s.Backfill {
		printf(w, " (bf_interval %ds, bf_resolution %ds, bf_window %s, bf_max_job_test %d)", s.BfInterval, s.BfResolution, present.Seconds(float64(s.BfWindow)), s.BfMaxJobTest)
	}
	name := ""
	if r.Conf.Cluster != "" {
		name = " " + cliview.Clean(r.Conf.Cluster, 64)
	}
	printf(w, ".\nCluster%s (%s):", name, cliview.Clean(r.ClusterSource, 120))
	for _, n := range r.Nodes {
		mark := ""
		if n.Added {
			mark = " (added)"
		}
		printf(w, " %s %d× %s [%s]%s;", termtext.Clean(n.Name), n.GPUs, termtext.Clean(n.Model), termtext.Clean(strings.Join(n.Partitions, ",")), mark)
	}
	printf(w, "\n")
	for _, a := range r.Assumed {
		printf(w, "Assumed: %s.\n", termtext.Clean(a))
	}

	c := r.Calibration
	printf(w, "\nCalibration: today's configuration replayed against what happened (%d %s)\n", c.Jobs, present.Plural(c.Jobs, "job", "jobs"))
	tw := cliview.NewTable("PARTITION", "JOBS", "WAIT P50 REAL", "REPLAYED", "WAIT P95 REAL", "REPLAYED", "WAIT REPRODUCED", "P95 REPRODUCED")
	for _, p := range c.Partitions {
		tw.Row(termtext.Clean(p.Partition), fmt.Sprint(p.Jobs), present.Seconds(p.ObservedP50), present.Seconds(p.SimulatedP50), present.Seconds(p.ObservedP95), present.Seconds(p.SimulatedP95),
			pctOrDash(p.ReproducedWait), pctOrDash(p.ReproducedP95))
	}
	_ = tw.Write(w)
	printf(w, "Start times: mean absolute error %s, %s within 10 s; start order rank correlation %.2f.\n",
		present.Seconds(c.StartMAE), present.Percent(c.Within10s), c.RankCorrelation)
	if len(c.Worst) > 0 {
		var ws []string
		for _, e := range c.Worst {
			ws = append(ws, termtext.Clean(e.JobID)+" "+signedDuration(e.Replayed-e.Real))
		}
		printf(w, "Largest start errors (replayed − real): %s.\n", strings.Join(ws, ", "))
	}
	if c.Reliable {
		printf(w, "Calibration: good (docs/whatif.md thresholds, relative to the %s target).\n", present.Seconds(c.TargetP95Wait))
	} else {
		printf(w, "Calibration: POOR — answers below are unreliable: %s.\n", termtext.Clean(strings.Join(c.Problems, "; ")))
	}
	for _, u := range c.Unreproduced {
		printf(w, "Not reproduced: %s.\n", termtext.Clean(u))
	}
	if len(c.NotModelled) > 0 {
		printf(w, "The records show what the model does not know: %s.\n", termtext.Clean(strings.Join(c.NotModelled, "; ")))
	}

	printf(w, "\nToday, replayed (%d seeded %s: median, p10–p90)\n", r.Seeds, present.Plural(r.Seeds, "run", "runs"))
	writeScenario(w, r.Baseline)
	if r.Changed != nil {
		var ch []string
		for _, x := range r.Changes {
			ch = append(ch, termtext.Clean(cmp.Or(x.Words, x.Spec)))
		}
		if r.Growth != 0 {
			ch = append(ch, fmt.Sprintf("demand %+.0f %% a year for %d %s", 100*r.Growth, r.Months, present.Plural(r.Months, "month", "months")))
		}
		printf(w, "\nWith %s\n", strings.Join(ch, ", "))
		writeScenario(w, *r.Changed)
		for _, p := range r.Placement {
			printf(w, "Placement: %s.\n", termtext.Clean(p))
		}
		if lo := r.Changed.Jobs.LeftOutWords(); lo != "" {
			printf(w, "Left out with the changes: %s\n", termtext.Clean(lo))
		}
		if !c.Reliable {
			printf(w, "(unreliable: the calibration above is poor)\n")
		}
	}
}

func writeScenario(w io.Writer, s capacity.Scenario) {
	tw := cliview.NewTable("", "GPUS", "JOBS", "WAIT MEAN", "WAIT P50", "WAIT P95", "OCCUPANCY", "QUEUED GPU-H")
	row := func(kind string, g analysis.Group) {
		name := termtext.Clean(g.Name)
		if kind == "model" {
			name = modelLabel(g)
		}
		tw.Row(kind+" "+name, fmt.Sprint(g.GPUs), fmt.Sprintf("%.0f", g.Jobs.Median),
			durSpread(g.WaitMean), durSpread(g.WaitP50), durSpread(g.WaitP95),
			fmt.Sprintf("%s (%s–%s)", present.Percent(g.Occupancy.Median), present.Percent(g.Occupancy.P10), present.Percent(g.Occupancy.P90)),
			fmt.Sprintf("%.1f (%.1f–%.1f)", g.QueuedGPUHours.Median, g.QueuedGPUHours.P10, g.QueuedGPUHours.P90))
	}
	for _, g := range s.Partitions {
		row("partition", g)
	}
	for _, g := range s.Models {
		row("model", g)
	}
	_ = tw.Write(w)
}

// modelLabel is a GPU model's row heading: its name, and whether its jobs
// are the replay's placement (untyped jobs that could run on another
// model as well) rather than a demand for it.
func modelLabel(g analysis.Group) string {
	name := termtext.Clean(g.Name)
	switch {
	case g.PlacedOnly():
		return name + " (untyped jobs placed by the replay)"
	case g.Placed():
		return name + " (with untyped jobs placed by the replay)"
	}
	return name
}

// pctOrDash writes a share as a percentage, "–" when there is none.
func pctOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	return present.Percent(*v)
}

func durSpread(s analysis.Spread) string {
	if s.P10 == s.P90 {
		return present.Seconds(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", present.Seconds(s.Median), present.Seconds(s.P10), present.Seconds(s.P90))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// signedDuration is present.Seconds with a sign, "+00:00:12" or
// "-01:30:00", for a difference.
func signedDuration(sec float64) string {
	if sec < 0 {
		return "-" + present.Seconds(-sec)
	}
	return "+" + present.Seconds(sec)
}
