package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/queuesim"
	"github.com/gpuprof/gpuprof/slurmext"
)

// ErrNoCluster means a what-if has no cluster to replay on: no GPU
// inventory in the profiles, no GPU nodes in slurm.conf, and none given.
var ErrNoCluster = errors.New("no cluster to replay on: no GPU inventory in the profiles, no GPU nodes in slurm.conf (slurm_conf), and no --node given")

// NoClusterError is ErrNoCluster with why there is none (an inventory
// found and refused: Input.Inventory.Misfit).
type NoClusterError struct{ Why string }

func (e *NoClusterError) Error() string { return "no cluster to replay on: " + e.Why }

func (e *NoClusterError) Unwrap() error { return ErrNoCluster }

// ErrNoJobs means the replay has no job to replay: the window holds no
// GPU job with a scheduler record, or every one is left out (a
// *NoJobsError says which and why).
var ErrNoJobs = errors.New("no GPU job of the window can be replayed")

// NoJobsError is ErrNoJobs with the window's jobs: none had a scheduler
// record, or every one was left out (Jobs.LeftOutReasons say why).
// Changed is set when today's cluster took some and the changes left
// every one out.
type NoJobsError struct {
	Jobs    SimJobs
	Changed bool
}

func (e *NoJobsError) Error() string {
	if e.Jobs.LeftOut == 0 {
		return ErrNoJobs.Error() + ": the window has no GPU job with a scheduler record (eligible or submit time)"
	}
	with := ""
	if e.Changed {
		with = " with the changes"
	}
	return fmt.Sprintf("%s: all %d GPU %s of the window are left out%s (%s)",
		ErrNoJobs, e.Jobs.LeftOut, present.Plural(e.Jobs.LeftOut, "job", "jobs"), with, strings.Join(e.Jobs.LeftOutWhy, "; "))
}

func (e *NoJobsError) Unwrap() error { return ErrNoJobs }

// WhatIfParams are a what-if's inputs besides the jobs.
type WhatIfParams struct {
	// Sched is slurm.conf's scheduler settings and partitions; SchedKnown
	// is false when there was no slurm.conf (Slurm's defaults are used).
	Sched      slurmext.SchedConf
	SchedKnown bool
	// SlurmNodes are slurm.conf's nodes with their GRES (types).
	SlurmNodes []slurmext.NodeGres
	// ShardsPerGPU is the shards per GPU assumed on a node whose count
	// slurm.conf does not give ([counting] shards_per_gpu; 0: the
	// default), raised by the data as the analysis raises it
	// (analysis.ShardsPerGPU).
	ShardsPerGPU int
	// FlagNodes are nodes given on the command line: the cluster when
	// neither the inventory nor slurm.conf has one.
	FlagNodes []analysis.Node
	Changes   []analysis.Change
	// Growth per year and horizon in months: arrivals scaled by
	// (1+Growth)^(Months/12).
	Growth float64
	Months int
	// Seeds is how many seeded runs each answer is the spread of.
	Seeds int
	// Target is the p95 wait the answer is for (plan.target_p95_wait;
	// 0: its default, 1 h): the calibration's thresholds are relative to
	// it.
	Target time.Duration
	// JobStarts lists each replayed job's start in every seeded run
	// (Scenario.JobStarts), for comparing a prediction job by job with
	// another record of the same workload. Not with growth: the copies
	// growth adds are no recorded job.
	JobStarts bool
	// todaysPhase is what today's replay made of the backfill phase
	// (replay.fitted): the later replays take it rather than fit again.
	// Nil before today's replay is built.
	todaysPhase *phaseFit
}

// phaseFit is today's replay's backfill phase as fitPhase left it: the
// phase it fitted, or none (fitted false: each seed draws its own).
type phaseFit struct {
	fitted bool
	phase  time.Duration
}

