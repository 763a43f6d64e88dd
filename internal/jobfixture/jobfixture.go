// Package jobfixture builds the fixture jobs of gpuprof show's golden
// tests: a job's scheduler record and its node profile, readings fed
// through profile.GPU.Observe as the agent feeds them. The renderer's
// tests (cliview) draw them as they are; the command's tests
// (cmd/gpuprof) write them through the store and read them back. It is
// for tests only: nothing of the product imports it.
package jobfixture

import (
	"cmp"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Start is the first job's start; job n starts n days later.
var Start = time.Date(2026, 11, 3, 13, 0, 0, 0, time.UTC)

// Job is a fixture job: its scheduler record and, per GPU, a stream of
// readings.
type Job struct {
	ID, Name, State string
	Gres            string // ReqTRES
	GPUs            int
	Util, MemGiB    func(i int) (uint32, bool)
	Shared          bool
	XIDs            []uint64
	Minutes         int
	CPUs            int                // AllocCPUS; 0: unknown
	Usage           slurmext.HostUsage // sacct's CPU and host-memory accounting
	Notices         []profile.Notice   // decided on the node, saved with the profile
	// Activity is what GPM measured at minute i (false: no reading, as on
	// a GPU without GPM).
	Activity func(i int) (gpu.Activity, bool)
	// UtilOf, when set, is GPU k's utilisation at minute i, in place of
	// Util (the same on every GPU).
	UtilOf func(k, i int) (uint32, bool)
	// Node, Model and CardGiB place the job on another node and GPU
	// model than gpu01's H100s (80 GiB).
	Node, Model string
	CardGiB     uint64
}

// Built is a fixture job as the store keeps it: the node's profile and
// the scheduler's record.
type Built struct {
	Profile profile.Job
	Sched   slurmext.JobRecord
}

// Build makes the jobs, the n-th starting n days after Start.
func Build(jobs ...Job) []Built {
	out := make([]Built, len(jobs))
	for n, j := range jobs {
		begin := Start.Add(time.Duration(n) * 24 * time.Hour)
		end := begin.Add(time.Duration(j.Minutes) * time.Minute)
		node := cmp.Or(j.Node, "gpu01")
		p := profile.Job{
			Key:  profile.Key{Cluster: "lab", JobID: j.ID, Node: node},
			User: "alice", UID: 1001, Account: "vision", Partition: "gpu",
			Start: begin, Status: profile.StatusRunning, Source: profile.SourceAgent,
			SampleInterval: time.Minute, Driver: "550.54.15", CUDADriver: "12.4",
		}
		for k := range j.GPUs {
			p.GPUs = append(p.GPUs, j.gpu(k, begin))
		}
		p.LastSample = end
		p.ExitKnown = true
		p.Notices = j.Notices
		p.Finish(end)
		r := slurmext.JobRecord{
			Cluster: "lab", JobID: j.ID, DisplayID: j.ID, ArrayTaskID: -1, HetOffset: -1,
			Name: j.Name, User: "alice", UID: 1001, Account: "vision", Partition: "gpu", QOS: "normal",
			State: slurmext.JobState(j.State), CancelledBy: -1, NodeList: node,
			Submit: begin.Add(-90 * time.Second), Eligible: begin.Add(-90 * time.Second), Start: begin, End: end,
			TimeLimit: 24 * time.Hour, ReqTRES: j.Gres, AllocTRES: j.Gres, Source: "sacct",
			CPUs: j.CPUs, Usage: j.Usage,
		}
		r.ReqGPUs, r.ReqGPUType, r.ReqShards = slurmext.GPUsFromTRES(r.ReqTRES)
		out[n] = Built{Profile: p, Sched: r}
	}
	return out
}

// gpu is the job's GPU k, its readings from begin on.
func (j Job) gpu(k int, begin time.Time) profile.GPU {
	model, cardGiB := cmp.Or(j.Model, "NVIDIA H100 80GB HBM3"), cmp.Or(j.CardGiB, 80)
	d := gpu.Device{UUID: "GPU-" + j.ID + "-" + string(rune('a'+k)), Minor: k, Name: model, MemoryTotal: cardGiB << 30}
	g := profile.NewGPU(d, k, begin, time.Minute, 0)
	energy := uint64(0)
	for i := range j.Minutes {
		r := profile.Reading{Time: begin.Add(time.Duration(i) * time.Minute), TempC: gpu.Some(uint32(40 + i%30)), Shared: j.Shared}
		u, ok := uint32(0), false
		if j.UtilOf != nil {
			u, ok = j.UtilOf(k, i)
		} else {
			u, ok = j.Util(i)
		}
		if ok {
			r.Util = gpu.Some(u)
		}
		if j.Activity != nil {
			if a, ok := j.Activity(i); ok {
				r.Activity, r.ActivityScope = gpu.Some(a), profile.ActivityScopeGPU
			}
		}
		if m, ok := j.MemGiB(i); ok {
			r.MemUsed = gpu.Some(uint64(m) << 30)
			if m > 0 {
				r.Processes = 1
			}
		}
		energy += 60 * 300_000 // 300 W for a minute, in mJ
		r.EnergyMJ = gpu.Some(energy)
		r.PowerMW = gpu.Some(uint32(300_000))
		g.Observe(r, time.Minute)
	}
	for i, x := range j.XIDs {
		g.AddXID(x, begin.Add(time.Duration(i+1)*time.Minute))
	}
	return g
}

// Steady is a reading that is v at every minute.
func Steady(v uint32) func(int) (uint32, bool) { return func(int) (uint32, bool) { return v, true } }

// GPM is a GPM reading of a minute: SM, tensor and DRAM activity.
func GPM(sm, tensor, dram float64) gpu.Activity {
	return gpu.Activity{Interval: time.Minute, SM: gpu.Some(sm), Tensor: gpu.Some(tensor), DRAM: gpu.Some(dram)}
}

// ShowJobs are the jobs of show's goldens: a 2-GPU training job, a shard
// job, an idle allocation, a job Slurm killed for host memory (OOM), an
// idle job with a sent notice and one held back by the daily cap, and a
// job busy by its duty cycle and not by its SMs.
func ShowJobs() []Job {
	day5 := Start.Add(4 * 24 * time.Hour) // the fifth job's start
	return []Job{
		// 7001 has sacct's accounting: 2-02:24:00 of CPU time in 5 h on
		// 16 CPUs (3-08:00:00 of core time) is 63 %; 12.4 GiB of 128 GiB.
		{ID: "7001", Name: "train_resnet50", State: "COMPLETED", Gres: "billing=8,cpu=16,gres/gpu=2,mem=128G,node=1", GPUs: 2, Minutes: 300,
			Util: func(i int) (uint32, bool) { return uint32(80 + i%15), true }, MemGiB: Steady(61), CPUs: 16,
			Activity: func(i int) (gpu.Activity, bool) { return GPM(float64(70+i%15), 55, 25), i > 0 },
			Usage: slurmext.HostUsage{TotalCPU: 50*time.Hour + 24*time.Minute, TotalCPUValid: true,
				MemPeak: 12<<30 + 410<<20, MemPeakValid: true, ReqMem: 128 << 30, ReqMemValid: true}},
		{ID: "7002", Name: "notebook-small", State: "COMPLETED", Gres: "billing=1,cpu=2,gres/shard=1,mem=16G,node=1", GPUs: 1, Minutes: 120, Shared: true,
			Util: func(i int) (uint32, bool) { return uint32(10 + i%10), true }, MemGiB: Steady(6),
			Activity: func(i int) (gpu.Activity, bool) { return GPM(40, 0, 10), i > 0 }},
		{ID: "7003", Name: "forgotten-session", State: "TIMEOUT", Gres: "billing=4,cpu=4,gres/gpu=1,mem=32G,node=1", GPUs: 1, Minutes: 240,
			Util: Steady(0), MemGiB: Steady(0)},
		// 7004 has a memory peak and no CPU time (its steps' TotalCPU
		// malformed, say); the request comes from ReqTRES.
		{ID: "7004", Name: "preprocess\x1b[31m\r\nBcc: x", State: "OUT_OF_MEMORY", Gres: "billing=4,cpu=8,gres/gpu=1,mem=32G,node=1", GPUs: 1, Minutes: 45,
			CPUs: 8, Usage: slurmext.HostUsage{MemPeak: 32 << 30, MemPeakValid: true},
			Util: func(i int) (uint32, bool) { return uint32(30 + i%40), i%9 != 4 }, MemGiB: func(i int) (uint32, bool) { return uint32(10 + i), true },
			XIDs: []uint64{31, 31, 43}},
		// 7005 asked for two GPUs and used neither: the agent sent the
		// unused-GPUs notice, then held the idle-job one back (the
		// user's daily cap), in the words and options notice.Describe
		// and the agent's cap record.
		{ID: "7005", Name: "idle-pair", State: "COMPLETED", Gres: "billing=8,cpu=8,gres/gpu=2,mem=64G,node=1", GPUs: 2, Minutes: 180,
			Util: Steady(0), MemGiB: Steady(0), Notices: []profile.Notice{
				{Rule: profile.RuleUnusedGPUs, Time: day5.Add(45 * time.Minute), Since: day5.Add(15 * time.Minute), GPUs: []int{1},
					Recipient: "alice@example.org", Status: profile.NoticeSent,
					Evidence: "2 GPUs allocated, only one used; 1 idle for 00:30:00 (since 2026-11-07T13:15:00): GPU 1: no process, utilisation 0 %, memory 0 B",
					Fix:      "--gres=gpu:1"},
				{Rule: profile.RuleIdleJob, Time: day5.Add(90 * time.Minute), Since: day5, GPUs: []int{0, 1},
					Status:   profile.NoticeCapped,
					Evidence: "all 2 GPUs of the job idle for 01:30:00 (since 2026-11-07T13:00:00): GPU 0: no process, utilisation 0 %, memory 0 B; GPU 1: no process, utilisation 0 %, memory 0 B; no GPU work since the job started",
					Detail:   "3 notices sent to alice today from gpu01 (daily_cap 3)"},
			}},
		// 7006 is busy by the duty cycle (16 %) and not by its SMs
		// (0.02 %): a loop of tiny kernels, as measured on an H200
		// (docs/real-gpu.md). Its GPU failed twice (hardware XIDs).
		{ID: "7006", Name: "tiny-kernels", State: "COMPLETED", Gres: "billing=4,cpu=4,gres/gpu=1,mem=32G,node=1", GPUs: 1, Minutes: 60,
			Util: Steady(16), MemGiB: Steady(2), XIDs: []uint64{79, 48, 48},
			Activity: func(i int) (gpu.Activity, bool) { return GPM(0.02, 0, 0.01), i > 0 }},
	}
}
