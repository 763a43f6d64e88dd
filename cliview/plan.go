package cliview

import (
	"fmt"
	"io"
	"strconv"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/texttable"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// PlanJSON is the stable JSON shape of `gpuprof plan --json`
// (docs/json.md).
type PlanJSON struct {
	// Conf is the cluster planned for and the slurm.conf bound to it.
	Conf  analysis.ConfUse      `json:"conf"`
	Nodes []analysis.Node       `json:"nodes"`
	Plan  analysis.CapacityPlan `json:"plan"`
	// Simulated is the plan on the queue replay, with the verdict.
	Simulated capacity.SimPlan `json:"simulated"`
}

// ToPlanJSON shapes the capacity plan, the nodes it counted and the
// simulated plan for `gpuprof plan --json`; no nodes are [], not null.
func ToPlanJSON(in analysis.Input, cp analysis.CapacityPlan, sim capacity.SimPlan) PlanJSON {
	nodes := in.Nodes
	if nodes == nil {
		nodes = []analysis.Node{}
	}
	return PlanJSON{Conf: in.Conf, Nodes: nodes, Plan: cp, Simulated: sim}
}

// WritePlan writes the capacity plan's average-based cross-check
// (Little's law), after the simulated plan (WriteSimPlan).
func WritePlan(w io.Writer, cp analysis.CapacityPlan) {
	p := cp.Params
	printf(w, "\nCross-check by averages (Little's law; it ignores when demand arrives, so it cannot see queues at peak hours): headroom %s.\n",
		present.Percent(p.Headroom))
	if cp.PeriodHours <= 0 {
		printf(w, "%s\n", cp.CrossCheck)
		return
	}
	printf(w, "Period: %s to %s (%s hours).\n\n", slurmext.FormatTime(cp.Window.From, nil), slurmext.FormatTime(cp.Window.To, nil), present.GPUHours(cp.PeriodHours))
	tw := texttable.New("CLASS", "JOBS", "λ (JOBS/H)", "S (H)", "GPUS/JOB", "L = λ·S·GPUS", "PEAK GPUS")
	for _, l := range cp.Classes {
		tw.Row(l.Class.String(), strconv.Itoa(l.Jobs), fmt.Sprintf("%.3f", l.ArrivalRate), fmt.Sprintf("%.2f", l.ServiceTime),
			fmt.Sprintf("%.2f", l.MeanGPUs), fmt.Sprintf("%.2f", l.Concurrency), fmt.Sprintf("%g", l.PeakGPUs))
	}
	_ = tw.Write(w)
	printf(w, "\nC_now    = Σ L = GPU-hours / period = %.2f GPUs on average (observed peak %g at once)\n", cp.CNow, cp.PeakGPUs)
	printf(w, "C_future = C_now·(1+g)^(T/12) + C_new = %.2f·(1+%.2f)^(%d/12) + %g = %.2f GPUs\n",
		cp.CNow, p.Growth, p.Months, p.NewDemand, cp.CFuture)
	printf(w, "Q_safe   = 1 − headroom = 1 − %.2f = %.2f\n", p.Headroom, cp.QSafe)
	printf(w, "G        = ceil(C_future / Q_safe) = ceil(%.2f / %.2f) = %s\n", cp.CFuture, cp.QSafe, present.Count(cp.GPUsNeeded, "GPU", "GPUs"))
	switch inv := cp.Inventory; {
	case cp.CurrentGPUs > 0:
		printf(w, "GPUs now = %d (from %s)\n", cp.CurrentGPUs, termtext.Short(inv.Source, 120))
	case inv.Misfit != "":
		printf(w, "GPUs now: unknown (%s)\n", termtext.Short(inv.Misfit, 600))
	default:
		printf(w, "GPUs now: unknown (no inventory: no profiled GPUs, no GPU node in the cluster's slurm.conf)\n")
	}
	if cp.Scaling.Valid {
		printf(w, "Multi-GPU scaling efficiency: %s over %d tasks\n", present.Percent(cp.Scaling.Efficiency), cp.Scaling.Tasks)
	}
	printf(w, "%s\n", cp.CrossCheck)
	if len(cp.Evidence) > 0 {
		printf(w, "Measured:\n")
		for _, e := range cp.Evidence {
			printf(w, "- %s\n", sentence(e))
		}
	}
}
