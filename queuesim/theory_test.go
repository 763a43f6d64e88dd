package queuesim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fifoCluster is c identical untyped GPUs on one node in one partition,
// scheduled FIFO (priority/basic, no backfill): an M/·/c queue.
func fifoCluster(c int) Cluster {
	return Cluster{Nodes: []Node{{Name: "n", GPUs: c}}, Partitions: []Partition{{Name: "p", Nodes: []int{0}}}}
}

func fifoScheduler() Scheduler {
	sc := DefaultScheduler()
	sc.Backfill = false
	return sc
}

// poissonJobs draws n one-GPU jobs arriving at rate lambda (per second)
// with run times from service.
func poissonJobs(n int, lambda float64, rng *rand.Rand, service func() float64) []Job {
	jobs := make([]Job, n)
	t := 0.0
	for i := range jobs {
		t += rng.ExpFloat64() / lambda
		jobs[i] = Job{
			Arrival: time.Duration(t * float64(time.Second)), Order: int64(i),
			Run: time.Duration(service() * float64(time.Second)), Partitions: []int{0}, QOS: -1, Nodes: 1, GPUs: 1,
		}
	}
	return jobs
}

// waits returns the simulated waits in seconds, the first skip left out
// (the queue starts empty).
func waits(t *testing.T, c Cluster, sc Scheduler, jobs []Job, skip int) []float64 {
	t.Helper()
	r, err := Run(c, DefaultPriority(), sc, jobs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 0, len(jobs)-skip)
	for i := skip; i < len(jobs); i++ {
		jr := r.Jobs[i]
		if jr.Outcome != Ran {
			t.Fatalf("job %d: %v", i, jr.Outcome)
		}
		w = append(w, (jr.Start - jobs[i].Arrival.Round(time.Second)).Seconds())
	}
	return w
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// erlangC returns P(wait) and the mean wait W_q of M/M/c.
func erlangC(c int, lambda, mu float64) (pWait, wq float64) {
	a := lambda / mu
	rho := a / float64(c)
	sum, term := 0.0, 1.0 // a^k/k!
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	pWait = term / ((1-rho)*sum + term)
	return pWait, pWait / (float64(c)*mu - lambda)
}

// replicate runs independent replications of a long queue until the
// standard error of the mean of each statistic is at most 1 % of its
// theoretical value (or maxReps is reached), and returns the means: a
// queue near saturation forgets its state slowly, so how many jobs a 3 %
// check needs depends on the case, and is found rather than guessed.
func replicate(t *testing.T, want []float64, maxReps int, run func(seed uint64) []float64) (got []float64, reps int) {
	t.Helper()
	var sums, sqs []float64
	for reps = 1; ; reps++ {
		v := run(uint64(reps))
		if sums == nil {
			sums, sqs = make([]float64, len(v)), make([]float64, len(v))
		}
		done := reps >= 8
		for k, x := range v {
			sums[k] += x
			sqs[k] += x * x
			n := float64(reps)
			m := sums[k] / n
			se := math.Sqrt(max(sqs[k]/n-m*m, 0) / math.Max(n-1, 1))
			if se > 0.01*want[k] {
				done = false
			}
		}
		if done || reps >= maxReps {
			break
		}
	}
	got = make([]float64, len(sums))
	for k := range sums {
		got[k] = sums[k] / float64(reps)
	}
	return got, reps
}

// meanRun is the mean run time of the theory tests: long against the
// simulator's one-second clock, so that rounding to seconds is noise.
const meanRun = 14400.0

// repJobs is the jobs of one replication, and the first ones left out
// (the queue starts empty).
func repJobs() (n, skip int) {
	if testing.Short() {
		return 20_000, 1000
	}
	return 200_000, 5000
}

// TestErlangC: Poisson arrivals, exponential run times, c GPUs, FIFO. The
// simulated mean wait W_q, and the share of jobs waiting longer than W_q,
// agree with Erlang C (P(W > t) = P_wait·e^−(cμ−λ)t) within 3 %.
func TestErlangC(t *testing.T) {
	for _, c := range []int{1, 4, 16} {
		for _, rho := range []float64{0.5, 0.8, 0.9} {
			mu := 1 / meanRun
			lambda := rho * float64(c) * mu
			pWait, wq := erlangC(c, lambda, mu)
			wantTail := pWait * math.Exp(-(float64(c)*mu-lambda)*wq)
			// p95: P(W > t) = 0.05, when more than 5 % of jobs wait at all.
			want95 := 0.0
			if pWait > 0.05 {
				want95 = math.Log(pWait/0.05) / (float64(c)*mu - lambda)
			}
			n, skip := repJobs()
			wants := []float64{wq, wantTail, max(want95, 1)}
			got, reps := replicate(t, wants, 60, func(seed uint64) []float64 {
				rng := rand.New(rand.NewPCG(seed, uint64(c)*10+uint64(rho*10)))
				jobs := poissonJobs(n, lambda, rng, func() float64 { return rng.ExpFloat64() * meanRun })
				w := waits(t, fifoCluster(c), fifoScheduler(), jobs, skip)
				over := 0
				for _, x := range w {
					if x > wq {
						over++
					}
				}
				sorted := slices.Clone(w)
				slices.Sort(sorted)
				return []float64{mean(w), float64(over) / float64(len(w)), sorted[int(math.Ceil(0.95*float64(len(sorted))))-1]}
			})
			t.Logf("c=%d ρ=%.1f: W_q %.0f s, Erlang C %.0f (%+.2f %%); P(W>W_q) %.4f, Erlang C %.4f (%+.2f %%); %d × %d jobs",
				c, rho, got[0], wq, 100*(got[0]/wq-1), got[1], wantTail, 100*(got[1]/wantTail-1), reps, n)
			if testing.Short() {
				continue // too few jobs for 3 %
			}
			if math.Abs(got[0]/wq-1) > 0.03 {
				t.Errorf("c=%d ρ=%.1f: mean wait %.0f s, Erlang C %.0f s: off by more than 3 %%", c, rho, got[0], wq)
			}
			if want95 > 0 {
				t.Logf("c=%d ρ=%.1f: p95 wait %.0f s, Erlang C %.0f (%+.2f %%)", c, rho, got[2], want95, 100*(got[2]/want95-1))
				if math.Abs(got[2]/want95-1) > 0.03 {
					t.Errorf("c=%d ρ=%.1f: p95 wait %.0f s, Erlang C %.0f s: off by more than 3 %%", c, rho, got[2], want95)
				}
			}
			if math.Abs(got[1]/wantTail-1) > 0.03 {
				t.Errorf("c=%d ρ=%.1f: P(W > %.0f s) = %.4f, Erlang C %.4f: off by more than 3 %%", c, rho, wq, got[1], wantTail)
			}
		}
	}
}

// TestMD1: Poisson arrivals, one GPU, fixed run times: the mean wait
// agrees with Pollaczek–Khinchine, W_q = ρ / (2μ(1−ρ)), within 3 %.
func TestMD1(t *testing.T) {
	for _, rho := range []float64{0.5, 0.8, 0.9} {
		mu := 1 / meanRun
		lambda := rho * mu
		want := rho / (2 * mu * (1 - rho))
		n, skip := repJobs()
		got, reps := replicate(t, []float64{want}, 60, func(seed uint64) []float64 {
			rng := rand.New(rand.NewPCG(seed, 99+uint64(rho*10)))
			jobs := poissonJobs(n, lambda, rng, func() float64 { return meanRun })
			return []float64{mean(waits(t, fifoCluster(1), fifoScheduler(), jobs, skip))}
		})
		t.Logf("ρ=%.1f: W_q %.0f s, Pollaczek–Khinchine %.0f (%+.2f %%); %d × %d jobs", rho, got[0], want, 100*(got[0]/want-1), reps, n)
		if !testing.Short() && math.Abs(got[0]/want-1) > 0.03 {
			t.Errorf("ρ=%.1f: mean wait %.0f s, Pollaczek–Khinchine %.0f s: off by more than 3 %%", rho, got[0], want)
		}
	}
}
