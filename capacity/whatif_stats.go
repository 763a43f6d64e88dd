package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/queuesim"
	"github.com/gpuprof/gpuprof/slurmext"
)

// groupRun is one run's numbers for one partition or model.
type groupRun struct {
	waits []float64
	// gpuSec and queuedGH are exact (analysis.ExactSum): the same in
	// every order of the jobs.
	gpuSec, queuedGH analysis.ExactSum
	// addedSec is the GPU time used on added nodes; full the seconds in
	// the window when every GPU of the group was busy (models only).
	addedSec analysis.ExactSum
	full     float64
	evs      []busyEvent
}

// busyEvent is a change in the GPUs busy at a time (seconds).
type busyEvent struct{ t, d float64 }

// fullSeconds sweeps the events and returns how long at least gpus were
// busy at once.
func fullSeconds(evs []busyEvent, gpus int) float64 {
	if gpus <= 0 || len(evs) == 0 {
		return 0
	}
	slices.SortFunc(evs, func(a, b busyEvent) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.d, b.d)
	})
	busy, full, from := 0.0, 0.0, 0.0
	for _, e := range evs {
		was := busy >= float64(gpus)-1e-9
		busy += e.d
		now := busy >= float64(gpus)-1e-9
		switch {
		case !was && now:
			from = e.t
		case was && !now:
			full += e.t - from
		}
	}
	return full
}

// seedStats is one seeded run reduced to what a Scenario reads: per
// partition and per GPU model, its waits and GPU time.
type seedStats struct {
	parts, models []groupRun
	// cells are the waits of each partition's jobs by the model they ran
	// on, at partition × len(models) + model.
	cells [][]float64
}

// scenario reduces seeded runs to spreads per partition and GPU model.
// jobsets are the jobs of each run when they differ from r.jobs (growth).
func (r *replay) scenario(runs []*queuesim.Result, jobsets [][]queuesim.Job) Scenario {
	stats := make([]seedStats, len(runs))
	for s, res := range runs {
		jobs := r.jobs
		if jobsets != nil {
			jobs = jobsets[s]
		}
		stats[s] = r.reduce(res, jobs)
	}
	return r.combine(stats)
}

// models are the GPU models of the replay's nodes, sorted, with their
// GPUs and added GPUs.
func (r *replay) models() (models []string, gpus, added map[string]int) {
	models = []string{}
	gpus, added = map[string]int{}, map[string]int{}
	for _, n := range r.simNodes {
		if !slices.Contains(models, n.Model) {
			models = append(models, n.Model)
		}
		gpus[n.Model] += n.GPUs
		if n.Added {
			added[n.Model] += n.GPUs
		}
	}
	slices.Sort(models)
	return models, gpus, added
}

// reduce is one run of jobs (r.jobs, or their scaled set) per partition
// and GPU model: the run itself is not needed after it.
func (r *replay) reduce(res *queuesim.Result, jobs []queuesim.Job) seedStats {
	span := r.span.Seconds()
	models, modelGPUs, _ := r.models()
	pr := make([]groupRun, len(r.simParts))
	mr := make([]groupRun, len(models))
	cells := make([][]float64, len(r.simParts)*len(models))
	for i, jr := range res.Jobs {
		if jr.Outcome != queuesim.Ran {
			continue
		}
		q := &jobs[i]
		eq := float64(q.GPUs*q.Nodes) + float64(q.Shards*q.Nodes)/8
		if n := r.cluster.Nodes[jr.Node]; q.Shards > 0 && n.ShardsPerGPU > 0 {
			eq = float64(q.Shards*q.Nodes) / float64(n.ShardsPerGPU)
		}
		m := slices.Index(models, r.simNodes[jr.Node].Model)
		used := eq * overlap(jr.Start.Seconds(), jr.End.Seconds(), 0, span)
		pr[jr.Partition].gpuSec.Add(used)
		mr[m].gpuSec.Add(used)
		if r.simNodes[jr.Node].Added {
			mr[m].addedSec.Add(used)
		}
		if a, b := max(jr.Start.Seconds(), 0), min(jr.End.Seconds(), span); b > a {
			mr[m].evs = append(mr[m].evs, busyEvent{a, eq}, busyEvent{b, -eq})
		}
		if q.Running || q.Arrival < 0 || q.Arrival.Seconds() >= span {
			continue
		}
		w := (jr.Start - q.Arrival).Seconds()
		for _, g := range []*groupRun{&pr[jr.Partition], &mr[m]} {
			g.waits = append(g.waits, w)
			g.queuedGH.Add(w * eq / 3600)
		}
		k := jr.Partition*len(models) + m
		cells[k] = append(cells[k], w)
	}
	for k := range mr {
		mr[k].full = fullSeconds(mr[k].evs, modelGPUs[models[k]])
		mr[k].evs = nil
	}
	return seedStats{parts: pr, models: mr, cells: cells}
}

