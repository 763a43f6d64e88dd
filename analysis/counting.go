package analysis

import (
	"time"
)

// DefaultShardsPerGPU is the shards per GPU assumed for a shard job whose
// GPU's shard count is known neither from its node in the inventory
// (Node.Shards, read from slurm.conf's Gres=…,shard:N) nor from the
// configuration ([counting] shards_per_gpu). Eight is the ratio of Slurm's
// own gres.conf example (Name=shard Count=64 on an 8-GPU node). Every output
// that relied on it says so (Counting.ShardsAssumed).
const DefaultShardsPerGPU = 8

// Counting says how GPU time was counted, so that every output can print
// it: the window, when jobs without an end stopped counting, and what was
// assumed for shared GPUs. Every reader of Findings and Workload counts
// with the same rule (see counter), so their GPU-hours add up.
type Counting struct {
	// Window is the period counted: a job's GPU time is clipped to it.
	Window Window `json:"window"`
	// Rule says how the window was chosen: given (omitted), or with none
	// given the last complete month with jobs or the data's span.
	Rule WindowRule `json:"window_rule,omitempty"`
	// End is when jobs without an end (still running at the window's end,
	// or with no end recorded) stop counting: the window's end, or the
	// time of the analysis (Input.Now; without it the latest time anywhere
	// in the data) when earlier. A window without an end ends at the
	// latest time in the data.
	End time.Time `json:"end"`
	// OpenJobs are the GPU jobs counted up to End, their GPU-hours
	// OpenGPUHours.
	OpenJobs     int     `json:"open_jobs"`
	OpenGPUHours float64 `json:"open_gpu_hours"`
	// ShardJobs held shards, not whole GPUs: each counts shards held ÷
	// shards configured on its GPU. ShardsAssumed is the shards per GPU
	// assumed for those whose node's shard count was unknown (0 when none
	// needed it); AssumedShardJobs counts them.
	ShardJobs        int `json:"shard_jobs"`
	ShardsAssumed    int `json:"shards_assumed"`
	AssumedShardJobs int `json:"assumed_shard_jobs"`
	// ShardsRaisedFrom is the assumption (the default, or [counting]
	// shards_per_gpu) the data contradicted: a job of an unknown node held
	// more shards of one GPU than it (ShardsAssumed is then that job's
	// count, the largest such request seen); 0 when the data agreed.
	ShardsRaisedFrom int `json:"shards_raised_from,omitempty"`
}

// Hours returns the window's length in hours, 0 for an empty one.
func (w Window) Hours() float64 {
	if !w.To.After(w.From) {
		return 0
	}
	return w.To.Sub(w.From).Hours()
}

// counter applies the one rule for a job's GPU time (docs/analysis.md,
// "Counting GPU time"):
//
//   - the run [start, end) is clipped to the window; a job without an end
//     runs until End (the window's end, or now when earlier); a job that
//     never started counts nothing;
//   - the GPUs held are whole GPUs, or for a shard job shards held ÷ shards
//     configured on the GPU (the node's count from the inventory, else the
//     configured or default assumption);
//   - GPU-hours = GPUs held × clipped hours.
//
// Its methods never allocate: the analysis calls them once per job.
type counter struct {
	from, to, end time.Time
	// bounded: the window was given on both sides (Input.Window), so a
	// job may lie outside it (touches).
	bounded bool
	// shardsPerGPU by node name, from the inventory; uniformShards is
	// their one value when every node with shards has the same, else 0.
	nodeShards    map[string]float64
	uniformShards float64
	assumeShards  int
	c             Counting
	open          gpuTime // of the jobs counted up to End: Counting.OpenGPUHours
}

