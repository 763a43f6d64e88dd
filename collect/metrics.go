package collect

// The collector's /metrics endpoint (OpenMetrics or Prometheus text), for
// sites that run Prometheus beside gpuprof's own reports. It counts what
// the collector accepted: finished jobs and GPU-seconds by account,
// partition and GPU model, the delay between a job's end and its profile's
// arrival, and the pushes refused. The profiles in the database stay the
// source of truth; see docs/prometheus.md.
//
// Counter values are defined by the database, not by the process: the
// jobs and GPU-seconds counters are the totals over the finished profiles
// the database holds, loaded when serve starts (Metrics.Load) and raised
// as pushes are stored. A restart of serve therefore shows no counter
// reset to Prometheus — rate() and increase() need none and lose nothing
// that arrived while serve was down or between its last scrape and the
// restart — and a re-push of a profile already counted adds nothing. The
// histogram and the push counters count this process's requests and start
// at zero, an ordinary counter reset.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuprof/gpuprof/internal/metricsrv"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// Reasons a push was refused, the values of the reason label of
// gpuprof_serve_pushes_rejected_total. They follow the answer's status.
const (
	RejectTooLarge        = "too_large"       // 413: the body is over ServerOptions.MaxBody
	RejectUnauthenticated = "unauthenticated" // 401: no, a bad or a replayed munge credential
	RejectForbidden       = "forbidden"       // 403: a uid or host that may not push
	RejectBadProfile      = "bad_profile"     // 400: not a profile, or one the store refuses
	RejectBusy            = "db_busy"         // 503: the database stayed locked, or no upload slot came free; the node retries
	RejectTimeout         = "timeout"         // 408: the body did not arrive within the upload timeout
	RejectConflict        = "conflict"        // 409: the profile names another owner for its job
	RejectHeld            = "held"            // 503: Slurm's records do not place the job on the node yet; held, the node retries
	RejectError           = "error"           // 500 or any other failure
)

var rejectReasons = []string{RejectTooLarge, RejectUnauthenticated, RejectForbidden, RejectBadProfile, RejectBusy,
	RejectTimeout, RejectConflict, RejectHeld, RejectError}

// Outcomes of an accepted push, the values of the outcome label of
// gpuprof_serve_pushes_accepted_total.
const (
	AcceptRunning  = "running"  // a running profile stored
	AcceptFinished = "finished" // a finished profile stored (first time or again)
	AcceptStale    = "stale"    // a running snapshot after the finished profile: kept the finished one
)

// DeliveryLagBuckets are the bounds of gpuprof_serve_delivery_lag_seconds:
// from an epilog's immediate push (well under a second) through the
// outbox's retries to a node that was cut off for a day.
var DeliveryLagBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}

// usage is the label set of the jobs and GPU-seconds counters. Accounts
// and partitions are what Slurm's configuration defines (sacctmgr,
// slurm.conf) and models the hardware installed: finite sets, so the
// series are bounded by accounts × partitions × models in use, whatever
// the number of jobs. Only root and the SlurmUser may push (the labels
// come from slurmd's hook environment, not from users).
type usage struct{ account, partition, model string }

// Metrics holds the collector's counters and serves them. A nil *Metrics
// is valid and counts nothing: the endpoint is off.
type Metrics struct {
	registry *prometheus.Registry
	now      func() time.Time

	mu         sync.Mutex
	jobs       map[usage]*total // finished jobs
	gpuSeconds map[usage]*total // allocated GPU-seconds of finished profiles

	lag      prometheus.Histogram
	rejected *prometheus.CounterVec
	accepted *prometheus.CounterVec
}

// NewMetrics returns the collector's metrics on a registry of their own
// (not the package-global default one). now is the clock delivery lag is
// measured with; nil means time.Now.
func NewMetrics(now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	m := &Metrics{
		registry:   prometheus.NewRegistry(),
		now:        now,
		jobs:       map[usage]*total{},
		gpuSeconds: map[usage]*total{},
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gpuprof_serve_delivery_lag_seconds",
			Help:    "Time from a job's end on its node to the collector storing its finished profile, once per profile.",
			Buckets: DeliveryLagBuckets,
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpuprof_serve_pushes_rejected_total",
			Help: "Profile pushes the collector refused, by reason (the answer's status).",
		}, []string{"reason"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpuprof_serve_pushes_accepted_total",
			Help: "Profile pushes the collector answered 204, by what was stored.",
		}, []string{"outcome"}),
	}
	// Every reason and outcome from the start: a series that appears only
	// with its first increment hides that increment from increase().
	for _, r := range rejectReasons {
		m.rejected.WithLabelValues(r)
	}
	for _, o := range []string{AcceptRunning, AcceptFinished, AcceptStale} {
		m.accepted.WithLabelValues(o)
	}
	m.registry.MustRegister(m.lag, m.rejected, m.accepted, usageCollector{m})
	return m
}

