package cliview

// jobjson.go is the JSON of gpuprof jobs --json and show --json
// (docs/json.md).

import (
	"math"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// JobJSON is one element of `jobs --json` and `show --json` (docs/json.md).
// Derived values are null when their inputs are missing: never a zero that
// looks measured.
type JobJSON struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"` // raw id (SLURM_JOB_ID)
	// DisplayID is the id as Slurm prints it ("53_1", "60+1"); the raw
	// id when no scheduler record names the job otherwise.
	DisplayID string              `json:"display_id"`
	Sched     *slurmext.JobRecord `json:"sched"`
	// Running is, while a node runs a job no scheduler record has reached
	// yet, what Slurm's prolog gave its nodes, in sched's layout
	// (store.JobView.RunningRecord); null otherwise.
	Running *slurmext.JobRecord `json:"running"`
	// State is sched's state, else running's (RUNNING); null when neither.
	State       *string       `json:"state"`
	Profiles    []profile.Job `json:"profiles"`
	WaitSeconds *float64      `json:"wait_seconds"`
	// ElapsedSeconds is how long the job ran, or while it runs has run
	// up to the read time (store.JobView.ElapsedAt); null when unknown.
	ElapsedSeconds *float64 `json:"elapsed_seconds"`
	GPUsRequested  *int     `json:"gpus_requested"`
	// GPUsHeld, GPUsUsed and UtilMean are the figures jobs, show, the
	// TUI and the report show (analysis.Shown): the GPUs held (a shard
	// job's GPU counts one), those of them used, and the mean
	// utilisation over the job's GPUs, percent; the last two null
	// without a utilisation reading.
	GPUsHeld int `json:"gpus_held"`
	// Shards is how many shards of its GPUs a shard job held
	// (analysis.Shown.Shards); absent for whole GPUs.
	Shards   int      `json:"shards,omitempty"`
	GPUsUsed *int     `json:"gpus_used"`
	UtilMean *float64 `json:"util_mean"`
	Missing  []string `json:"missing"`
	// CPUEfficiency is sacct's TotalCPU ÷ (Elapsed × AllocCPUS), 0–1 (it
	// may exceed 1 slightly: TotalCPU is sampled); null when any of them
	// is unknown (sched.usage has the raw values).
	CPUEfficiency *float64 `json:"cpu_efficiency"`
	// GPUs summarises every profile's GPUs, in profile order: the numbers
	// show prints, beside the raw series and histogram in Profiles.
	GPUs []GPUSummaryJSON `json:"gpus"`
	// CO2eKg is the job's emissions, kg CO2e, by the configured factor
	// ([carbon]: Carbon names it; show --json only): absent without a
	// factor, and without the energy of every GPU or a factor for every
	// hour of the run.
	CO2eKg *float64 `json:"co2e_kg,omitempty"`
	Carbon string   `json:"carbon,omitempty"`
}

// GPUSummaryJSON is one GPU of a job, summarised (null: not measured).
type GPUSummaryJSON struct {
	Node           string   `json:"node"`
	UUID           string   `json:"uuid"`
	SlurmIndex     int      `json:"slurm_index"`
	Model          string   `json:"model"`
	MemPeakBytes   *uint64  `json:"mem_peak_bytes"`
	MemTotalBytes  *uint64  `json:"mem_total_bytes"`
	UtilMean       *float64 `json:"util_mean"`
	UtilP95        *uint32  `json:"util_p95"`
	IdleFraction   *float64 `json:"idle_fraction"`
	EnergyJoules   *float64 `json:"energy_joules"`
	MaxTempCelsius *int     `json:"max_temp_celsius"`
	XIDCount       int      `json:"xid_count"`
	XIDCodes       []uint64 `json:"xid_codes"`
	// XIDs are XIDCodes named and classed (gpu.XID), each with the
	// events of it among those kept.
	XIDs []XIDJSON `json:"xids"`
	// Activity is what GPM measured (Hopper and later); null where no
	// reading came: unknown, not idle.
	Activity *ActivityJSON `json:"activity"`
}

