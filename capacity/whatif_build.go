package capacity

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/queuesim"
	"github.com/gpuprof/gpuprof/slurmext"
)

// replay is one configuration ready to run: the simulator's cluster and
// jobs, and what each index means.
type replay struct {
	window     analysis.Window
	target     float64 // seconds: the calibration's thresholds are relative to it
	span       time.Duration
	hourOffset time.Duration
	source     string
	cluster    queuesim.Cluster
	simNodes   []SimNode
	simParts   []SimPart
	prio       queuesim.Priority
	sched      queuesim.Scheduler
	schedDesc  SimScheduler
	assumed    []string
	counts     SimJobs
	jobs       []queuesim.Job
	ref        []*analysis.Job // the recorded job of each replayed one
	refIdx     []int           // its index in the Input's Jobs
	jobsOnly   map[int]bool
	rewrites   []*analysis.JobRewrite
	// phaseFitted: fitPhase chose sched.BfPhase (fitted).
	phaseFitted bool
	// demand and placeable count, per GPU model, the replayed jobs that
	// could run on that model only and those that could run on it and on
	// another (modelDemand).
	demand, placeable map[string]int
}

func (r *replay) run(jobs []queuesim.Job, seed uint64) (*queuesim.Result, error) {
	return queuesim.Run(r.cluster, r.prio, r.sched, jobs, queuesim.Options{Seed: seed})
}

func (r *replay) assume(format string, a ...any) {
	r.assumed = append(r.assumed, fmt.Sprintf(format, a...))
}

// newReplay builds the cluster (with changes applied) and the jobs.
func newReplay(in analysis.Input, p WhatIfParams, changes []analysis.Change) (*replay, error) {
	r := &replay{assumed: []string{}, target: p.Target.Seconds()}
	if r.target <= 0 {
		r.target = analysis.DefaultConfig().Plan.TargetP95Wait.D().Seconds()
	}
	if err := r.setWindow(in); err != nil {
		return nil, err
	}
	r.setScheduler(p, in.Conf.Source)
	if err := r.setNodes(in, p); err != nil {
		return nil, err
	}
	r.setPartitions(in, p)
	added, err := r.apply(changes)
	if err != nil {
		return nil, err
	}
	r.assumeShards(in, p)
	r.finishCluster()
	r.setJobs(in, added)
	if r.counts.Replayed == 0 {
		return nil, &NoJobsError{Jobs: r.counts}
	}
	r.estimatePhase(p, changes)
	r.modelDemand()
	return r, nil
}

// modelDemand counts, per GPU model, the replayed jobs that could run on
// that model only — they asked for its GPU type, or no other model of
// their partitions could hold them: a demand for the model — and those
// that could run on it and on another (they asked for no type, or for one
// several models answer to): which of those models such a job runs on is
// the replay's placement (first fit in node order), not a demand for it.
// Jobs of one shape in the same partitions reach the same models, so each
// shape is looked up once.
func (r *replay) modelDemand() {
	r.demand, r.placeable = map[string]int{}, map[string]int{}
	type shape struct {
		parts        string
		typ          string
		gpus, shards int
		limit        time.Duration
	}
	reach := map[shape][]string{}
	var buf []int
	var key strings.Builder
	for i := range r.jobs {
		q := &r.jobs[i]
		key.Reset()
		for _, p := range q.Partitions {
			key.WriteString(strconv.Itoa(p))
			key.WriteByte(',')
		}
		sh := shape{parts: key.String(), typ: q.Type, gpus: q.GPUs, shards: q.Shards, limit: q.Limit}
		models, ok := reach[sh]
		if !ok {
			buf = queuesim.Holders(&r.cluster, q, buf[:0])
			for _, k := range buf {
				if m := r.simNodes[k].Model; !slices.Contains(models, m) {
					models = append(models, m)
				}
			}
			reach[sh] = models
		}
		switch len(models) {
		case 0:
		case 1:
			r.demand[models[0]]++
		default:
			for _, m := range models {
				r.placeable[m]++
			}
		}
	}
}

