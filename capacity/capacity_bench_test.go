package capacity

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// BenchmarkSimulatePlan makes the whole simulated plan (calibration, the
// recommendations' effects, the purchase search per model, the timeline)
// of a month of 1–3 h single-GPU jobs on a cluster sized to the load (one
// 8-GPU node per 40 jobs a day, at about 70 % occupancy, so that growth to the horizon makes the purchase search run), with 3 seeds
// and the default growth and horizon.
func BenchmarkSimulatePlan(b *testing.B) {
	for _, perDay := range []int{50, 500} {
		in := scaledMonth(b, perDay)
		c := planConfig(3)
		c.Plan.ReplayBudget, c.Plan.StepBudget = 1<<40, 1<<40
		b.Run(fmt.Sprintf("jobs=%d/gpus=%d", len(in.Jobs), analysis.TotalGPUs(in.Nodes)), func(b *testing.B) {
			f, err := analysis.Analyse(in, c)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			replays, steps := 0, 0
			for range b.N {
				sp, err := SimulatePlan(in, &f, SimPlanParams{Plan: c.Plan.Params()}, c)
				if err != nil || !sp.Simulated {
					b.Fatal(err, sp.NotSimulated)
				}
				replays, steps = sp.Replays, sp.Steps
			}
			b.ReportMetric(float64(replays), "replays/plan")
			b.ReportMetric(float64(steps), "steps/plan")
		})
	}
}

func scaledMonth(b *testing.B, perDay int) analysis.Input {
	r := rand.New(rand.NewPCG(7, uint64(perDay)))
	var pjs []plantedJob
	users := []string{"ana", "bo", "cy", "di", "ed", "fay", "gus", "hal"}
	everyDay(func(d time.Time) {
		for range perDay {
			run := minutes(r, 60, 180)
			pjs = append(pjs, plantedJob{at: d.Add(minutes(r, 0, 24*60-1)), run: run, limit: 2 * run, gpus: 1,
				user: users[r.IntN(len(users))], util: 60 + 30*r.Float64(), vramFrac: 0.5})
		}
	})
	return recordMonth(b, gpuNodes("h", h100, max(1, perDay*3/200), 8), pjs)
}
