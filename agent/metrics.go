package agent

// The agent's /metrics endpoint (OpenMetrics or Prometheus text, for sites
// that already run Prometheus). It is a view of what the sampling loop last
// saw, never a source of its own: a scrape copies a small snapshot under
// obs.mu and formats it. It never calls the GPU backend, never touches
// SQLite and never takes the agent's main lock, so a slow or stuck scraper
// cannot delay a sampling tick. The profiles in the database stay the
// source of truth for reports; see docs/prometheus.md.

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/internal/metricsrv"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// Reasons a sample was dropped, the values of the reason label of
// gpuprof_agent_samples_dropped_total.
const (
	dropTickMissed  = "tick_missed" // the loop was busy when a tick was due
	dropReadError   = "read_error"  // a GPU reading failed
	dropImplausible = "implausible" // gpu.Sanitize dropped an absurd value
)

// MetricsHandler serves the agent's metrics from its own registry (not the
// package-global default one), in OpenMetrics when the scraper asks for it.
// The per-job series (job id, user, account, the job's own use) go only to
// a scrape bearing Options.MetricsJobsToken: the endpoint may be a socket
// every local user can reach, and a job is its owner's and the admins'
// to see (docs/security.md). Node-level series go to every scrape.
func (a *Agent) MetricsHandler() http.Handler {
	// No limit on requests in flight: a stuck client would hold a slot
	// and get Prometheus refused, while a scrape costs only a copy.
	node := promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
	jobs := promhttp.HandlerFor(a.jobRegistry, promhttp.HandlerOpts{EnableOpenMetrics: true})
	token := a.opts.MetricsJobsToken
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && bearerIs(r.Header.Get("Authorization"), token) {
			jobs.ServeHTTP(w, r)
			return
		}
		node.ServeHTTP(w, r)
	})
}

