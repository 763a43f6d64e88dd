package cliview

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/texttable"
	"github.com/gpuprof/gpuprof/termtext"
)

// ProfilesJSON is the stable JSON shape of `gpuprof profiles --json`.
type ProfilesJSON struct {
	Profiles []analysis.TaskProfile  `json:"profiles"`
	Summary  analysis.ClusterSummary `json:"summary"`
	// Conf is the cluster answered for and the slurm.conf bound to it
	// (docs/configuration.md, "Which slurm.conf describes a cluster").
	Conf analysis.ConfUse `json:"conf"`
	// Counting is how GPU time was counted (analysis.Counting): the
	// window and what was assumed for shard jobs.
	Counting analysis.Counting `json:"counting"`
}

// ToProfilesJSON shapes the analysis's profiles and summary (counted with
// its own window, so their GPU-hours are the report's) and the slurm.conf
// used for `gpuprof profiles`; no profiles are [], not null.
func ToProfilesJSON(f analysis.Findings, conf analysis.ConfUse) ProfilesJSON {
	out := ProfilesJSON{Profiles: f.Profiles, Summary: f.Summary, Conf: conf, Counting: f.Counting}
	if out.Profiles == nil {
		out.Profiles = []analysis.TaskProfile{}
	}
	return out
}

// WriteProfiles writes `gpuprof profiles`: the task table, the top tasks
// in sentences, and the cluster's GPU-hours by class, by bottleneck and
// the queue wait per partition.
func WriteProfiles(w io.Writer, p ProfilesJSON, top int) error {
	s := p.Summary
	if s.Jobs == 0 {
		printf(w, "No jobs recorded in this period.\n")
		return nil
	}
	printf(w, "Task profiles: %d GPU %s in %s, %s GPU-hours.\n", s.GPUJobs-s.NeverStarted, present.Plural(s.GPUJobs-s.NeverStarted, "run", "runs"), present.Count(len(p.Profiles), "recurring task", "recurring tasks"), present.GPUHours(s.GPUHours))
	if s.NeverStarted > 0 {
		printf(w, "%s never started (cancelled while pending, or pending): not runs, so in no task, class or failure rate.\n",
			present.Count(s.NeverStarted, "GPU job", "GPU jobs"))
	}
	printf(w, "\n")
	if err := writeTaskTable(w, p.Profiles); err != nil {
		return err
	}
	if top > 0 {
		printf(w, "\n")
	}
	for i, t := range p.Profiles {
		if i >= top {
			break
		}
		printf(w, "%s\n", describeTask(t, s.GPUHours))
	}

	printf(w, "\nCluster: %d jobs (%d with GPU readings, %d without, %d CPU-only), %s GPU-hours.\n",
		s.Jobs, s.WithGPUData, s.WithoutGPUData, s.CPUJobs, present.GPUHours(s.GPUHours))
	if l := measureSentence(s); l != "" {
		printf(w, "%s\n", l)
	}
	if err := writeClusterTables(w, s); err != nil {
		return err
	}
	printf(w, "(percentiles: %s)\n", s.PercentileMethod)
	if l := s.NoLimitSentence(); l != "" {
		printf(w, "%s\n", l)
	}
	// The data window, the same line as plan's and the report's, and an
	// assumption the GPU-hours above rest on (the shards per GPU of shard
	// jobs whose node's count is unknown).
	Counting(w, p.Counting)
	return nil
}

