// Package demo simulates a small Slurm GPU cluster for a month through the
// real recording path: a simulated GPU node (gpu/sim) per node on a virtual
// clock, the node agent (agent) started and ended by the requests the
// prolog and epilog send, its spool drained into the store (ingest), and the
// scheduler's view recorded by the jobcomp hook's code (jobcomp). Only the
// users and the scheduler are invented: a deterministic workload and a
// queue in submission order with a coarse conservative backfill on the
// jobs' time limits, checked every sampling interval. Span is the window
// `gpuprof demo month` simulates by default: the last complete months.
//
// It must not write profiles or scheduler records itself: everything in the
// database gets there the way it does on a real cluster, so the demo
// exercises what it shows.
package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/agent"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/jobcomp"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// ErrOptions means MonthOptions are unusable.
var ErrOptions = errors.New("demo: invalid options")

// Cluster is the simulated cluster's name in every record.
const Cluster = "demo"

// NodeSpec is one simulated GPU node.
type NodeSpec struct {
	Name      string
	Partition string
	// Type is the gres type Slurm would give the GPUs ("h100").
	Type        string
	Model       string // as NVML names it
	GPUs        int
	MemoryTotal uint64 // bytes per GPU
}

// DefaultNodes is the demo cluster: two H100 nodes, one A100 node and a
// small L40S node (the one model here that cannot do MIG).
func DefaultNodes() []NodeSpec {
	const gib = 1 << 30
	return []NodeSpec{
		{Name: "gpu01", Partition: "gpu", Type: "h100", Model: "NVIDIA H100 80GB HBM3", GPUs: 4, MemoryTotal: 80 * gib},
		{Name: "gpu02", Partition: "gpu", Type: "h100", Model: "NVIDIA H100 80GB HBM3", GPUs: 4, MemoryTotal: 80 * gib},
		{Name: "gpu03", Partition: "gpu", Type: "a100", Model: "NVIDIA A100-SXM4-40GB", GPUs: 4, MemoryTotal: 40 * gib},
		{Name: "gpu04", Partition: "l40s", Type: "l40s", Model: "NVIDIA L40S", GPUs: 2, MemoryTotal: 48 * gib},
	}
}

// DefaultStart is where the simulated month begins: fixed, so that one seed
// always gives the same database.
var DefaultStart = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// MonthOptions configure Month. Zero fields take the defaults.
type MonthOptions struct {
	// Dir holds the simulated nodes' state (sim dirs, fixture procfs,
	// spools); it is created if missing and emptied of an earlier run.
	Dir string
	// DB is the database every node and the jobcomp hook write to (one
	// central database, as on a single-host install); default Dir/month.db.
	// An existing file is replaced.
	DB   string
	Seed uint64
	// Days of submissions (default 30); the simulation then runs until the
	// last job ends.
	Days int
	// Interval is the agent's sampling interval on the virtual clock
	// (default two minutes: coarser than a real agent's second, so that a
	// month takes seconds on two cores; jobs shorter than three intervals
	// are then marked partial, as the agent marks them on a real node).
	Interval time.Duration
	Start    time.Time
	Nodes    []NodeSpec // default DefaultNodes
	Workload []Template // default DefaultWorkload
	Log      *slog.Logger
}

// Summary says what Month produced.
type Summary struct {
	DB    string
	Start time.Time
	End   time.Time // when the last job ended
	Nodes int
	Jobs  int
	// Failed and TimedOut count jobs by final state.
	Failed, TimedOut int
	// GPUHours is the allocated GPU time the scheduler granted (GPUs ×
	// run time), summed.
	GPUHours float64
	// Ticks is the number of sampling ticks taken over all nodes.
	Ticks int
	// Wall is how long the simulation took in real time.
	Wall time.Duration
}