// WhatIf is a what-if's answer: the cluster it replayed, the calibration
// of today's configuration against what happened, and per partition and
// GPU model the spread over the seeded runs, today and with the changes.
// docs/json.md documents it as `gpuprof whatif --json`.
type WhatIf struct {
	Window analysis.Window `json:"window"`
	// Conf is the cluster replayed and the Slurm configuration bound to
	// it (Input.Conf); ClusterSource where its nodes came from: an
	// Inventory.Source ("profiles", "slurm.conf of cluster X", "profiles
	// and slurm.conf of cluster X", "--node").
	Conf          analysis.ConfUse  `json:"conf"`
	ClusterSource string            `json:"cluster_source"`
	Nodes         []SimNode         `json:"nodes"`
	Partitions    []SimPart         `json:"partitions"`
	Scheduler     SimScheduler      `json:"scheduler"`
	Assumed       []string          `json:"assumed"`
	Jobs          SimJobs           `json:"jobs"`
	Calibration   Calibration       `json:"calibration"`
	Changes       []analysis.Change `json:"changes"`
	// Placement says, one sentence each, of the --add and --remove changes
	// of a model no job needed, that its GPUs take only jobs the replay
	// placed there (Group.PlacedOnly): the change moves them between
	// models, it answers nothing about a demand for the model.
	Placement []string `json:"placement"`
	Growth    float64  `json:"growth"`
	Months    int      `json:"horizon_months"`
	Seeds     int      `json:"seeds"`
	Baseline  Scenario `json:"baseline"`
	// Changed is the answer with the changes (and growth) applied; nil
	// when there is none.
	Changed *Scenario `json:"changed,omitempty"`
}

// SimNode is a node as the replay sees it.
type SimNode struct {
	Name   string `json:"name"`
	Model  string `json:"model"`
	Type   string `json:"gres_type,omitempty"`
	GPUs   int    `json:"gpus"`
	Shards int    `json:"shards,omitempty"`
	// ShardsUnknown: the node's shard count is in no slurm.conf (a node
	// known from profiles alone); the replay then assumes
	// WhatIfParams.ShardsPerGPU per GPU where shard jobs need it, said
	// among the assumptions, never 0 in silence.
	ShardsUnknown bool     `json:"shards_unknown,omitempty"`
	Partitions    []string `json:"partitions"`
	Added         bool     `json:"added,omitempty"`
}

// SimPart is a partition as the replay sees it.
type SimPart struct {
	Name         string   `json:"name"`
	Nodes        []string `json:"nodes"`
	GPUs         int      `json:"gpus"`
	MaxTime      int64    `json:"max_time_s"` // 0: unlimited
	PriorityTier int      `json:"priority_tier"`
	Added        bool     `json:"added,omitempty"`
}

// SimScheduler is the scheduler model's settings.
type SimScheduler struct {
	Source       string `json:"source"` // "slurm.conf", "scontrol" (the live cluster) or "defaults"
	Priority     string `json:"priority"`
	Backfill     bool   `json:"backfill"`
	BfInterval   int64  `json:"bf_interval_s"`
	BfResolution int64  `json:"bf_resolution_s"`
	BfWindow     int64  `json:"bf_window_s"`
	BfMaxJobTest int    `json:"bf_max_job_test"`
	// bf_max_job_part and bf_max_job_user when set; bf_continue changes
	// nothing in the replay (docs/whatif.md) and is shown as read.
	BfMaxJobPart int  `json:"bf_max_job_part,omitempty"`
	BfMaxJobUser int  `json:"bf_max_job_user,omitempty"`
	BfContinue   bool `json:"bf_continue,omitempty"`
}

// SimJobs counts the jobs replayed and those left out, with why: a job
// the replay cannot take (its partition is not in the cluster, or
// queuesim.CheckFit says it could never start there) is never dropped
// silently.
type SimJobs struct {
	Replayed       int `json:"replayed"`
	Arrived        int `json:"arrived"` // eligible within the window
	RunningAtStart int `json:"running_at_start"`
	PendingAtStart int `json:"pending_at_start"`
	LeftOut        int `json:"left_out"`
	// LeftOutWhy is LeftOutReasons as "N: reason" lines.
	LeftOutWhy []string `json:"left_out_why"`
	// GPUJobs are the window's GPU jobs: replayed, left out, or taken out
	// of the GPU queue by a change.
	GPUJobs int `json:"gpu_jobs"`
	// GPUHours is what the window's GPU jobs (replayed or left out) held
	// in it, counted as every output counts GPU time (docs/analysis.md);
	// LeftOutGPUHours the part the left-out jobs held, and LeftOutShare
	// its share (of the jobs when no job held GPU time).
	GPUHours        float64         `json:"gpu_hours"`
	LeftOutGPUHours float64         `json:"left_out_gpu_hours"`
	LeftOutShare    float64         `json:"left_out_share"`
	LeftOutReasons  []LeftOutReason `json:"left_out_reasons"`
}

