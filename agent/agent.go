// Package agent is the node agent: it samples every GPU of a node on a fixed
// interval, attributes readings to Slurm jobs (whole devices for exclusive
// GPUs, processes for shared ones), keeps running profiles in the node's
// database so a restart resumes them, and finalises a job when its epilog
// says so. It also serves the hooks over a unix socket and, when asked,
// /metrics for Prometheus (metrics.go).
//
// It must not import go-nvml (it reads GPUs through gpu.Sampler) nor parse
// Slurm environments (the hooks do that).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
	"github.com/gpuprof/gpuprof/internal/safefs"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// Options configure an Agent.
type Options struct {
	Cluster       string
	Node          string
	Socket        string
	Interval      time.Duration
	FlushInterval time.Duration
	SeriesPoints  int
	Procfs        string
	CgroupRoot    string
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// Collector, when set, receives every finished profile (multi-node
	// mode): profiles are queued in the node database's outbox and
	// delivered with retries until acknowledged.
	Collector Pusher
	// Outbox is true when Collector is set.
	Outbox bool
	// SlurmdSpoolDir is slurmd's spool directory (a "%n" in it stands for
	// slurmd's node name, as in slurm.conf), where slurmstepd keeps a
	// socket per running step (NODE_JOBID.STEPID). When set, running jobs
	// whose epilog never came (node crash, epilog killed) are closed once
	// no step of theirs is left; empty turns the check off.
	// slurmext.SlurmdSpoolDir reads it from slurm.conf.
	SlurmdSpoolDir string
	// MetricsListener, when set, is where Run serves /metrics (see
	// ListenMetrics); the agent then also reads the GPUs no job holds, so
	// every GPU has its series. Run closes it.
	MetricsListener net.Listener
	// MetricsJobsToken, when not empty, is the bearer token of the
	// scraper allowed the per-job series (job id, user, account: what
	// `gpuprof show` tells only the job's owner and admins). A scrape
	// without it gets the node-level series only; with no token set, no
	// scrape gets per-job series (docs/prometheus.md).
	MetricsJobsToken string
	// Notices, when set, turns on the notices to jobs' users and the
	// cancel action (notice.go, docs/notices.md).
	Notices *notice.Config
	// Collectors are exported on /metrics beside the agent's own series:
	// what runs in the agent's process but is not the agent (the query
	// socket's refusal counter).
	Collectors []prometheus.Collector
	// Retention is what the node database keeps (store.Retention; its
	// Delivered is set from Outbox), applied every RetentionEvery and once
	// at start; RetentionEvery 0 turns pruning off. ConvertBelow: a
	// database in another vacuum mode is converted to incremental at start
	// when its file is smaller (store.DB.ConvertIncremental); 0: never.
	Retention      store.Retention
	RetentionEvery time.Duration
	ConvertBelow   int64
	// EnergyEvery is how often a GPU's energy counter is read between a
	// job's start and end (which always read it); 0 means
	// DefaultEnergyEvery. Each read costs ~4 ms on a real driver; power is
	// integrated in between (profile.GPU).
	EnergyEvery time.Duration
	// Forwarded builds the request of a prolog or epilog gpuprof-hook
	// forwarded (hookproto.OpHook) and the function to call with its
	// outcome (hooks.Forwarder.Request); nil refuses forwarded hooks, and
	// gpuprof-hook then runs the full hook.
	Forwarded func(fwd.Hook) (hookproto.Request, func(error), error)
}

// DefaultEnergyEvery is Options.EnergyEvery's default: at most one energy
// counter read a minute per GPU, 0.007 % of a core (docs/real-gpu.md).
const DefaultEnergyEvery = time.Minute

// Pusher delivers a profile to the collector; it must be idempotent.
type Pusher interface {
	Push(ctx context.Context, j profile.Job) error
}

