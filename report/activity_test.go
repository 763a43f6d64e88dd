package report

import (
	"github.com/gpuprof/gpuprof/internal/present"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestReportActivityXIDsCarbon: effective GPU-hours per model and account
// beside the allocated ones with their coverage, unknown (never 0) in a
// month without GPM; hardware XIDs per GPU apart from application ones;
// CO2e beside kWh only with a configured factor.
func TestReportActivityXIDsCarbon(t *testing.T) {
	d := fixture()
	if out := renderAll(t, d)["md"]; !strings.Contains(out, "No GPU measured SM activity this month (GPM needs Hopper or later): effective GPU-hours are unknown, and utilisation is the duty cycle only.") ||
		!strings.Contains(out, "| Effective GPU-hours (weighted by SM activity) | unknown (no GPU measured SM activity: GPM needs Hopper or later) |") ||
		!strings.Contains(out, "No XID error was recorded this month.") || strings.Contains(out, "CO2e") {
		t.Errorf("a month without GPM, XIDs or a factor:\n%s", out)
	}

	w := &d.Workload
	w.Headline.Effective = analysis.Effective{GPUHours: 12.5, MeasuredGPUHours: 50, Coverage: 0.25}
	w.Models[0].Effective = analysis.Effective{GPUHours: 12.5, MeasuredGPUHours: 50, Coverage: 0.5}
	w.Accounts[0].Effective = analysis.Effective{GPUHours: 12.5, MeasuredGPUHours: 50, Coverage: 1}
	d.Findings.Summary.BySMActivity, d.Findings.Summary.ByDutyCycle = 3, 40
	w.XIDs = analysis.XIDs{Hardware: 5, Application: 2, GPUs: []analysis.GPUXIDs{
		{Node: "gpu07", UUID: "GPU-77", Model: "NVIDIA H100 80GB HBM3", Hardware: 5, HardwareJobs: 3, Application: 1},
		{Node: "gpu01", UUID: "GPU-11", Model: "NVIDIA H100 80GB HBM3", Application: 1},
	}}
	kg := 123.4
	w.Carbon = "fixed 350 gCO2e/kWh"
	w.Headline.Energy.CO2eKg, w.Headline.Energy.CO2eCoverage = &kg, 1
	w.Accounts[0].Energy.CO2eKg, w.Accounts[0].Energy.CO2eCoverage = &kg, 1
	out := renderAll(t, d)
	for _, want := range []string{
		"| Effective GPU-hours (weighted by SM activity) | 12.5 (SM activity measured on " + present.Percent(0.25) + " of the GPU-hours) |",
		"| " + w.Models[0].Model + " | " + present.GPUHours(w.Models[0].GPUHours) + " | 12.5 | " + present.Percent(0.5) + " |",
		"| " + w.Accounts[0].Name + " | " + present.GPUHours(w.Accounts[0].GPUHours) + " | 12.5 | " + present.Percent(1) + " |",
		"The idle and compute rules read SM activity for 3 jobs and the duty cycle alone for 40 jobs.",
		"5 hardware XIDs from the GPU, its memory, links or driver (hardware) and 2 application XIDs",
		"| gpu07 | GPU-77 | NVIDIA H100 80GB HBM3 | 5 | 3 | 1 |",
		", 123.4 kg CO2e |",
		"| 123.4 kg CO2e |",
		"CO2e is the energy times the configured emission factor (fixed 350 gCO2e/kWh)",
	} {
		if !strings.Contains(out["md"], want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, want := range []string{`"co2e_kg": 123.4`, `"carbon": "fixed 350 gCO2e/kWh"`, `"hardware_jobs": 3`, `"effective"`} {
		if !strings.Contains(out["json"], want) {
			t.Errorf("json lacks %q", want)
		}
	}
	if strings.Index(out["md"], "GPU-77") > strings.Index(out["md"], "GPU-11") {
		t.Errorf("the GPU with hardware XIDs is not listed first")
	}
}
