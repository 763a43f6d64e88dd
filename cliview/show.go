package cliview

// show.go prints gpuprof show: one job's scheduler view, its profile on
// every node it ran on, the analysis and the hints.

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/spark"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// maxShowNames bounds how many ids the line above several jobs lists.
const maxShowNames = 20

// Show prints the jobs the id ref names (views, in the order given) as
// gpuprof show does: when it names several, a line naming them (at most
// maxShowNames, each with its cluster when they span several), then each
// job's detail (see writeJobDetail) under c, with carbon's CO2e line and
// the hints drawn from types(cluster), the GPU types of the job's
// cluster (nil: none known). now is the read time: a running job's
// elapsed time counts to it (store.JobView.ElapsedAt).
func Show(w io.Writer, ref slurmext.JobRef, views []store.JobView, c analysis.Config, carbon ShowCarbon, types func(cluster string) []analysis.GPUType, now time.Time) {
	if len(views) > 1 {
		clusters := map[string]bool{}
		for _, v := range views {
			clusters[v.Cluster] = true
		}
		names := make([]string, 0, min(len(views), maxShowNames))
		for _, v := range views[:min(len(views), maxShowNames)] {
			name := termtext.Short(v.SlurmID(), 64)
			if len(clusters) > 1 {
				name += " (cluster " + termtext.Short(v.Cluster, 64) + ")"
			}
			names = append(names, name)
		}
		more := ""
		if len(views) > maxShowNames {
			more = fmt.Sprintf(" and %d more", len(views)-maxShowNames)
		}
		printf(w, "%s names %d jobs: %s%s\n", ref, len(views), strings.Join(names, ", "), more)
	}
	for i, v := range views {
		if i > 0 {
			printf(w, "\n")
		}
		writeJobDetail(w, v, c, carbon, types(v.Cluster), now)
	}
}

// ShowCarbon is what show says of a job's emissions: nothing without a
// configured factor (Carbon nil, [carbon] unset); else its CO2e beside
// its kWh, or why it is unknown, counted up to Now for a running job.
type ShowCarbon struct {
	Carbon *analysis.Carbon
	Now    time.Time
}

// line is show's energy-and-CO2e line of job j; "" without a factor.
func (s ShowCarbon) line(j analysis.Job, c analysis.Config) string {
	if s.Carbon == nil {
		return ""
	}
	kWh, kg, ok := s.Carbon.JobCO2e(j, c, s.Now)
	if !ok {
		return "CO2e unknown: no energy reading on every GPU, or an hour of the run without a factor (" + termtext.Short(s.Carbon.Source, 200) + ")"
	}
	return "energy " + present.Energy(kWh*3.6e6) + ", " + present.CO2e(kg) + " (" + termtext.Short(s.Carbon.Source, 200) + ")"
}

// SetJSON gives each job of show --json (out, JobsJSON of views) its
// co2e_kg and the factors' source; both stay absent without a factor or
// a known CO2e.
func (s ShowCarbon) SetJSON(out []JobJSON, views []store.JobView, c analysis.Config) {
	if s.Carbon == nil {
		return
	}
	for i := range out {
		j := analysis.FromView(views[i].SchedView(), views[i].Profiles)
		out[i].Carbon = s.Carbon.Source
		if _, kg, ok := s.Carbon.JobCO2e(j, c, s.Now); ok {
			out[i].CO2eKg = jsonPtr(kg)
		}
	}
}

// profileElapsed is how long a profile ran, up to its end or, while it
// runs, up to now (store.JobView.ElapsedAt, the one rule); present.Missing
// when unknown.
func profileElapsed(j profile.Job, now time.Time) string {
	d, ok := store.JobView{Profiles: []profile.Job{j}}.ElapsedAt(now)
	if !ok {
		return present.Missing
	}
	return present.Duration(d)
}

// showWidth is the width of show's sparklines, in cells: one screen's
// worth beside the numbers.
const showWidth = 40