// Agent samples GPUs and keeps job profiles. Create it with New and run it
// with Run.
//
// Its state is grouped by what guards it, one embedded struct per guard:
// node (set by New, read-only after: no lock), energyReads (the sampler's
// semaphore gpuSem), jobTable (jobTable.mu, promoted as a.mu: the jobs and
// everything that decides which job a reading or a record belongs to), and
// obs (its own lock, metrics.go). Notices are decided under a.mu (each
// job's noticeState) and sent through noticeQ by noticeLoop, which takes
// a.mu only to record the outcome on the job (setJobNotice). A method whose name ends in Locked is called with
// a.mu held.
type Agent struct {
	opts  Options
	gpus  gpu.Sampler
	db    *store.DB
	spool spool.Dir
	log   *slog.Logger
	proc  procReader
	now   func() time.Time

	// lookups are the allocation look-ups under way (learnAllocation),
	// each bounded by notices.squeue's timeout; Run waits for them.
	lookups sync.WaitGroup

	// otherConfigs are the configuration sums of forwarded hooks the
	// agent refused as another configuration's, logged once each
	// (firstOtherConfig).
	otherConfigsMu sync.Mutex
	otherConfigs   map[string]bool

	// gpuSem serialises use of the sampler (its contract) while letting a
	// caller give up waiting when its context ends.
	gpuSem chan struct{}
	// persistWake asks the persister to flush and drain the spool now.
	persistWake chan struct{}

	node
	energyReads
	jobTable

	// obs is what /metrics shows, under a lock of its own (metrics.go).
	obs      *observed
	registry *prometheus.Registry
	// jobRegistry is registry and the per-job series, for the scraper
	// holding MetricsJobsToken (metrics.go).
	jobRegistry *prometheus.Registry

	// noticeQ holds decided notices for noticeLoop (notice.go).
	noticeQ chan noticeReq
}

// node is what New learns of the node once: its GPUs and driver, and
// whether the kernel accounts IO delays. Read-only after New, so read
// without a lock.
type node struct {
	devices   []gpu.Device
	byUUID    map[string]gpu.Device
	mig       map[string]bool // UUIDs of MIG instances
	versions  gpu.Versions
	delayAcct bool
}

// energyReads is when each GPU's energy counter was last read, and which
// GPUs have none. Guarded by gpuSem: only a sample, which holds it, reads
// or writes it.
type energyReads struct {
	energyAt map[string]time.Time
	noEnergy map[string]bool
}

// jobTable is every job the agent holds and what it needs to decide which
// job a process, a reading, a hook or a stored row belongs to. One mutex
// guards all three groups because its steps span them: a prolog takes a
// job out of orphans into jobs under the names it learns, a sample
// attributes PIDs to jobs and starts jobs found from their processes,
// reconciliation moves jobs from jobs to ended or orphans. Splitting it
// would make each of those steps take several locks in a fixed order for
// no gain: the tick takes it after its GPU calls, to attribute and observe
// the readings (with the procfs reads of new PIDs and IO counters that
// needs). No one holds it across a GPU or database call; the one disk
// write under it is reconcile's spooling of an abandoned job's record.
type jobTable struct {
	mu sync.Mutex
	jobLifecycle
	pidMap
	hookNames
}

// jobLifecycle is the jobs the agent samples and those it has let go of
// but still answers for. Guarded by jobTable.mu.
type jobLifecycle struct {
	jobs  map[string]*jobState // by job id
	ended map[string]endedRun  // recently ended jobs, see discover.go
	// stored caches what the database says of jobs found from their
	// processes: whether they finished already (discover.go).
	stored map[string]storedCheck
	// orphans are running rows of jobs slurmd no longer runs (merge.go).
	orphans map[string]*orphan
	// unwritten are finished profiles neither the spool nor the database
	// took (disk full): they stay finished here and are written when the
	// disk takes them (pending.go).
	unwritten []profile.Job
	// moved are keys the agent flushed a running profile under before it
	// learnt slurmd's names; the next flush deletes their rows.
	moved []profile.Key
}