// estimatePhase finds when the real backfill cycles ran: a start that
// neither the job's own arrival nor another job's end (within a second)
// explains was made by a cycle, and cycles repeat every bf_interval. When
// such starts agree on the phase (a resultant length of their angles on
// the bf_interval circle of at least 0.8), the replay's cycles run then.
// Otherwise today's replay (no changes) fits the phase to the real starts
// where they say something of it (fitPhase), and a replay with changes
// takes today's fitted phase (WhatIfParams.todaysPhase, set by the caller
// from fitted); else each seed draws its own.
func (r *replay) estimatePhase(p WhatIfParams, changes []analysis.Change) {
	if !r.sched.Backfill || r.sched.BfInterval <= 0 {
		return
	}
	var ends []int64
	for _, j := range r.ref {
		if !j.End.IsZero() {
			ends = append(ends, j.End.Unix())
		}
	}
	slices.Sort(ends)
	interval := float64(secondsOf(r.sched.BfInterval))
	var sx, sy float64
	n := 0
	for i, j := range r.ref {
		if !j.Started() || j.Start.Before(r.window.From) || r.jobs[i].Running {
			continue
		}
		st := j.Start.Unix()
		if st-(r.window.From.Unix()+secondsOf(r.jobs[i].Arrival)) <= 1 {
			continue
		}
		k, _ := slices.BinarySearch(ends, st-1)
		if k < len(ends) && ends[k] <= st {
			continue
		}
		a := 2 * math.Pi * math.Mod(float64(st), interval) / interval
		sx, sy = sx+math.Cos(a), sy+math.Sin(a)
		n++
	}
	if n < 3 || math.Hypot(sx, sy)/float64(n) < 0.8 {
		switch {
		case p.todaysPhase != nil:
			// Today's replay decided it: the later replays' cycles run
			// when today's do (or draw theirs, as today's did).
			if p.todaysPhase.fitted {
				r.sched.BfPhase, r.sched.BfPhaseKnown = p.todaysPhase.phase, true
			}
		case len(changes) == 0:
			r.fitPhase()
		}
		return
	}
	abs := math.Mod(math.Atan2(sy, sx)/(2*math.Pi)*interval+interval, interval)
	rel := math.Mod(abs-math.Mod(float64(r.window.From.Unix()), interval)+interval, interval)
	r.sched.BfPhase, r.sched.BfPhaseKnown = time.Duration(math.Round(rel))*time.Second, true
	r.assume("backfill cycles at %.0f s past each %.0f s (from %d starts that no arrival or job end explains)", abs, interval, n)
}

// phaseFitMaxJobs is the largest window, in replayed jobs, whose backfill
// phase fitPhase fits; phaseFitSteps the phases it tries.
const (
	phaseFitMaxJobs = 2000
	phaseFitSteps   = 10
)

// fitPhase, where no start alone showed the real backfill cycles' phase
// (estimatePhase), tries phaseFitSteps phases evenly over bf_interval and
// keeps the one whose replay (seed 1, the calibration's) starts the jobs
// nearest their real starts (least mean absolute error; the earliest
// phase among equals) — unless the phases' errors are within half a
// second of each other, when the starts say nothing of it. A small
// window turns on it: a job that fitted a backfill but waited for the
// next cycle starts up to bf_interval early in a replay whose cycles fall
// elsewhere, and the jobs behind it with it. Larger windows (over phaseFitMaxJobs replayed jobs) keep a drawn
// phase per seed: there the phase moves their waits by seconds against
// hours, and each try would be a whole replay. The fit uses the starts
// the calibration compares, so the assumption says so.
func (r *replay) fitPhase() {
	interval := secondsOf(r.sched.BfInterval)
	if len(r.jobs) > phaseFitMaxJobs || interval < phaseFitSteps {
		return
	}
	drawn := r.sched
	best, bestErr, worstErr := int64(0), math.Inf(1), math.Inf(-1)
	for k := range int64(phaseFitSteps) {
		phase := k * interval / phaseFitSteps
		r.sched.BfPhase, r.sched.BfPhaseKnown = time.Duration(phase)*time.Second, true
		res, err := r.run(r.jobs, 1)
		if err != nil {
			r.sched = drawn // the seeded runs will say what failed
			return
		}
		e, n := r.startError(res)
		if n == 0 {
			r.sched = drawn // no real start to fit to
			return
		}
		if e < bestErr {
			best, bestErr = phase, e
		}
		worstErr = max(worstErr, e)
	}
	if worstErr-bestErr < 0.5 {
		// The phase moves no start by a second on average: the
		// starts say nothing of it, and each seed draws its own.
		r.sched = drawn
		return
	}
	r.sched.BfPhase, r.phaseFitted = time.Duration(best)*time.Second, true
	abs := (r.window.From.Unix() + best) % interval
	r.assume("backfill cycles at %d s past each %d s: of %d phases tried, the one whose replay starts the jobs nearest their real starts (no start alone showed it)", abs, interval, phaseFitSteps)
}

// fitted is what fitPhase made of today's backfill phase, for the later
// replays (WhatIfParams.todaysPhase).
func (r *replay) fitted() *phaseFit {
	return &phaseFit{fitted: r.phaseFitted, phase: r.sched.BfPhase}
}

// startError is the mean absolute error, in seconds, between the real and
// the replayed starts of the jobs the calibration compares (compared),
// and their count.
func (r *replay) startError(res *queuesim.Result) (float64, int) {
	var sum analysis.ExactSum
	n := 0
	r.compared(res, func(_ int, real, sim float64) {
		sum.Add(math.Abs(real - sim))
		n++
	})
	if n == 0 {
		return 0, 0
	}
	return sum.Float() / float64(n), n
}

