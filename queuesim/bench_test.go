package queuesim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchMonth is a month of n jobs on g GPUs (8 per node, one partition,
// two GPU types) at about 70 % occupancy: run times exponential, GPUs 1–8,
// time limits 1.5–3× the run, a tenth of the jobs asking for a type.
func benchMonth(n, g int) (Cluster, []Job) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(g)))
	nodes := max(g/8, 1)
	c := Cluster{Partitions: []Partition{{Name: "gpu"}}}
	for i := range nodes {
		typ := "a100"
		if i%2 == 1 {
			typ = "h100"
		}
		c.Nodes = append(c.Nodes, Node{Name: fmt.Sprint("n", i), Type: typ, GPUs: min(8, g)})
		c.Partitions[0].Nodes = append(c.Partitions[0].Nodes, i)
	}
	month := 30 * 86400.0
	meanGPUs := 1.5
	meanRun := 0.7 * float64(nodes*min(8, g)) * month / (float64(n) * meanGPUs)
	jobs := make([]Job, n)
	for i := range jobs {
		gp := 1
		if rng.IntN(4) == 0 {
			gp = 1 + rng.IntN(min(8, g))
		}
		r := rng.ExpFloat64()*meanRun + 1
		jobs[i] = Job{
			Arrival: time.Duration(rng.Float64()*month) * sec, Order: int64(i),
			Run: time.Duration(r) * sec, Limit: time.Duration(r*(1.5+1.5*rng.Float64())+60) * sec,
			Partitions: []int{0}, QOS: -1, User: rng.IntN(50), Nodes: 1, GPUs: gp,
		}
		if rng.IntN(10) == 0 {
			jobs[i].Type = "h100"
		}
	}
	return c, jobs
}

// BenchmarkReplay replays a month through the main scheduler and
// conservative backfill (Slurm's defaults), for jobs × GPUs.
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, g := range []int{10, 100, 1000} {
			if testing.Short() && n*g > 10_000_000 {
				continue
			}
			b.Run(fmt.Sprintf("jobs=%d/gpus=%d", n, g), func(b *testing.B) {
				c, jobs := benchMonth(n, g)
				b.ResetTimer()
				for b.Loop() {
					if _, err := Run(c, DefaultPriority(), DefaultScheduler(), jobs, Options{Seed: 1}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