// pidMap attributes GPU processes to jobs (identity.go). Guarded by
// jobTable.mu.
type pidMap struct {
	pids map[int]pidInfo
	// sluids maps the SLUIDs prologs named (Slurm 25.11+) to job ids: a
	// 26.05 job's cgroup is named by its SLUID.
	sluids map[string]string
	// foreignLog and foreignQuiet rate-limit the log lines about foreign
	// processes, per uid.
	foreignLog   map[int]time.Time
	foreignQuiet map[int]int
}

// hookNames are the cluster and node names the hooks last used, given to
// jobs found without a prolog so their keys match the epilog's (merge.go).
// Guarded by jobTable.mu.
type hookNames struct {
	lastCluster, lastNode string
}

type jobState struct {
	prof     profile.Job
	goneOnce bool    // no step of the job was found at the previous check
	cgroupIO float64 // last cgroup io.pressure total, seconds (valid with hasCG)
	hasCG    bool
	cgMisses int                // samples since the cgroup was last looked for in vain
	ticks    map[procKey]uint64 // last blkio ticks per process
	lastIO   time.Time
	gapFrom  time.Time // set when resumed after a sampling gap
	nodeIO   ioCounter // node IO counters at the job's previous reading
	notes    noticeState

	// provisional is true while some of the profile's fields (its GPUs,
	// maybe its owner) came from its processes, not from a Slurm record:
	// the first Slurm record replaces them (takeSlurmRecordLocked), and no
	// notice goes to the job until then.
	provisional bool
	// slurmOwner is true when the job's owner came from a Slurm record:
	// only then may a process's environment name the job (identity.go).
	slurmOwner bool
	// sluid is the job's SLUID, when a prolog named it (or it was learnt).
	sluid string
	// foreignNotes counts the foreign-process notes of the profile.
	foreignNotes int
}

// pidInfo is what the agent learnt of a GPU process when it first saw it,
// and the job it is attributed to now (identity.go).
type pidInfo struct {
	job    string // the job attributed (procOwn) or, for procOtherJob, the job it belongs to
	class  procClass
	name   string
	facts  procFacts
	logged bool // named in the log as a foreign process
	// stat is the path of the process's /proc/PID/stat, read at every
	// sample for its start time (mapPIDs).
	stat string
}

type ioCounter struct {
	psi       float64
	hasPSI    bool
	iowait    uint64
	total     uint64
	hasCPU    bool
	lastValid bool
}