// writeJobDetail prints one job the way Princeton's jobstats does: the
// scheduler's view once, then each node and GPU with memory, utilisation
// (and their timelines), energy, temperature and XID codes, then the
// analysis (class, bottlenecks, each with its reason) and Notes: the hints
// the TUI shows, as sbatch options. Its heading names the job as Slurm
// does and, when that differs, by the raw id too: "Job 53_1 (raw id 58,
// cluster lab)", since the node hooks, cgroups and logs know only the raw
// id. Durations are Slurm's [D-]HH:MM:SS and instants sacct's
// YYYY-MM-DDTHH:MM:SS in local time; a value nobody measured says so.
// types are the GPU types of the job's cluster (monthly.GPUTypes; nil:
// none known), which the hints may suggest a smaller one of.
func writeJobDetail(w io.Writer, v store.JobView, c analysis.Config, carbon ShowCarbon, types []analysis.GPUType, now time.Time) {
	if id := v.SlurmID(); id != v.JobID {
		printf(w, "Job %s (raw id %s, cluster %s)\n", termtext.Short(id, 64), termtext.Short(v.JobID, 64), termtext.Short(v.Cluster, 64))
	} else {
		printf(w, "Job %s (cluster %s)\n", termtext.Short(v.JobID, 64), termtext.Short(v.Cluster, 64))
	}
	// The job's fact sheet, which the TUI's detail draws too.
	found := analysis.ExamineView(v.SchedView(), v.Profiles, c, types)
	writeSchedView(w, v)
	if len(v.Profiles) == 0 {
		printf(w, "\n  No GPU profile: no GPU readings exist for this job.\n")
	}
	for i := range found.Nodes {
		writeNodeProfile(w, &found.Nodes[i], now)
	}
	if l := carbon.line(found.Job, c); l != "" {
		printf(w, "\n  %s\n", l)
	}
	m := found.Metrics
	printf(w, "\n  Analysis\n")
	line := "    class " + found.Class.String()
	if len(found.Why) > 0 {
		line += ": " + termtext.Short(found.Why[0].String(), 300)
	}
	printf(w, "%s\n", line)
	if len(found.Bottlenecks) == 0 {
		printf(w, "    no bottleneck found\n")
	}
	for _, b := range found.Bottlenecks {
		printf(w, "    bottleneck %s: %s\n", b.Kind, termtext.Short(b.Reason.String(), 300))
	}
	// GPUs held/used and utilisation: the figures jobs, the TUI and the
	// report show of the job (analysis.Shown).
	shown := m.Shown()
	line = "    GPUs " + present.GPUs(shown.GPUs, shown.Used, shown.UsedKnown) + " held/used"
	if sh := present.ShardsOf(shown.Shards, shown.GPUs); sh != "" {
		line += " (" + sh + ")"
	}
	if shown.UtilKnown {
		line += ", utilisation " + present.Util(shown.Util) + " % (the mean over its GPUs)"
	}
	if m.ElapsedValid {
		line += ", " + present.GPUHours(m.GPUHours) + " GPU-hours held"
	}
	printf(w, "%s\n", line)
	for _, l := range hostUsageLines(v) {
		printf(w, "    %s\n", l)
	}
	printf(w, "\n  Notes\n")
	if len(found.Hints) == 0 {
		printf(w, "    none: nothing to change\n")
	}
	for _, h := range found.Hints {
		if h.Option == "" {
			printf(w, "    * %s\n", termtext.Short(h.Why, 400))
			continue
		}
		printf(w, "    * #SBATCH %s\n", termtext.Short(h.Option, 200))
		if h.Why != "" {
			printf(w, "      %s\n", termtext.Short(h.Why, 400))
		}
	}
}

