package analysis

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// syntheticJobs makes n jobs of a plausible mix: short debugging, long
// multi-GPU training, services, IO-bound preprocessing arrays, idle
// allocations, sacct history without readings and CPU jobs, from 200
// users running 25 tasks each under varying names. The GPUs of all jobs
// share one backing array, as a loader would build them.
func syntheticJobs(n int, seed uint64) []Job {
	r := rand.New(rand.NewPCG(seed, 1))
	users := make([]string, 200)
	for i := range users {
		users[i] = fmt.Sprintf("u%03d", i)
	}
	bases := []string{"train", "finetune_llama", "eval", "prep", "serve", "notebook", "sweep", "bench"}
	names := make([]string, 5000)
	for i := range names {
		names[i] = fmt.Sprintf("%s_%s_v%d_seed%d", bases[i%len(bases)], users[i%len(users)], i%25, i)
	}
	parts := []string{"gpu", "debug", "long", "shared"}
	pool := make([]GPU, 0, 2*n)
	jobs := make([]Job, n)
	base := t0
	for i := range jobs {
		u := r.IntN(len(users))
		j := Job{
			Cluster: "c1", ID: "x", User: users[u], Account: "lab", Partition: parts[r.IntN(len(parts))],
			Name: names[(u*25+r.IntN(25))%len(names)], State: "COMPLETED", ExitKnown: true,
			Submit: base.Add(time.Duration(i) * time.Second), TimeLimit: 24 * time.Hour,
			HasGPUData: true,
		}
		j.Start = j.Submit.Add(time.Duration(r.IntN(7200)) * time.Second)
		var ngpu int
		var run time.Duration
		var util float64
		switch k := r.IntN(100); {
		case k < 30: // short debugging
			ngpu, run, util = 1, time.Duration(5+r.IntN(20))*time.Minute, float64(r.IntN(100))
		case k < 55: // long training
			ngpu, run, util = 1<<r.IntN(4), time.Duration(4+r.IntN(44))*time.Hour, 60+float64(r.IntN(36))
		case k < 65: // service
			ngpu, run, util = 1, time.Duration(24+r.IntN(48))*time.Hour, 5+float64(r.IntN(15))
		case k < 75: // IO-bound array task
			ngpu, run, util = 1, time.Duration(40+r.IntN(40))*time.Minute, 10
			j.ArrayJobID = fmt.Sprint(1000 + i/100)
			j.IOWait, j.IOWaitValid, j.IOScope = 0.3+r.Float64()/2, true, profile.IOScopeCgroup
		case k < 85: // idle allocation
			ngpu, run, util = 2+r.IntN(3), time.Duration(1+r.IntN(10))*time.Hour, 1
		case k < 95: // sacct history
			j.ReqGPUs, j.HasGPUData, run = 1+r.IntN(4), false, time.Duration(1+r.IntN(20))*time.Hour
		default: // CPU job
			j.HasGPUData, run = false, time.Duration(1+r.IntN(60))*time.Minute
		}
		j.End = j.Start.Add(run)
		if r.IntN(20) == 0 {
			j.State = "FAILED"
		}
		if ngpu > 0 {
			j.ReqGPUs = ngpu
			start := len(pool)
			for g := range ngpu {
				u := util
				if g > 0 && r.IntN(4) == 0 {
					u = 0 // a GPU left idle
				}
				peak := uint64(1+r.IntN(79)) * gib
				pool = append(pool, GPU{
					Node: "gpu01", Model: h100, MemoryTotal: card,
					VRAMPeak: peak, VRAMPeakValid: true,
					UtilMean: u, UtilMeanValid: true,
					UtilP50: u, UtilP95: min(100, u*1.3), UtilPctValid: true,
					UtilMax: min(100, u*1.5), UtilMaxValid: true,
					IdleFraction: 1 - u/100, IdleValid: true,
					IdleAllocation: u == 0, Preallocated: r.IntN(20) == 0,
					EnergyJ: u * run.Seconds(), EnergyValid: true,
				})
			}
			j.GPUs = pool[start:len(pool):len(pool)]
		}
		jobs[i] = j
	}
	return jobs
}

// BenchmarkClassifyProfileDiagnose runs the whole first part of the
// analysis (measure, classify, diagnose, task profiles, cluster summary)
// over a million jobs and reports the cost per job.
func BenchmarkClassifyProfileDiagnose(b *testing.B) {
	const n = 1_000_000
	jobs := syntheticJobs(n, 1)
	c := DefaultConfig()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	var f Findings
	for b.Loop() {
		var err error
		f, err = Analyse(Input{Jobs: jobs}, c)
		if err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if f.Summary.Jobs != n || len(f.Profiles) == 0 {
		b.Fatalf("summary of %d jobs, %d profiles", f.Summary.Jobs, len(f.Profiles))
	}
	per := float64(b.N) * n
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/job")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/per, "allocs/job")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/per, "B/job")
}

// BenchmarkClassify is the cost of explaining one job (reasons included).
func BenchmarkClassify(b *testing.B) {
	j := job(6*time.Hour, spread(87, 90, 95), spread(80, 85, 95))
	c := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		Classify(j, c)
	}
}
