package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// PlanParams are the purchase question's inputs.
type PlanParams struct {
	Growth    float64 `json:"growth"`     // demand growth per year (0.3 = 30 %)
	Months    int     `json:"months"`     // horizon
	NewDemand float64 `json:"new_demand"` // GPUs of new demand at the horizon
	Headroom  float64 `json:"headroom"`   // fraction of every GPU kept free, in [0, 1)
	// ModelGrowth is the growth per year of the GPU models whose own
	// trend the horizon applies to their jobs instead of Growth
	// (GrowthEstimate.Models, ModelGrowthUsed); nil: Growth for all.
	ModelGrowth map[string]float64 `json:"model_growth,omitempty"`
}

// Params are the configuration's plan parameters.
func (p PlanConfig) Params() PlanParams { return p.params() }

func (p PlanConfig) params() PlanParams {
	return PlanParams{Growth: p.Growth, Months: p.HorizonMonths, NewDemand: p.NewDemand, Headroom: p.Headroom, ModelGrowth: p.ModelGrowth}
}

// ClassLoad is the queueing view of one class: arrival rate λ (jobs per
// hour over the observed period), mean service time S (hours of run time)
// and mean GPUs per job, and the average concurrency they give by Little's
// law, L = λ · S · GPUs (in GPUs).
type ClassLoad struct {
	Class       Class   `json:"class"`
	Jobs        int     `json:"jobs"`
	ArrivalRate float64 `json:"arrival_per_hour"`
	ServiceTime float64 `json:"service_hours"`
	MeanGPUs    float64 `json:"mean_gpus"`
	Concurrency float64 `json:"concurrency_gpus"`
	PeakGPUs    float64 `json:"peak_gpus"`
}

// Scaling is the measured scaling efficiency of multi-GPU runs: for tasks
// run both on one GPU and on several, the mean utilisation of the
// multi-GPU runs over that of the single-GPU runs, weighted by the
// multi-GPU runs' GPU-hours. 1 scales perfectly; 0.5 wastes half.
type Scaling struct {
	Tasks      int     `json:"tasks"`
	Efficiency float64 `json:"efficiency"`
	Valid      bool    `json:"valid"`
}

// Constraints the verdict names.
const (
	ConstraintNone       = "none"
	ConstraintGPUs       = "more_gpus"
	ConstraintMemory     = "gpus_with_more_memory"
	ConstraintStorage    = "storage_bandwidth"
	ConstraintScheduling = "scheduling_policy"
	ConstraintNoData     = "no_data"
)

// CapacityPlan answers how many GPUs the cluster needs at the horizon and
// what limits it now.
type CapacityPlan struct {
	Params PlanParams `json:"params"`
	// Window is the period planned from: the analysis window, ending at
	// Counting.End when that is earlier (a month not yet over);
	// PeriodHours its length.
	Window      Window      `json:"window"`
	PeriodHours float64     `json:"period_hours"`
	Classes     []ClassLoad `json:"classes"`
	// CNow is the average number of GPUs allocated: the sum of L over the
	// classes (= GPU-hours counted in the period / PeriodHours). PeakGPUs
	// is the most held at once, in GPU-equivalents (a shard job counts its
	// share of the GPU), over the counted parts of the runs.
	CNow     float64 `json:"c_now"`
	PeakGPUs float64 `json:"peak_gpus"`
	Scaling  Scaling `json:"scaling"`
	// CFuture = CNow · (1 + g)^(months/12) + new demand.
	CFuture float64 `json:"c_future"`
	// QSafe = 1 − headroom: the share of each GPU planned to be busy.
	QSafe float64 `json:"q_safe"`
	// GPUsNeeded = ceil(CFuture / QSafe); CurrentGPUs from the inventory
	// (0 when none was given).
	GPUsNeeded  int `json:"gpus_needed"`
	CurrentGPUs int `json:"current_gpus"`
	// Inventory is where CurrentGPUs came from (Input.Inventory), or why
	// no inventory is used.
	Inventory Inventory `json:"inventory"`
	// Constraint is the main constraint the averages and shares show;
	// Constraints all that apply, with Evidence for each; CrossCheck says
	// it in a sentence. None of it is the plan's verdict: averages cannot
	// see queues at peak hours, and the verdict (capacity.SimPlan.Verdict)
	// comes from the replay; it names the constraint from these shares.
	Constraint  string   `json:"constraint"`
	Constraints []string `json:"constraints"`
	Evidence    []Reason `json:"evidence"`
	CrossCheck  string   `json:"cross_check"`
}