func (r *replay) setWindow(in analysis.Input) error {
	from, to := in.Window.From, in.Window.To
	var earliest, latest time.Time
	for i := range in.Jobs {
		j := &in.Jobs[i]
		for _, t := range []time.Time{j.Eligible, j.Submit, j.Start, j.End} {
			if t.IsZero() {
				continue
			}
			if earliest.IsZero() || t.Before(earliest) {
				earliest = t
			}
			if t.After(latest) {
				latest = t
			}
		}
	}
	if from.IsZero() {
		from = earliest
	}
	if to.IsZero() {
		to = latest
		if !in.Now.IsZero() && in.Now.Before(to) {
			to = in.Now
		}
	}
	if !to.After(from) {
		return ErrNoJobs
	}
	r.window = analysis.Window{From: from, To: to}
	r.span = to.Sub(from)
	r.hourOffset = from.Sub(from.Truncate(time.Hour))
	return nil
}

func (r *replay) setScheduler(p WhatIfParams, confSource string) {
	sc := p.Sched
	if !p.SchedKnown {
		sc = slurmext.DefaultSchedConf()
		r.assume("no slurm.conf: Slurm's default scheduler (priority/basic, sched/backfill, bf_interval 30 s, bf_window 1 day)")
	}
	r.sched = queuesim.Scheduler{
		QueueDepth: sc.DefaultQueueDepth, SchedInterval: sc.SchedInterval,
		Backfill:   sc.SchedulerType == "sched/backfill" && !sc.BfDisabled,
		BfInterval: sc.BfInterval, BfResolution: sc.BfResolution, BfWindow: sc.BfWindow, BfMaxJobTest: sc.BfMaxJobTest,
		BfMaxJobPart: sc.BfMaxJobPart, BfMaxJobUser: sc.BfMaxJobUser,
	}
	// The backfill rounds its bookings on the wall clock, as slurmctld
	// does: where the window's start falls on bf_resolution's grid.
	if res := secondsOf(sc.BfResolution); res > 0 {
		r.sched.ClockOffset = time.Duration(r.window.From.Unix()%res) * time.Second
	}
	r.prio = queuesim.DefaultPriority()
	r.prio.MaxAge, r.prio.DecayHalfLife, r.prio.CalcPeriod = sc.PriorityMaxAge, sc.PriorityDecayHalfLife, sc.PriorityCalcPeriod
	if sc.PriorityType == "priority/multifactor" {
		r.prio.Multifactor = true
		r.prio.WeightAge, r.prio.WeightFairshare = float64(sc.WeightAge), float64(sc.WeightFairshare)
		r.prio.WeightJobSize, r.prio.WeightPartition, r.prio.WeightQOS = float64(sc.WeightJobSize), float64(sc.WeightPartition), float64(sc.WeightQOS)
		r.prio.FavorSmall = sc.PriorityFavorSmall
		// Fair Tree is Slurm's fair-share since 19.05 unless PriorityFlags
		// turns it off.
		r.prio.FairTree = !sc.NoFairTree
		if sc.WeightFairshare != 0 {
			if r.prio.FairTree {
				r.assume("fair-share: Fair Tree, every account and every user in an account an equal share, beside the cluster's root user, usage in GPU-seconds (the association tree is not read)")
			} else {
				r.assume("fair-share: classic 2^(−usage/shares) (PriorityFlags NO_FAIR_TREE), every user an equal share, usage in GPU-seconds (the association tree is not read)")
			}
		}
	}
	src := "defaults"
	if p.SchedKnown {
		src = "slurm.conf"
		if confSource == "scontrol" {
			src = "scontrol"
		}
	}
	r.schedDesc = SimScheduler{
		Source: src, Priority: sc.PriorityType, Backfill: r.sched.Backfill,
		BfInterval: secondsOf(sc.BfInterval), BfResolution: secondsOf(sc.BfResolution),
		BfWindow: secondsOf(sc.BfWindow), BfMaxJobTest: sc.BfMaxJobTest,
		BfMaxJobPart: sc.BfMaxJobPart, BfMaxJobUser: sc.BfMaxJobUser, BfContinue: sc.BfContinue,
	}
}

