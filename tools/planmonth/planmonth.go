// Package planmonth makes a month of Slurm GPU jobs shaped like a
// university cluster's, for the capacity plan's benchmarks and golden
// tests (issue #27): nodes of 8 GPUs of two models, a general partition
// over all of them and a short partition of higher PriorityTier over one
// model, priority/multifactor with fair-share between accounts and age,
// jobs of 1–8 GPUs with log-normal run times and limits a few times the
// run, arriving more on weekday working hours. The month is scheduled
// once with queuesim under the same settings, so that every job has the
// start a cluster would have given it, and returned as the Input and
// what-if parameters `gpuprof plan` would read. It is test support, not
// product code: the same shape and seed give the same month.
package planmonth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/queuesim"
	"github.com/gpuprof/gpuprof/slurmext"
)

// The two GPU models, as NVML names them.
const (
	H100 = "NVIDIA H100 80GB HBM3"
	A100 = "NVIDIA A100-SXM4-80GB"
)

// Shape is what varies between months.
type Shape struct {
	// Jobs in the 30 days; GPUs in the cluster (a multiple of 8: nodes
	// of 8 GPUs, H100 and A100 in turn; one node is an H100 node and no
	// job asks for a type).
	Jobs, GPUs int
	// Occupancy is the GPU-hours the jobs run as a share of the
	// cluster's (0.7: 70 %).
	Occupancy float64
	Seed      uint64
	// Uniform makes BenchmarkSimulatePlan's older shape instead: one
	// GPU model (H100) in one partition under priority/basic, jobs of one
	// GPU running 1–3 h (uniform, in minutes) with limits twice the run,
	// arriving uniformly; Occupancy is then what the jobs and GPUs give.
	Uniform bool
}

// From is the month's first instant.
var From = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

const month = 30 * 24 * time.Hour

// Month makes the month: its Input (the jobs as recorded, the
// inventory) and the scheduler settings of its slurm.conf.
//
// The arrivals, users, sizes and runs are drawn here from one random
// stream in a fixed order, on which the month and its golden (testdata)
// depend; the steps apart (cluster, recorded) draw nothing from it.
func Month(s Shape) (analysis.Input, capacity.WhatIfParams, error) {
	if s.GPUs < 8 || s.GPUs%8 != 0 || s.Jobs < 1 || s.Occupancy <= 0 {
		return analysis.Input{}, capacity.WhatIfParams{}, fmt.Errorf("planmonth: %d jobs on %d GPUs at %.2f: need GPUs a multiple of 8", s.Jobs, s.GPUs, s.Occupancy)
	}
	rng := rand.New(rand.NewPCG(s.Seed, uint64(s.Jobs)<<20|uint64(s.GPUs)))
	nodes := s.GPUs / 8
	var in analysis.Input
	var sc slurmext.SchedConf
	var qc queuesim.Cluster
	in.Nodes, sc, qc = cluster(s)

	// Job sizes and run times: the mean GPU-seconds per job sets the
	// median run for the occupancy asked for.
	sizes := []struct {
		gpus int
		p    float64
	}{{1, 0.55}, {2, 0.2}, {4, 0.15}, {8, 0.1}}
	meanGPUs := 0.0
	for _, z := range sizes {
		meanGPUs += float64(z.gpus) * z.p
	}
	const sigma = 1.2
	meanRun := s.Occupancy * float64(s.GPUs) * month.Seconds() / (float64(s.Jobs) * meanGPUs)
	median := meanRun / math.Exp(sigma*sigma/2)
	users := max(20, s.GPUs/4)
	accounts := max(4, users/6)
	qjobs := make([]queuesim.Job, s.Jobs)
	arrivals := make([]time.Duration, s.Jobs)
	for i := range arrivals {
		arrivals[i] = arrival(rng)
		if s.Uniform {
			arrivals[i] = time.Duration(rng.Float64() * float64(month)).Truncate(time.Second)
		}
	}
	slices.Sort(arrivals)
	for i := range qjobs {
		u := rng.IntN(users)
		g := 8
		for x, k := rng.Float64(), 0; k < len(sizes); k++ {
			if x < sizes[k].p {
				g = sizes[k].gpus
				break
			}
			x -= sizes[k].p
		}
		run := max(60, median*math.Exp(sigma*rng.NormFloat64()))
		run = min(run, 47*3600)
		limit := roundUp(run*(1.3+3*rng.Float64()), 1800)
		limit = min(limit, 48*3600)
		j := queuesim.Job{
			Arrival: arrivals[i], Order: int64(i), Run: time.Duration(run) * time.Second, Limit: time.Duration(limit) * time.Second,
			Partitions: []int{0}, QOS: -1, User: u, Account: u % accounts, Nodes: 1, GPUs: g,
		}
		switch {
		case s.Uniform:
			run = float64(60 * (60 + rng.IntN(121)))
			j.Run, j.Limit, j.GPUs = time.Duration(run)*time.Second, time.Duration(2*run)*time.Second, 1
		case limit <= 4*3600 && rng.IntN(3) > 0:
			j.Partitions, j.Type = []int{1}, ""
		case nodes > 1 && rng.IntN(4) == 0:
			j.Type = []string{"a100", "h100"}[rng.IntN(2)]
		}
		qjobs[i] = j
	}
	pr := queuesim.DefaultPriority()
	if !s.Uniform {
		pr.Multifactor = true
		pr.WeightAge, pr.WeightFairshare, pr.WeightJobSize, pr.WeightPartition = 1000, 10000, 100, 1000
		pr.MaxAge, pr.DecayHalfLife = sc.PriorityMaxAge, sc.PriorityDecayHalfLife
		// Fair Tree, as the replay reads these settings (no PriorityFlags).
		pr.FairTree = true
	}
	res, err := queuesim.Run(qc, pr, queuesim.DefaultScheduler(), qjobs, queuesim.Options{Seed: s.Seed + 1})
	if err != nil {
		return analysis.Input{}, capacity.WhatIfParams{}, err
	}
	jobs, latest, err := recorded(qc, qjobs, res)
	if err != nil {
		return analysis.Input{}, capacity.WhatIfParams{}, err
	}
	in.Jobs = jobs
	in.Window = analysis.Window{From: From, To: From.Add(month)}
	in.Now = latest
	return in, capacity.WhatIfParams{Sched: sc, SchedKnown: true}, nil
}

