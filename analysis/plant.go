package analysis

import (
	"math/rand"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// PlantSpec describes a planted workload: a period and groups of jobs
// with chosen shapes. Plant turns it into jobs whose right answers are
// known, for tests and demonstrations.
type PlantSpec struct {
	Cluster string
	Start   time.Time
	Days    int
	Groups  []PlantGroup
}

// PlantGroup is a set of alike jobs. Zero values take the defaults noted.
type PlantGroup struct {
	Users     []string // round-robin; default "user"
	Account   string
	Partition string // default "gpu"
	Name      string // job name; default "job"
	Jobs      int

	Model string // default "NVIDIA H100 80GB HBM3"
	Card  uint64 // bytes; default 80 GiB

	GPUs     int // requested; default 1
	UsedGPUs int // GPUs that work; the rest are idle allocations. 0: all
	// IdleAll: no GPU is ever touched (an idle allocation).
	IdleAll bool

	Duration time.Duration // run time; default 1h
	Jitter   float64       // run time varies uniformly by ±Jitter (fraction)
	// LimitFactor: time limit = run time × factor; default 1.5.
	LimitFactor float64
	Wait        time.Duration // queue wait before start

	VRAMFrac   float64 // peak as a fraction of the card
	VRAMJitter float64 // ± fraction of the card, uniform
	Util       float64 // mean utilisation, percent
	UtilJitter float64 // ± percentage points, uniform
	IOWait     float64 // fraction of wall time stalled on IO; 0: not measured
	// Preallocated: the framework reserved PreallocFrac of the card
	// (default 0.95) and held it flat, so the need is not measured.
	Preallocated bool
	PreallocFrac float64
	// NoGPUData: scheduler record only (sacct history).
	NoGPUData bool
	State     slurmext.JobState // default COMPLETED
}

// Plant generates the jobs of spec, deterministically for a seed: each
// group's jobs start uniformly over the period.
func Plant(spec PlantSpec, seed int64) []Job {
	rng := rand.New(rand.NewSource(seed))
	days := max(spec.Days, 1)
	start := spec.Start
	if start.IsZero() {
		start = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	}
	cluster := spec.Cluster
	if cluster == "" {
		cluster = "planted"
	}
	period := time.Duration(days) * 24 * time.Hour
	var jobs []Job
	id := 1000
	for _, g := range spec.Groups {
		g = plantDefaults(g)
		for k := range g.Jobs {
			id++
			run := time.Duration(float64(g.Duration) * (1 + g.Jitter*(2*rng.Float64()-1)))
			run = max(run, time.Second)
			st := start.Add(time.Duration(rng.Int63n(int64(period))))
			j := Job{
				Cluster: cluster, ID: strconv.Itoa(id),
				User: g.Users[k%len(g.Users)], Account: g.Account, Partition: g.Partition,
				Name: g.Name, State: g.State,
				Submit: st.Add(-g.Wait), Eligible: st.Add(-g.Wait), Start: st, End: st.Add(run),
				TimeLimit: time.Duration(float64(run) * g.LimitFactor).Round(time.Minute),
				ExitKnown: true, ReqGPUs: g.GPUs, HasGPUData: !g.NoGPUData,
			}
			if g.State != slurmext.StateCompleted {
				j.ExitStatus = 1
			}
			if g.IOWait > 0 && !g.NoGPUData {
				j.IOWait, j.IOWaitValid, j.IOScope = g.IOWait, true, profile.IOScopeCgroup
			}
			if !g.NoGPUData {
				j.GPUs = make([]GPU, g.GPUs)
				for i := range j.GPUs {
					j.GPUs[i] = plantGPU(&g, rng, i < g.UsedGPUs)
				}
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

func plantDefaults(g PlantGroup) PlantGroup {
	if len(g.Users) == 0 {
		g.Users = []string{"user"}
	}
	if g.Partition == "" {
		g.Partition = "gpu"
	}
	if g.Name == "" {
		g.Name = "job"
	}
	if g.Model == "" {
		g.Model = "NVIDIA H100 80GB HBM3"
	}
	if g.Card == 0 {
		g.Card = 80 << 30
	}
	if g.GPUs <= 0 {
		g.GPUs = 1
	}
	if g.UsedGPUs <= 0 || g.UsedGPUs > g.GPUs {
		g.UsedGPUs = g.GPUs
	}
	if g.IdleAll {
		g.UsedGPUs = 0
	}
	if g.Duration <= 0 {
		g.Duration = time.Hour
	}
	if g.LimitFactor <= 0 {
		g.LimitFactor = 1.5
	}
	if g.PreallocFrac <= 0 {
		g.PreallocFrac = 0.95
	}
	if g.State == "" {
		g.State = slurmext.StateCompleted
	}
	return g
}

func plantGPU(g *PlantGroup, rng *rand.Rand, used bool) GPU {
	node := "n-" + GRESType(g.Model)
	if !used {
		return GPU{Node: node, Model: g.Model, MemoryTotal: g.Card, VRAMPeakValid: true,
			UtilMean: 0, UtilMeanValid: true, UtilP50: 0, UtilP95: 0, UtilPctValid: true,
			UtilMaxValid: true, IdleFraction: 1, IdleValid: true, IdleAllocation: true}
	}
	clamp := func(v, lo, hi float64) float64 { return min(max(v, lo), hi) }
	frac := clamp(g.VRAMFrac+g.VRAMJitter*(2*rng.Float64()-1), 0.001, 1)
	u := clamp(g.Util+g.UtilJitter*(2*rng.Float64()-1), 0, 100)
	gp := GPU{Node: node, Model: g.Model, MemoryTotal: g.Card,
		VRAMPeak: uint64(frac * float64(g.Card)), VRAMPeakValid: true,
		UtilMean: u, UtilMeanValid: true, UtilP50: u, UtilP95: clamp(u*1.2, 0, 100), UtilPctValid: true,
		UtilMax: clamp(u*1.5, 0, 100), UtilMaxValid: true, IdleValid: true,
	}
	gp.VRAMFloor, gp.VRAMFloorValid = uint64(float64(gp.VRAMPeak)*0.9), true
	if g.Preallocated {
		gp.Preallocated = true
		gp.VRAMPeak = uint64(g.PreallocFrac * float64(g.Card))
		gp.VRAMFloor = gp.VRAMPeak
	}
	if u == 0 {
		gp.IdleFraction = 1
	}
	return gp
}