// New prepares an agent. It reads the GPU inventory once; Run does the rest.
func New(ctx context.Context, opts Options, sampler gpu.Sampler, db *store.DB, sp spool.Dir, log *slog.Logger) (*Agent, error) {
	if opts.Interval <= 0 {
		return nil, errors.New("agent: interval must be positive")
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 10 * opts.Interval
	}
	if opts.Procfs == "" {
		opts.Procfs = "/proc"
	}
	if opts.CgroupRoot == "" {
		opts.CgroupRoot = "/sys/fs/cgroup"
	}
	a := &Agent{
		opts:        opts,
		gpus:        sampler,
		db:          db,
		spool:       sp,
		log:         log,
		proc:        procReader{procfs: opts.Procfs, cgroupRoot: opts.CgroupRoot},
		now:         opts.Clock,
		gpuSem:      make(chan struct{}, 1),
		persistWake: make(chan struct{}, 1),
		jobTable: jobTable{
			jobLifecycle: jobLifecycle{
				jobs:    map[string]*jobState{},
				ended:   map[string]endedRun{},
				stored:  map[string]storedCheck{},
				orphans: map[string]*orphan{},
			},
			pidMap: pidMap{
				pids:         map[int]pidInfo{},
				sluids:       map[string]string{},
				foreignLog:   map[int]time.Time{},
				foreignQuiet: map[int]int{},
			},
			hookNames: hookNames{lastCluster: opts.Cluster, lastNode: opts.Node},
		},
		obs:         newObserved(),
		registry:    prometheus.NewRegistry(),
		jobRegistry: prometheus.NewRegistry(),
	}
	a.registry.MustRegister(newMetricsCollector(a, false))
	a.jobRegistry.MustRegister(newMetricsCollector(a, true))
	for _, c := range opts.Collectors {
		if err := a.registry.Register(c); err != nil {
			return nil, fmt.Errorf("agent: metrics: %w", err)
		}
		if err := a.jobRegistry.Register(c); err != nil {
			return nil, fmt.Errorf("agent: metrics: %w", err)
		}
	}
	if opts.Notices != nil {
		a.noticeQ = make(chan noticeReq, max(opts.Notices.Queue, 1))
	}
	if a.now == nil {
		a.now = time.Now
	}
	devs, err := sampler.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent: GPU inventory: %w", err)
	}
	a.devices = devs
	a.byUUID = gpu.ByUUID(devs)
	a.mig = map[string]bool{}
	for _, d := range devs {
		for _, m := range d.MIG {
			a.mig[m.UUID] = true
		}
	}
	a.energyAt, a.noEnergy = map[string]time.Time{}, map[string]bool{}
	if a.opts.EnergyEvery <= 0 {
		a.opts.EnergyEvery = DefaultEnergyEvery
	}
	if v, err := sampler.Versions(ctx); err == nil {
		a.versions = v
	} else {
		log.Warn("driver versions unavailable", "err", err)
	}
	a.delayAcct = a.proc.delayAcct()
	return a, nil
}

// Run serves the socket, samples and persists until ctx ends, then flushes
// the running profiles once more and returns.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.resume(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	resumed := len(a.jobs)
	a.mu.Unlock()
	ln, err := listen(a.opts.Socket)
	if err != nil {
		return err
	}
	a.log.Info("agent started", "node", a.opts.Node, "gpus", len(a.devices), "interval", a.opts.Interval,
		"socket", a.opts.Socket, "jobs_resumed", resumed, "delayacct", a.delayAcct)

	var wg sync.WaitGroup
	wg.Go(func() { a.serve(ctx, ln) })
	wg.Go(func() { a.persistLoop(ctx) })
	wg.Go(func() { a.reconcileLoop(ctx) })
	if a.opts.Collector != nil {
		wg.Go(func() { a.deliverLoop(ctx) })
	}
	if a.opts.Notices != nil {
		wg.Go(func() { a.noticeLoop(ctx) })
	}
	if a.opts.RetentionEvery > 0 {
		wg.Go(func() { a.retentionLoop(ctx) })
	}
	if ml := a.opts.MetricsListener; ml != nil {
		wg.Go(func() { a.serveMetrics(ctx, ml) })
		a.log.Info("metrics endpoint", "addr", ml.Addr().String())
	}
	a.sampleLoop(ctx)
	_ = ln.Close()
	wg.Wait()
	a.lookups.Wait()

	// Final flush with a fresh context: ctx is already cancelled.
	fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.writeUnwritten(fctx)
	a.flush(fctx)
	a.drainSpool(fctx)
	_ = os.Remove(a.opts.Socket)
	a.log.Info("agent stopped")
	return nil
}