// combine is the Scenario of seeded runs, each reduced.
func (r *replay) combine(stats []seedStats) Scenario {
	span := r.span.Seconds()
	models, modelGPUs, modelAdded := r.models()
	perPart := make([][]groupRun, len(r.simParts))
	perModel := make([][]groupRun, len(models))
	for _, st := range stats {
		for k := range st.parts {
			perPart[k] = append(perPart[k], st.parts[k])
		}
		for k := range st.models {
			perModel[k] = append(perModel[k], st.models[k])
		}
	}
	sc := Scenario{Jobs: r.counts}
	for k, p := range r.simParts {
		sc.Partitions = append(sc.Partitions, groupOf(p.Name, p.GPUs, span, perPart[k]))
	}
	for k, m := range models {
		g := groupOf(m, modelGPUs[m], span, perModel[k])
		var full, added []float64
		for _, run := range perModel[k] {
			full = append(full, run.full/3600)
			if a := modelAdded[m]; a > 0 && span > 0 {
				added = append(added, run.addedSec.Float()/(float64(a)*span))
			}
		}
		g.FullHours = spreadOf(full)
		g.AddedGPUs, g.AddedOccupancy = modelAdded[m], spreadOf(added)
		g.Demand, g.Placeable = r.demand[m], r.placeable[m]
		sc.Models = append(sc.Models, g)
	}
	sc.Cells = []Cell{}
	for p, part := range r.simParts {
		for m, model := range models {
			var runs []groupRun
			some := false
			for _, st := range stats {
				w := st.cells[p*len(models)+m]
				some = some || len(w) > 0
				runs = append(runs, groupRun{waits: w})
			}
			if !some {
				continue
			}
			g := groupOf("", 0, span, runs)
			sc.Cells = append(sc.Cells, Cell{Partition: part.Name, Model: model, Jobs: g.Jobs, WaitP95: g.WaitP95})
		}
	}
	return sc
}

// subset is the spread over runs of the waits of the replayed jobs whose
// recorded job is in set: the jobs a recommendation's effect is measured
// on. The runs must be of r.jobs (no growth).
func (r *replay) subset(name string, runs []*queuesim.Result, set map[int]bool) analysis.Group {
	span := r.span.Seconds()
	var per []groupRun
	for _, res := range runs {
		var g groupRun
		for i, jr := range res.Jobs {
			q := &r.jobs[i]
			if jr.Outcome != queuesim.Ran || set != nil && !set[r.refIdx[i]] || q.Running || q.Arrival < 0 || q.Arrival.Seconds() >= span {
				continue
			}
			g.waits = append(g.waits, (jr.Start - q.Arrival).Seconds())
		}
		per = append(per, g)
	}
	return groupOf(name, 0, span, per)
}

func groupOf(name string, gpus int, span float64, runs []groupRun) analysis.Group {
	g := analysis.Group{Name: name, GPUs: gpus}
	var jobs, mean, p50, p95, occ, queued []float64
	for _, r := range runs {
		jobs = append(jobs, float64(len(r.waits)))
		if gpus > 0 && span > 0 {
			occ = append(occ, r.gpuSec.Float()/(float64(gpus)*span))
		}
		queued = append(queued, r.queuedGH.Float())
		if len(r.waits) == 0 {
			continue
		}
		w := slices.Clone(r.waits)
		slices.Sort(w)
		mean = append(mean, meanOf(w))
		p50 = append(p50, analysis.PercentileSorted(w, 50))
		p95 = append(p95, analysis.PercentileSorted(w, 95))
	}
	g.Jobs, g.WaitMean, g.WaitP50, g.WaitP95 = spreadOf(jobs), spreadOf(mean), spreadOf(p50), spreadOf(p95)
	g.Occupancy, g.QueuedGPUHours = spreadOf(occ), spreadOf(queued)
	return g
}

// sumOf is the sum of v, exact (analysis.ExactSum): the same in every
// order of its terms, which follows the jobs' order.
func sumOf(v []float64) float64 {
	var s analysis.ExactSum
	for _, x := range v {
		s.Add(x)
	}
	return s.Float()
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return sumOf(v) / float64(len(v))
}