func (o *MonthOptions) defaults() error {
	if o.Dir == "" {
		return fmt.Errorf("%w: no state directory", ErrOptions)
	}
	if o.DB == "" {
		o.DB = filepath.Join(o.Dir, "month.db")
	}
	if o.Days == 0 {
		o.Days = 30
	}
	if o.Interval == 0 {
		o.Interval = 2 * time.Minute
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	if o.Nodes == nil {
		o.Nodes = DefaultNodes()
	}
	if o.Workload == nil {
		o.Workload = DefaultWorkload()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case o.Days < 0 || o.Days > 366:
		return fmt.Errorf("%w: days %d not in 1..366", ErrOptions, o.Days)
	case o.Interval < time.Second:
		return fmt.Errorf("%w: interval %s under a second", ErrOptions, o.Interval)
	case len(o.Nodes) == 0:
		return fmt.Errorf("%w: no nodes", ErrOptions)
	}
	names := map[string]bool{}
	for _, n := range o.Nodes {
		if n.Name == "" || names[n.Name] {
			return fmt.Errorf("%w: node name %q empty or repeated", ErrOptions, n.Name)
		}
		names[n.Name] = true
	}
	for _, t := range o.Workload {
		if t.GPUs < 1 || t.RunMin <= 0 || t.RunMax < t.RunMin || t.Limit <= 0 || t.PerDay <= 0 ||
			t.To > 0 && (t.From < 0 || t.To > 24*time.Hour || t.From >= t.To) {
			return fmt.Errorf("%w: template %s/%s", ErrOptions, t.User, t.Name)
		}
		// A job no node can ever hold would wait forever.
		typed := slices.ContainsFunc(o.Nodes, func(n NodeSpec) bool { return n.Type == t.Model })
		if !slices.ContainsFunc(o.Nodes, func(n NodeSpec) bool { return (!typed || n.Type == t.Model) && n.GPUs >= t.GPUs }) {
			return fmt.Errorf("%w: template %s/%s: no node has %d GPUs of type %q", ErrOptions, t.User, t.Name, t.GPUs, t.Model)
		}
	}
	return nil
}

// node is one simulated node with its agent.
type node struct {
	spec   NodeSpec
	sim    *sim.Node
	agent  *agent.Agent
	spool  spool.Dir
	procfs string
	simDir string
	devs   []gpu.Device
	busy   []bool // per GPU, by Slurm index
	// ioStall is the node's cumulative PSI "some" IO stall, microseconds.
	ioStall uint64
	running []*job
}

// job is one simulated Slurm job.
type job struct {
	id        int
	tmpl      *Template
	arrayID   int // array job id, 0 when not an array
	taskID    int
	submit    time.Time
	start     time.Time
	end       time.Time
	run       time.Duration // planned run time (before the limit)
	state     slurmext.JobState
	exit      int
	node      *node
	gpus      []int
	pid       int
	rng       *rand.Rand
	partition string
	waited    bool // waited for resources at least one tick
	// xid is the XID error the driver raises on the job's first GPU at
	// its last sampling tick (0: none): what a crash caused by the GPU
	// looks like.
	xid uint64
}

// Month simulates opts.Days days of the cluster and returns what it
// recorded. The result depends only on the options (seed included), not on
// the machine or the time of day.
//
// The clock, the queue and the nodes are state of the one tick loop here,
// and within a tick its order (endings, submissions, placements, samples,
// drains) is what slurmctld and the agents would see; the steps
// themselves (endDue, startQueued, advance, drainAll) are their own
// functions.
func Month(ctx context.Context, opts MonthOptions) (Summary, error) {
	began := time.Now()
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	if err := resetDir(opts); err != nil {
		return Summary{}, err
	}
	db, err := store.Open(ctx, opts.DB, store.Options{})
	if err != nil {
		return Summary{}, fmt.Errorf("demo: %w", err)
	}
	defer db.Close()

	now := opts.Start
	clock := func() time.Time { return now }
	var nodes []*node
	for _, spec := range opts.Nodes {
		n, err := openNode(ctx, opts, spec, db, clock)
		if err != nil {
			return Summary{}, err
		}
		defer n.sim.Close()
		nodes = append(nodes, n)
	}

	jobs := submissions(opts)
	sum := Summary{DB: opts.DB, Start: opts.Start, Nodes: len(nodes), Jobs: len(jobs)}
	ctld := controller{deps: jobcomp.Deps{SpoolDir: filepath.Join(opts.Dir, "ctld-spool"), Log: opts.Log}, db: db}

	var queue []*job
	next := 0 // next submission
	done := 0
	lastDrain := now
	for tick := now; done < len(jobs); tick = tick.Add(opts.Interval) {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		ended, err := endDue(ctx, nodes, tick, ctld, &now, &sum)
		if err != nil {
			return sum, err
		}
		done += ended
		now = tick
		for next < len(jobs) && !jobs[next].submit.After(tick) {
			queue = append(queue, jobs[next])
			next++
		}
		if queue, err = startQueued(ctx, nodes, queue, tick, opts); err != nil {
			return sum, err
		}

		for _, n := range nodes {
			if len(n.running) == 0 {
				continue // an idle agent's tick reads nothing
			}
			if err := n.advance(tick, opts.Interval); err != nil {
				return sum, err
			}
			n.agent.SampleNow(ctx)
			sum.Ticks++
		}
		if tick.Sub(lastDrain) >= 24*time.Hour {
			if err := drainAll(ctx, db, nodes, opts.Log); err != nil {
				return sum, err
			}
			lastDrain = tick
		}
		sum.End = now
	}
	if err := drainAll(ctx, db, nodes, opts.Log); err != nil {
		return sum, err
	}
	sum.Wall = time.Since(began)
	return sum, nil
}

// endDue finishes the jobs ending in (previous tick, tick], in order of
// their end — the epilog's request, then slurmctld's jobcomp record —
// with the clock (*now) at each one's end, counts them in sum and returns
// how many ended.
func endDue(ctx context.Context, nodes []*node, tick time.Time, ctld controller, now *time.Time, sum *Summary) (int, error) {
	var ending []*job
	for _, n := range nodes {
		for _, j := range n.running {
			if !j.end.After(tick) {
				ending = append(ending, j)
			}
		}
	}
	slices.SortFunc(ending, func(a, b *job) int { return cmp.Or(a.end.Compare(b.end), cmp.Compare(a.id, b.id)) })
	done := 0
	for _, j := range ending {
		*now = j.end
		if err := finish(ctx, j, ctld); err != nil {
			return done, err
		}
		done++
		sum.GPUHours += float64(len(j.gpus)) * j.end.Sub(j.start).Hours()
		switch j.state {
		case slurmext.StateFailed:
			sum.Failed++
		case slurmext.StateTimeout:
			sum.TimedOut++
		}
	}
	return done, nil
}

// startQueued starts the queued jobs that can start at tick, and returns
// those left waiting. Submission order with backfill, as Slurm's: a job
// starts on free GPUs that no job before it holds for the span of its
// time limit; a job that cannot start holds, within a day, the GPUs where
// it can start earliest by the running jobs' time limits.
func startQueued(ctx context.Context, nodes []*node, queue []*job, tick time.Time, opts MonthOptions) ([]*job, error) {
	pl := newPlanner(nodes, tick)
	kept := queue[:0]
	for _, j := range queue {
		if n, gpus := pl.place(nodes, j); n != nil {
			if err := begin(ctx, j, n, gpus, tick, opts); err != nil {
				return kept, err
			}
		} else {
			j.waited = true
			kept = append(kept, j)
		}
	}
	return kept, nil
}

func resetDir(opts MonthOptions) error {
	for _, p := range []string{filepath.Join(opts.Dir, "nodes"), filepath.Join(opts.Dir, "ctld-spool"),
		opts.DB, opts.DB + "-wal", opts.DB + "-shm"} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("demo: clean %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

func openNode(ctx context.Context, opts MonthOptions, spec NodeSpec, db *store.DB, clock func() time.Time) (*node, error) {
	dir := filepath.Join(opts.Dir, "nodes", spec.Name)
	n := &node{spec: spec, procfs: filepath.Join(dir, "proc"), simDir: filepath.Join(dir, "sim"), spool: spool.Dir{Path: filepath.Join(dir, "spool")}, busy: make([]bool, spec.GPUs)}
	if err := os.MkdirAll(filepath.Join(n.procfs, "pressure"), 0o755); err != nil {
		return nil, fmt.Errorf("demo: node %s: %w", spec.Name, err)
	}
	if err := n.writePressure(); err != nil {
		return nil, err
	}
	devs, err := sim.Init(n.simDir, sim.NodeSpec{GPUs: spec.GPUs, Model: spec.Model, MemoryTotal: spec.MemoryTotal})
	if err != nil {
		return nil, fmt.Errorf("demo: node %s: %w", spec.Name, err)
	}
	n.devs = devs
	// The scan cache skips re-reading the empty procs/ directory on every
	// call: all demo processes are registered in memory.
	n.sim, err = sim.Open(n.simDir, sim.WithProcfs(n.procfs), sim.WithClock(clock), sim.WithScanCache(time.Hour))
	if err != nil {
		return nil, fmt.Errorf("demo: node %s: %w", spec.Name, err)
	}
	n.agent, err = agent.New(ctx, agent.Options{
		Cluster: Cluster, Node: spec.Name, Socket: filepath.Join(dir, "agent.sock"),
		Interval: opts.Interval, SeriesPoints: 256,
		Procfs: n.procfs, CgroupRoot: filepath.Join(dir, "cgroup"), Clock: clock,
	}, n.sim, db, n.spool, opts.Log.With("node", spec.Name))
	if err != nil {
		n.sim.Close()
		return nil, fmt.Errorf("demo: node %s: %w", spec.Name, err)
	}
	return n, nil
}

// writePressure publishes the node's IO stall total as /proc/pressure/io,
// where the agent reads node-level IO wait.
func (n *node) writePressure() error {
	data := fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", n.ioStall)
	if err := os.WriteFile(filepath.Join(n.procfs, "pressure", "io"), []byte(data), 0o644); err != nil {
		return fmt.Errorf("demo: node %s pressure: %w", n.spec.Name, err)
	}
	return nil
}

// submissions draws every job of the period, in submission order. Each
// template submits once within the first six hours of its first window
// (so that even a short run shows every kind of work), then as a Poisson
// process within its window of each day.
func submissions(opts MonthOptions) []*job {
	horizon := opts.Start.Add(time.Duration(opts.Days) * 24 * time.Hour)
	var jobs []*job
	for ti := range opts.Workload {
		t := &opts.Workload[ti]
		// A stream per template: retuning one user leaves the others'
		// submissions as they were.
		rng := rand.New(rand.NewPCG(opts.Seed, 0x6770_7066+uint64(ti)))
		from, to := t.window()
		at := t.advance(opts.Start, time.Duration(rng.Float64()*float64(min(6*time.Hour, to-from))))
		for at.Before(horizon) {
			tasks := max(t.ArrayTasks, 1)
			for k := range tasks {
				j := &job{tmpl: t, submit: at.Truncate(time.Second), taskID: -1}
				if t.ArrayTasks > 0 {
					j.taskID = k
				}
				j.run = t.RunMin + time.Duration(rng.Float64()*float64(t.RunMax-t.RunMin))
				switch {
				case j.run >= t.Limit:
					j.state, j.run = slurmext.StateTimeout, t.Limit
				case rng.Float64() < t.FailRate:
					j.state, j.exit = slurmext.StateFailed, 1
					j.run = time.Duration(float64(j.run) * (0.1 + 0.8*rng.Float64()))
					if rng.Float64() < 0.25 {
						j.xid = 31 // GPU memory page fault: a bad pointer in user code
					}
				default:
					j.state = slurmext.StateCompleted
				}
				j.run = max(j.run.Truncate(time.Second), time.Second)
				jobs = append(jobs, j)
			}
			// PerDay a day within the window: the rate per hour of window
			// is PerDay over the window's length.
			gap := -math.Log(1-rng.Float64()) / t.PerDay * float64(to-from)
			at = t.advance(at, time.Duration(gap))
		}
	}
	// Job ids in submission order, as slurmctld hands them out; an
	// array's tasks share their array job id (the first task's).
	slices.SortStableFunc(jobs, func(a, b *job) int { return a.submit.Compare(b.submit) })
	for i, j := range jobs {
		j.id = 1000 + i
		j.pid = 20000 + i
		j.rng = rand.New(rand.NewPCG(opts.Seed, uint64(j.id)))
		if j.taskID >= 0 {
			j.arrayID = j.id - j.taskID
		}
	}
	return jobs
}

// bfWindow is how far ahead a waiting job holds GPUs (Slurm's bf_window
// default, one day).
const bfWindow = 24 * time.Hour

// slot is one GPU on a scheduling pass's plan: free from from (the pass's
// time when idle, else when its job's time limit ends), and held from hold
// (zero: never) until after for the waiting jobs that reserved it.
type slot struct{ from, hold, after time.Time }

// planner is one scheduling pass: conservative backfill on the jobs' time
// limits, coarser than Slurm's (a GPU holds its first reservation's start;
// later reservations go after the last one, not into holes before it).
type planner struct {
	now   time.Time
	slots map[*node][]slot
}

func newPlanner(nodes []*node, now time.Time) *planner {
	p := &planner{now: now, slots: map[*node][]slot{}}
	for _, n := range nodes {
		s := make([]slot, len(n.busy))
		for i := range s {
			s[i].from = now
		}
		for _, j := range n.running {
			for _, g := range j.gpus {
				s[g].from = later(j.start.Add(j.tmpl.Limit), now)
			}
		}
		p.slots[n] = s
	}
	return p
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// candidates are the nodes j may run on, in node order: those with its GPU
// type (any type when none was asked for, or when no node of that type
// exists) and enough GPUs, in the partition of the first of them (a job
// waits in the partition it was submitted to).
func candidates(nodes []*node, j *job) []*node {
	typed := slices.ContainsFunc(nodes, func(n *node) bool { return n.spec.Type == j.tmpl.Model })
	var out []*node
	for _, n := range nodes {
		if typed && n.spec.Type != j.tmpl.Model || n.spec.GPUs < j.tmpl.GPUs {
			continue
		}
		if j.partition == "" {
			j.partition = n.spec.Partition
		}
		if n.spec.Partition == j.partition {
			out = append(out, n)
		}
	}
	return out
}

// place returns the first candidate node with enough GPUs free now that no
// earlier waiting job holds before j's time limit ends, and those GPUs.
// Otherwise j waits, and holds the GPUs where it can start earliest when
// that is within bfWindow.
func (p *planner) place(nodes []*node, j *job) (*node, []int) {
	k, limit := j.tmpl.GPUs, j.tmpl.Limit
	var best *node
	var bestAt time.Time
	var bestGPUs []int
	for _, n := range candidates(nodes, j) {
		s := p.slots[n]
		var free []int
		for i := range s {
			if !n.busy[i] && (s[i].hold.IsZero() || !p.now.Add(limit).After(s[i].hold)) && len(free) < k {
				free = append(free, i)
			}
		}
		if len(free) == k {
			for _, g := range free {
				s[g].from = p.now.Add(limit)
			}
			return n, free
		}
		// The earliest time k GPUs of n are free for a new reservation.
		gpus := make([]int, len(s))
		at := make([]time.Time, len(s))
		for i := range s {
			gpus[i], at[i] = i, s[i].from
			if !s[i].hold.IsZero() {
				at[i] = s[i].after
			}
		}
		slices.SortStableFunc(gpus, func(a, b int) int { return at[a].Compare(at[b]) })
		if t := at[gpus[k-1]]; best == nil || t.Before(bestAt) {
			best, bestAt, bestGPUs = n, t, gpus[:k]
		}
	}
	if best != nil && bestAt.Sub(p.now) <= bfWindow {
		for _, g := range bestGPUs {
			sl := &p.slots[best][g]
			if sl.hold.IsZero() {
				sl.hold = bestAt
			}
			sl.after = bestAt.Add(limit)
		}
	}
	return nil, nil
}

// begin starts j on n at t: the prolog's request to the agent, then the
// job's process appears on its GPUs.
func begin(ctx context.Context, j *job, n *node, gpus []int, t time.Time, opts MonthOptions) error {
	j.node, j.gpus, j.start = n, gpus, t
	j.end = t.Add(j.run)
	for _, g := range gpus {
		n.busy[g] = true
	}
	n.running = append(n.running, j)
	if err := j.writeProc(); err != nil {
		return err
	}
	j.register(0)
	refs := make([]hookproto.GPURef, len(gpus))
	for i, g := range gpus {
		refs[i] = hookproto.GPURef{SlurmIndex: g, Minor: -1}
	}
	req := hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{
		Cluster: Cluster, JobID: strconv.Itoa(j.id), Node: n.spec.Name, User: j.tmpl.User, UID: j.uid(),
		GID: 1000, Account: j.tmpl.Account, Partition: j.partition, Start: t, GPUs: refs,
	}}
	var resp hookproto.Response
	if err := n.agent.Handle(ctx, req, &resp); err != nil {
		return fmt.Errorf("demo: prolog of job %d: %w", j.id, err)
	}
	return nil
}

// finish ends j: the epilog's request (while the process is still on the
// GPUs, so that the final reading is a working one), the process goes,
// and slurmctld reports the job to jobcomp.
func finish(ctx context.Context, j *job, ctld controller) error {
	n := j.node
	end := hookproto.JobEnd{
		JobStart: hookproto.JobStart{Cluster: Cluster, JobID: strconv.Itoa(j.id), Node: n.spec.Name, User: j.tmpl.User, UID: j.uid()},
		End:      j.end, ExitKnown: true, ExitStatus: j.exit,
	}
	if j.state == slurmext.StateTimeout {
		end.ExitStatus, end.ExitSignal = 0, 15
	}
	var resp hookproto.Response
	if err := n.agent.Handle(ctx, hookproto.Request{Op: hookproto.OpEnd, End: &end}, &resp); err != nil {
		return fmt.Errorf("demo: epilog of job %d: %w", j.id, err)
	}
	n.sim.Unregister(j.pid)
	if err := os.RemoveAll(filepath.Join(n.procfs, strconv.Itoa(j.pid))); err != nil {
		return fmt.Errorf("demo: job %d: %w", j.id, err)
	}
	for _, g := range j.gpus {
		n.busy[g] = false
	}
	n.running = slices.DeleteFunc(n.running, func(x *job) bool { return x == j })

	return ctld.jobcomp(ctx, j)
}

// controller is slurmctld's host: jobcomp spools each record and the
// host's writer (the agent or serve, within seconds) ingests it, here at
// once.
type controller struct {
	deps jobcomp.Deps
	db   *store.DB
}

func (c controller) jobcomp(ctx context.Context, j *job) error {
	if _, err := jobcomp.Record(c.deps, j.record()); err != nil {
		return fmt.Errorf("demo: jobcomp of job %d: %w", j.id, err)
	}
	if _, err := ingest.DrainSpool(ctx, c.db, spool.Dir{Path: c.deps.SpoolDir}, ingest.Options{}, c.deps.Log); err != nil {
		return fmt.Errorf("demo: ingest jobcomp of job %d: %w", j.id, err)
	}
	return nil
}

func (j *job) uid() int {
	h := 0
	for _, c := range j.tmpl.User {
		h = h*31 + int(c)
	}
	return 2000 + h%1000
}

// writeProc creates the job's /proc/PID in the node's fixture procfs: the
// agent maps the PID to the job by SLURM_JOB_ID in its environment, as
// under proctrack/linuxproc, when its real uid (status) is the job's
// owner's. Its stat gives the start time that makes it one process
// (PID and start time: agent/identity.go); PIDs are not reused here.
func (j *job) writeProc() error {
	dir := filepath.Join(j.node.procfs, strconv.Itoa(j.pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: job %d proc: %w", j.id, err)
	}
	files := map[string]string{
		"stat":    fmt.Sprintf("%d (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", j.pid, j.pid),
		"comm":    "python\n",
		"environ": "PATH=/usr/bin:/bin\x00SLURM_JOB_ID=" + strconv.Itoa(j.id) + "\x00",
		"status":  fmt.Sprintf("Name:\tpython\nUid:\t%d\t%d\t%d\t%d\n", j.uid(), j.uid(), j.uid(), j.uid()),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return fmt.Errorf("demo: job %d proc: %w", j.id, err)
		}
	}
	return nil
}

// register puts the job's process on its GPUs with the usage at elapsed
// fraction x of its run.
func (j *job) register(x float64) {
	p := j.tmpl.Pattern
	used := len(j.gpus)
	if p.UsedGPUs >= 0 {
		used = min(p.UsedGPUs, used)
	}
	if used == 0 {
		return // holds its GPUs and never touches them
	}
	proc := sim.Process{PID: j.pid, Name: "python"}
	for _, g := range j.gpus[:used] {
		memFrac, util := p.usage(x, j.rng)
		total := j.node.devs[g].MemoryTotal
		proc.Usage = append(proc.Usage, sim.Usage{UUID: j.node.devs[g].UUID, Mem: uint64(memFrac * float64(total)), Util: uint32(math.Round(util))})
	}
	j.node.sim.Register(proc)
}

// advance moves every running job of the node to tick t: new usage on its
// GPUs, and the node's IO stall grown by what IO-bound jobs waited.
func (n *node) advance(t time.Time, interval time.Duration) error {
	stall := 0.0
	for _, j := range n.running {
		x := float64(t.Sub(j.start)) / float64(max(j.end.Sub(j.start), time.Second))
		j.register(min(x, 1))
		stall += j.tmpl.Pattern.IOWait
		if j.xid != 0 && !j.end.After(t.Add(interval)) {
			if err := sim.RecordXID(n.simDir, n.devs[j.gpus[0]].UUID, j.xid, t); err != nil {
				return fmt.Errorf("demo: job %d: %w", j.id, err)
			}
			j.xid = 0
		}
	}
	if stall > 0 {
		n.ioStall += uint64(min(stall, 1) * float64(interval/time.Microsecond))
		return n.writePressure()
	}
	return nil
}

// record is the job's scheduler view as slurmctld gives it to jobcomp.
func (j *job) record() slurmext.JobRecord {
	r := slurmext.JobRecord{
		Cluster: Cluster, JobID: strconv.Itoa(j.id), DisplayID: strconv.Itoa(j.id),
		ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		Name: j.tmpl.Name, User: j.tmpl.User, UID: j.uid(), Account: j.tmpl.Account,
		Partition: j.partition, QOS: "normal", State: j.state, Reason: "None",
		Submit: j.submit, Eligible: j.submit, Start: j.start, End: j.end, TimeLimit: j.tmpl.Limit,
		ExitStatus: j.exit, NodeList: j.node.spec.Name, NodeCount: 1, CPUs: 8 * j.tmpl.GPUs,
		ReqGPUs: j.tmpl.GPUs, ReqGPUType: j.tmpl.Model, Source: "jobcomp",
	}
	if j.state == slurmext.StateTimeout {
		r.ExitSignal = 15
	}
	if j.waited {
		r.Reason = "Resources"
	}
	if j.arrayID != 0 {
		r.ArrayJobID = strconv.Itoa(j.arrayID)
		r.ArrayTaskID = j.taskID
		r.DisplayID = fmt.Sprintf("%d_%d", j.arrayID, j.taskID)
	}
	tres := fmt.Sprintf("cpu=%d,gres/gpu=%d", r.CPUs, j.tmpl.GPUs)
	if j.tmpl.Model != "" {
		tres += fmt.Sprintf(",gres/gpu:%s=%d", j.tmpl.Model, j.tmpl.GPUs)
	}
	r.ReqTRES, r.AllocTRES = tres, tres
	return r
}

func drainAll(ctx context.Context, db *store.DB, nodes []*node, log *slog.Logger) error {
	for _, n := range nodes {
		if _, err := ingest.DrainSpool(ctx, db, n.spool, ingest.Options{}, log); err != nil {
			return fmt.Errorf("demo: drain spool of %s: %w", n.spec.Name, err)
		}
	}
	return nil
}