// resume loads the running profiles this node left in the database.
func (a *Agent) resume(ctx context.Context) error {
	jobs, err := a.db.RunningJobs(ctx, "", "") // the node database holds this node only
	if err != nil {
		return fmt.Errorf("agent: load running jobs: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for _, j := range jobs {
		// Names unlike the agent's own guess came from slurmd's hooks.
		if j.Cluster != a.opts.Cluster || j.Node != a.opts.Node {
			a.learnNamesLocked(j.Cluster, j.Node)
		}
	}
	for _, j := range jobs {
		a.rekeyLocked(&j, a.lastCluster, a.lastNode)
		if st, dup := a.jobs[j.JobID]; dup && !j.LastSample.After(st.prof.LastSample) {
			continue // the same job under other names, with fewer readings
		}
		if o, dup := a.orphans[j.JobID]; dup && !j.LastSample.After(o.prof.LastSample) {
			continue
		}
		if !a.mayRunLocked(j.JobID, j.UID, j.Start, now) {
			a.orphans[j.JobID] = &orphan{prof: j}
			a.log.Info("running row of a job slurmd no longer runs; closing it by the no-epilog rule", "job", j.JobID)
			continue
		}
		st := &jobState{prof: j, ticks: map[procKey]uint64{}}
		st.markProvenance()
		st.gapFrom = j.LastSample
		if st.gapFrom.IsZero() {
			st.gapFrom = j.Start
		}
		a.jobs[j.JobID] = st
		a.log.Info("resumed job", "job", j.JobID, "last_sample", j.LastSample)
	}
	return nil
}

func listen(path string) (net.Listener, error) {
	// The socket is bound, cleared and chmod'ed by path: its directory's
	// whole path must be one no other account can change.
	d, err := safefs.MkdirPrivate(filepath.Dir(path), 0o755)
	if err != nil {
		return nil, fmt.Errorf("agent: socket dir: %w", err)
	}
	d.Close()
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("agent: another agent is listening on %s", path)
	}
	_ = os.Remove(path) // stale socket of a dead agent
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("agent: listen: %w", err)
	}
	// Only root (the hooks) may talk to the agent.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("agent: socket mode: %w", err)
	}
	return ln, nil
}

func (a *Agent) serve(ctx context.Context, ln net.Listener) {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error("accept", "err", err)
			}
			return
		}
		go a.handle(ctx, conn)
	}
}

func (a *Agent) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var req hookproto.Request
	dec := json.NewDecoder(&limitedReader{r: conn, n: 1 << 20})
	resp := hookproto.Response{OK: true}
	if err := dec.Decode(&req); err != nil {
		resp = hookproto.Response{Error: "bad request: " + err.Error()}
	} else if err := a.Handle(ctx, req, &resp); err != nil {
		resp.OK, resp.Error = false, err.Error()
	}
	_ = json.NewEncoder(conn).Encode(resp)
}

// Handle executes one request; it is what the socket calls and what tests
// call directly.
func (a *Agent) Handle(ctx context.Context, req hookproto.Request, resp *hookproto.Response) error {
	switch req.Op {
	case hookproto.OpStart:
		if req.Start == nil {
			return errors.New("start without job")
		}
		return a.startJob(ctx, *req.Start)
	case hookproto.OpEnd:
		if req.End == nil {
			return errors.New("end without job")
		}
		err := a.endJob(ctx, *req.End)
		resp.Held = errors.Is(err, errHeld)
		return err
	case hookproto.OpHook:
		if req.Hook == nil {
			return errors.New("hook without its environment")
		}
		if a.opts.Forwarded == nil {
			return errors.New("this agent takes no forwarded hook")
		}
		inner, finish, err := a.opts.Forwarded(*req.Hook)
		if errors.Is(err, fwd.ErrOtherConfig) && a.firstOtherConfig(req.Hook.ConfigSum) {
			a.log.Warn("hooks read another configuration than the agent loaded; they run whole (slower) until the agent restarts on it",
				"err", err)
		}
		if err != nil {
			return err
		}
		if inner.Op != hookproto.OpStart && inner.Op != hookproto.OpEnd {
			return fmt.Errorf("forwarded hook built a %q request", inner.Op)
		}
		err = a.Handle(ctx, inner, resp)
		finish(err)
		return err
	case hookproto.OpStatus:
		a.mu.Lock()
		for id := range a.jobs {
			resp.Running = append(resp.Running, id)
		}
		a.mu.Unlock()
		sort.Strings(resp.Running)
		resp.Devices = len(a.devices)
		return nil
	}
	return fmt.Errorf("unknown op %q", req.Op)
}