func overlap(a, b, from, to float64) float64 { return max(0, min(b, to)-max(a, from)) }

// calibrate compares a replay of today's configuration with what happened.
//
// It stays one function: one pass over the replayed jobs gathers the start
// pairs and each partition's waits, which the checks after it compare
// against the same floor, appending problems in the order they print.
// compared calls f for each job the calibration compares — replayed
// from its arrival, started in the window for real and in the replay —
// with its index and its real and replayed starts, in seconds from the
// window's start.
func (r *replay) compared(res *queuesim.Result, f func(i int, real, sim float64)) {
	for i, jr := range res.Jobs {
		q, j := &r.jobs[i], r.ref[i]
		if q.Running || q.Arrival < 0 || !j.Started() || jr.Outcome != queuesim.Ran || !j.Start.Before(r.window.To) {
			continue
		}
		f(i, j.Start.Sub(r.window.From).Seconds(), jr.Start.Seconds())
	}
}

func (r *replay) calibrate(res *queuesim.Result) Calibration {
	c := Calibration{Partitions: []CalibratedP{}, Problems: []string{}, NotModelled: []string{}, Worst: []StartError{}, Unreproduced: []string{},
		TargetP95Wait: r.target}
	// The errors tolerated are relative to the target: an error small
	// against a 1 h target is not small against a 5-minute one.
	floor := calibTargetShare * r.target
	type pair struct {
		real, sim float64
		i         int
	}
	var pairs []pair
	obs := map[string][]float64{}
	sim := map[string][]float64{}
	var absErr analysis.ExactSum // the same in every order of the jobs
	within := 0
	r.compared(res, func(i int, real, s float64) {
		q := &r.jobs[i]
		pairs = append(pairs, pair{real, s, i})
		d := math.Abs(real - s)
		absErr.Add(d)
		if d <= 10 {
			within++
		}
		part := r.simParts[q.Partitions[0]].Name
		obs[part] = append(obs[part], real-q.Arrival.Seconds())
		sim[part] = append(sim[part], s-q.Arrival.Seconds())
	})
	c.Jobs = len(pairs)
	if c.Jobs > 0 {
		c.StartMAE = absErr.Float() / float64(c.Jobs)
		c.Within10s = float64(within) / float64(c.Jobs)
		reals, sims := make([]float64, c.Jobs), make([]float64, c.Jobs)
		for k, p := range pairs {
			reals[k], sims[k] = p.real, p.sim
		}
		c.RankCorrelation = spearman(reals, sims)
		slices.SortStableFunc(pairs, func(a, b pair) int {
			return cmp.Compare(math.Abs(b.real-b.sim), math.Abs(a.real-a.sim))
		})
		for _, p := range pairs[:min(5, len(pairs))] {
			c.Worst = append(c.Worst, StartError{JobID: r.ref[p.i].ID, Real: p.real, Replayed: p.sim, Arrival: r.jobs[p.i].Arrival.Seconds()})
		}
	}
	for _, p := range r.simParts {
		o, s := obs[p.Name], sim[p.Name]
		if len(o) == 0 {
			continue
		}
		slices.Sort(o)
		slices.Sort(s)
		cp := CalibratedP{Partition: p.Name, Jobs: len(o),
			ObservedP50: analysis.PercentileSorted(o, 50), ObservedP95: analysis.PercentileSorted(o, 95),
			SimulatedP50: analysis.PercentileSorted(s, 50), SimulatedP95: analysis.PercentileSorted(s, 95)}
		// Replayed starts are whole seconds: a wait a fraction of a second
		// below zero reproduces nothing, not less than nothing.
		if so, ss := sumOf(o), sumOf(s); so > 0 {
			v := max(ss/so, 0)
			cp.ReproducedWait = &v
		}
		if cp.ObservedP95 > 0 {
			v := max(cp.SimulatedP95/cp.ObservedP95, 0)
			cp.ReproducedP95 = &v
		}
		c.Partitions = append(c.Partitions, cp)
		tol := math.Max(floor, calibP95Share*cp.ObservedP95)
		small := math.Abs(cp.SimulatedP95-cp.ObservedP95) <= tol
		if cp.Jobs >= calibMinJobs && !small {
			c.Problems = append(c.Problems, fmt.Sprintf("partition %s: p95 wait replayed %s, observed %s (more than %s apart)",
				p.Name, present.Seconds(cp.SimulatedP95), present.Seconds(cp.ObservedP95), present.Seconds(tol)))
		}
		// What the replay explains: a partition whose observed waits it
		// reproduces less than half of waited for something the model
		// does not know, however small the error is against the target.
		if cp.Jobs >= calibMinJobs && cp.ObservedP95 >= calibReproduceMin.Seconds() && cp.SimulatedP95 < calibReproduced*cp.ObservedP95 {
			u := fmt.Sprintf("partition %s: the replay reproduces less than half of the observed p95 wait (%s of %s, %s)",
				p.Name, present.Seconds(cp.SimulatedP95), present.Seconds(cp.ObservedP95), present.Share(*cp.ReproducedP95))
			if small {
				u += fmt.Sprintf("; the error is small against the %s target", present.Seconds(r.target))
			}
			c.Unreproduced = append(c.Unreproduced, u)
		}
	}
	if c.Jobs > 0 {
		var waits analysis.ExactSum // the partitions come in the map's order
		for _, o := range obs {
			for _, w := range o {
				waits.Add(w)
			}
		}
		tol := math.Max(floor, calibMAEShare*waits.Float()/float64(c.Jobs))
		if c.StartMAE > tol {
			c.Problems = append(c.Problems, fmt.Sprintf("start times replayed %s off on average (more than %s)", present.Seconds(c.StartMAE), present.Seconds(tol)))
		}
	}
	switch {
	case c.Jobs < calibMinJobs:
		c.Problems = append(c.Problems, fmt.Sprintf("only %d jobs started in the window to compare (at least %d needed)", c.Jobs, calibMinJobs))
	case c.RankCorrelation < calibMinRank:
		c.Problems = append(c.Problems, fmt.Sprintf("start order rank correlation %.2f (below %.2f)", c.RankCorrelation, calibMinRank))
	}
	c.Reliable = len(c.Problems) == 0
	c.NotModelled = r.notModelled()
	return c
}