// bearerIs reports whether an Authorization header carries the bearer
// token want, in time that does not depend on where they differ.
func bearerIs(header, want string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// serveMetrics serves /metrics on ln until ctx ends (metricsrv.Serve).
func (a *Agent) serveMetrics(ctx context.Context, ln net.Listener) {
	if err := metricsrv.Serve(ctx, ln, a.MetricsHandler()); err != nil {
		a.log.Error("metrics endpoint stopped", "err", err)
	}
}

// observed is what the scrape reads: the latest reading of every GPU, the
// running jobs' GPUs and the agent's health. Writers (the sampling,
// persisting and delivery loops and the hooks) hold mu only to store
// values; the scrape holds it only to copy them.
type observed struct {
	mu     sync.Mutex
	node   string
	gpus   map[string]gpu.DeviceSample // latest reading by UUID, while it has a value
	energy map[string]uint64           // latest energy counter reading by UUID, mJ
	xids   map[string]uint64           // XID events seen by UUID since start
	jobs   []jobGPU

	lastTick   time.Time
	lag        time.Duration
	dropped    map[string]uint64
	gpuErrAt   time.Time
	gpuErrKind string

	outboxKnown bool
	outboxLen   int
	outboxSeen  map[profile.Key]time.Time // created_at of queued profiles seen

	spoolKnown bool
	spoolFiles int
	spoolBytes int64
}

// jobGPU is one running job on one of its GPUs, with the job's own share
// of the device (the sum over its processes), and the activity GPM
// measured in the job's scope (profile.ActivityScope*: on a shared GPU the
// device's, all its jobs together).
type jobGPU struct {
	gpu, job, user, account, partition string
	mem                                gpu.Opt[uint64]
	util                               gpu.Opt[uint32]
	sm, tensor                         gpu.Opt[float64]
	scope                              string
	// shards the job holds of this GPU (profile.Job.Shards), 0 for the
	// whole GPU or while its allocation is not known.
	shards int
}

// obsSnapshot is a copy of observed, formatted without a lock.
type obsSnapshot struct {
	node        string
	gpus        []gpu.DeviceSample
	energy      map[string]uint64
	xids        map[string]uint64
	jobs        []jobGPU
	lastTick    time.Time
	lag         time.Duration
	dropped     map[string]uint64
	gpuErrAt    time.Time
	gpuErrKind  string
	outboxKnown bool
	outboxLen   int
	outboxOld   time.Time
	spoolKnown  bool
	spoolFiles  int
	spoolBytes  int64
}

func newObserved() *observed {
	return &observed{
		gpus:       map[string]gpu.DeviceSample{},
		energy:     map[string]uint64{},
		xids:       map[string]uint64{},
		dropped:    map[string]uint64{dropTickMissed: 0, dropReadError: 0, dropImplausible: 0},
		outboxSeen: map[profile.Key]time.Time{},
	}
}

func (o *observed) snapshot() obsSnapshot {
	o.mu.Lock()
	s := obsSnapshot{
		node: o.node, jobs: append([]jobGPU(nil), o.jobs...),
		lastTick: o.lastTick, lag: o.lag, gpuErrAt: o.gpuErrAt, gpuErrKind: o.gpuErrKind,
		outboxKnown: o.outboxKnown, outboxLen: o.outboxLen,
		spoolKnown: o.spoolKnown, spoolFiles: o.spoolFiles, spoolBytes: o.spoolBytes,
		gpus:    make([]gpu.DeviceSample, 0, len(o.gpus)),
		xids:    make(map[string]uint64, len(o.xids)),
		energy:  make(map[string]uint64, len(o.energy)),
		dropped: make(map[string]uint64, len(o.dropped)),
	}
	for k, v := range o.energy {
		s.energy[k] = v
	}
	for _, ds := range o.gpus {
		s.gpus = append(s.gpus, ds)
	}
	for k, v := range o.xids {
		s.xids[k] = v
	}
	for k, v := range o.dropped {
		s.dropped[k] = v
	}
	for _, t := range o.outboxSeen {
		if s.outboxOld.IsZero() || t.Before(s.outboxOld) {
			s.outboxOld = t
		}
	}
	o.mu.Unlock()
	return s
}

// tick records a sampling tick due at due and started at now: its lag, and
// the ticks missed since the previous one (time.Ticker drops ticks a busy
// receiver cannot take).
func (o *observed) tick(due, now time.Time, interval time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.lastTick.IsZero() && interval > 0 {
		if missed := int64((due.Sub(o.lastTick)+interval/2)/interval) - 1; missed > 0 {
			o.dropped[dropTickMissed] += uint64(missed)
		}
	}
	o.lastTick, o.lag = due, max(now.Sub(due), 0)
}

func (o *observed) drop(reason string, n int) {
	if n <= 0 {
		return
	}
	o.mu.Lock()
	o.dropped[reason] += uint64(n)
	o.mu.Unlock()
}

// gpuError records a failed GPU backend call, by a short class only: the
// message (with UUIDs, paths) would make a series per distinct text.
func (o *observed) gpuError(at time.Time, err error) {
	kind := "error"
	switch {
	case errors.Is(err, gpu.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		kind = "timeout"
	case errors.Is(err, gpu.ErrNotFound):
		kind = "not_found"
	case errors.Is(err, context.Canceled):
		return // the agent is stopping, or a hook gave up waiting
	}
	o.mu.Lock()
	o.gpuErrAt, o.gpuErrKind = at, kind
	o.mu.Unlock()
}

// outbox records the outbox length and the profiles delivery just loaded
// (queued at their creation time) or removed.
func (o *observed) outbox(n int, seen []store.OutboxItem, gone []profile.Key) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outboxKnown, o.outboxLen = true, n
	for _, it := range seen {
		o.outboxSeen[it.Key] = it.CreatedAt
	}
	for _, k := range gone {
		delete(o.outboxSeen, k)
	}
	if n == 0 {
		clear(o.outboxSeen)
	}
}

// energyRead records a GPU's energy counter as just read.
func (o *observed) energyRead(uuid string, mJ uint64) {
	o.mu.Lock()
	o.energy[uuid] = mJ
	o.mu.Unlock()
}

func (o *observed) spool(files int, bytes int64) {
	o.mu.Lock()
	o.spoolKnown, o.spoolFiles, o.spoolBytes = true, files, bytes
	o.mu.Unlock()
}

// publishLocked stores what a sampling tick saw: readings of the jobs' GPUs
// and, with metrics on, of the GPUs no job holds; the running jobs with
// their own shares. readings nil (a hook's start or end) updates the job
// list only, keeping the shares last measured. a.mu must be held.
func (a *Agent) publishLocked(readings map[string]reading, idle map[string]reading, xids []gpu.XIDEvent) {
	var jobs []jobGPU
	for _, st := range a.jobs {
		for _, g := range st.prof.GPUs {
			jg := jobGPU{gpu: g.UUID, job: st.prof.JobID, user: st.prof.User,
				account: st.prof.Account, partition: st.prof.Partition}
			if st.prof.AllocKnown {
				jg.shards = st.prof.Shards
			}
			if readings != nil {
				r := readings[g.UUID]
				if r.err == nil || len(r.procs) > 0 {
					jg.mem, jg.util = a.ownShare(st.prof.JobID, r.procs, nil)
				}
				if act := a.jobActivity(&st.prof, r.ds, a.now()); r.err == nil && act.Valid {
					jg.sm, jg.tensor = act.Value.SM, act.Value.Tensor
					switch {
					case a.mig[g.UUID]:
						jg.scope = profile.ActivityScopeMIG
					case a.holders(g.UUID) > 1:
						jg.scope = profile.ActivityScopeSharedGPU
					default:
						jg.scope = profile.ActivityScopeGPU
					}
				}
			}
			jobs = append(jobs, jg)
		}
	}
	sort.Slice(jobs, func(i, j int) bool {
		if jobs[i].gpu != jobs[j].gpu {
			return jobs[i].gpu < jobs[j].gpu
		}
		return jobs[i].job < jobs[j].job
	})
	o := a.obs
	o.mu.Lock()
	defer o.mu.Unlock()
	if readings == nil {
		prev := map[[2]string]jobGPU{}
		for _, jg := range o.jobs {
			prev[[2]string{jg.gpu, jg.job}] = jg
		}
		for i := range jobs {
			if p, ok := prev[[2]string{jobs[i].gpu, jobs[i].job}]; ok {
				jobs[i].mem, jobs[i].util = p.mem, p.util
				jobs[i].sm, jobs[i].tensor, jobs[i].scope = p.sm, p.tensor, p.scope
			}
		}
	}
	o.jobs = jobs
	o.node = a.lastNode
	// A GPU whose reading failed loses its series rather than showing
	// the last good values as if they were current.
	keep := func(uuid string, ds gpu.DeviceSample) {
		if ds.Util.Valid || ds.MemoryUsed.Valid || ds.PowerMW.Valid || ds.TempC.Valid {
			ds.UUID = uuid
			o.gpus[uuid] = ds
		} else {
			delete(o.gpus, uuid)
		}
	}
	for _, rs := range []map[string]reading{readings, idle} {
		for uuid, r := range rs {
			keep(uuid, r.ds)
		}
	}
	for _, x := range xids {
		o.xids[x.UUID]++
	}
}

// readIdle reads the devices no running job holds, for the per-GPU series
// (an unallocated GPU at 0 % is worth seeing too), with their energy
// counters every EnergyEvery. The caller holds gpuSem.
func (a *Agent) readIdle(ctx context.Context, want map[string]bool, now time.Time) map[string]reading {
	idle := map[string]reading{}
	for _, d := range a.devices {
		if want[d.UUID] {
			continue
		}
		ds, err := a.gpus.SampleDevice(ctx, d.UUID)
		if err != nil {
			a.obs.gpuError(time.Now(), err)
			a.obs.drop(dropReadError, 1)
			idle[d.UUID] = reading{} // no value: the series go
			continue
		}
		r := reading{dev: d, energy: a.readEnergy(ctx, d.UUID, now, false)}
		ds, dropped := gpu.Sanitize(ds, d.MemoryTotal)
		a.obs.drop(dropImplausible, dropped)
		r.ds = ds
		idle[d.UUID] = r
	}
	return idle
}

// spoolUsage counts the records waiting in the spool directory and their
// bytes, from the directory listing alone (no record is read).
func spoolUsage(dir string) (files int, bytes int64, err error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since the listing
		}
		files++
		bytes += info.Size()
	}
	return files, bytes, nil
}