// Register adds c (a server's Refusals' Collector) to what /metrics
// serves.
func (m *Metrics) Register(c prometheus.Collector) error {
	return m.registry.Register(c)
}

// Handler serves the metrics, in OpenMetrics when the scraper asks for it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Serve answers /metrics on ln until ctx ends (metricsrv.Serve). A scrape
// takes m's lock only to copy the usage counters, never the database's.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	return metricsrv.Serve(ctx, ln, m.Handler())
}

// contribution is what one finished profile adds to the counters: the
// label sets its job counts under (one per GPU model of the profile; a
// profile naming no GPU counts under model "") and its GPU-seconds by label
// set, each GPU held from start to end, in the whole seconds the database
// keeps. A profile that is not finished contributes nothing.
func contribution(j profile.Job) (jobs []usage, seconds map[usage]float64) {
	if j.Status != profile.StatusFinished {
		return nil, nil
	}
	seconds = map[usage]float64{}
	held := 0.0
	if !j.Start.IsZero() && !j.End.IsZero() {
		held = float64(max(j.End.Unix()-j.Start.Unix(), 0))
	}
	if len(j.GPUs) == 0 {
		return []usage{{j.Account, j.Partition, ""}}, seconds
	}
	for _, g := range j.GPUs {
		u := usage{j.Account, j.Partition, g.Model}
		if !slices.Contains(jobs, u) {
			jobs = append(jobs, u)
		}
		seconds[u] += held
	}
	return jobs, seconds
}

// jobUsage is one job's part of the database totals, from its finished
// profiles (on every node): it counts once under each label set any of them
// has, and each adds its GPU-seconds.
func jobUsage(profiles []profile.Job) (jobs, seconds map[usage]float64) {
	jobs, seconds = map[usage]float64{}, map[usage]float64{}
	for _, p := range profiles {
		js, ss := contribution(p)
		for _, u := range js {
			jobs[u] = 1
		}
		for u, s := range ss {
			seconds[u] += s
		}
	}
	return jobs, seconds
}

// total is one counter series: t the database's total now, c what is
// exported, the highest t has been since the process started (a counter
// never goes down; see store).
type total struct{ t, c float64 }

func (m *Metrics) addLocked(into map[usage]*total, u usage, d float64) {
	tt := into[u]
	if tt == nil {
		tt = &total{}
		into[u] = tt
	}
	tt.t += d
	tt.c = max(tt.c, tt.t)
}