// XIDJSON is one XID code of a GPU.
type XIDJSON struct {
	Code  uint64 `json:"code"`
	Name  string `json:"name"`
	Class string `json:"class"` // application, hardware or unclassified
	Count int    `json:"count"`
}

// ActivityJSON summarises a GPU's GPM activity, percent (null: no reading
// of that metric).
type ActivityJSON struct {
	// Scope is whose activity it was: gpu (the job's GPU), mig (its MIG
	// instance) or shared_gpu (the whole GPU while other jobs held it
	// too: not the job's share).
	Scope           string   `json:"scope"`
	Seconds         float64  `json:"seconds"`
	SMMean          *float64 `json:"sm_mean"`
	SMP95           *float64 `json:"sm_p95"`
	SMMax           *float64 `json:"sm_max"`
	TensorMean      *float64 `json:"tensor_mean"`
	TensorP95       *float64 `json:"tensor_p95"`
	DRAMMean        *float64 `json:"dram_mean"`
	DRAMP95         *float64 `json:"dram_p95"`
	SMOccupancyMean *float64 `json:"sm_occupancy_mean"`
	FP64Mean        *float64 `json:"fp64_mean"`
	FP32Mean        *float64 `json:"fp32_mean"`
	FP16Mean        *float64 `json:"fp16_mean"`
}

func toActivityJSON(a *profile.Activity) *ActivityJSON {
	if a == nil {
		return nil
	}
	mean := func(st profile.ActivityStat) *float64 {
		if m, ok := st.Mean(); ok {
			m = math.Round(m*1e6) / 1e6 // a mean of sums, not a measurement to 1e-17
			return &m
		}
		return nil
	}
	p95 := func(st profile.ActivityStat) *float64 {
		if p, ok := st.Percentile(95); ok {
			return &p
		}
		return nil
	}
	out := &ActivityJSON{Scope: a.Scope, Seconds: a.Seconds,
		SMMean: mean(a.SM), SMP95: p95(a.SM), TensorMean: mean(a.Tensor), TensorP95: p95(a.Tensor),
		DRAMMean: mean(a.DRAM), DRAMP95: p95(a.DRAM), SMOccupancyMean: mean(a.SMOccupancy),
		FP64Mean: mean(a.FP64), FP32Mean: mean(a.FP32), FP16Mean: mean(a.FP16)}
	if a.SM.N > 0 {
		out.SMMax = jsonPtr(a.SM.Max)
	}
	return out
}

// gpuSummaries are the summaries of every GPU of a job's profiles.
func gpuSummaries(profiles []profile.Job) []GPUSummaryJSON {
	out := []GPUSummaryJSON{}
	for _, p := range profiles {
		for k := range p.GPUs {
			g := &p.GPUs[k]
			s := GPUSummaryJSON{Node: p.Node, UUID: g.UUID, SlurmIndex: g.SlurmIndex, Model: g.Model, XIDCount: g.XIDCount,
				XIDCodes: []uint64{}, XIDs: []XIDJSON{}, Activity: toActivityJSON(g.Activity)}
			if g.MemSamples > 0 {
				s.MemPeakBytes = jsonPtr(g.MemPeak)
			}
			if g.MemoryTotal > 0 {
				s.MemTotalBytes = jsonPtr(g.MemoryTotal)
			}
			if m, ok := g.UtilMean(); ok {
				s.UtilMean = jsonPtr(m)
			}
			if v, ok := g.UtilPercentile(95); ok {
				s.UtilP95 = jsonPtr(v)
			}
			if f, ok := g.IdleFraction(); ok {
				s.IdleFraction = jsonPtr(f)
			}
			if g.EnergyValid {
				s.EnergyJoules = jsonPtr(g.EnergyJ)
			}
			if g.TempValid {
				s.MaxTempCelsius = jsonPtr(int(g.MaxTempC))
			}
			// Each code once, as show lists them (analysis.XIDsOf).
			for _, x := range analysis.XIDsOf(g.XIDCount, g.XIDs).Codes {
				s.XIDCodes = append(s.XIDCodes, x.Code)
				s.XIDs = append(s.XIDs, XIDJSON{Code: x.Code, Name: gpu.XID(x.Code).Name, Class: string(x.Class), Count: x.N})
			}
			out = append(out, s)
		}
	}
	return out
}