// FutureDemand is C_now · (1 + g)^(months/12) + new.
func FutureDemand(cNow, growth float64, months int, newDemand float64) float64 {
	return cNow*math.Pow(1+growth, float64(months)/12) + newDemand
}

// GPUsNeeded is ceil(cFuture / qSafe); 0 for no demand or an unusable
// qSafe.
func GPUsNeeded(cFuture, qSafe float64) int {
	if !(cFuture > 0) || !(qSafe > 0) || !finite(cFuture) {
		return 0
	}
	// A tiny epsilon keeps an exact quotient (8.0000000001 from rounding)
	// from buying one GPU too many.
	return int(math.Ceil(cFuture/qSafe - 1e-9))
}

// Plan computes the capacity plan of the input with the given parameters.
// findings must be Analyse's for the same input.
func Plan(in Input, findings Findings, p PlanParams, c Config) (CapacityPlan, error) {
	if err := c.Validate(); err != nil {
		return CapacityPlan{}, err
	}
	if !(p.Growth > -1) || !finite(p.Growth) || p.Months < 0 || !(p.NewDemand >= 0) || !finite(p.NewDemand) ||
		!(p.Headroom >= 0 && p.Headroom < 1) {
		return CapacityPlan{}, fmt.Errorf("%w: plan parameters %+v out of range", ErrConfig, p)
	}
	_ = findings // the plan recomputes what it needs in one pass; findings keep the signature stable for callers that have them
	f, k := collect(&in, &c)
	return plan(&in, f, k, p, &c), nil
}