// Load sets the jobs and GPU-seconds counters to the totals of the
// finished profiles in db, the values the live counting keeps them at.
// Call it once, before serving.
func (m *Metrics) Load(ctx context.Context, db *store.DB) error {
	jobs, secs := map[usage]*total{}, map[usage]*total{}
	err := db.ReaderFor(store.System).EachView(ctx, store.ViewFilter{Lean: true}, func(v store.JobView) error {
		js, ss := jobUsage(v.Profiles)
		for u, n := range js {
			m.addLocked(jobs, u, n)
		}
		for u, s := range ss {
			m.addLocked(secs, u, s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("metrics: load totals: %w", err)
	}
	m.mu.Lock()
	m.jobs, m.gpuSeconds = jobs, secs
	m.mu.Unlock()
	return nil
}

// store stores j (db.PutJob's contract) unless it names another owner for
// its job than the database holds (store.Tx.CheckOwner: ErrOwner), and
// counts it. The job's finished
// profiles are read in the same write transaction as the put, so the
// change of the job's part of the totals is exact however pushes race: a
// re-push changes nothing, a second node's profile of a job already
// counted adds its GPU-seconds but not the job again. The delivery lag is
// observed when a run's profile is first stored finished.
//
// The one change that lowers a total is a requeued job's new run
// replacing the finished profile of its earlier run on a node (the
// database keeps the latest run). The exported counter then holds its
// value, and rises again only once the total is above it: it is the
// highest total since serve started, so a restart that reloads the
// totals shows Prometheus no decrease unless it falls in that gap (see
// docs/prometheus.md).
func (m *Metrics) store(ctx context.Context, db *store.DB, j profile.Job) error {
	if m == nil {
		return db.WithTx(ctx, func(tx *store.Tx) error {
			if err := tx.CheckOwner(ctx, j); err != nil {
				return err
			}
			return tx.PutJob(ctx, j)
		})
	}
	var before []profile.Job // the job's finished profiles before the put
	err := db.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.CheckOwner(ctx, j); err != nil {
			return err
		}
		var err error
		before, err = tx.ListJobs(ctx, store.Filter{Cluster: j.Cluster, JobID: j.JobID, Status: profile.StatusFinished})
		if err != nil {
			return err
		}
		return tx.PutJob(ctx, j)
	})
	if errors.Is(err, store.ErrFinished) {
		m.accepted.WithLabelValues(AcceptStale).Inc()
		return err
	}
	if err != nil {
		return err
	}
	j = store.Normalize(j)
	var after []profile.Job
	var replaced *profile.Job
	for i := range before {
		if before[i].Key == j.Key {
			replaced = &before[i]
			continue
		}
		after = append(after, before[i])
	}
	if j.Status == profile.StatusFinished {
		after = append(after, j)
		m.accepted.WithLabelValues(AcceptFinished).Inc()
	} else {
		m.accepted.WithLabelValues(AcceptRunning).Inc()
	}
	jobs0, secs0 := jobUsage(before)
	jobs1, secs1 := jobUsage(after)
	m.mu.Lock()
	for u := range union(jobs0, jobs1) {
		if d := jobs1[u] - jobs0[u]; d != 0 {
			m.addLocked(m.jobs, u, d)
		}
	}
	for u := range union(secs0, secs1) {
		if d := secs1[u] - secs0[u]; d != 0 || jobs1[u] > 0 {
			m.addLocked(m.gpuSeconds, u, d)
		}
	}
	m.mu.Unlock()
	if j.Status == profile.StatusFinished && !j.End.IsZero() && (replaced == nil || !replaced.Start.Equal(j.Start)) {
		m.lag.Observe(max(m.now().Sub(j.End).Seconds(), 0))
	}
	return nil
}

func union(a, b map[usage]float64) map[usage]bool {
	u := make(map[usage]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// countRejects wraps the push handler and counts the answers that refuse
// a push, by their status.
func (m *Metrics) countRejects(next http.HandlerFunc) http.HandlerFunc {
	if m == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next(sw, r)
		if sw.status < 400 {
			return
		}
		reason := RejectError
		switch sw.status {
		case http.StatusRequestEntityTooLarge:
			reason = RejectTooLarge
		case http.StatusUnauthorized:
			reason = RejectUnauthenticated
		case http.StatusForbidden:
			reason = RejectForbidden
		case http.StatusBadRequest:
			reason = RejectBadProfile
		case http.StatusServiceUnavailable:
			reason = RejectBusy
		case http.StatusRequestTimeout:
			reason = RejectTimeout
		case http.StatusConflict:
			reason = RejectConflict
		}
		if sw.reason != "" {
			reason = sw.reason
		}
		m.rejected.WithLabelValues(reason).Inc()
	}
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	// reason, when set by the handler, is the refusal's reason label in
	// place of the one its status gives.
	reason string
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (readBody's
// deadline: without it a push counted by Metrics had its body read under
// the server's ReadTimeout only, not UploadTimeout).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// usageCollector exports the jobs and GPU-seconds counters as constant
// metrics at each scrape. They carry no created timestamp: their values
// are totals over the database, not counts since this process started,
// and a created time at the start of the process would tell Prometheus
// (created-timestamp zero ingestion) that they were zero then.
type usageCollector struct{ m *Metrics }

var (
	usageLabels   = []string{"account", "partition", "model"}
	jobsDesc      = prometheus.NewDesc("gpuprof_serve_jobs_finished_total", "Slurm jobs with a finished profile in the collector's database, counted once per job under each GPU model it used.", usageLabels, nil)
	gpuSecondDesc = prometheus.NewDesc("gpuprof_serve_gpu_seconds_total", "GPU-seconds held by finished jobs (GPUs × run time per node profile; divide by 3600 for GPU-hours).", usageLabels, nil)
)

func (c usageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- gpuSecondDesc
}

func (c usageCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for u, n := range c.m.jobs {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.CounterValue, n.c, u.account, u.partition, u.model)
	}
	for u, s := range c.m.gpuSeconds {
		ch <- prometheus.MustNewConstMetric(gpuSecondDesc, prometheus.CounterValue, s.c, u.account, u.partition, u.model)
	}
}