// firstOtherConfig reports whether sum is a configuration sum no
// forwarded hook brought before: the agent says once per edit of the
// file that the hooks run whole, not once per job.
func (a *Agent) firstOtherConfig(sum string) bool {
	a.otherConfigsMu.Lock()
	defer a.otherConfigsMu.Unlock()
	if a.otherConfigs == nil {
		a.otherConfigs = map[string]bool{}
	}
	if a.otherConfigs[sum] || len(a.otherConfigs) >= 64 {
		return false
	}
	a.otherConfigs[sum] = true
	return true
}

type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request too large")
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}

func (a *Agent) resolve(refs []hookproto.GPURef) ([]gpu.Device, []int, []string) {
	return hookproto.Resolve(a.devices, refs)
}

func (a *Agent) startJob(ctx context.Context, js hookproto.JobStart) error {
	if err := jobIDError("start", js.JobID); err != nil {
		return err
	}
	if js.Start.IsZero() {
		js.Start = a.now()
	}
	a.mu.Lock()
	a.learnNamesLocked(js.Cluster, js.Node)
	js.Cluster, js.Node = orDefault(js.Cluster, a.lastCluster), orDefault(js.Node, a.lastNode)
	js.SLUID = validSLUID(js.SLUID)
	if st, ok := a.jobs[js.JobID]; ok {
		// A repeated prolog changes nothing the first one set; a prolog
		// (direct or spooled) of a job the agent found from its processes
		// makes it Slurm's.
		a.takePrologLocked(st, js)
		a.publishLocked(nil, nil, nil)
		a.mu.Unlock()
		return nil
	}
	if o, ok := a.orphans[js.JobID]; ok {
		// A prolog now: the job runs after all (requeued onto this node).
		delete(a.orphans, js.JobID)
		a.moved = append(a.moved, o.prof.Key)
	}
	devs, idx, problems := a.resolve(js.GPUs)
	j := hookproto.NewProfile(js, devs, idx, a.opts.Interval, a.opts.SeriesPoints, a.versions, profile.SourceAgent)
	for _, p := range problems {
		j.MarkPartial(p)
		a.log.Warn("unresolved GPU", "job", js.JobID, "problem", p)
	}
	a.jobs[js.JobID] = &jobState{prof: j, ticks: map[procKey]uint64{}, slurmOwner: true, sluid: js.SLUID}
	if js.SLUID != "" {
		a.sluids[js.SLUID] = js.JobID
	}
	a.publishLocked(nil, nil, nil)
	a.mu.Unlock()
	a.log.Info("job started", "job", js.JobID, "user", js.User, "gpus", len(devs))
	a.learnAllocation(ctx, js.JobID)

	// A first reading at the very start, so a job shorter than the interval
	// still has one; then make the start durable.
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	a.sample(sctx, js.JobID)
	a.wakePersister()
	return nil
}