// plan sizes the cluster by averages from the facts: each class's load
// over the period, the demand at the horizon and the GPUs it needs, and
// the constraints in the order an admin should act. It stays one function:
// one pass over the jobs gives the classes' loads and the waste, IO and
// memory GPU-hours, and the constraints and the cross-check read those
// same sums; split, they would travel between the pieces as a dozen
// values.
func plan(in *Input, f *facts, k *counter, p PlanParams, c *Config) CapacityPlan {
	cp := CapacityPlan{Params: p, QSafe: 1 - p.Headroom, CurrentGPUs: TotalGPUs(in.Nodes), Inventory: InventoryOf(in)}
	// The period is the window analysed (the report's month, --since and
	// --until), up to when open jobs stop counting: not the span of the
	// jobs that touch it, which runs from the first start of a job running
	// at the window's start to the last end of one still running after it.
	cp.Window = k.counting().Period()
	cp.PeriodHours = cp.Window.Hours()
	if cp.PeriodHours <= 0 || len(f.jobs) == 0 {
		cp.Constraint, cp.Constraints = ConstraintNoData, []string{ConstraintNoData}
		cp.CrossCheck = "No GPU jobs with a known start in the period: nothing to plan from."
		cp.CFuture = FutureDemand(0, p.Growth, p.Months, p.NewDemand)
		cp.GPUsNeeded = GPUsNeeded(cp.CFuture, cp.QSafe)
		return cp
	}

	ps := planSumsOf(f.jobs)
	jobs, runJobs, run, gpus, hours := ps.jobs, ps.runJobs, ps.run, ps.gpus, ps.hours
	total, waste, vram, io := ps.total.Float(), ps.waste.Float(), ps.vram.Float(), ps.io.Float()
	for cls := range numClasses {
		if jobs[cls] == 0 {
			continue
		}
		n := float64(jobs[cls])
		l := ClassLoad{Class: cls, Jobs: jobs[cls], ArrivalRate: n / cp.PeriodHours, MeanGPUs: gpus[cls] / n}
		if runJobs[cls] > 0 {
			l.ServiceTime = run[cls] / float64(runJobs[cls])
		}
		// L is the class's GPU-hours counted in the period over its
		// length: λ·S·GPUs would miss the jobs still running (no S yet) and
		// the parts of runs outside the period, and mean GPUs × mean run
		// time differs from the mean of their product.
		l.Concurrency = hours[cls] / cp.PeriodHours
		cp.Classes = append(cp.Classes, l)
		cp.CNow += l.Concurrency
	}
	var classPeaks [numClasses]float64
	cp.PeakGPUs, classPeaks = peaksByClass(f.jobs)
	for i := range cp.Classes {
		cp.Classes[i].PeakGPUs = classPeaks[cp.Classes[i].Class]
	}
	cp.Scaling = scaling(f)
	cp.CFuture = FutureDemand(cp.CNow, p.Growth, p.Months, p.NewDemand)
	cp.GPUsNeeded = GPUsNeeded(cp.CFuture, cp.QSafe)

	share := func(v float64) float64 {
		if total <= 0 {
			return 0
		}
		return v / total
	}
	pc := &c.Plan
	queued := 0
	for i := range f.jobs {
		if f.jobs[i].kinds.Has(KindQueueBound) {
			queued++
		}
	}
	now := present.Count(cp.CurrentGPUs, "GPU", "GPUs") + " now"
	if cp.CurrentGPUs == 0 {
		now = "no inventory to compare with"
	}
	cp.Evidence = append(cp.Evidence,
		Reason{Rule: "plan.demand", Note: fmt.Sprintf("C_now %.2f GPUs (%s GPU-hours over %s), peak %s; C_future = %.2f·(1+%.2f)^(%d/12) + %.2f = %.2f; G = ceil(%.2f / %.2f) = %d; %s",
			cp.CNow, present.GPUHours(total), present.Duration(time.Duration(cp.PeriodHours*float64(time.Hour))), present.GPUsHeld(cp.PeakGPUs),
			cp.CNow, p.Growth, p.Months, p.NewDemand, cp.CFuture, cp.CFuture, cp.QSafe, cp.GPUsNeeded, now)})
	if s := share(waste); s >= pc.WasteShareMin {
		cp.Constraints = append(cp.Constraints, ConstraintScheduling)
		cp.Evidence = append(cp.Evidence, Reason{Rule: "plan.waste", Checks: []Check{{Metric("waste_share"), s, OpGE, pc.WasteShareMin}},
			Note: fmt.Sprintf("%s GPU-hours idle-allocated or unused; %s queue-bound", present.GPUHours(waste), present.Count(queued, "job", "jobs"))})
	}
	if s := share(io); s >= pc.IOShareMin {
		cp.Constraints = append(cp.Constraints, ConstraintStorage)
		cp.Evidence = append(cp.Evidence, Reason{Rule: "plan.io", Checks: []Check{{Metric("io_bound_share"), s, OpGE, pc.IOShareMin}}})
	}
	short := cp.CurrentGPUs > 0 && cp.GPUsNeeded > cp.CurrentGPUs
	if s := share(vram); s >= pc.VRAMShareMin {
		cp.Constraints = append(cp.Constraints, ConstraintMemory)
		cp.Evidence = append(cp.Evidence, Reason{Rule: "plan.vram", Checks: []Check{{Metric("vram_bound_share"), s, OpGE, pc.VRAMShareMin}}})
	}
	if short {
		cp.Constraints = append(cp.Constraints, ConstraintGPUs)
		cp.Evidence = append(cp.Evidence, Reason{Rule: "plan.gpus", Checks: []Check{{Metric("gpus_needed"), float64(cp.GPUsNeeded), OpGT, float64(cp.CurrentGPUs)}}})
	}
	// The verdict is the first constraint in the order an admin should
	// act: waste and IO waits cost nothing to fix and would distort a
	// purchase; then memory, then count.
	cp.Constraint = ConstraintNone
	if len(cp.Constraints) > 0 {
		cp.Constraint = cp.Constraints[0]
	} else {
		cp.Constraints = []string{}
	}
	switch cp.Constraint {
	case ConstraintNone:
		if cp.CurrentGPUs == 0 && cp.Inventory.Misfit != "" {
			cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon; %s, so there is nothing to compare them with.", gpusNeeded(cp.GPUsNeeded), cp.Inventory.Misfit)
		} else if cp.CurrentGPUs == 0 {
			cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon; with no inventory there is nothing to compare them with.", gpusNeeded(cp.GPUsNeeded))
		} else {
			cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon and there are %d; averages cannot see queues at peak hours.", gpusNeeded(cp.GPUsNeeded), cp.CurrentGPUs)
		}
	case ConstraintScheduling:
		cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon; %s of the GPU-hours are idle or unused allocations.", gpusNeeded(cp.GPUsNeeded), present.Share(share(waste)))
	case ConstraintStorage:
		cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon; %s of the GPU-hours wait on IO.", gpusNeeded(cp.GPUsNeeded), present.Share(share(io)))
	case ConstraintMemory:
		cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon; %s of the GPU-hours are bound by GPU memory.", gpusNeeded(cp.GPUsNeeded), present.Share(share(vram)))
	case ConstraintGPUs:
		cp.CrossCheck = fmt.Sprintf("By averages, %s needed at the horizon and there are %d.", gpusNeeded(cp.GPUsNeeded), cp.CurrentGPUs)
	}
	return cp
}