// newCounter builds the counter of in: its window (in.Window; an open
// start is the earliest start in the data, an open end the latest time in
// it, never after in.Now), End, and the shard counts of its nodes. assume is the shards per GPU assumed where a node's is unknown.
func newCounter(in *Input, assume int) *counter {
	if assume <= 0 {
		assume = DefaultShardsPerGPU
	}
	k := &counter{from: in.Window.From, to: in.Window.To, assumeShards: assume,
		bounded: !in.Window.From.IsZero() && !in.Window.To.IsZero()}
	latest, earliest := time.Time{}, time.Time{}
	if in.Now.IsZero() || in.Window.From.IsZero() || in.Window.To.IsZero() {
		for i := range in.Jobs {
			j := &in.Jobs[i]
			for _, t := range [...]time.Time{j.Submit, j.Eligible, j.Start, j.End} {
				if !plausible(t) {
					continue
				}
				if t.After(latest) {
					latest = t
				}
			}
			if plausible(j.Start) && j.Started() && (earliest.IsZero() || j.Start.Before(earliest)) {
				earliest = j.Start
			}
		}
	}
	if k.from.IsZero() {
		k.from = earliest
	}
	if k.to.IsZero() {
		// The data's own end: the latest time in it, but not the future.
		k.to = latest
		if !in.Now.IsZero() && in.Now.Before(k.to) {
			k.to = in.Now
		}
	}
	// Without the time of the analysis, the latest time in the data stands
	// for it (deterministic; it lags behind a live cluster).
	now := in.Now
	if now.IsZero() {
		now = latest
	}
	k.end = k.to
	if !now.IsZero() && now.Before(k.end) {
		k.end = now
	}
	if k.end.Before(k.from) {
		k.end = k.from
	}
	for _, n := range in.Nodes {
		if n.Shards > 0 && n.GPUs > 0 {
			if k.nodeShards == nil {
				k.nodeShards = make(map[string]float64, len(in.Nodes))
			}
			per := float64(n.Shards) / float64(n.GPUs)
			k.nodeShards[n.Name] = per
			switch {
			case len(k.nodeShards) == 1:
				k.uniformShards = per
			case per != k.uniformShards:
				k.uniformShards = -1 // nodes differ
			}
		}
	}
	k.uniformShards = max(k.uniformShards, 0)
	k.c = Counting{Window: Window{From: k.from, To: k.to}, Rule: in.WindowRule, End: k.end}
	// The data overrides the assumption it contradicts: a GPU has at least
	// as many shards as one job held of it alone.
	if most := k.largestOneGPUShards(in.Jobs); most > k.assumeShards {
		k.c.ShardsRaisedFrom, k.assumeShards = k.assumeShards, most
	}
	return k
}

// ShardsPerGPU is the shards per GPU a shard job is counted by where its
// node's count is not in slurm.conf: assume ([counting] shards_per_gpu;
// DefaultShardsPerGPU when 0), raised to the most shards one job of in
// held of one GPU alone, as every count of the analysis does; raisedFrom
// is the assumption it replaced, 0 when the data did not raise it. The
// queue replay (package capacity) gives nodes of unknown count this many,
// so that it and the analysis count one cluster.
func ShardsPerGPU(in *Input, assume int) (per, raisedFrom int) {
	k := newCounter(in, assume)
	return k.assumeShards, k.c.ShardsRaisedFrom
}

// largestOneGPUShards returns the most shards any job held of one GPU
// among those whose GPU's shard count the inventory does not give (the
// jobs the assumption is for): a shard job on at most one node that
// recorded at most one GPU (the counter counts such a job as holding at
// most one GPU, so its shards were all of that GPU's).
func (k *counter) largestOneGPUShards(jobs []Job) int {
	most := 0
	for i := range jobs {
		j := &jobs[i]
		if j.ReqShards <= most || j.ReqGPUs > 0 || len(j.GPUs) > 1 || j.NodeCount > 1 || !j.Started() {
			continue
		}
		if len(j.GPUs) == 1 {
			if _, known := k.nodeShards[j.GPUs[0].Node]; known {
				continue
			}
		} else if k.uniformShards > 0 {
			continue
		}
		most = j.ReqShards
	}
	return most
}

// span returns the part of the job's run counted: [s, e) clipped to the
// window, and whether the job has no end (counted up to End). ok is false
// when nothing of the run lies in the window or the start is unknown; a
// zero-length run that started inside the window is ok with s == e.
func (k *counter) span(j *Job, m *Metrics) (s, e time.Time, open, ok bool) {
	if m.Start.IsZero() {
		return s, e, false, false
	}
	s = m.Start
	switch {
	case m.ElapsedValid:
		e = s.Add(m.Elapsed)
	case j.End.IsZero() && !m.Outcome.Finished() && !k.end.IsZero():
		// Running, or an end sacct printed as Unknown.
		e, open = k.end, true
		if e.Sub(s) > maxSpan {
			return s, e, open, false
		}
	default:
		return s, e, false, false // a final state with a bad end time
	}
	if !k.from.IsZero() && s.Before(k.from) {
		s = k.from
	}
	if !k.to.IsZero() && e.After(k.to) {
		e = k.to
	}
	if e.After(s) {
		return s, e, open, true
	}
	inside := (k.from.IsZero() || !m.Start.Before(k.from)) && (k.to.IsZero() || m.Start.Before(k.to))
	return m.Start, m.Start, open, inside
}