// hostUsageLines are show's CPU efficiency and host memory lines, from
// Slurm's accounting as gpuprof import sacct brings it (slurmext.HostUsage)
// and as seff and jobstats print them: "CPU efficiency 63 % (2-02:24:00 of
// 3-08:00:00 core time)", "host memory peak 12.4 GiB of 128.0 GiB
// requested". A value not imported says so, with the sacct command that
// shows it, rather than print a zero; one the import read and Slurm's
// accounting had none of (HostUsage.TotalCPURead, MemPeakRead) is unknown
// with no command, since that command would show nothing either.
func hostUsageLines(v store.JobView) []string {
	s := v.Sched
	var u slurmext.HostUsage
	if s != nil {
		u = s.Usage
	}
	id := termtext.Short(v.SlurmID(), 64)
	var cpu string
	switch {
	case !u.TotalCPUValid && u.TotalCPURead:
		cpu = "CPU efficiency unknown: Slurm's accounting recorded no CPU time for it (TotalCPU empty)"
	case !u.TotalCPUValid:
		cpu = "CPU efficiency unknown: TotalCPU not imported (sacct -j " + id + " -o TotalCPU shows it)"
	default:
		el, ok := s.Elapsed()
		eff, effOK := u.CPUEfficiency(el, s.CPUs)
		switch {
		case effOK:
			cpu = fmt.Sprintf("CPU efficiency %s (%s of %s core time)", present.PercentWhole(eff), present.Duration(u.TotalCPU), present.Duration(el*time.Duration(s.CPUs)))
		case !ok || el <= 0:
			cpu = fmt.Sprintf("CPU efficiency unknown (%s of CPU time, but no run time to compare it with)", present.Duration(u.TotalCPU))
		default:
			cpu = fmt.Sprintf("CPU efficiency unknown (%s of CPU time, but the number of CPUs allocated is unknown)", present.Duration(u.TotalCPU))
		}
	}
	req, reqOK := u.ReqMem, u.ReqMemValid
	if !reqOK && s != nil {
		req, reqOK = slurmext.MemFromTRES(s.ReqTRES)
	}
	var mem string
	switch {
	case u.MemPeakValid && reqOK:
		mem = fmt.Sprintf("host memory peak %s of %s requested (%s)", present.Bytes(u.MemPeak), present.Bytes(req), present.PercentWhole(float64(u.MemPeak)/float64(req)))
	case u.MemPeakValid:
		mem = fmt.Sprintf("host memory peak %s (the request is unknown)", present.Bytes(u.MemPeak))
	case u.MemPeakRead && reqOK:
		mem = fmt.Sprintf("host memory peak unknown: Slurm's accounting recorded none (MaxRSS empty); %s requested", present.Bytes(req))
	case u.MemPeakRead:
		mem = "host memory peak unknown: Slurm's accounting recorded none (MaxRSS empty)"
	case reqOK:
		mem = fmt.Sprintf("host memory peak unknown: MaxRSS not imported (sacct -j %s -o MaxRSS shows it); %s requested", id, present.Bytes(req))
	default:
		mem = "host memory peak unknown: MaxRSS not imported (sacct -j " + id + " -o MaxRSS shows it)"
	}
	return []string{cpu, mem}
}