// metricsCollector turns a snapshot of observed into metrics at each
// scrape. Descriptions are fixed, so the registry checks them once.
type metricsCollector struct {
	a *Agent
	// jobs: the per-job series too (MetricsHandler).
	jobs bool

	util, memUsed, memTotal, power, energy, temp, xid *prometheus.Desc
	sm, occupancy, tensor, dram, fp                   *prometheus.Desc
	jobInfo, jobMem, jobUtil, jobSM, jobTensor        *prometheus.Desc
	jobShards                                         *prometheus.Desc
	runningJobs, lag, lastTick, dropped               *prometheus.Desc
	gpuErrAt, gpuErrInfo                              *prometheus.Desc
	outboxLen, outboxAge, spoolFiles, spoolBytes      *prometheus.Desc
}

func newMetricsCollector(a *Agent, jobs bool) *metricsCollector {
	gpuLabels := []string{"gpu", "index", "model", "node"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &metricsCollector{
		a:        a,
		jobs:     jobs,
		util:     d("gpuprof_gpu_utilization_percent", "SM utilisation of the GPU over the driver's last sample period, percent.", gpuLabels...),
		memUsed:  d("gpuprof_gpu_memory_used_bytes", "GPU memory in use.", gpuLabels...),
		memTotal: d("gpuprof_gpu_memory_total_bytes", "GPU memory in all.", gpuLabels...),
		power:    d("gpuprof_gpu_power_watts", "Power draw of the GPU.", gpuLabels...),
		energy:   d("gpuprof_gpu_energy_joules_total", "Energy the GPU consumed since the driver loaded, as its counter read at most every minute.", gpuLabels...),
		temp:     d("gpuprof_gpu_temperature_celsius", "GPU core temperature.", gpuLabels...),
		xid:      d("gpuprof_gpu_xid_errors_total", "XID errors the driver reported for the GPU since the agent started.", gpuLabels...),

		sm:        d("gpuprof_gpu_sm_active_percent", "Share of time the SMs were busy, averaged over the SMs, over the last sampling interval (GPM; Hopper and later).", gpuLabels...),
		occupancy: d("gpuprof_gpu_sm_occupancy_percent", "Warps resident on the SMs against their maximum, over the last sampling interval (GPM).", gpuLabels...),
		tensor:    d("gpuprof_gpu_tensor_active_percent", "Share of time a tensor-core pipe was busy, over the last sampling interval (GPM).", gpuLabels...),
		dram:      d("gpuprof_gpu_dram_bandwidth_percent", "DRAM bandwidth used against the peak, over the last sampling interval (GPM).", gpuLabels...),
		fp:        d("gpuprof_gpu_fp_active_percent", "Share of time the FP64, FP32 or FP16 pipe was busy, over the last sampling interval (GPM).", append(gpuLabels, "precision")...),

		jobInfo: d("gpuprof_gpu_job_info", "1 while the Slurm job holds the GPU; join the gpu series on the gpu label.", "gpu", "job", "user", "account", "partition"),
		jobMem:  d("gpuprof_job_gpu_memory_used_bytes", "GPU memory used by the job's own processes (its share of a shared GPU).", "gpu", "job"),
		jobUtil: d("gpuprof_job_gpu_utilization_percent", "SM utilisation of the job's own processes on the GPU, percent (its share of a shared GPU).", "gpu", "job"),
		jobSM: d("gpuprof_job_gpu_sm_active_percent", "SM activity (GPM) where the job runs, over the last sampling interval: its GPU's, its MIG instance's, or on a shared GPU (scope shared_gpu) the device's, all its jobs together.",
			"gpu", "job", "scope"),
		jobTensor: d("gpuprof_job_gpu_tensor_active_percent", "Tensor-core activity (GPM) where the job runs, over the last sampling interval; scope as for gpuprof_job_gpu_sm_active_percent.",
			"gpu", "job", "scope"),

		jobShards: d("gpuprof_job_gpu_shards", "Shards of the GPU Slurm allocated the job (--gres=shard:N), as slurmctld told the agent: a job with this series holds part of the GPU, not the GPU. Absent for a whole GPU and while the allocation is not known.",
			"gpu", "job"),

		runningJobs: d("gpuprof_agent_running_jobs", "Slurm jobs the agent is profiling now."),
		lag:         d("gpuprof_agent_sampling_lag_seconds", "How late the last sampling tick started."),
		lastTick:    d("gpuprof_agent_last_sample_timestamp_seconds", "When the last sampling tick was due (Unix time)."),
		dropped:     d("gpuprof_agent_samples_dropped_total", "Samples lost: ticks missed, failed GPU readings, implausible values dropped.", "reason"),
		gpuErrAt:    d("gpuprof_agent_gpu_last_error_timestamp_seconds", "When a GPU backend (NVML) call last failed (Unix time)."),
		gpuErrInfo:  d("gpuprof_agent_gpu_last_error_info", "The class of the last failed GPU backend (NVML) call.", "class"),
		outboxLen:   d("gpuprof_agent_outbox_profiles", "Finished profiles waiting for the collector."),
		outboxAge:   d("gpuprof_agent_outbox_oldest_age_seconds", "Age of the oldest profile waiting for the collector."),
		spoolFiles:  d("gpuprof_agent_spool_files", "Records waiting in the spool directory."),
		spoolBytes:  d("gpuprof_agent_spool_bytes", "Size of the records waiting in the spool directory."),
	}
}

func (c *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.util, c.memUsed, c.memTotal, c.power, c.energy, c.temp, c.xid,
		c.sm, c.occupancy, c.tensor, c.dram, c.fp,
		c.jobInfo, c.jobMem, c.jobUtil, c.jobSM, c.jobTensor, c.jobShards, c.runningJobs, c.lag, c.lastTick, c.dropped,
		c.gpuErrAt, c.gpuErrInfo, c.outboxLen, c.outboxAge, c.spoolFiles, c.spoolBytes} {
		ch <- d
	}
}