// LeftOutReason is one reason jobs were left out of a replay: its kind
// (LeftOut* constants), the sentence that says it, how many jobs, their
// GPU-hours in the window and the first few job ids.
type LeftOutReason struct {
	Kind     string   `json:"kind"`
	Text     string   `json:"text"`
	Jobs     int      `json:"jobs"`
	GPUHours float64  `json:"gpu_hours"`
	JobIDs   []string `json:"job_ids"`
	// Partition is the partition the reason is about (the QOS, for
	// LeftOutQOS), GPUType the GPU type the jobs asked for ("" untyped).
	Partition string `json:"partition,omitempty"`
	GPUType   string `json:"gpu_type,omitempty"`
	// Asked is the most any of the jobs asked for of what the reason is
	// about (GPUs on one node, shards per GPU, nodes, GPUs under the QOS,
	// the time limit in seconds), Have what the cluster has of it.
	Asked int `json:"asked"`
	Have  int `json:"have"`
	// Need says what the jobs need that the cluster lacks ("a node of 8
	// GPUs of type a100 in partition gpu"); Hardware is set when it is
	// nodes or GPUs (a purchase can give it), not a policy or a record.
	Need     string `json:"need"`
	Hardware bool   `json:"hardware"`
}

// Kinds of LeftOutReason.
const (
	LeftOutNoRecord  = "no_record"     // no scheduler record, or no eligible or submit time
	LeftOutPartition = "partition"     // none of its partitions is in the cluster
	LeftOutQOS       = "qos"           // more GPUs than its QOS lets a user, or all, hold
	LeftOutTimeLimit = "time_limit"    // a time limit above its partitions' MaxTime
	LeftOutGPUType   = "gpu_type"      // a GPU type no node of its partitions has
	LeftOutShards    = "shards"        // more shards than a GPU there has (or none has shards)
	LeftOutGPUs      = "gpus_per_node" // more GPUs on one node than a node there has
	LeftOutNodes     = "nodes"         // more nodes than its partitions have
)

// LeftOutMaxShare is the share of the window's GPU-hours a replay may
// leave out before every answer made on it says that it stands for the
// other jobs only (docs/whatif.md).
const LeftOutMaxShare = 0.05

// LeftOutWords is one sentence on the jobs left out, "" when none: how
// many, their share of the GPU-hours and why; past LeftOutMaxShare it
// says that the answer is for the other jobs only.
func (s SimJobs) LeftOutWords() string {
	if s.LeftOut == 0 {
		return ""
	}
	all := max(s.GPUJobs, s.LeftOut+s.Replayed)
	w := fmt.Sprintf("%d of %d GPU %s left out of the replay (%s of their GPU-hours): %s",
		s.LeftOut, all, present.Plural(all, "job", "jobs"), present.Share(s.LeftOutShare), strings.Join(s.LeftOutWhy, "; "))
	if s.LeftOutShare > LeftOutMaxShare {
		w += fmt.Sprintf("; more than the %s of the GPU-hours an answer may leave out: its waits are of the other jobs only", present.Share(LeftOutMaxShare))
	}
	return w + "."
}

// Calibration compares the replay of today's configuration with what
// happened, on the jobs that started in the window in both.
type Calibration struct {
	Jobs       int           `json:"jobs"`
	Partitions []CalibratedP `json:"partitions"`
	// TargetP95Wait is the target wait (seconds) the thresholds are
	// relative to.
	TargetP95Wait float64 `json:"target_p95_wait_s"`
	// StartMAE is the mean absolute difference of start times (seconds);
	// Within10s the share of jobs starting within 10 s of their real start;
	// RankCorrelation Spearman's ρ of the two start orders.
	StartMAE        float64 `json:"start_mae_s"`
	Within10s       float64 `json:"within_10s"`
	RankCorrelation float64 `json:"rank_correlation"`
	// Reliable is false when a threshold of docs/whatif.md is missed;
	// Problems says which; NotModelled what the data shows that the model
	// does not know.
	// Worst are the jobs whose replayed start is furthest from the real
	// one (at most 5).
	Worst []StartError `json:"worst"`

	Reliable    bool     `json:"reliable"`
	Problems    []string `json:"problems"`
	NotModelled []string `json:"not_modelled"`
	// Unreproduced names, one sentence each, the partitions whose observed
	// p95 wait the replay reproduces less than half of, whether or not the
	// error is small against the target.
	Unreproduced []string `json:"unreproduced"`
}