// writeTaskTable writes the task table, and under it what a GPUS USED
// cell of "–" or "*" means where one has it.
func writeTaskTable(w io.Writer, profiles []analysis.TaskProfile) error {
	// Tables pad by display width (table), so that a CJK or emoji task
	// name keeps the columns after it straight.
	tasks := texttable.New("USER", "TASK", "CLASS", "RUNS", "GPU-H", "GPUS REQ/USED", "VRAM P95", "UTIL P50", "RUN P50", "RUN P95", "FAILED", "TIMEOUT")
	for _, c := range []int{3, 4, 5, 6, 7, 8, 9, 10, 11} {
		tasks.Right[c] = true
	}
	noUse, partUse := false, false
	for _, t := range profiles {
		vram := "-"
		switch {
		case t.VRAMPeakFrac.N > 0:
			vram = present.Percent(t.VRAMPeakFrac.P95)
		case t.Preallocated > 0:
			vram = "prealloc"
		}
		util := "-"
		if t.UtilMean.N > 0 {
			util = present.Util(t.UtilMean.P50) + " %"
		}
		gpus := gpusReqUsed(t)
		noUse = noUse || t.GPUsUsed == nil
		partUse = partUse || (t.GPUsUsed != nil && t.UsageRuns < t.Jobs)
		// No run ended (all still running, or none started): the run time
		// is unknown, not 0; no run finished: the rates are unknown.
		run50, run95, failed, timeout := present.Dash, present.Dash, present.Dash, present.Dash
		if t.Duration.N > 0 {
			run50, run95 = present.Seconds(t.Duration.P50), present.Seconds(t.Duration.P95)
		}
		if t.Finished > 0 {
			failed, timeout = present.Percent(t.FailureRate), present.Percent(t.TimeoutRate)
		}
		tasks.Row(termtext.Short(t.User, 16), termtext.Short(present.JobName(t.Name), 28), t.ClassLabel(), fmt.Sprint(t.Jobs), present.GPUHours(t.GPUHours), gpus,
			vram, util, run50, run95, failed, timeout)
	}
	if err := tasks.Write(w); err != nil {
		return err
	}
	switch {
	case noUse && partUse:
		printf(w, "(GPUS USED: – no run has GPU utilisation readings, so the GPUs used are unknown; * over the runs with readings only)\n")
	case noUse:
		printf(w, "(GPUS USED: – no run has GPU utilisation readings, so the GPUs used are unknown)\n")
	case partUse:
		printf(w, "(GPUS USED: * over the runs with GPU utilisation readings only)\n")
	}
	return nil
}

// writeClusterTables writes the cluster's GPU-hours by class, by
// bottleneck (where a job has one) and the queue wait per partition.
func writeClusterTables(w io.Writer, s analysis.ClusterSummary) error {
	// The three tables share their column widths, as one tabwriter
	// block did: the blank lines between them are rows of no cells.
	tw := texttable.New("CLASS", "JOBS", "GPU-H", "SHARE")
	for _, c := range []int{1, 2, 3, 4, 5} {
		tw.Right[c] = true
	}
	for _, c := range s.ByClass {
		if c.Jobs > 0 {
			tw.Row(c.Class.String(), fmt.Sprint(c.Jobs), present.GPUHours(c.GPUHours), share(c.GPUHours, s.GPUHours))
		}
	}
	if slices.ContainsFunc(s.ByBottleneck, func(k analysis.KindShare) bool { return k.Jobs > 0 }) {
		tw.Row()
		tw.Row("BOTTLENECK", "JOBS", "GPU-H", "SHARE")
		for _, k := range s.ByBottleneck {
			if k.Jobs > 0 {
				tw.Row(k.Kind.String(), fmt.Sprint(k.Jobs), present.GPUHours(k.GPUHours), share(k.GPUHours, s.GPUHours))
			}
		}
	}
	tw.Row()
	tw.Row("PARTITION", "JOBS", "GPU-H", "WAIT P50", "WAIT P95", "LIMIT/RUN P50")
	for _, ps := range s.Partitions {
		wait50, wait95, ratio := "-", "-", "-"
		if ps.Wait.N > 0 {
			wait50, wait95 = present.Seconds(ps.Wait.P50), present.Seconds(ps.Wait.P95)
		}
		if ps.LimitRatio.N > 0 {
			ratio = present.Times(ps.LimitRatio.P50)
		}
		tw.Row(present.OrMissing(termtext.Short(ps.Partition, 16)), fmt.Sprint(ps.Jobs), present.GPUHours(ps.GPUHours), wait50, wait95, ratio)
	}
	return tw.Write(w)
}