// notModelled names what the records show that the replay does not know.
func (r *replay) notModelled() []string {
	kinds := []struct {
		what  string
		match func(j *analysis.Job) bool
	}{
		{"reservations", func(j *analysis.Job) bool {
			return strings.HasPrefix(j.Reason, "Resv") || strings.Contains(j.Reason, "Reservation")
		}},
		{"jobs held by a user or an admin", func(j *analysis.Job) bool { return strings.HasPrefix(j.Reason, "JobHeld") }},
		{"down, drained or unavailable nodes or partitions", func(j *analysis.Job) bool {
			return strings.Contains(j.Reason, "NodeNotAvail") || strings.Contains(j.Reason, "NodeDown") ||
				strings.HasPrefix(j.Reason, "PartitionDown") || strings.HasPrefix(j.Reason, "PartitionInactive")
		}},
		{"preempted or requeued jobs", func(j *analysis.Job) bool { return j.State == slurmext.StatePreempted || j.Restarts > 0 }},
		{"QOS or association limits", func(j *analysis.Job) bool {
			return (strings.HasPrefix(j.Reason, "QOS") || strings.HasPrefix(j.Reason, "Assoc")) && len(r.cluster.QOS) == 0
		}},
	}
	out := []string{}
	for _, k := range kinds {
		n := 0
		for _, j := range r.ref {
			if k.match(j) {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s (%d %s)", k.what, n, present.Plural(n, "job", "jobs")))
		}
	}
	return out
}

// spearman is the rank correlation of two samples (average ranks for
// ties).
func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	ma, mb := meanOf(ra), meanOf(rb)
	var sumAB, sumAA, sumBB analysis.ExactSum // the same in every order of the jobs
	for i := range ra {
		da, db := ra[i]-ma, rb[i]-mb
		sumAB.Add(da * db)
		sumAA.Add(da * da)
		sumBB.Add(db * db)
	}
	sab, saa, sbb := sumAB.Float(), sumAA.Float(), sumBB.Float()
	if saa == 0 || sbb == 0 {
		if saa == sbb {
			return 1
		}
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		switch {
		case v[x] < v[y]:
			return -1
		case v[x] > v[y]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		k := i
		for k+1 < len(idx) && v[idx[k+1]] == v[idx[i]] {
			k++
		}
		r := float64(i+k)/2 + 1
		for m := i; m <= k; m++ {
			out[idx[m]] = r
		}
		i = k + 1
	}
	return out
}