// StartError is one job's real and replayed start, seconds from the
// window's start, and its wait as recorded.
type StartError struct {
	JobID    string  `json:"job_id"`
	Real     float64 `json:"real_start_s"`
	Replayed float64 `json:"replayed_start_s"`
	Arrival  float64 `json:"arrival_s"`
}

// CalibratedP is one partition's waits, observed and replayed (seconds).
type CalibratedP struct {
	Partition    string  `json:"partition"`
	Jobs         int     `json:"jobs"`
	ObservedP50  float64 `json:"observed_p50_s"`
	ObservedP95  float64 `json:"observed_p95_s"`
	SimulatedP50 float64 `json:"simulated_p50_s"`
	SimulatedP95 float64 `json:"simulated_p95_s"`
	// ReproducedWait is the share of the observed wait the replay
	// reproduces (the replayed waits' sum over the observed waits' sum),
	// ReproducedP95 the replayed p95 over the observed; absent when
	// nothing was observed waiting.
	ReproducedWait *float64 `json:"reproduced_wait,omitempty"`
	ReproducedP95  *float64 `json:"reproduced_p95,omitempty"`
}

// Scenario is one configuration's answer, per partition and per GPU model.
type Scenario struct {
	// Jobs are the jobs this configuration replayed and left out.
	Jobs       SimJobs          `json:"jobs"`
	Partitions []analysis.Group `json:"partitions"`
	Models     []analysis.Group `json:"models"`
	// Cells are the jobs of each partition by the GPU model they ran on,
	// those with jobs: the jobs a partition's and a model's waits count
	// are the same replayed jobs, and in one replay a partition's p95 is
	// at most the worst of its cells' — but a model's p95 mixes the jobs
	// of every partition on it, so a partition can wait longer than each
	// of its models does.
	Cells []Cell `json:"cells"`
	// JobStarts are the replayed jobs one by one, in the order of the
	// recorded jobs' submission, with their start in each seeded run:
	// only with WhatIfParams.JobStarts (whatif --job-starts).
	JobStarts []JobStart `json:"job_starts,omitempty"`
}

// JobStart is one replayed job (a recorded one) and its start in each
// seeded run, seconds from the window's start.
type JobStart struct {
	JobID string `json:"job_id"`
	// Partition is the first partition it was submitted to (the one the
	// calibration counts it in), Ran the one it ran in per seed ("" when
	// it did not start).
	Partition string   `json:"partition"`
	Ran       []string `json:"ran_in"`
	// Arrival is when it became eligible; Real when it really started,
	// null when it did not start in the window; Replayed its start in
	// each seed's run, null where it did not start.
	Arrival  float64    `json:"arrival_s"`
	Real     *float64   `json:"real_start_s"`
	Replayed []*float64 `json:"replayed_start_s"`
	// RunningAtStart is set for a job running at the window's start (it
	// starts at 0 on its nodes, not by the scheduler).
	RunningAtStart bool `json:"running_at_start,omitempty"`
}

// Cell is the jobs of one partition that ran on one GPU model.
type Cell struct {
	Partition string          `json:"partition"`
	Model     string          `json:"model"`
	Jobs      analysis.Spread `json:"jobs"`
	WaitP95   analysis.Spread `json:"wait_p95_s"`
}

// Calibration thresholds (docs/whatif.md): below them an answer is marked
// unreliable. The errors tolerated are relative to the target wait (a
// sixth of it: 10 min at the default 1 h) and to the observed waits.
const (
	calibMinJobs      = 20
	calibMinRank      = 0.9
	calibTargetShare  = 1.0 / 6
	calibP95Share     = 0.25
	calibMAEShare     = 0.5 // of the mean observed wait
	calibReproduced   = 0.5 // of a partition's observed p95 wait
	calibReproduceMin = time.Minute
)