// gpusReqUsed is the GPUS REQ/USED cell: the GPUs requested per run (the
// scheduler's record, always known) and those used, "–" when no run has
// utilisation readings (sacct history) and marked "*" when only some have;
// the report's task table writes the same (present.GPUsPerRun).
func gpusReqUsed(t analysis.TaskProfile) string {
	return present.GPUsPerRun(t.GPUsRequested, t.GPUsUsed, t.UsageRuns, t.Jobs)
}

// share is part as a percentage of total, "-" without a total.
func share(part, total float64) string {
	if total <= 0 {
		return "-"
	}
	return present.Percent(part / total)
}

// describeTask says in one sentence what a task's runs did.
func describeTask(t analysis.TaskProfile, total float64) string {
	var b strings.Builder
	mostly := "mostly " + strings.ReplaceAll(t.Class.String(), "_", " ") + " by GPU-hours"
	if t.ClassMixed {
		mostly = "of mixed classes (none holds half its GPU-hours)"
	}
	part := present.OrMissing(termtext.Short(t.Partition, 16))
	if t.PartitionMixed {
		part = "partitions mixed"
	}
	fmt.Fprintf(&b, "%s/%s (%s, %s): %d %s, %s GPU-hours (%s of the cluster), %s.",
		termtext.Short(t.User, 16), termtext.Short(present.JobName(t.Name), 28), termtext.Short(present.Account(t.Account), 16), part,
		t.Jobs, present.Plural(t.Jobs, "run", "runs"), present.GPUHours(t.GPUHours), share(t.GPUHours, total), mostly)
	if t.VRAMPeakFrac.N > 0 {
		fmt.Fprintf(&b, " VRAM peak %s of the card at p95 (max %s)", present.Percent(t.VRAMPeakFrac.P95), present.Percent(t.VRAMPeakFrac.Max))
		if t.Preallocated > 0 {
			fmt.Fprintf(&b, "; %d %s the card", t.Preallocated, present.Plural(t.Preallocated, "run preallocated", "runs preallocated"))
		}
		b.WriteString(".")
	} else if t.Preallocated > 0 {
		fmt.Fprintf(&b, " Its framework preallocated the whole card in %d %s, so the real memory need is unknown.", t.Preallocated, present.Plural(t.Preallocated, "run", "runs"))
	}
	if t.UtilMean.N > 0 {
		fmt.Fprintf(&b, " Median utilisation %s %%.", present.Util(t.UtilMean.P50))
	}
	// Used and unused are over the runs with readings: compare them with
	// each other, not with the requests of runs without readings.
	if t.GPUsUsed != nil && t.GPUsUnused != nil && *t.GPUsUnused >= 0.5 {
		held := *t.GPUsUsed + *t.GPUsUnused
		fmt.Fprintf(&b, " Asks for %s per run but uses %.1f", gpusPerRun(held), *t.GPUsUsed)
		if t.UsageRuns < t.Jobs {
			fmt.Fprintf(&b, " (over the %d of %d runs with readings)", t.UsageRuns, t.Jobs)
		}
		b.WriteString(".")
	} else if t.GPUsUsed == nil && t.GPUsRequested > 0 {
		fmt.Fprintf(&b, " Asks for %s per run; how many it used is unknown (no GPU readings).", gpusPerRun(t.GPUsRequested))
	}
	if t.Finished > 0 && (t.Failures > 0 || t.Timeouts > 0) {
		fmt.Fprintf(&b, " Of %d finished %s, %d failed and %d timed out.", t.Finished, present.Plural(t.Finished, "run", "runs"), t.Failures, t.Timeouts)
	}
	for _, k := range t.ByBottleneck {
		if t.GPUHours > 0 && k.GPUHours/t.GPUHours >= 0.5 {
			fmt.Fprintf(&b, " Mostly %s (%s of its GPU-hours).", strings.ReplaceAll(k.Kind.String(), "_", " "), share(k.GPUHours, t.GPUHours))
		}
	}
	return b.String()
}

// gpusPerRun is a mean of GPUs per run to one decimal: "1 GPU" when
// exactly one, else "2.5 GPUs".
func gpusPerRun(v float64) string {
	if v == 1 {
		return "1 GPU"
	}
	return present.Number(v, 1) + " GPUs"
}