// setNodes takes the GPU nodes from --node when given (what the caller
// says the cluster is), else the inventory (the profiles' nodes and
// slurm.conf's), else slurm.conf alone. An inventory the jobs do not fit
// (Input.Inventory.Misfit) is none, and so is the slurm.conf behind it.
func (r *replay) setNodes(in analysis.Input, p WhatIfParams) error {
	conf := map[string]slurmext.NodeGres{}
	for _, n := range p.SlurmNodes {
		conf[n.Name] = n
	}
	misfit := in.Inventory.Misfit
	switch {
	case len(p.FlagNodes) > 0:
		r.source = analysis.InventoryFlags
		for _, n := range p.FlagNodes {
			// --node gives no shard count: the assumption applies, said.
			r.simNodes = append(r.simNodes, SimNode{Name: n.Name, Model: n.GPUModel, Type: strings.ToLower(n.GPUModel), GPUs: n.GPUs, Partitions: slices.Clone(n.Partitions), ShardsUnknown: true})
		}
		switch {
		case misfit != "":
			r.assume("the cluster as --node gives it, in place of an inventory that does not fit the jobs")
		case len(in.Nodes) > 0:
			r.assume("the cluster as --node gives it, in place of the inventory from %s (%d %s)", cmp.Or(in.Inventory.Source, analysis.InventoryProfiles), len(in.Nodes), present.Plural(len(in.Nodes), "node", "nodes"))
		case len(p.SlurmNodes) > 0:
			r.assume("the cluster as --node gives it, in place of %s's nodes", in.Conf.ConfName())
		default:
			r.assume("the cluster as --node gives it")
		}
	case len(in.Nodes) > 0:
		// The inventory: nodes seen in profiles, and slurm.conf's GPU nodes
		// no profile named (those have no card size).
		profiled := 0
		for _, n := range in.Nodes {
			sn := SimNode{Name: n.Name, Model: n.GPUModel, GPUs: n.GPUs, Shards: n.Shards, Partitions: slices.Clone(n.Partitions)}
			c, inConf := conf[n.Name]
			if inConf && len(c.GPUsByType) == 1 {
				sn.Type = strings.ToLower(c.GPUsByType[0].Type)
			}
			sn.ShardsUnknown = !inConf && n.Shards == 0
			if sn.Model == "" {
				sn.Model = cmp.Or(sn.Type, "gpu")
			}
			if _, ok := conf[n.Name]; !ok || n.MemoryTotal > 0 {
				profiled++
			}
			r.simNodes = append(r.simNodes, sn)
		}
		switch {
		case in.Inventory.Source != "":
			r.source = in.Inventory.Source
		case profiled == 0:
			r.source = in.Conf.ConfName()
		case profiled < len(in.Nodes):
			r.source = analysis.InventoryProfiles + " and " + in.Conf.ConfName()
		default:
			r.source = analysis.InventoryProfiles
		}
	case len(p.SlurmNodes) > 0 && misfit == "":
		r.source = in.Conf.ConfName()
		for _, n := range p.SlurmNodes {
			if n.GPUs <= 0 {
				continue
			}
			t := strings.ToLower(n.GPUType)
			model := t
			if model == "" {
				model = "gpu"
			}
			r.simNodes = append(r.simNodes, SimNode{Name: n.Name, Model: model, Type: t, GPUs: n.GPUs, Shards: n.Shards})
		}
		r.assume("GPU models from slurm.conf's GRES types (no profiled GPUs)")
	}
	if len(r.simNodes) == 0 && misfit != "" {
		return &NoClusterError{Why: misfit + "; give the cluster with --node"}
	}
	if len(r.simNodes) == 0 {
		return ErrNoCluster
	}
	// A node whose GRES type slurm.conf does not say answers to the GPU
	// types jobs asked for that its model matches.
	var types []string
	for i := range in.Jobs {
		if t := strings.ToLower(in.Jobs[i].ReqGPUType); t != "" && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	for i := range r.simNodes {
		n := &r.simNodes[i]
		if n.Type != "" {
			continue
		}
		for _, t := range types {
			if matchModel(t, n.Model, "") {
				n.Type = t
				break
			}
		}
	}
	return nil
}

// setPartitions takes slurm.conf's partitions, else those the jobs name
// (on the nodes that ran them, else on every node).
func (r *replay) setPartitions(in analysis.Input, p WhatIfParams) {
	if p.SchedKnown && len(p.Sched.Partitions) > 0 {
		for _, pc := range p.Sched.Partitions {
			sp := SimPart{Name: pc.Name, PriorityTier: pc.PriorityTier}
			if !pc.MaxTimeUnlimited {
				sp.MaxTime = secondsOf(pc.MaxTime)
			}
			for _, n := range r.simNodes {
				// A --node node is in the partitions it names, else in
				// every one: slurm.conf's node lists name other nodes.
				flagged := r.source == analysis.InventoryFlags && (len(n.Partitions) == 0 || slices.Contains(n.Partitions, pc.Name))
				if pc.AllNodes || slices.Contains(pc.Nodes, n.Name) || flagged {
					sp.Nodes = append(sp.Nodes, n.Name)
				}
			}
			r.simParts = append(r.simParts, sp)
		}
		return
	}
	var names []string
	for i := range in.Jobs {
		for _, name := range strings.Split(in.Jobs[i].Partition, ",") {
			if name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		names = []string{"default"}
	}
	for _, name := range names {
		sp := SimPart{Name: name, PriorityTier: 1}
		for _, n := range r.simNodes {
			if slices.Contains(n.Partitions, name) {
				sp.Nodes = append(sp.Nodes, n.Name)
			}
		}
		if len(sp.Nodes) == 0 {
			for _, n := range r.simNodes {
				sp.Nodes = append(sp.Nodes, n.Name)
			}
			r.assume("partition %s: on every node (no slurm.conf, and no profiled job of it names a node)", name)
		}
		r.simParts = append(r.simParts, sp)
	}
	r.assume("partitions from the jobs, without MaxTime or PriorityTier (no slurm.conf)")
}

// apply changes the cluster; it returns the partitions added.
func (r *replay) apply(changes []analysis.Change) ([]int, error) {
	var added []int
	for _, c := range changes {
		switch c.Kind {
		case analysis.ChangeAdd:
			if err := r.addGPUs(c); err != nil {
				return nil, err
			}
		case analysis.ChangeRemove:
			if err := r.removeGPUs(c); err != nil {
				return nil, err
			}
		case analysis.ChangePartition:
			i := slices.IndexFunc(r.simParts, func(p SimPart) bool { return p.Name == c.PartitionConf.Name })
			if i < 0 {
				if !c.PartitionSet["nodes"] {
					return nil, errf("new partition %s needs Nodes=", c.PartitionConf.Name)
				}
				r.simParts = append(r.simParts, SimPart{Name: c.PartitionConf.Name, PriorityTier: 1, Added: true})
				i = len(r.simParts) - 1
				if c.JobsOnly {
					if r.jobsOnly == nil {
						r.jobsOnly = map[int]bool{}
					}
					r.jobsOnly[i] = true
				} else {
					added = append(added, i)
				}
			}
			sp := &r.simParts[i]
			pc := c.PartitionConf
			if c.PartitionSet["nodes"] {
				sp.Nodes = nil
				for _, n := range r.simNodes {
					if pc.AllNodes || slices.Contains(pc.Nodes, n.Name) {
						sp.Nodes = append(sp.Nodes, n.Name)
					}
				}
				for _, name := range pc.Nodes {
					if !slices.ContainsFunc(r.simNodes, func(n SimNode) bool { return n.Name == name }) {
						return nil, errf("partition %s: node %s is not in the cluster", pc.Name, name)
					}
				}
			}
			if c.PartitionSet["maxtime"] {
				sp.MaxTime = 0
				if !pc.MaxTimeUnlimited {
					sp.MaxTime = secondsOf(pc.MaxTime)
				}
			}
			if c.PartitionSet["prioritytier"] {
				sp.PriorityTier = pc.PriorityTier
			}
		case analysis.ChangeShards:
			n := 0
			for i := range r.simNodes {
				sn := &r.simNodes[i]
				if matchModel(c.Model, sn.Model, sn.Type) && sn.GPUs > 0 {
					sn.Shards = c.Count * sn.GPUs
					n++
				}
			}
			if c.Count < 1 || n == 0 {
				return nil, errf("shards %s: no node of that model, or fewer than one shard per GPU", c.Spec)
			}
		case analysis.ChangeJobs:
			if c.Rewrite != nil {
				r.rewrites = append(r.rewrites, c.Rewrite)
			}
		case analysis.ChangeQOS:
			q := c.QOS
			i := slices.IndexFunc(r.cluster.QOS, func(x queuesim.QOS) bool { return x.Name == q.Name })
			if i < 0 {
				r.cluster.QOS = append(r.cluster.QOS, queuesim.QOS{Name: q.Name})
				i = len(r.cluster.QOS) - 1
			}
			x := &r.cluster.QOS[i]
			if q.Set["priority"] {
				x.Priority = q.Priority
			}
			if q.Set["maxtresperuser"] {
				x.MaxGPUsPerUser = q.MaxGPUsPerUser
			}
			if q.Set["maxjobsperuser"] {
				x.MaxJobsPerUser = q.MaxJobsPerUser
			}
			if q.Set["grptres"] {
				x.GrpGPUs = q.GrpGPUs
			}
		default:
			return nil, errf("unknown change %q", c.Kind)
		}
	}
	return added, nil
}

func (r *replay) addGPUs(c analysis.Change) error {
	if c.Count <= 0 {
		return errf("--add %s: want a positive number of GPUs", c.Spec)
	}
	like := slices.IndexFunc(r.simNodes, func(n SimNode) bool { return matchModel(c.Model, n.Model, n.Type) })
	n := SimNode{Name: fmt.Sprintf("added-%d", len(r.simNodes)+1), Model: c.Model, Type: strings.ToLower(c.Model), GPUs: c.Count, Added: true}
	if like >= 0 {
		n.Model, n.Type = r.simNodes[like].Model, r.simNodes[like].Type
	}
	r.simNodes = append(r.simNodes, n)
	for i := range r.simParts {
		p := &r.simParts[i]
		in := p.Name == c.Partition
		if c.Partition == "" {
			in = like < 0 || slices.Contains(p.Nodes, r.simNodes[like].Name)
		}
		if in {
			p.Nodes = append(p.Nodes, n.Name)
		}
	}
	if c.Partition != "" && !slices.ContainsFunc(r.simParts, func(p SimPart) bool { return p.Name == c.Partition }) {
		return errf("--add %s: no partition %s", c.Spec, c.Partition)
	}
	return nil
}

func (r *replay) removeGPUs(c analysis.Change) error {
	left := c.Count
	for i := len(r.simNodes) - 1; i >= 0 && left > 0; i-- {
		n := &r.simNodes[i]
		if !matchModel(c.Model, n.Model, n.Type) {
			continue
		}
		take := min(left, n.GPUs)
		if n.Shards > 0 {
			n.Shards -= n.Shards / n.GPUs * take
		}
		n.GPUs -= take
		left -= take
	}
	if left == c.Count && c.Count > 0 {
		return errf("--remove %s: the cluster has no GPU of model %s; it has %s", c.Spec, c.Model, r.modelCounts())
	}
	if left > 0 {
		return errf("--remove %s: the cluster has %d fewer GPUs of %s than that", c.Spec, left, c.Model)
	}
	return nil
}

// modelCounts names the GPUs of the replay's nodes per model: "4,800 A100,
// 32 T4", largest first; "no GPU" when none.
func (r *replay) modelCounts() string {
	by := map[string]int{}
	for _, n := range r.simNodes {
		if n.GPUs > 0 {
			by[cmp.Or(n.Model, n.Type, "of unknown model")] += n.GPUs
		}
	}
	models := slices.Collect(maps.Keys(by))
	slices.SortFunc(models, func(a, b string) int { return cmp.Or(cmp.Compare(by[b], by[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(models))
	for i, m := range models {
		parts[i] = present.Int(by[m]) + " " + m
	}
	if len(parts) == 0 {
		return "no GPU"
	}
	return strings.Join(parts, ", ")
}

// assumeShards gives the nodes whose shard count no slurm.conf gives
// (SimNode.ShardsUnknown) the shards per GPU the analysis counts shard
// jobs by (analysis.ShardsPerGPU: the assumption, raised by the data),
// when the replay has shard jobs, and says so: without it those jobs had
// no shards to run on and were left out, and the replay and the analysis
// counted two clusters. Without shard jobs nothing changes (whole-GPU
// replays keep their fast path).
func (r *replay) assumeShards(in analysis.Input, p WhatIfParams) {
	shardJobs := slices.ContainsFunc(in.Jobs, func(j analysis.Job) bool { return j.ReqShards > 0 && j.ReqGPUs <= 0 })
	if !shardJobs {
		return
	}
	per, raised := analysis.ShardsPerGPU(&in, p.ShardsPerGPU)
	var names []string
	for i := range r.simNodes {
		n := &r.simNodes[i]
		if n.ShardsUnknown && n.GPUs > 0 && n.Shards == 0 {
			n.Shards = per * n.GPUs
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	why := fmt.Sprintf("%d shards per GPU assumed on %s whose shard count is in no slurm.conf", per, present.Count(len(names), "node", "nodes"))
	if raised > 0 {
		why += fmt.Sprintf(" (raised from %d: a job held %d shards of one GPU)", raised, per)
	}
	r.assume("%s", why)
}

// finishCluster turns the named nodes and partitions into the simulator's.
func (r *replay) finishCluster() {
	index := map[string]int{}
	r.cluster.Nodes = r.cluster.Nodes[:0]
	for _, n := range r.simNodes {
		index[n.Name] = len(r.cluster.Nodes)
		spg := 0
		if n.GPUs > 0 && n.Shards > 0 {
			spg = n.Shards / n.GPUs
		}
		r.cluster.Nodes = append(r.cluster.Nodes, queuesim.Node{Name: n.Name, Type: n.Type, GPUs: n.GPUs, ShardsPerGPU: spg})
	}
	for i := range r.simNodes {
		r.simNodes[i].Partitions = nil
	}
	r.cluster.Partitions = nil
	for i := range r.simParts {
		p := &r.simParts[i]
		qp := queuesim.Partition{Name: p.Name, MaxTime: time.Duration(p.MaxTime) * time.Second, PriorityTier: p.PriorityTier, PriorityFactor: 1}
		p.GPUs = 0
		for _, name := range p.Nodes {
			k := index[name]
			qp.Nodes = append(qp.Nodes, k)
			p.GPUs += r.simNodes[k].GPUs
			r.simNodes[k].Partitions = append(r.simNodes[k].Partitions, p.Name)
		}
		r.cluster.Partitions = append(r.cluster.Partitions, qp)
	}
}

// setJobs turns the window's GPU jobs into the simulator's. A job the
// replay cannot take is left out and counted with why (leftOuts).
//
// It stays one function: the index maps built at its top, the user and
// account ids and the left-out tally serve every step of turning a job,
// and a job left out at any step (no partition, rewritten away, does not
// fit) must reach none of the counts after it; split, each piece would
// take the same maps and return whether to go on.
func (r *replay) setJobs(in analysis.Input, added []int) {
	partIdx := map[string]int{}
	for i, p := range r.simParts {
		partIdx[p.Name] = i
	}
	nodeIdx := map[string]int{}
	for i, n := range r.simNodes {
		nodeIdx[n.Name] = i
	}
	qosIdx := map[string]int{}
	for i, q := range r.cluster.QOS {
		qosIdx[q.Name] = i
	}
	users, accounts := map[string]int{}, map[string]int{}
	lo := newLeftOuts(in, r.window)
	from, to := r.window.From, r.window.To
	noLimit, openRun, neverRan := 0, 0, 0

	type cand struct {
		j     *analysis.Job
		idx   int
		order time.Time
	}
	var cands []cand
	for i := range in.Jobs {
		j := &in.Jobs[i]
		if j.ReqGPUs <= 0 && j.ReqShards <= 0 {
			if j.State == "" && len(j.GPUs) > 0 {
				// Known only from its GPU profiles (no scheduler record):
				// no request or submit time to replay, so it is left out,
				// counted, with its GPU-hours.
				lo.leave(j, leftOutKey{kind: LeftOutNoRecord}, 0, lo.count(j))
			}
			continue
		}
		arr := j.Eligible
		if arr.IsZero() {
			arr = j.Submit
		}
		if arr.IsZero() {
			lo.leave(j, leftOutKey{kind: LeftOutNoRecord}, 0, lo.count(j))
			continue
		}
		// In the window: arrived in it, or running or pending at its start.
		if !arr.Before(to) || !j.End.IsZero() && !j.End.After(from) {
			continue
		}
		sub := j.Submit
		if sub.IsZero() {
			sub = arr
		}
		cands = append(cands, cand{j, i, sub})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if c := a.order.Compare(b.order); c != 0 {
			return c
		}
		return cmpJobID(a.j.ID, b.j.ID)
	})
	for order, c := range cands {
		j := c.j
		hours := lo.count(j)
		arr := j.Eligible
		if arr.IsZero() {
			arr = j.Submit
		}
		var parts []int
		for _, name := range strings.Split(j.Partition, ",") {
			if k, ok := partIdx[name]; ok && !slices.Contains(parts, k) {
				parts = append(parts, k)
			}
		}
		if len(parts) == 0 {
			lo.leave(j, leftOutKey{kind: LeftOutPartition, part: j.Partition}, 0, hours)
			continue
		}
		nodes := max(j.NodeCount, 1)
		q := queuesim.Job{
			Arrival: arr.Sub(from), Order: int64(order), Partitions: parts, QOS: -1,
			Nodes: nodes, GPUs: ceilDiv(j.ReqGPUs, nodes), Type: strings.ToLower(j.ReqGPUType),
		}
		if j.ReqGPUs <= 0 {
			q.GPUs, q.Shards = 0, ceilDiv(j.ReqShards, nodes)
		}
		if k, ok := qosIdx[j.QOS]; ok {
			q.QOS = k
		}
		started := j.Started()
		endedPending := j.State.EndedPending(started, j.End)
		if j.TimeLimit > 0 {
			q.Limit = j.TimeLimit
		}
		switch {
		case started && !j.End.IsZero():
			q.Run = j.End.Sub(j.Start)
		case started:
			// Still running: until the window's end at least.
			q.Run = to.Sub(j.Start)
		case endedPending:
			// Left the queue while pending (cancelled, past its deadline,
			// revoked, …): in the replay too, at the same time.
			q.Cancels, q.Cancel = true, j.End.Sub(from)
			q.Run = q.Limit
		default:
			// Pending at the end: it runs its limit, if it ever starts.
			q.Run = q.Limit
			if q.Run == 0 {
				q.Run = time.Hour
			}
		}
		if q.Limit > 0 && q.Run > q.Limit {
			q.Run = q.Limit
		}
		running := started && j.Start.Before(from)
		if r.rewrite(c.idx, &q, started, running, qosIdx, partIdx) {
			continue // out of the GPU queue
		}
		// A new partition takes the jobs whose limit fits its MaxTime and
		// that were submitted to a partition sharing a node with it: as
		// if users (or a job_submit rule) sent them there as well.
		for _, a := range added {
			np := r.simParts[a]
			if np.MaxTime > 0 && (q.Limit <= 0 || secondsOf(q.Limit) > np.MaxTime) {
				continue
			}
			for _, k := range parts {
				if sharesNode(r.simParts[k], np) {
					q.Partitions = append(q.Partitions, a)
					break
				}
			}
		}
		if u := queuesim.CheckFit(&r.cluster, &q); u.Kind != queuesim.Fits {
			lo.leave(j, r.unfitKey(u, &q), askedOf(u.Kind, &q), hours)
			continue
		}
		if _, ok := users[j.User]; !ok {
			users[j.User] = len(users)
		}
		q.User = users[j.User]
		if _, ok := accounts[j.Account]; !ok {
			accounts[j.Account] = len(accounts)
		}
		q.Account = accounts[j.Account]
		if j.TimeLimit <= 0 && !j.Unlimited {
			noLimit++
		}
		switch {
		case started && j.End.IsZero():
			openRun++
		case !started && !endedPending:
			neverRan++
		}
		if running {
			q.Running, q.Started = true, j.Start.Sub(from)
			if names, err := slurmext.ExpandHostlist(j.NodeList); err == nil {
				for _, name := range names {
					if k, ok := nodeIdx[name]; ok {
						q.Pinned = append(q.Pinned, k)
					}
				}
			}
			r.counts.RunningAtStart++
		} else if arr.Before(from) {
			r.counts.PendingAtStart++
		} else {
			r.counts.Arrived++
		}
		// Slurm considers a job submitted to several partitions in each, the
		// higher PriorityTier first: the replay tries them in that order.
		slices.SortStableFunc(q.Partitions, func(a, b int) int {
			return cmp.Compare(r.simParts[b].PriorityTier, r.simParts[a].PriorityTier)
		})
		r.jobs = append(r.jobs, q)
		r.ref = append(r.ref, j)
		r.refIdx = append(r.refIdx, c.idx)
	}
	r.counts.Replayed = len(r.jobs)
	lo.fill(&r.counts)
	if r.prio.FairTree && r.rootRunsAsRoot() {
		// The cluster's root user association is (account root, user
		// root): replayed with its own jobs, it is not one more.
		r.prio.RootUsers = 0
	}
	if noLimit > 0 {
		r.assume("%d jobs without a known time limit: their partition's MaxTime (or none) is their limit", noLimit)
	}
	if openRun > 0 {
		r.assume("%d jobs still running at the window's end run until it", openRun)
	}
	if neverRan > 0 {
		r.assume("%d jobs still pending at the window's end run their time limit (1 h without one) if they start", neverRan)
	}
	if len(r.cluster.QOS) == 0 {
		r.assume("no QOS limits (sacctmgr's are not read; --qos sets them)")
	}
}

// slurmRoot is the name of the cluster's root account and of its root
// user, whose association slurmdbd creates with every cluster.
const slurmRoot = "root"

// rootRunsAsRoot reports whether a replayed job is the root user's under
// the root account: the association Fair Tree counts beside the replay's
// (queuesim.Priority.RootUsers) is then among them.
func (r *replay) rootRunsAsRoot() bool {
	for _, j := range r.ref {
		if j.Account == slurmRoot && j.User == slurmRoot {
			return true
		}
	}
	return false
}

// unfitKey names what a job asks for that the cluster does not have, in
// the partition that came closest.
func (r *replay) unfitKey(u queuesim.Unfit, q *queuesim.Job) leftOutKey {
	k := leftOutKey{typ: q.Type, have: u.Have}
	if u.Partition >= 0 {
		k.part = r.simParts[u.Partition].Name
	}
	switch u.Kind {
	case queuesim.UnfitQOS:
		k.kind, k.part = LeftOutQOS, r.cluster.QOS[q.QOS].Name
	case queuesim.UnfitTimeLimit:
		k.kind = LeftOutTimeLimit
	case queuesim.UnfitType:
		k.kind = LeftOutGPUType
	case queuesim.UnfitShards:
		k.kind = LeftOutShards
	case queuesim.UnfitGPUs:
		k.kind = LeftOutGPUs
	case queuesim.UnfitNodes:
		k.kind = LeftOutNodes
	default:
		k.kind = LeftOutPartition
	}
	return k
}

// askedOf is what the job asks for that its reason is about: GPUs (all
// of them for a QOS), shards or nodes, or its limit in seconds.
func askedOf(kind queuesim.UnfitKind, q *queuesim.Job) int {
	switch kind {
	case queuesim.UnfitQOS:
		return q.GPUs * q.Nodes
	case queuesim.UnfitTimeLimit:
		return int(secondsOf(q.Limit))
	case queuesim.UnfitShards:
		return q.Shards
	case queuesim.UnfitGPUs:
		return q.GPUs
	case queuesim.UnfitNodes:
		return q.Nodes
	}
	return 0
}

// rewrite applies the rewrites that name job idx to q; it reports whether
// the job leaves the GPU queue. A job already running at the window's
// start keeps what it has.
func (r *replay) rewrite(idx int, q *queuesim.Job, started, running bool, qosIdx, partIdx map[string]int) bool {
	for _, w := range r.rewrites {
		if !w.Jobs[idx] || running {
			continue
		}
		if w.Drop {
			return true
		}
		if w.GPUs > 0 && q.GPUs > w.GPUs {
			q.GPUs = w.GPUs
		}
		if w.Shards > 0 && q.GPUs > 0 {
			q.GPUs, q.Shards, q.Nodes = 0, w.Shards, 1
		}
		if w.LimitCap > 0 && (q.Limit <= 0 || q.Limit > w.LimitCap) && started && q.Run <= w.LimitCap {
			q.Limit = w.LimitCap
		}
		if k, ok := qosIdx[w.QOS]; ok {
			q.QOS = k
		}
		if k, ok := partIdx[w.Partition]; ok {
			q.Partitions = []int{k}
		}
	}
	return false
}

func sharesNode(a, b SimPart) bool {
	for _, n := range a.Nodes {
		if slices.Contains(b.Nodes, n) {
			return true
		}
	}
	return false
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}

// cmpJobID orders raw job ids numerically where they are numbers.
func cmpJobID(a, b string) int {
	x, e1 := strconv.ParseUint(a, 10, 64)
	y, e2 := strconv.ParseUint(b, 10, 64)
	if e1 == nil && e2 == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}