func jsonPtr[T any](v T) *T { return &v }

// What a job view can lack.
const (
	missingSched   = "scheduler_view" // no jobcomp record or sacct import
	missingProfile = "gpu_profile"    // no GPU readings (e.g. history from sacct, or a job with no GPU)
)

// JobsJSON is jobs --json and show --json, one element per view; c is
// the analysis configuration the held/used and utilisation figures are
// derived under; now is the read time, to which a running job's elapsed
// time counts.
func JobsJSON(views []store.JobView, c analysis.Config, now time.Time) []JobJSON {
	out := make([]JobJSON, 0, len(views))
	for _, v := range views {
		j := JobJSON{Cluster: v.Cluster, JobID: v.JobID, DisplayID: v.SlurmID(), Sched: v.Sched, Running: v.RunningRecord(),
			Profiles: v.Profiles, Missing: missingParts(v), GPUs: gpuSummaries(v.Profiles)}
		if s := v.SchedView(); s != nil && s.State != "" {
			j.State = jsonPtr(string(s.State))
		}
		if j.Profiles == nil {
			j.Profiles = []profile.Job{}
		}
		if v.Sched != nil {
			if w, ok := v.Sched.Wait(); ok {
				s := w.Seconds()
				j.WaitSeconds = &s
			}
		}
		if d, ok := v.ElapsedAt(now); ok {
			sec := d.Seconds()
			j.ElapsedSeconds = &sec
		}
		if v.Sched != nil {
			if el, ok := v.Sched.Elapsed(); ok {
				if e, ok := v.Sched.Usage.CPUEfficiency(el, v.Sched.CPUs); ok {
					j.CPUEfficiency = &e
				}
			}
		}
		if n, ok := gpusRequested(v); ok {
			j.GPUsRequested = &n
		}
		shown := shownOf(v, c)
		j.GPUsHeld, j.Shards = shown.GPUs, shown.Shards
		if shown.UsedKnown {
			j.GPUsUsed = jsonPtr(shown.Used)
		}
		if shown.UtilKnown {
			j.UtilMean = jsonPtr(math.Round(shown.Util*1e6) / 1e6)
		}
		out = append(out, j)
	}
	return out
}

func missingParts(v store.JobView) []string {
	m := []string{}
	if v.Sched == nil {
		m = append(m, missingSched)
	}
	if len(v.Profiles) == 0 {
		m = append(m, missingProfile)
	}
	return m
}

// gpusRequested: the scheduler's request (sacct TRES) when known, else the
// GPUs the nodes saw allocated (while it runs, RunningRecord's count). It
// is the raw request, 0 for a shard job: pages show analysis.Shown's GPUs
// held instead (shownOf).
func gpusRequested(v store.JobView) (int, bool) {
	if s := v.SchedView(); s != nil && (s.ReqTRES != "" || s.AllocTRES != "" || s.GPUsFrom == store.GPUsFromProlog) {
		return s.ReqGPUs, true
	}
	if len(v.Profiles) == 0 {
		return 0, false
	}
	n := 0
	for _, p := range v.Profiles {
		if !p.AllocKnown || p.Shards == 0 {
			n += len(p.GPUs) // a shard job's GPU is not requested whole
		}
	}
	return n, true
}

// shownOf is a job's GPUs held and used and its utilisation as every page
// shows them: analysis.Shown of the job under c, the one rule jobs, show,
// the TUI and the report share.
func shownOf(v store.JobView, c analysis.Config) analysis.Shown {
	m := analysis.Measure(analysis.FromView(v.SchedView(), v.Profiles), c)
	return m.Shown()
}
