package queuesim

import (
	"math"
	"slices"
	"time"
)

// Scale returns the jobs of a window of length span with their arrival
// rate multiplied by factor, for "what if demand grows by g": a factor
// above 1 keeps every job and adds copies of jobs drawn at random (their
// users, partitions, GPUs, limits and run times), each arriving in the
// hour of another job drawn at random (uniformly within that hour), so
// the window's hour-of-week and day-to-day pattern is kept; a factor below
// 1 keeps each job with that probability. Jobs running at the start are
// kept as they are. hourOffset is how far past a whole hour the window
// starts (0 for a month), so that "the hour" is the wall clock's.
//
// The result's Order is the arrival order (a copy has no submission time
// of its own). The same seed gives the same jobs.
func Scale(jobs []Job, factor float64, span, hourOffset time.Duration, seed uint64) []Job {
	if factor == 1 || math.IsNaN(factor) || factor < 0 {
		return slices.Clone(jobs)
	}
	rng := rngFrom(seed)
	var arriving []int
	out := make([]Job, 0, int(float64(len(jobs))*max(factor, 1))+1)
	for i, j := range jobs {
		if j.Running {
			out = append(out, j)
			continue
		}
		if j.Arrival >= 0 && j.Arrival < span {
			arriving = append(arriving, i)
		}
		if factor >= 1 || rng.float() < factor {
			out = append(out, j)
		}
	}
	out = addCopies(out, jobs, arriving, factor, rng, span, hourOffset)
	numberByArrival(out)
	return out
}

// rng is a small deterministic generator (SplitMix64 steps): Scale must
// give the same jobs for a seed on every platform and Go version.
type rng struct{ state uint64 }

func rngFrom(seed uint64) *rng { return &rng{state: seed} }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return splitmix(r.state)
}

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// ScaleEach is Scale with a factor per job (factors[i] for jobs[i]), for
// demand that grows differently per GPU model: the jobs of one factor
// are scaled as Scale scales a window, among themselves — a factor
// above 1 adds copies of that group's jobs, each arriving in the hour of
// another of the group's jobs, so each group keeps its own hour-of-week
// pattern. The groups are taken in increasing factor. A factor that is
// not a number or below 0 counts as 1. With one factor for all it gives
// Scale's jobs for the same seed.
func ScaleEach(jobs []Job, factors []float64, span, hourOffset time.Duration, seed uint64) []Job {
	fs := make([]float64, len(jobs))
	for i := range jobs {
		f := 1.0
		if i < len(factors) && !math.IsNaN(factors[i]) && factors[i] >= 0 {
			f = factors[i]
		}
		fs[i] = f
	}
	if len(fs) == 0 || !slices.ContainsFunc(fs, func(f float64) bool { return f != fs[0] }) {
		f := 1.0
		if len(fs) > 0 {
			f = fs[0]
		}
		return Scale(jobs, f, span, hourOffset, seed)
	}
	distinct := slices.Clone(fs)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	group := func(f float64) int { i, _ := slices.BinarySearch(distinct, f); return i }
	rng := rngFrom(seed)
	arriving := make([][]int, len(distinct))
	extraCap := 0
	for i, j := range jobs {
		if !j.Running && j.Arrival >= 0 && j.Arrival < span {
			g := group(fs[i])
			arriving[g] = append(arriving[g], i)
		}
		extraCap += int(max(fs[i]-1, 0)) + 1
	}
	out := make([]Job, 0, extraCap)
	for i, j := range jobs {
		if j.Running {
			out = append(out, j)
			continue
		}
		if f := fs[i]; f >= 1 || rng.float() < f {
			out = append(out, j)
		}
	}
	for g, f := range distinct {
		arr := arriving[g]
		out = addCopies(out, jobs, arr, f, rng, span, hourOffset)
	}
	numberByArrival(out)
	return out
}

// addCopies appends to out round((f−1)·len(arriving)) copies of jobs drawn
// from arriving (indexes into jobs), each arriving in the hour of another
// of them drawn at random, uniformly within that hour (Scale's rule);
// nothing when f ≤ 1 or none arrive.
func addCopies(out, jobs []Job, arriving []int, f float64, rng *rng, span, hourOffset time.Duration) []Job {
	if !(f > 1) || len(arriving) == 0 {
		return out
	}
	extra := int(math.Round((f - 1) * float64(len(arriving))))
	for range extra {
		j := jobs[arriving[rng.intn(len(arriving))]]
		at := jobs[arriving[rng.intn(len(arriving))]].Arrival
		hour := (at + hourOffset).Truncate(time.Hour) - hourOffset
		a := hour + time.Duration(rng.float()*float64(time.Hour))
		a = min(max(a, 0), span-time.Second)
		if j.Cancels {
			j.Cancel = a + (j.Cancel - j.Arrival)
		}
		j.Arrival = a
		out = append(out, j)
	}
	return out
}

// numberByArrival sets each job's Order to its rank by arrival (stable: a
// copy has no submission time of its own).
func numberByArrival(out []Job) {
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmpInt(int64(out[a].Arrival), int64(out[b].Arrival))
	})
	for rank, i := range order {
		out[i].Order = int64(rank)
	}
}