// RunWhatIf replays the window's jobs on today's cluster (calibrating
// against what happened) and, when p has changes or growth, on the changed
// one.
func RunWhatIf(in analysis.Input, p WhatIfParams) (WhatIf, error) {
	seeds := max(p.Seeds, 1)
	if p.JobStarts && p.Growth != 0 {
		return WhatIf{}, errf("job starts are of recorded jobs: not with growth, whose copies are none")
	}
	if p.Target <= 0 {
		p.Target = analysis.DefaultConfig().Plan.TargetP95Wait.D()
	}
	base, err := newReplay(in, p, nil)
	if err != nil {
		return WhatIf{}, err
	}
	w := WhatIf{
		Window: base.window, Conf: in.Conf, ClusterSource: base.source, Nodes: base.simNodes, Partitions: base.simParts,
		Scheduler: base.schedDesc, Assumed: base.assumed, Jobs: base.counts, Changes: []analysis.Change{},
		Placement: []string{}, Growth: p.Growth, Months: p.Months, Seeds: seeds,
	}
	for _, c := range p.Changes {
		c.Words = changeWords(c, base.simParts)
		w.Changes = append(w.Changes, c)
	}
	runs := make([]*queuesim.Result, seeds)
	for s := range seeds {
		if runs[s], err = base.run(base.jobs, uint64(s+1)); err != nil {
			return w, err
		}
	}
	w.Calibration = base.calibrate(runs[0])
	w.Baseline = base.scenario(runs, nil)
	if p.JobStarts {
		w.Baseline.JobStarts = base.jobStarts(runs)
	}
	if len(p.Changes) == 0 && p.Growth == 0 {
		return w, nil
	}
	p.todaysPhase = base.fitted()
	ch, err := newReplay(in, p, p.Changes)
	if err != nil {
		var nj *NoJobsError
		if errors.As(err, &nj) {
			nj.Changed = true
		}
		return w, err
	}
	factor := math.Pow(1+p.Growth, float64(p.Months)/12)
	jobsets := make([][]queuesim.Job, seeds)
	for s := range seeds {
		jobs := ch.jobs
		if factor != 1 {
			jobs = queuesim.Scale(ch.jobs, factor, ch.span, ch.hourOffset, uint64(s+1))
		}
		jobsets[s] = jobs
		if runs[s], err = ch.run(jobs, uint64(s+1)); err != nil {
			return w, err
		}
	}
	sc := ch.scenario(runs, jobsets)
	if p.JobStarts {
		sc.JobStarts = ch.jobStarts(runs)
	}
	w.Changed = &sc
	w.Nodes, w.Partitions = ch.simNodes, ch.simParts
	w.Placement = placementWords(p.Changes, base, ch)
	return w, nil
}

// jobStarts lists the replayed jobs in the order of their submission
// (queuesim.Job.Order, then the job id) with their start in each run of
// r.jobs.
func (r *replay) jobStarts(runs []*queuesim.Result) []JobStart {
	idx := make([]int, len(r.jobs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(r.jobs[a].Order, r.jobs[b].Order); c != 0 {
			return c
		}
		return cmpJobID(r.ref[a].ID, r.ref[b].ID)
	})
	out := make([]JobStart, 0, len(idx))
	for _, i := range idx {
		q, j := &r.jobs[i], r.ref[i]
		js := JobStart{JobID: j.ID, Arrival: q.Arrival.Seconds(), RunningAtStart: q.Running,
			Ran: make([]string, len(runs)), Replayed: make([]*float64, len(runs))}
		if len(q.Partitions) > 0 {
			js.Partition = r.simParts[q.Partitions[0]].Name
		}
		if j.Started() && j.Start.Before(r.window.To) {
			v := j.Start.Sub(r.window.From).Seconds()
			js.Real = &v
		}
		for s, res := range runs {
			if jr := res.Jobs[i]; jr.Outcome == queuesim.Ran {
				v := jr.Start.Seconds()
				js.Replayed[s] = &v
				js.Ran[s] = r.simParts[jr.Partition].Name
			}
		}
		out = append(out, js)
	}
	return out
}