// cluster is the month's cluster: its nodes (eight GPUs each, H100 and
// A100 by turns unless Uniform), the scheduler settings of its slurm.conf
// and the replay's view of the same nodes and partitions. It draws nothing
// from the month's random stream.
func cluster(s Shape) ([]analysis.Node, slurmext.SchedConf, queuesim.Cluster) {
	var nodes []analysis.Node
	sc := slurmext.DefaultSchedConf()
	sc.PriorityType = "priority/multifactor"
	sc.WeightAge, sc.WeightFairshare, sc.WeightJobSize, sc.WeightPartition = 1000, 10000, 100, 1000
	sc.PriorityMaxAge, sc.PriorityDecayHalfLife = 3*24*time.Hour, 7*24*time.Hour
	gpuPart := slurmext.PartitionConf{Name: "gpu", MaxTime: 48 * time.Hour, PriorityTier: 1, State: "UP", Default: true}
	short := slurmext.PartitionConf{Name: "short", MaxTime: 4 * time.Hour, PriorityTier: 2, State: "UP"}
	qc := queuesim.Cluster{Partitions: []queuesim.Partition{
		{Name: "gpu", MaxTime: gpuPart.MaxTime, PriorityTier: 1, PriorityFactor: 1},
		{Name: "short", MaxTime: short.MaxTime, PriorityTier: 2, PriorityFactor: 1},
	}}
	for i := range s.GPUs / 8 {
		model, typ, name := H100, "h100", fmt.Sprintf("h%03d", i)
		if i%2 == 1 && !s.Uniform {
			model, typ, name = A100, "a100", fmt.Sprintf("a%03d", i)
		}
		parts := []string{"gpu"}
		qc.Partitions[0].Nodes = append(qc.Partitions[0].Nodes, i)
		gpuPart.Nodes = append(gpuPart.Nodes, name)
		if typ == "h100" && !s.Uniform {
			parts = append(parts, "short")
			qc.Partitions[1].Nodes = append(qc.Partitions[1].Nodes, i)
			short.Nodes = append(short.Nodes, name)
		}
		nodes = append(nodes, analysis.Node{Name: name, GPUModel: model, GPUs: 8, MemoryTotal: 80 << 30, Partitions: parts})
		qc.Nodes = append(qc.Nodes, queuesim.Node{Name: name, Type: typ, GPUs: 8})
	}
	sc.Partitions = []slurmext.PartitionConf{gpuPart, short}
	if s.Uniform {
		sc = slurmext.DefaultSchedConf()
		gpuPart.MaxTime, gpuPart.MaxTimeUnlimited = 0, true
		sc.Partitions = []slurmext.PartitionConf{gpuPart}
		qc.Partitions = qc.Partitions[:1]
		qc.Partitions[0].MaxTime = 0
	}
	return nodes, sc, qc
}