func (c *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.a.obs.snapshot()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, ds := range s.gpus {
		dev, ok := c.a.byUUID[ds.UUID]
		if !ok {
			continue
		}
		l := []string{dev.UUID, strconv.Itoa(dev.Index), dev.Name, s.node}
		if ds.Util.Valid {
			gauge(c.util, float64(ds.Util.Value), l...)
		}
		if ds.MemoryUsed.Valid {
			gauge(c.memUsed, float64(ds.MemoryUsed.Value), l...)
		}
		gauge(c.memTotal, float64(dev.MemoryTotal), l...)
		if ds.PowerMW.Valid {
			gauge(c.power, float64(ds.PowerMW.Value)/1000, l...)
		}
		if e, ok := s.energy[ds.UUID]; ok {
			counter(c.energy, float64(e)/1000, l...)
		}
		if ds.TempC.Valid {
			gauge(c.temp, float64(ds.TempC.Value), l...)
		}
		counter(c.xid, float64(s.xids[ds.UUID]), l...)
		if ds.Activity.Valid {
			act := ds.Activity.Value
			for _, m := range []struct {
				d *prometheus.Desc
				v gpu.Opt[float64]
			}{{c.sm, act.SM}, {c.occupancy, act.SMOccupancy}, {c.tensor, act.Tensor}, {c.dram, act.DRAM}} {
				if m.v.Valid {
					gauge(m.d, m.v.Value, l...)
				}
			}
			for prec, v := range map[string]gpu.Opt[float64]{"fp64": act.FP64, "fp32": act.FP32, "fp16": act.FP16} {
				if v.Valid {
					gauge(c.fp, v.Value, append(l, prec)...)
				}
			}
		}
	}
	running := map[string]bool{}
	for _, j := range s.jobs {
		running[j.job] = true
		if !c.jobs {
			continue
		}
		gauge(c.jobInfo, 1, j.gpu, j.job, j.user, j.account, j.partition)
		if j.shards > 0 {
			gauge(c.jobShards, float64(j.shards), j.gpu, j.job)
		}
		if j.mem.Valid {
			gauge(c.jobMem, float64(j.mem.Value), j.gpu, j.job)
		}
		if j.util.Valid {
			gauge(c.jobUtil, float64(j.util.Value), j.gpu, j.job)
		}
		if j.sm.Valid {
			gauge(c.jobSM, j.sm.Value, j.gpu, j.job, j.scope)
		}
		if j.tensor.Valid {
			gauge(c.jobTensor, j.tensor.Value, j.gpu, j.job, j.scope)
		}
	}
	gauge(c.runningJobs, float64(len(running)))
	if !s.lastTick.IsZero() {
		gauge(c.lag, s.lag.Seconds())
		gauge(c.lastTick, float64(s.lastTick.UnixNano())/1e9)
	}
	for reason, n := range s.dropped {
		counter(c.dropped, float64(n), reason)
	}
	if !s.gpuErrAt.IsZero() {
		gauge(c.gpuErrAt, float64(s.gpuErrAt.UnixNano())/1e9)
		gauge(c.gpuErrInfo, 1, s.gpuErrKind)
	}
	if s.outboxKnown {
		gauge(c.outboxLen, float64(s.outboxLen))
		age := 0.0
		if !s.outboxOld.IsZero() {
			age = max(time.Since(s.outboxOld).Seconds(), 0)
		}
		gauge(c.outboxAge, age)
	}
	if s.spoolKnown {
		gauge(c.spoolFiles, float64(s.spoolFiles))
		gauge(c.spoolBytes, float64(s.spoolBytes))
	}
}