// touches reports whether the job is one of the window's: its life, from
// its submission (else its eligibility, else its start) to its end — or
// on, while it has none — overlaps the window. It is the one rule of
// which jobs a window counts, so that every table of a report counts the
// same jobs (the workload's headline, the summary, the profiles, the
// plan): a job running through the whole window is its job (a CPU job
// too), one pending in it for a --begin after it as well, one that ended
// before it is not. It agrees with the store's selection of a month
// (store.ViewFilter's Since and Until). Without a window given on both
// sides every job given is the window's.
func (k *counter) touches(j *Job, m *Metrics) bool {
	if !k.bounded {
		return true
	}
	var s time.Time
	for _, t := range [...]time.Time{m.Submit, j.Eligible, m.Start} {
		if plausible(t) && (s.IsZero() || t.Before(s)) {
			s = t
		}
	}
	e := j.End
	if !plausible(e) {
		e = time.Time{}
	}
	if s.IsZero() && e.IsZero() {
		return false // no time of it is known
	}
	return (s.IsZero() || s.Before(k.to)) && (e.IsZero() || !e.Before(k.from))
}

// share returns the GPUs the job held, in GPU-equivalents, and whether
// the shards-per-GPU assumption was needed.
func (k *counter) share(j *Job, m *Metrics) (share float64, assumed bool) {
	if j.ReqShards <= 0 || j.ReqGPUs > 0 {
		return float64(m.GPUs), false
	}
	per := 0.0
	for i := range j.GPUs {
		if v, ok := k.nodeShards[j.GPUs[i].Node]; ok {
			per = v
			break
		}
	}
	if per == 0 && len(j.GPUs) == 0 {
		// A job without a profile ran on some node with shards: when they
		// all have as many per GPU, that is its GPU's.
		per = k.uniformShards
	}
	if per == 0 {
		per, assumed = float64(k.assumeShards), true
	}
	// A job may hold shards of several GPUs (Slurm spreads them unless
	// told not to); it never holds more than the GPUs recorded.
	share = float64(j.ReqShards) / per
	if n := max(len(j.GPUs), 1); share > float64(n) {
		share = float64(n)
	}
	return share, assumed
}

// count sets m's counted GPU time (GPUShare, GPUHours, Counted*) and adds
// the job to the Counting record.
func (k *counter) count(j *Job, m *Metrics) {
	m.GPUHours, m.CountStart, m.CountEnd, m.Open, m.SoFar = 0, time.Time{}, time.Time{}, false, 0
	m.gpuTime = gpuTime{}
	m.GPUShare = float64(m.GPUs)
	if m.GPUs == 0 {
		return
	}
	share, assumed := k.share(j, m)
	m.GPUShare = share
	if j.ReqShards > 0 && j.ReqGPUs == 0 {
		k.c.ShardJobs++
		if assumed {
			k.c.AssumedShardJobs++
			k.c.ShardsAssumed = k.assumeShards
		}
	}
	s, e, open, ok := k.span(j, m)
	if !ok {
		return
	}
	m.CountStart, m.CountEnd, m.Open = s, e, open
	m.GPUHours = share * e.Sub(s).Hours()
	if d := e.Sub(s); share == float64(m.GPUs) {
		m.gpuTime = gpuTimeOf(m.GPUs, d)
	} else {
		m.gpuTime = gpuTimeOfFloat(share * float64(d))
	}
	if open {
		m.SoFar = k.end.Sub(m.Start)
		k.c.OpenJobs++
		k.open.add(m.gpuTime)
	}
}

// counting returns the record of what was counted so far.
func (k *counter) counting() Counting {
	c := k.c
	c.OpenGPUHours = k.open.hours()
	return c
}

// GPUHoursCounter counts jobs' GPU-hours in a window as every output of
// the analysis counts them (the counter, with the default configuration):
// the capacity plan's share of GPU-hours a replay left out is of these.
type GPUHoursCounter struct {
	k *counter
	c Config
	m Metrics
}

// NewGPUHoursCounter counts in in's window (see newCounter), assuming the
// default shards per GPU where a node's is unknown.
func NewGPUHoursCounter(in *Input) *GPUHoursCounter {
	return &GPUHoursCounter{k: newCounter(in, DefaultShardsPerGPU), c: DefaultConfig()}
}

// GPUHours measures j and returns its GPU-hours counted in the window.
func (g *GPUHoursCounter) GPUHours(j *Job) float64 {
	measure(j, &g.c, &g.m)
	g.k.count(j, &g.m)
	return g.m.GPUHours
}
