// Command benchplan times the whole simulated capacity plan
// (analysis.Analyse, then capacity.SimulatePlan with the default
// configuration and budgets) of a month made by tools/planmonth, and
// prints one JSON line: the month's size, the times, the replays and
// scheduler steps, the verdict, the peak RSS and a SHA-256 of the plan's
// JSON, so that two builds can be compared answer for answer
// (docs/benchmarks.md, "Capacity plan on the replay"). -out writes the
// plan's JSON. It is a benchmark program, not product code.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/tools/planmonth"
)

func main() {
	var s planmonth.Shape
	flag.IntVar(&s.Jobs, "jobs", 60000, "jobs in the month")
	flag.IntVar(&s.GPUs, "gpus", 240, "GPUs in the cluster (a multiple of 8)")
	flag.Float64Var(&s.Occupancy, "occupancy", 0.7, "GPU-hours run as a share of the cluster's")
	flag.Uint64Var(&s.Seed, "seed", 1, "the month's seed")
	flag.BoolVar(&s.Uniform, "uniform", false, "BenchmarkSimulatePlan's shape: one-GPU jobs of 1–3 h on one model and partition, priority/basic")
	out := flag.String("out", "", "write the plan's JSON here")
	unlimited := flag.Bool("unlimited", false, "lift plan.replay_budget and plan.step_budget")
	replayBudget := flag.Int("replay-budget", 0, "plan.replay_budget (0: the configuration's default)")
	stepBudget := flag.Int("step-budget", 0, "plan.step_budget (0: the configuration's default)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the plan here")
	flag.Parse()
	// The soft memory limit gpuprof plan runs under (cmd/gpuprof/memory.go),
	// unless GOMEMLIMIT chooses another.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(800 << 20)
	}
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchplan:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	c := analysis.DefaultConfig()
	switch {
	case *unlimited:
		c.Plan.ReplayBudget, c.Plan.StepBudget = 1<<40, 1<<40
	default:
		if *replayBudget > 0 {
			c.Plan.ReplayBudget = *replayBudget
		}
		if *stepBudget > 0 {
			c.Plan.StepBudget = *stepBudget
		}
	}
	if err := run(s, c, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchplan:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(s planmonth.Shape, c analysis.Config, out string) error {
	t0 := time.Now()
	in, wp, err := planmonth.Month(s)
	if err != nil {
		return err
	}
	t1 := time.Now()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		return err
	}
	t2 := time.Now()
	sp, err := capacity.SimulatePlan(in, &f, capacity.SimPlanParams{WhatIf: wp, Plan: c.Plan.Params()}, c)
	if err != nil {
		return err
	}
	t3 := time.Now()
	b, err := planmonth.PlanJSON(f.Recommendations, sp)
	if err != nil {
		return err
	}
	if out != "" {
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	line, _ := json.Marshal(map[string]any{
		"jobs": s.Jobs, "gpus": s.GPUs, "occupancy": s.Occupancy, "seed": s.Seed, "uniform": s.Uniform, "replay_budget": c.Plan.ReplayBudget, "step_budget": c.Plan.StepBudget, "gomaxprocs": runtime.GOMAXPROCS(0),
		"month_s": t1.Sub(t0).Seconds(), "analyse_s": t2.Sub(t1).Seconds(), "plan_s": t3.Sub(t2).Seconds(),
		"simulated": sp.Simulated, "not_simulated": sp.NotSimulated, "replays": sp.Replays, "steps": sp.Steps,
		"verdict": sp.Verdict.Code, "max_rss_mib": ru.Maxrss / 1024, "plan_sha256": fmt.Sprintf("%x", sha256.Sum256(b)),
	})
	fmt.Println(string(line))
	return nil
}