func (a *Agent) endJob(ctx context.Context, je hookproto.JobEnd) error {
	if err := jobIDError("end", je.JobID); err != nil {
		return err
	}
	if je.End.IsZero() {
		je.End = a.now()
	}
	// A last reading, best effort and short: the epilog is waiting.
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	a.sample(sctx, je.JobID)
	cancel()

	a.mu.Lock()
	a.learnNamesLocked(je.Cluster, je.Node)
	je.Cluster, je.Node = orDefault(je.Cluster, a.lastCluster), orDefault(je.Node, a.lastNode)
	st, ok := a.jobs[je.JobID]
	if ok {
		if st.provisional && je.User != "" && je.UID >= 0 {
			// The epilog is a Slurm record: the owner and GPUs its
			// environment names replace what the processes suggested.
			a.takeSlurmRecordLocked(st, je.JobStart)
		}
		delete(a.jobs, je.JobID)
	}
	o, orphaned := a.orphans[je.JobID]
	delete(a.orphans, je.JobID)
	waiting := a.unwrittenLocked(je.JobID)
	switch {
	case orphaned && !ok:
		ost := &jobState{prof: o.prof}
		ost.markProvenance()
		a.rememberEnded(je.JobID, a.now(), ost)
	case ok || !waiting:
		a.rememberEnded(je.JobID, a.now(), st)
	}
	a.reattributeLocked()
	a.publishLocked(nil, nil, nil)
	a.mu.Unlock()

	var j profile.Job
	switch {
	case ok:
		j = st.prof
	case orphaned:
		// A row no agent sampled, closed by its epilog after all.
		j = o.prof
	case waiting:
		// A repeated epilog of a job whose end record waits for the disk.
		return a.retryUnwritten(ctx, je.JobID)
	default:
		// The agent never saw the start (it was down, or restarted without
		// its database row): adopt what the database has, else start empty.
		got, err := a.db.GetJob(ctx, profile.Key{Cluster: je.Cluster, JobID: je.JobID, Node: je.Node})
		switch {
		case err == nil && got.Status == profile.StatusFinished:
			return nil
		case err == nil:
			j = got
			j.MarkPartial("agent restarted without this job's recent readings")
		default:
			js := je.JobStart
			devs, idx, _ := a.resolve(js.GPUs)
			j = hookproto.NewProfile(js, devs, idx, a.opts.Interval, a.opts.SeriesPoints, a.versions, profile.SourceAgent)
			j.MarkPartial("agent did not see the job start")
		}
	}
	a.addAccounting(ctx, &j)
	a.finalNotices(ctx, &j)
	j.ExitKnown, j.ExitStatus, j.ExitSignal = je.ExitKnown, je.ExitStatus, je.ExitSignal
	j.Finish(je.End)
	if err := a.writeFinished(ctx, j); err != nil {
		// Not durable. The job has ended all the same: it stays finished
		// here (never running again, never sharing its GPUs with the next
		// job) until the disk takes its record (pending.go); the epilog is
		// told, and spools what it can itself.
		a.holdUnwritten(j, err)
		return fmt.Errorf("finish job %s: %w: %v", je.JobID, errHeld, err)
	}
	a.log.Info("job finished", "job", je.JobID, "partial", j.Partial)
	a.wakePersister()
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // profiles are plain data: marshalling cannot fail
	}
	return b
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// addAccounting fills a GPU with no readings from the driver's accounting
// records (kept after processes exit), for jobs too short to sample.
func (a *Agent) addAccounting(ctx context.Context, j *profile.Job) {
	for i := range j.GPUs {
		g := &j.GPUs[i]
		if g.MemSamples > 0 && g.ProcSamples > 0 {
			continue
		}
		if !a.acquire(ctx) {
			return
		}
		stats, err := a.gpus.Accounting(ctx, g.UUID)
		a.release()
		if err != nil {
			continue
		}
		applyAccounting(j, g, stats)
	}
}

// applyAccounting uses the accounting records of processes that started
// within the job's window on an exclusive GPU.
func applyAccounting(j *profile.Job, g *profile.GPU, stats []gpu.AccountingStats) {
	if g.Shared {
		return
	}
	used := false
	for _, s := range stats {
		if s.Start.Before(j.Start.Add(-time.Second)) {
			continue
		}
		g.MemPeak = max(g.MemPeak, s.MaxMemory)
		g.UtilMax = max(g.UtilMax, min(s.GPUUtil, 100))
		g.ProcSamples++
		used = true
	}
	if used {
		j.MarkPartial("short job: memory peak and utilisation maximum from NVML accounting")
	}
}

func (a *Agent) acquire(ctx context.Context) bool {
	select {
	case a.gpuSem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (a *Agent) release() { <-a.gpuSem }
