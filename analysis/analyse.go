package analysis

import "time"

// Input is everything the analysis reads. cmd/ fills it from the store
// (FromView for each job) and the cluster's GPU inventory.
type Input struct {
	Jobs []Job
	// Nodes is the GPU inventory: the recommendations write node and
	// partition lines from it and the plan counts the GPUs there are. It
	// may be empty; rules that need it then say so.
	Nodes []Node
	// Window is the period analysed (a report's month, --since/--until):
	// GPU time is clipped to it. Zero ends mean the data's own bounds: the
	// earliest start, and the latest time anywhere in the data (not after
	// Now).
	Window Window
	// WindowRule says how Window was chosen (WindowGiven by the caller,
	// else the default rule's month or the data's span): Counting carries
	// it to every output.
	WindowRule WindowRule
	// Now is the time of the analysis: jobs without an end count up to it
	// when it is before the window's end. Zero: the latest time anywhere in
	// the data stands for it (deterministic, but it lags behind a live
	// cluster).
	Now time.Time
	// Inventory says where Nodes came from, or why none is used
	// (InputBuilder sets it; an Input made otherwise may leave it zero).
	Inventory Inventory
	// Conf is the cluster the input is for and the Slurm configuration
	// bound to it (InputBuilder.SetConf).
	Conf ConfUse
	// Carbon is the emission factor of the GPUs' electricity; nil: none,
	// and no output has CO2e.
	Carbon *Carbon
}

// JobResult is the compact verdict on one job, kept for every input job:
// 8 bytes, so a million jobs cost 8 MB. The evidence (reasons, metrics) is
// recomputed on demand with Classify, Diagnose and Measure.
type JobResult struct {
	Class       Class `json:"class"`
	Bottlenecks Kinds `json:"bottlenecks"`
	// Task is the index of the job's task in Findings.Profiles; −1 for a
	// job that neither requested nor recorded a GPU.
	Task int32 `json:"task"`
}

// Findings is what the analysis concludes. Later steps add their results
// (recommendations, the capacity plan) as fields here.
type Findings struct {
	// Jobs holds one result per Input.Jobs entry, in the same order.
	Jobs     []JobResult    `json:"jobs"`
	Profiles []TaskProfile  `json:"profiles"`
	Summary  ClusterSummary `json:"summary"`
	// Recommendations are the changes the data justifies; NoChange the
	// rules that looked and found none, with why.
	Recommendations []Recommendation `json:"recommendations"`
	NoChange        []NoChange       `json:"no_change"`
	// Plan is the capacity plan with the [plan] section's parameters.
	Plan CapacityPlan `json:"plan"`
	// Counting says how GPU time was counted: the window, the jobs counted
	// up to its end, the shard assumption.
	Counting Counting `json:"counting"`
}

// Analyse classifies and diagnoses every job, builds the task profiles and
// the cluster summary in one pass over the jobs. It returns an error (ErrConfig)
// only for an invalid configuration; any data, including none, gives
// findings.
func Analyse(in Input, c Config) (Findings, error) {
	if err := c.Validate(); err != nil {
		return Findings{}, err
	}
	f := Findings{Jobs: make([]JobResult, len(in.Jobs))}
	p := newProfileAcc(len(in.Jobs))
	s := newSummaryAcc(len(in.Jobs))
	facts := newFacts(len(in.Jobs))
	k := newCounter(&in, c.Counting.shardsPerGPU())
	var m Metrics
	for i := range in.Jobs {
		j := &in.Jobs[i]
		measure(j, &c, &m)
		k.count(j, &m)
		cls := classify(j, &m, &c, nil)
		kinds := diagnose(j, &m, &c, nil)
		f.Jobs[i] = JobResult{Class: cls, Bottlenecks: kinds}
		if !k.touches(j, &m) {
			// Not the window's job: in no table, as in the workload's.
			p.skip()
			facts.skip()
			continue
		}
		p.add(j, &m, cls, kinds)
		s.add(j, &m, &c, cls, kinds)
		facts.add(j, &m, cls, kinds)
	}
	var pos []int32
	f.Profiles, pos = p.finish()
	for i, r := range p.recs {
		if r.group < 0 {
			f.Jobs[i].Task = -1
		} else {
			f.Jobs[i].Task = pos[r.group]
		}
	}
	f.Summary = s.finish()
	// The recommendations and the plan share the compact records kept in
	// the pass above; their sweeps and percentiles sort, so the whole
	// stays O(n log n).
	rb := recommend(&in, facts, &f, &c)
	f.Recommendations, f.NoChange = rb.recs, rb.none
	f.Counting = k.counting()
	f.Plan = plan(&in, facts, k, c.Plan.params(), &c)
	return f, nil
}
