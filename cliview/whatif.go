package cliview

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/texttable"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// WriteWhatIf writes `gpuprof whatif`: the window and the cluster
// replayed (its nodes summarised per GPU model and partitions; each node
// with listNodes), the calibration against what happened, today's replay
// and, with changes, the changed one.
func WriteWhatIf(w io.Writer, r capacity.WhatIf, listNodes bool) {
	WriteConfNote(w, r.Conf)
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
		name = " " + termtext.Short(r.Conf.Cluster, 64)
	}
	printf(w, ".\nCluster%s (%s): %s\n", name, termtext.Short(r.ClusterSource, 120), nodeGroups(r.Nodes))
	if listNodes {
		for _, n := range r.Nodes {
			mark := ""
			if n.Added {
				mark = " (added)"
			}
			printf(w, "  %s %d× %s [%s]%s\n", termtext.Clean(n.Name), n.GPUs, termtext.Clean(n.Model), termtext.Clean(strings.Join(n.Partitions, ",")), mark)
		}
	} else if len(r.Nodes) > 0 {
		printf(w, "(--list-nodes lists each node.)\n")
	}
	for _, a := range r.Assumed {
		printf(w, "Assumed: %s.\n", termtext.Clean(a))
	}

	c := r.Calibration
	printf(w, "\nCalibration: today's configuration replayed against what happened (%d %s)\n", c.Jobs, present.Plural(c.Jobs, "job", "jobs"))
	tw := texttable.New("PARTITION", "JOBS", "WAIT P50 REAL", "REPLAYED", "WAIT P95 REAL", "REPLAYED", "WAIT REPRODUCED", "P95 REPRODUCED")
	for _, p := range c.Partitions {
		tw.Row(termtext.Clean(p.Partition), fmt.Sprint(p.Jobs), present.Seconds(p.ObservedP50), present.Seconds(p.SimulatedP50), present.Seconds(p.ObservedP95), present.Seconds(p.SimulatedP95),
			present.PercentOrNone(p.ReproducedWait), present.PercentOrNone(p.ReproducedP95))
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

// writeScenario is a scenario's table: per partition and per GPU model,
// the GPUs, the jobs and the waits and occupancy over the seeds.
func writeScenario(w io.Writer, s capacity.Scenario) {
	tw := texttable.New("", "GPUS", "JOBS", "WAIT MEAN", "WAIT P50", "WAIT P95", "OCCUPANCY", "QUEUED GPU-H")
	row := func(kind string, g analysis.Group) {
		name := termtext.Clean(g.Name)
		if kind == "model" {
			name = modelLabel(g)
		}
		tw.Row(kind+" "+name, fmt.Sprint(g.GPUs), fmt.Sprintf("%.0f", g.Jobs.Median),
			durSpread(g.WaitMean), durSpread(g.WaitP50), durSpread(g.WaitP95),
			fmt.Sprintf("%s (%s–%s)", present.Percent(g.Occupancy.Median), present.Percent(g.Occupancy.P10), present.Percent(g.Occupancy.P90)),
			fmt.Sprintf("%s (%s–%s)", present.GPUHours(g.QueuedGPUHours.Median), present.GPUHours(g.QueuedGPUHours.P10), present.GPUHours(g.QueuedGPUHours.P90)))
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

// durSpread is a duration over the seeds: the median, with p10–p90 when
// they differ.
func durSpread(s analysis.Spread) string {
	if s.P10 == s.P90 {
		return present.Seconds(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", present.Seconds(s.Median), present.Seconds(s.P10), present.Seconds(s.P90))
}

// onOff writes a switch as Slurm's configuration does.
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

// nodeGroups summarises the replay's nodes per GPU model and partitions
// (and whether a change added them): "1,213 nodes, 9,704 GPUs: 600 nodes
// of 8× A100 [ls] (4,800 GPUs); …", the largest groups first.
func nodeGroups(nodes []capacity.SimNode) string {
	if len(nodes) == 0 {
		return "no GPU nodes."
	}
	type key struct {
		model, parts string
		added        bool
	}
	type group struct {
		key
		nodes, gpus int
		per         map[int]int // nodes by GPUs per node
	}
	idx := map[key]*group{}
	var groups []*group
	total := 0
	for _, n := range nodes {
		k := key{n.Model, strings.Join(n.Partitions, ","), n.Added}
		g := idx[k]
		if g == nil {
			g = &group{key: k, per: map[int]int{}}
			idx[k] = g
			groups = append(groups, g)
		}
		g.nodes++
		g.gpus += n.GPUs
		g.per[n.GPUs]++
		total += n.GPUs
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.gpus, a.gpus), cmp.Compare(a.model, b.model), cmp.Compare(a.parts, b.parts))
	})
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		shape := ""
		if len(g.per) == 1 {
			for per := range g.per {
				shape = fmt.Sprintf("%d× ", per)
			}
		}
		model := cmp.Or(termtext.Short(g.model, 60), "unknown model")
		p := fmt.Sprintf("%s of %s%s [%s] (%s)", present.Count(g.nodes, "node", "nodes"), shape, model,
			termtext.Short(cmp.Or(g.parts, "no partition"), 120), present.Count(g.gpus, "GPU", "GPUs"))
		if g.added {
			p += " (added)"
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("%s, %s: %s.", present.Count(len(nodes), "node", "nodes"), present.Count(total, "GPU", "GPUs"), strings.Join(parts, "; "))
}