// writeSchedView prints the scheduler's view of the job once, whichever
// nodes it ran on; without one, what the first profile knows.
func writeSchedView(w io.Writer, v store.JobView) {
	s := v.Sched
	if r := v.RunningRecord(); r != nil {
		if r.Name != "" {
			printf(w, "  Name       %s (from squeue while it runs)\n", termtext.Short(r.Name, 200))
		} else {
			printf(w, "  Name       - (slurmd does not give the prolog the job's name, squeue did not; jobcomp records it at the end)\n")
		}
		uid := ""
		if r.UID >= 0 {
			uid = fmt.Sprintf(" (uid %d)", r.UID)
		}
		printf(w, "  User       %s%s   Account %s   Partition %s\n", present.OrMissing(termtext.Short(r.User, 32)), uid,
			present.OrMissing(termtext.Short(r.Account, 32)), present.OrMissing(termtext.Short(r.Partition, 32)))
		printf(w, "  State      RUNNING (from the prolog on its nodes; no scheduler record until it ends)\n")
		printf(w, "  Started    %s\n", present.Instant(r.Start, nil))
		printf(w, "  Nodes      %s   GPUs allocated %d (SLURM_JOB_GPUS)\n", present.OrMissing(termtext.Short(r.NodeList, 200)), r.ReqGPUs)
		return
	}
	if s == nil {
		printf(w, "  No scheduler view (no jobcomp record and no sacct import for this job).\n")
		if len(v.Profiles) > 0 {
			p := v.Profiles[0]
			printf(w, "  User       %s (uid %d)   Account %s   Partition %s\n", termtext.Short(p.User, 32), p.UID,
				present.OrMissing(termtext.Short(p.Account, 32)), present.OrMissing(termtext.Short(p.Partition, 32)))
		}
		return
	}
	printf(w, "  Name       %s\n", present.OrMissing(termtext.Short(s.Name, 200)))
	uid := ""
	if s.UID >= 0 {
		uid = fmt.Sprintf(" (uid %d)", s.UID)
	}
	printf(w, "  User       %s%s   Account %s   Partition %s   QOS %s\n", present.OrMissing(termtext.Short(s.User, 32)), uid,
		present.OrMissing(termtext.Short(s.Account, 32)), present.OrMissing(termtext.Short(s.Partition, 32)), present.OrMissing(termtext.Short(s.QOS, 32)))
	printf(w, "  State      %s (exit %d:%d, from %s)\n", termtext.Short(string(s.State), 32), s.ExitStatus, s.ExitSignal, termtext.Short(s.Source, 16))
	started := present.Instant(s.Start, nil)
	if !s.Started() && !s.End.IsZero() {
		started = "never (left the queue at its end)" // slurmext.Started: cancelled while pending
	}
	printf(w, "  Submitted  %s   Started %s   Ended %s\n", present.Instant(s.Submit, nil), started, present.Instant(s.End, nil))
	waited, ran := present.Missing, present.Missing
	if d, ok := s.Wait(); ok {
		waited = present.Duration(d)
	}
	if d, ok := s.Elapsed(); ok {
		ran = present.Duration(d)
	}
	limit := "unknown"
	switch {
	case s.Unlimited:
		limit = "UNLIMITED"
	case s.TimeLimit > 0:
		limit = present.Duration(s.TimeLimit)
	}
	printf(w, "  Waited     %s   Ran %s of a %s time limit\n", waited, ran, limit)
	gpus := "GPUs requested unknown (jobcomp reports no TRES; gpuprof import sacct adds it)"
	if s.ReqTRES != "" || s.AllocTRES != "" {
		gpus = fmt.Sprintf("GPUs requested %d", s.ReqGPUs)
		if s.GPUsFrom == slurmext.GPUsFromAllocTRES {
			gpus = fmt.Sprintf("GPUs allocated %d", s.ReqGPUs)
		}
		if s.ReqShards > 0 {
			gpus += fmt.Sprintf(", shards %d", s.ReqShards)
		}
		if s.GPUsFrom == slurmext.GPUsFromAllocTRES {
			gpus += " (AllocTRES: no ReqTRES imported)"
		}
	}
	printf(w, "  Nodes      %s   %s\n", present.OrMissing(termtext.Short(s.NodeList, 200)), gpus)
}

// writeNodeProfile prints what one node's agent recorded: the node line,
// the notices decided for the job there, then per GPU its memory, its
// utilisation (the duty cycle) and GPM activity with their timelines,
// energy, temperature, XID codes named and classed, processes and flags.
func writeNodeProfile(w io.Writer, ns *analysis.NodeSheet, now time.Time) {
	j := ns.Profile
	printf(w, "\n  Node %s: profile %s (from %s), raw id %s, started %s, ran %s\n", termtext.Short(j.Node, 64), j.Status, j.Source,
		termtext.Short(j.JobID, 64), present.Instant(j.Start, nil), profileElapsed(*j, now))
	var facts []string
	if j.Driver != "" {
		facts = append(facts, "driver "+termtext.Short(j.Driver, 32)+", CUDA "+present.OrMissing(termtext.Short(j.CUDADriver, 32)))
	}
	if f, ok := j.IO.Fraction(); ok {
		facts = append(facts, fmt.Sprintf("IO wait %s of the time (measured per %s)", present.Percent(f), j.IO.Scope))
	} else {
		facts = append(facts, "IO wait not measured")
	}
	printf(w, "    %s\n", strings.Join(facts, "; "))
	for _, r := range j.PartialReasons {
		printf(w, "    partial: %s\n", termtext.Short(r, 200))
	}
	for _, l := range noticeLines(ns.Notices) {
		printf(w, "    %s\n", l)
	}
	for k := range ns.GPUs {
		gs := &ns.GPUs[k]
		g := gs.GPU
		printf(w, "    GPU %d  %s  %s\n", g.SlurmIndex, present.OrMissing(termtext.Short(g.Model, 64)), termtext.Short(g.UUID, 64))
		util, mem := spark.Values(g)
		f := gs.Facts // the facts the TUI's detail shows too
		if f.MemKnown {
			hi := float64(max(g.MemoryTotal, g.MemPeak))
			printf(w, "      memory %-34s %s\n", f.Memory(), spark.Line(mem, hi, showWidth, true))
		} else {
			printf(w, "      memory not measured\n")
		}
		if f.UtilKnown {
			printf(w, "      util   %-34s %s\n", f.Util(), spark.Line(util, 100, showWidth, false))
		} else {
			printf(w, "      util   not measured\n")
		}
		writeActivity(w, gs)
		more := []string{"energy " + f.Energy()}
		if g.TempValid {
			more = append(more, "max "+present.Temperature(g.MaxTempC))
		}
		more = append(more, xidWords(gs.XIDs))
		printf(w, "      %s\n", strings.Join(more, "; "))
		for _, x := range gs.XIDs.Codes {
			printf(w, "        XID %s\n", x)
		}
		if len(g.Processes) > 0 {
			names := make([]string, len(g.Processes))
			for i, p := range g.Processes {
				names[i] = termtext.Short(p, 32)
			}
			printf(w, "      processes: %s\n", strings.Join(names, ", "))
		}
		for _, fl := range f.Flags() {
			printf(w, "      flag: %s\n", fl)
		}
	}
}