// changeWords says what a change did to today's cluster (today's
// partitions tell a new partition from a changed one): "8xG2 removed",
// "4xH100 added", "4xH100 added to partition gpu", "partition debug
// added (Nodes=…)", "partition gpu changed (MaxTime=…)", "QOS normal
// (MaxTRESPerUser=…)".
func changeWords(c analysis.Change, today []SimPart) string {
	count := fmt.Sprintf("%dx%s", c.Count, c.Model)
	_, rest, _ := strings.Cut(c.Spec, ":")
	with := ""
	if rest != "" {
		with = " (" + rest + ")"
	}
	switch c.Kind {
	case analysis.ChangeAdd:
		if c.Partition != "" {
			return count + " added to partition " + c.Partition
		}
		return count + " added"
	case analysis.ChangeRemove:
		return count + " removed"
	case analysis.ChangePartition:
		name := c.PartitionConf.Name
		if slices.ContainsFunc(today, func(p SimPart) bool { return p.Name == name }) {
			return "partition " + name + " changed" + with
		}
		return "partition " + name + " added" + with
	case analysis.ChangeQOS:
		return "QOS " + c.QOS.Name + with
	}
	return c.Spec
}

// placementWords says, for each --add and --remove of GPUs of a model no
// job needed (Group.PlacedOnly: every job that could run on it could run
// on another model as well), that the change moves jobs the replay placed
// and answers nothing about a demand for the model. A removal is judged
// on today's cluster, an addition on the changed one (the model may be
// new).
func placementWords(changes []analysis.Change, today, changed *replay) []string {
	out := []string{}
	for _, c := range changes {
		r, flag := today, "--remove"
		switch c.Kind {
		case analysis.ChangeAdd:
			r, flag = changed, "--add"
		case analysis.ChangeRemove:
		default:
			continue
		}
		var models []string
		for _, n := range r.simNodes {
			if matchModel(c.Model, n.Model, n.Type) && !slices.Contains(models, n.Model) {
				models = append(models, n.Model)
			}
		}
		demand, placeable := 0, 0
		for _, m := range models {
			demand += r.demand[m]
			placeable += r.placeable[m]
		}
		if len(models) == 0 || demand > 0 {
			continue
		}
		name := present.List(models)
		spec := flag + " " + c.Spec
		switch {
		case placeable == 0:
			out = append(out, fmt.Sprintf("%s: no job of the window could run on %s GPUs, so the change moves no job", spec, name))
		case c.Kind == analysis.ChangeAdd:
			out = append(out, fmt.Sprintf("%s: no job asked for %s; the %d %s that could run on its GPUs could run on another model as well (no GPU type asked), so where they run is the replay's placement (first fit in node order, added nodes last): the GPUs added take untyped jobs placed by the replay, which answers nothing about a demand for %s",
				spec, name, placeable, present.Plural(placeable, "job", "jobs"), name))
		default:
			out = append(out, fmt.Sprintf("%s: no job asked for %s; the %d %s that could run on its GPUs could run on another model as well (no GPU type asked), so where they run is the replay's placement (first fit in node order): removing its GPUs moves untyped jobs placed by the replay, which answers nothing about a demand for %s",
				spec, name, placeable, present.Plural(placeable, "job", "jobs"), name))
		}
	}
	return out
}

// spreadOf is the median and p10–p90 of values over runs.
func spreadOf(v []float64) analysis.Spread {
	if len(v) == 0 {
		return analysis.Spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return analysis.Spread{Median: analysis.PercentileSorted(s, 50), P10: analysis.PercentileSorted(s, 10), P90: analysis.PercentileSorted(s, 90)}
}

// matchModel reports whether a GPU model or GRES type answers to name,
// Slurm's GRES type ("h100") or a model name ("NVIDIA H100 80GB HBM3"),
// case-insensitively: equal, or a word of the model.
func matchModel(name, model, gresType string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return false
	}
	if strings.EqualFold(n, gresType) || strings.EqualFold(n, model) {
		return true
	}
	words := strings.FieldsFunc(strings.ToLower(model), func(r rune) bool { return r == ' ' || r == '-' || r == '_' })
	if slices.Contains(words, n) {
		return true
	}
	// "a100" in "a100-sxm4-80gb", "h100" in "h100 80gb".
	for _, w := range words {
		if strings.HasPrefix(w, n) && len(n) >= 3 {
			return true
		}
	}
	return false
}

func secondsOf(d time.Duration) int64 { return int64(d / time.Second) }

func errf(format string, a ...any) error { return fmt.Errorf("what-if: "+format, a...) }