// recorded is the replayed jobs as the month records them: each ran where
// and when the replay ran it. latest is the last end, or the month's end
// when none ends later. A job the replay did not run is an error: the
// occupancy asked for is too high.
func recorded(qc queuesim.Cluster, qjobs []queuesim.Job, res *queuesim.Result) ([]analysis.Job, time.Time, error) {
	latest := From.Add(month)
	var jobs []analysis.Job
	for i, q := range qjobs {
		r := res.Jobs[i]
		u := fmt.Sprintf("u%03d", q.User)
		job := analysis.Job{
			Cluster: "uni", ID: fmt.Sprint(100000 + i), User: u, Account: fmt.Sprintf("acct%02d", q.Account),
			Partition: qc.Partitions[q.Partitions[0]].Name, QOS: "normal", Name: fmt.Sprintf("task%d", i%97),
			Submit: From.Add(q.Arrival), Eligible: From.Add(q.Arrival), TimeLimit: q.Limit,
			ReqGPUs: q.GPUs, ReqGPUType: q.Type, NodeCount: 1,
		}
		switch r.Outcome {
		case queuesim.Ran:
			job.State, job.ExitKnown = slurmext.StateCompleted, true
			job.Start, job.End = From.Add(r.Start), From.Add(r.End)
			job.NodeList = qc.Nodes[r.Node].Name
			if job.End.After(latest) {
				latest = job.End
			}
		default:
			return nil, time.Time{}, fmt.Errorf("planmonth: job %d did not run (%v): lower the occupancy", i, r.Outcome)
		}
		jobs = append(jobs, job)
	}
	return jobs, latest, nil
}

// arrival draws an arrival in the month: twice the rate on weekdays
// 08:00–18:00 as at other times.
func arrival(rng *rand.Rand) time.Duration {
	for {
		t := time.Duration(rng.Float64() * float64(month))
		at := From.Add(t)
		busy := at.Weekday() != time.Saturday && at.Weekday() != time.Sunday && at.Hour() >= 8 && at.Hour() < 18
		if busy || rng.IntN(2) == 0 {
			return t.Truncate(time.Second)
		}
	}
}

func roundUp(v, to float64) float64 { return math.Ceil(v/to) * to }

// PlanJSON is a plan as the benchmarks and the golden test compare it:
// the recommendations (with their simulated effects) and the simulated
// plan, indented, without a final newline.
func PlanJSON(recs []analysis.Recommendation, sp capacity.SimPlan) ([]byte, error) {
	return json.MarshalIndent(struct {
		Recommendations []analysis.Recommendation `json:"recommendations"`
		Simulated       capacity.SimPlan          `json:"simulated"`
	}{recs, sp}, "", " ")
}

// Planned is a month analysed and planned (Plan).
type Planned struct {
	Input  analysis.Input
	WhatIf capacity.WhatIfParams
	// Findings' recommendations carry their simulated effects.
	Findings analysis.Findings
	Plan     capacity.SimPlan
}

// Plan is the month of shape s analysed with the default configuration
// and planned on its own scheduler settings, as gpuprof plan plans it:
// with the default [plan] parameters, or those edit makes of them (nil:
// the defaults).
func Plan(s Shape, edit func(*analysis.PlanParams)) (Planned, error) {
	var p Planned
	var err error
	if p.Input, p.WhatIf, err = Month(s); err != nil {
		return p, err
	}
	c := analysis.DefaultConfig()
	if p.Findings, err = analysis.Analyse(p.Input, c); err != nil {
		return p, err
	}
	pp := c.Plan.Params()
	if edit != nil {
		edit(&pp)
	}
	p.Plan, err = capacity.SimulatePlan(p.Input, &p.Findings, capacity.SimPlanParams{WhatIf: p.WhatIf, Plan: pp}, c)
	return p, err
}
