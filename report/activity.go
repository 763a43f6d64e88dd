package report

import (
	"fmt"
	"github.com/gpuprof/gpuprof/internal/present"

	"github.com/gpuprof/gpuprof/analysis"
)

// What the month's GPU-hours did beyond being allocated (issue #28):
// effective GPU-hours, weighted by GPM's SM activity, beside the
// allocated ones per model and account; XIDs per GPU, the hardware's
// apart from the programs'.

// effectiveText is the headline's phrase for effective GPU-hours:
// unknown, never 0, when no GPU measured SM activity.
func effectiveText(e analysis.Effective) string {
	if !e.Known() {
		return "unknown (no GPU measured SM activity: GPM needs Hopper or later)"
	}
	return fmt.Sprintf("%s (SM activity measured on %s of the GPU-hours)", present.GPUHours(e.GPUHours), present.Percent(e.Coverage))
}

// effectiveCells prints effective GPU-hours and their coverage, "unknown"
// and "none" without a measurement.
func effectiveCells(e analysis.Effective) (effective, measured string) {
	if !e.Known() {
		return "unknown", "none"
	}
	return present.GPUHours(e.GPUHours), present.Percent(e.Coverage)
}

// effectiveNote says what effective GPU-hours are.
const effectiveNote = "Effective GPU-hours weigh each GPU-hour by the share of the GPU's SMs its kernels kept busy (NVML's GPM SM activity, Hopper and later): an hour at 40 % counts 0.4. The utilisation elsewhere in this report is NVML's duty cycle, the share of time any kernel ran, which a loop of tiny kernels keeps high while using almost none of the GPU. GPUs without GPM, and GPUs shared with other jobs (whose activity is the whole device's), are unmeasured: \u201cmeasured\u201d is the share of GPU-hours that has SM activity."

// effectiveTables are effective GPU-hours by model and by account, or
// one sentence when no GPU measured SM activity.
func effectiveTables(s *section, d *Data) {
	w := d.Workload
	s.heading("Effective GPU-hours (SM activity)")
	sum := d.Findings.Summary
	measure := fmt.Sprintf("The idle and compute rules read SM activity for %s and the duty cycle alone for %s.",
		present.Count(sum.BySMActivity, "job", "jobs"), present.Count(sum.ByDutyCycle, "job", "jobs"))
	if !w.Headline.Effective.Known() {
		s.para("No GPU measured SM activity this month (GPM needs Hopper or later): effective GPU-hours are unknown, and utilisation is the duty cycle only. %s", measure)
		return
	}
	t := newTable("Model", "#GPU-hours allocated", "#Effective GPU-hours", "#SM activity measured")
	for _, m := range w.Models {
		if m.JobGPUs == 0 {
			continue
		}
		e, cov := effectiveCells(m.Effective)
		t.row(modelName(m.Model), present.GPUHours(m.GPUHours), e, cov)
	}
	s.table(t)
	a := newTable("Account", "#GPU-hours allocated", "#Effective GPU-hours", "#SM activity measured")
	add := func(name string, g analysis.GroupUsage) {
		e, cov := effectiveCells(g.Effective)
		a.row(name, present.GPUHours(g.GPUHours), e, cov)
	}
	for _, g := range w.Accounts {
		if g.Jobs > 0 {
			add(g.Name, g)
		}
	}
	if o := w.OtherAccounts; o.Count > 0 && o.Jobs > 0 {
		add(present.Count(o.Count, "other", "others"), o)
	}
	s.table(a)
	s.para("%s %s", effectiveNote, measure)
}

// xidTables count the month's XID errors, hardware apart from
// application, and list the GPUs that had any: a GPU with hardware XIDs
// in several jobs is a failing card.
func xidTables(s *section, d *Data) {
	x := d.Workload.XIDs
	s.heading("GPU errors (XIDs)")
	if len(x.GPUs) == 0 {
		s.para("No XID error was recorded this month.")
		return
	}
	s.para("%s from the GPU, its memory, links or driver (hardware) and %s from the jobs' own programs (application, with codes the table does not list), as NVIDIA's device plugin splits them.",
		present.Count(x.Hardware, "hardware XID", "hardware XIDs"), present.Count(x.Application, "application XID", "application XIDs"))
	t := newTable("Node", "GPU", "Model", "#Hardware XIDs", "#Jobs with one", "#Application XIDs")
	for _, g := range x.GPUs {
		t.row(g.Node, g.UUID, modelName(g.Model), present.Int(g.Hardware), present.Int(g.HardwareJobs), present.Int(g.Application))
	}
	s.table(t)
}