// planSums are the plan's sums over the jobs counted in the period, per
// class and in all; the GPU-hours exact (ExactSum), so that the plan is
// the same in every order of the jobs.
type planSums struct {
	jobs, runJobs          [numClasses]int
	run, gpus, hours       [numClasses]float64 // hours run, GPUs, GPU-hours
	total, waste, vram, io ExactSum            // GPU-hours
}

func planSumsOf(jobs []jobFact) planSums {
	var ps planSums
	var run, gpus, hours [numClasses]ExactSum
	for i := range jobs {
		j := &jobs[i]
		if j.cs == 0 {
			continue // nothing of it counted in the period
		}
		ps.jobs[j.cls]++
		if j.elapsedOK {
			run[j.cls].Add(j.elapsed / 3600)
			ps.runJobs[j.cls]++
		}
		gpus[j.cls].Add(j.share)
		hours[j.cls].Add(j.gpuHours)
		ps.total.Add(j.gpuHours)
		switch {
		case j.cls == ClassIdleAllocation:
			ps.waste.Add(j.gpuHours)
		case j.gpus > 0 && j.unused > 0:
			ps.waste.Add(j.gpuHours * float64(j.unused) / float64(j.gpus))
		}
		if j.kinds.Has(KindVRAMBound) {
			ps.vram.Add(j.gpuHours)
		}
		if j.kinds.Has(KindIOBound) {
			ps.io.Add(j.gpuHours)
		}
	}
	for cls := range numClasses {
		ps.run[cls], ps.gpus[cls], ps.hours[cls] = run[cls].Float(), gpus[cls].Float(), hours[cls].Float()
	}
	return ps
}

// scaling compares, per task (user and normalised name), the mean
// utilisation of its multi-GPU runs with that of its single-GPU runs.
func scaling(f *facts) Scaling {
	type acc struct {
		u1, un, hn ExactSum
		n1, nn     int
	}
	tasks := map[[2]string]*acc{}
	for i := range f.jobs {
		j := &f.jobs[i]
		if !j.utilOK || j.gpus < 1 {
			continue
		}
		k := [2]string{j.user, NormaliseName(j.name)}
		a := tasks[k]
		if a == nil {
			a = &acc{}
			tasks[k] = a
		}
		if j.gpus == 1 {
			a.u1.Add(j.util)
			a.n1++
		} else {
			a.un.Add(j.util * j.gpuHours)
			a.hn.Add(j.gpuHours)
			a.nn++
		}
	}
	// The tasks come in the map's order: the sums over them are exact too.
	var s Scaling
	var num, den ExactSum
	for _, a := range tasks {
		u1, un, hn := a.u1.Float(), a.un.Float(), a.hn.Float()
		if a.n1 == 0 || a.nn == 0 || u1 <= 0 || hn <= 0 {
			continue
		}
		s.Tasks++
		eff := (un / hn) / (u1 / float64(a.n1))
		num.Add(eff * hn)
		den.Add(hn)
	}
	if d := den.Float(); d > 0 {
		s.Efficiency, s.Valid = num.Float()/d, true
	}
	return s
}

// peaksByClass returns the most GPUs held at once (GPU-equivalents, over
// the counted parts of the runs), in all and per class, in one sort of the
// events. Ends sort before starts at the same instant, so back-to-back
// jobs do not overlap.
func peaksByClass(jobs []jobFact) (float64, [numClasses]float64) {
	type ev struct {
		t   int64
		d   float64
		cls Class
	}
	evs := make([]ev, 0, 2*len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if j.cs == 0 || j.ce <= j.cs || j.share <= 0 {
			continue
		}
		evs = append(evs, ev{j.cs, j.share, j.cls}, ev{j.ce, -j.share, j.cls})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.d, b.d)
	})
	var cur, peaks [numClasses]float64
	total, peak := 0.0, 0.0
	for _, e := range evs {
		total += e.d
		peak = max(peak, total)
		cur[e.cls] += e.d
		peaks[e.cls] = max(peaks[e.cls], cur[e.cls])
	}
	// Sums of shares drift by ulps; a peak is shown to two decimals.
	round := func(v float64) float64 { return math.Round(v*1e6) / 1e6 }
	for i := range peaks {
		peaks[i] = round(peaks[i])
	}
	return round(peak), peaks
}

// gpusNeeded is "1 GPU is" or "N GPUs are": the cross-check's subject.
func gpusNeeded(n int) string {
	return present.Count(n, "GPU", "GPUs") + present.Plural(n, " is", " are")
}