// xidWords counts a GPU's XID errors and says whose they are (the
// policy table gpu.XID): "no XID errors", "3 XIDs (3 application)"; the
// codes follow on lines of their own.
func xidWords(x analysis.XIDList) string {
	if x.Count == 0 {
		return "no XID errors"
	}
	word := present.Plural(x.Count, "XID", "XIDs")
	var parts []string
	for _, c := range []gpu.XIDClass{gpu.XIDHardware, gpu.XIDApplication, gpu.XIDUnclassified} {
		if n := x.ByClass(c); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, present.XIDClass(c)))
		}
	}
	out := fmt.Sprintf("%d %s (%s)", x.Count, word, strings.Join(parts, ", "))
	if kept := x.Kept(); kept < x.Count {
		out = fmt.Sprintf("%d %s (of the first %d: %s)", x.Count, word, kept, strings.Join(parts, ", "))
	}
	return out
}

// writeActivity prints what GPM measured on the GPU beside the duty cycle
// (util): SM and tensor activity with their timelines, DRAM bandwidth,
// and whose activity it was; unknown where no GPM reading came (a GPU
// before Hopper, or a profile recorded before gpuprof read GPM).
func writeActivity(w io.Writer, gs *analysis.GPUSheet) {
	a := gs.Activity
	if a == nil {
		printf(w, "      SM     unknown (no GPM reading: util above is the duty cycle only)\n")
		return
	}
	sm, tensor := spark.Activity(gs.GPU)
	line := func(name string, st analysis.Stat, timeline []float64) {
		if !st.Known || timeline == nil {
			printf(w, "      %-6s %s\n", name, st) // as the TUI's detail writes it
			return
		}
		printf(w, "      %-6s %-34s %s\n", name, st, spark.Line(timeline, 100, showWidth, false))
	}
	line("SM", a.SM, sm)
	line("tensor", a.Tensor, tensor)
	line("DRAM", a.DRAM, nil)
	switch a.Scope {
	case profile.ActivityScopeSharedGPU:
		printf(w, "      activity (GPM) of the whole GPU, shared with other jobs: not this job's share\n")
	case profile.ActivityScopeMIG:
		printf(w, "      activity (GPM) of the job's MIG instance\n")
	}
}

// noticeLines are the lines gpuprof show prints for the notices decided
// for a job on one node (analysis.NodeSheet.Notices), oldest first: one line each in analysis.NoticeLine's
// words ("notice sent 2026-12-03T14:02:11: GPU 1 idle for 45 min: …",
// "notice not sent … (daily cap): …"), followed, when the notice named
// one, by an indented line with the sbatch option that would avoid it.
// Instants are local, as everywhere in show; the text is made safe for a
// terminal. None when j has no notice.
func noticeLines(notices []profile.Notice) []string {
	var out []string
	for _, n := range notices {
		out = append(out, termtext.Short(analysis.NoticeLine(n, nil), 600))
		if n.Fix != "" {
			out = append(out, "  next time: "+termtext.Short(n.Fix, 200))
		}
	}
	return out
}
