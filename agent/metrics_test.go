package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/internal/metricsrv"
	"github.com/gpuprof/gpuprof/profile"
)

// meteredSampler is the simulated node with what it lacks for these tests:
// an energy counter (the simulated node has none), and GPUs whose readings
// fail.
type meteredSampler struct {
	*sim.Node
	energyMJ map[string]uint64
	fail     map[string]error
}

func (s *meteredSampler) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	if err := s.fail[uuid]; err != nil {
		return gpu.DeviceSample{}, err
	}
	return s.Node.SampleDevice(ctx, uuid)
}

func (s *meteredSampler) Energy(ctx context.Context, uuid string) (uint64, error) {
	if e, ok := s.energyMJ[uuid]; ok {
		return e, nil
	}
	return s.Node.Energy(ctx, uuid)
}

// withMetrics replaces the fixture's agent by one on s with the metrics
// endpoint on (a listener nobody serves: the tests call the handler).
func (f *fixture) withMetrics(s gpu.Sampler) {
	f.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ln.Close() })
	a, err := New(context.Background(), Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(f.dir, "agent.sock"),
		Interval: time.Second, FlushInterval: time.Minute, SeriesPoints: 64,
		Procfs: f.procfs, CgroupRoot: filepath.Join(f.dir, "cgroup"),
		Clock:            func() time.Time { return f.now },
		MetricsListener:  ln,
		MetricsJobsToken: testMetricsToken,
	}, s, f.db, f.spool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.t.Fatal(err)
	}
	f.a = a
}

// families parses an exposition with the Prometheus project's own parser,
// in the format the response declares.
func families(t *testing.T, header http.Header, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.ResponseFormat(header))
	fams := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			return fams
		}
		if err != nil {
			t.Fatalf("exposition does not parse: %v\n%s", err, body)
		}
		fams[mf.GetName()] = mf
	}
}

// scrape calls the handler as Prometheus does, in OpenMetrics or in the
// classic text format, and parses the answer.
func scrape(t *testing.T, h http.Handler, openMetrics bool) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testMetricsToken) // the scraper's: the per-job series too
	if openMetrics {
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	ct := rec.Header().Get("Content-Type")
	if openMetrics {
		if !strings.HasPrefix(ct, "application/openmetrics-text") || !bytes.HasSuffix(body, []byte("# EOF\n")) {
			t.Fatalf("asked for OpenMetrics, got %q ending %q", ct, body[max(len(body)-10, 0):])
		}
	} else {
		if !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("content type %q, want text/plain", ct)
		}
		promtoolCheck(t, body)
	}
	return families(t, rec.Header(), body)
}

// promtoolCheck runs Prometheus's own linter on the exposition where it is
// installed (Debian's prometheus package).
func promtoolCheck(t *testing.T, body []byte) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// value finds the sample of family name whose labels include want. A
// counter's family is named without _total in OpenMetrics, with it in the
// text format.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := fams[name]
	if mf == nil {
		mf = fams[strings.TrimSuffix(name, "_total")]
	}
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func count(fams map[string]*dto.MetricFamily, name string) int {
	if mf := fams[name]; mf != nil {
		return len(mf.GetMetric())
	}
	return 0
}

// infoJobs lists the job label of every gpuprof_gpu_job_info series on a
// GPU, sorted.
func infoJobs(fams map[string]*dto.MetricFamily, uuid string) []string {
	var jobs []string
	if mf := fams["gpuprof_gpu_job_info"]; mf != nil {
		for _, m := range mf.GetMetric() {
			var g, j string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "gpu":
					g = l.GetValue()
				case "job":
					j = l.GetValue()
				}
			}
			if g == uuid {
				jobs = append(jobs, j)
			}
		}
	}
	slices.Sort(jobs)
	return jobs
}

func TestMetricsValues(t *testing.T) {
	f := newFixture(t, nil)
	s := &meteredSampler{Node: f.node, energyMJ: map[string]uint64{f.devs[0].UUID: 123_456_789}}
	f.withMetrics(s)
	// GPU 0: job 101 alone; GPU 1 shared by 102 and 103; GPUs 2 and 3 idle,
	// with an XID on GPU 3.
	f.proc(500, "101", "train", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 40})
	f.proc(501, "102", "infer", sim.Usage{UUID: f.devs[1].UUID, Mem: 20 * gib, Util: 30})
	f.proc(502, "103", "infer", sim.Usage{UUID: f.devs[1].UUID, Mem: 5 * gib, Util: 50})
	for _, j := range []struct {
		id    string
		minor int
	}{{"101", 0}, {"102", 1}, {"103", 1}} {
		f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{JobID: j.id, User: "u" + j.id, Account: "acct" + j.id,
			Partition: "gpu", UID: 1000, Start: f.now, GPUs: []hookproto.GPURef{minorRef(j.minor)}}})
	}
	if err := sim.RecordXID(filepath.Join(f.dir, "sim"), f.devs[3].UUID, 79, f.now); err != nil {
		t.Fatal(err)
	}
	f.tick(1)

	for _, om := range []bool{true, false} {
		t.Run(fmt.Sprintf("openmetrics=%v", om), func(t *testing.T) {
			fams := scrape(t, f.a.MetricsHandler(), om)
			gpuLabels := func(i int) map[string]string {
				return map[string]string{"gpu": f.devs[i].UUID, "index": fmt.Sprint(i), "model": "NVIDIA H100 80GB HBM3", "node": "n1"}
			}
			// The simulated node's published formulas (docs/sim-node.md):
			// power 60 W + 6.4 W per percent, temperature 30 °C + util/2.
			for _, c := range []struct {
				name string
				gpu  int
				want float64
			}{
				{"gpuprof_gpu_utilization_percent", 0, 40},
				{"gpuprof_gpu_memory_used_bytes", 0, 10 * gib},
				{"gpuprof_gpu_memory_total_bytes", 0, 80 * gib},
				{"gpuprof_gpu_power_watts", 0, 316},
				{"gpuprof_gpu_temperature_celsius", 0, 50},
				{"gpuprof_gpu_energy_joules_total", 0, 123_456.789},
				{"gpuprof_gpu_xid_errors_total", 0, 0},
				{"gpuprof_gpu_utilization_percent", 1, 80},
				{"gpuprof_gpu_memory_used_bytes", 1, 25 * gib},
				{"gpuprof_gpu_utilization_percent", 2, 0},
				{"gpuprof_gpu_power_watts", 2, 60},
				{"gpuprof_gpu_xid_errors_total", 3, 1},
				// GPM (the sim's defaults: SM activity = duty cycle,
				// tensor 0, DRAM half the duty cycle).
				{"gpuprof_gpu_sm_active_percent", 0, 40},
				{"gpuprof_gpu_tensor_active_percent", 0, 0},
				{"gpuprof_gpu_dram_bandwidth_percent", 0, 20},
				{"gpuprof_gpu_sm_active_percent", 1, 80},
			} {
				got, ok := value(fams, c.name, gpuLabels(c.gpu))
				if !ok || got != c.want {
					t.Errorf("%s{gpu %d} = %v (present %v), want %v", c.name, c.gpu, got, ok, c.want)
				}
			}
			if _, ok := value(fams, "gpuprof_gpu_energy_joules_total", gpuLabels(1)); ok {
				t.Error("energy of a GPU without an energy counter is shown; want no series")
			}
			// Unknown is no series, never 0: the sim gives no occupancy,
			// and an idle GPU sampled once has no interval yet.
			for _, c := range []struct {
				name string
				gpu  int
			}{{"gpuprof_gpu_sm_occupancy_percent", 0}, {"gpuprof_gpu_sm_active_percent", 2}} {
				if v, ok := value(fams, c.name, gpuLabels(c.gpu)); ok {
					t.Errorf("%s{gpu %d} = %v; want no series (unknown)", c.name, c.gpu, v)
				}
			}
			for _, c := range []struct {
				job, scope string
				gpu        int
				want       float64
			}{{"101", "gpu", 0, 40}, {"102", "shared_gpu", 1, 80}, {"103", "shared_gpu", 1, 80}} {
				l := map[string]string{"gpu": f.devs[c.gpu].UUID, "job": c.job, "scope": c.scope}
				if got, ok := value(fams, "gpuprof_job_gpu_sm_active_percent", l); !ok || got != c.want {
					t.Errorf("gpuprof_job_gpu_sm_active_percent%v = %v (present %v), want %v", l, got, ok, c.want)
				}
			}
			if n := count(fams, "gpuprof_gpu_memory_total_bytes"); n != 4 {
				t.Errorf("%d GPUs with series, want all 4", n)
			}
			info := map[string]string{"gpu": f.devs[1].UUID, "job": "103", "user": "u103", "account": "acct103", "partition": "gpu"}
			if got, ok := value(fams, "gpuprof_gpu_job_info", info); !ok || got != 1 {
				t.Errorf("gpuprof_gpu_job_info%v = %v (present %v), want 1", info, got, ok)
			}
			if got := infoJobs(fams, f.devs[1].UUID); !slices.Equal(got, []string{"102", "103"}) {
				t.Errorf("jobs on GPU 1 = %v, want [102 103]", got)
			}
			for _, c := range []struct {
				name, job string
				gpu       int
				want      float64
			}{
				{"gpuprof_job_gpu_memory_used_bytes", "101", 0, 10 * gib},
				{"gpuprof_job_gpu_utilization_percent", "101", 0, 40},
				{"gpuprof_job_gpu_memory_used_bytes", "102", 1, 20 * gib},
				{"gpuprof_job_gpu_utilization_percent", "102", 1, 30},
				{"gpuprof_job_gpu_memory_used_bytes", "103", 1, 5 * gib},
				{"gpuprof_job_gpu_utilization_percent", "103", 1, 50},
			} {
				got, ok := value(fams, c.name, map[string]string{"gpu": f.devs[c.gpu].UUID, "job": c.job})
				if !ok || got != c.want {
					t.Errorf("%s{job %s} = %v (present %v), want %v", c.name, c.job, got, ok, c.want)
				}
			}
			// No job label on the device series: one series per GPU.
			if mf := fams["gpuprof_gpu_utilization_percent"]; mf != nil {
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == "job" {
							t.Errorf("device series with a job label: %v", m)
						}
					}
				}
			}
			if got, _ := value(fams, "gpuprof_agent_running_jobs", nil); got != 3 {
				t.Errorf("running jobs = %v, want 3", got)
			}
			for _, reason := range []string{dropTickMissed, dropReadError, dropImplausible} {
				if got, ok := value(fams, "gpuprof_agent_samples_dropped_total", map[string]string{"reason": reason}); !ok || got != 0 {
					t.Errorf("samples dropped (%s) = %v (present %v), want 0", reason, got, ok)
				}
			}
			if _, ok := value(fams, "gpuprof_agent_gpu_last_error_timestamp_seconds", nil); ok {
				t.Error("a GPU error time with no error")
			}
		})
	}
}

func TestMetricsJobInfoFollowsJobs(t *testing.T) {
	f := newFixture(t, nil)
	f.withMetrics(f.node)
	h := f.a.MetricsHandler()
	uuid := f.devs[2].UUID
	if got := infoJobs(scrape(t, h, true), uuid); len(got) != 0 {
		t.Fatalf("before any job: info series for %v", got)
	}
	// The series is there as soon as the prolog's start is, before a tick.
	f.start("7", minorRef(2))
	if got := infoJobs(scrape(t, h, true), uuid); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("after the start: jobs %v, want [7]", got)
	}
	f.start("8", minorRef(2))
	f.tick(2)
	if got := infoJobs(scrape(t, h, true), uuid); !slices.Equal(got, []string{"7", "8"}) {
		t.Fatalf("two jobs sharing: jobs %v, want [7 8]", got)
	}
	f.end("7", 0)
	fams := scrape(t, h, true)
	if got := infoJobs(fams, uuid); !slices.Equal(got, []string{"8"}) {
		t.Fatalf("after the end of 7: jobs %v, want [8]", got)
	}
	if _, ok := value(fams, "gpuprof_job_gpu_memory_used_bytes", map[string]string{"job": "7"}); ok {
		t.Error("the ended job's share is still shown")
	}
	f.end("8", 0)
	fams = scrape(t, h, true)
	if n := count(fams, "gpuprof_gpu_job_info"); n != 0 {
		t.Errorf("after every job ended: %d info series, want 0", n)
	}
	// The GPU itself stays.
	if _, ok := value(fams, "gpuprof_gpu_utilization_percent", map[string]string{"gpu": uuid}); !ok {
		t.Error("the GPU's series went with its jobs")
	}
}

func TestMetricsGPUError(t *testing.T) {
	f := newFixture(t, nil)
	s := &meteredSampler{Node: f.node, fail: map[string]error{
		f.devs[1].UUID: fmt.Errorf("nvml: GetUtilizationRates of %s: %w", f.devs[1].UUID, gpu.ErrTimeout),
	}}
	f.withMetrics(s)
	f.start("9", minorRef(1))
	f.tick(3)
	fams := scrape(t, f.a.MetricsHandler(), false)
	if got, ok := value(fams, "gpuprof_agent_gpu_last_error_info", map[string]string{"class": "timeout"}); !ok || got != 1 {
		t.Errorf("last error class timeout = %v (present %v), want 1", got, ok)
	}
	if n := count(fams, "gpuprof_agent_gpu_last_error_info"); n != 1 {
		t.Errorf("%d last-error series, want one", n)
	}
	if got, _ := value(fams, "gpuprof_agent_gpu_last_error_timestamp_seconds", nil); got <= 0 {
		t.Errorf("last error time = %v, want a Unix time", got)
	}
	// One failed reading per tick, the prolog's first reading included.
	if got, _ := value(fams, "gpuprof_agent_samples_dropped_total", map[string]string{"reason": dropReadError}); got != 4 {
		t.Errorf("read errors = %v, want 4", got)
	}
	if _, ok := value(fams, "gpuprof_gpu_utilization_percent", map[string]string{"gpu": f.devs[1].UUID}); ok {
		t.Error("a GPU that never answered has a utilisation")
	}
	// An idle GPU that stops answering loses its series instead of
	// showing its last reading as current.
	if _, ok := value(fams, "gpuprof_gpu_power_watts", map[string]string{"gpu": f.devs[3].UUID}); !ok {
		t.Fatal("idle GPU 3 has no power series")
	}
	delete(s.fail, f.devs[1].UUID) // GPU 1 answers again: the last error is GPU 3's
	s.fail[f.devs[3].UUID] = fmt.Errorf("nvml: %w", gpu.ErrNotFound)
	f.tick(1)
	fams = scrape(t, f.a.MetricsHandler(), false)
	if _, ok := value(fams, "gpuprof_gpu_power_watts", map[string]string{"gpu": f.devs[3].UUID}); ok {
		t.Error("a GPU whose reading failed still shows its last power")
	}
	if got, ok := value(fams, "gpuprof_agent_gpu_last_error_info", map[string]string{"class": "not_found"}); !ok || got != 1 {
		t.Errorf("last error class not_found = %v (present %v), want 1", got, ok)
	}
}

func TestObservedTicks(t *testing.T) {
	o := newObserved()
	t0 := time.Unix(1_800_000_000, 0)
	o.tick(t0, t0.Add(3*time.Millisecond), time.Second)
	o.tick(t0.Add(time.Second), t0.Add(time.Second), time.Second)
	o.tick(t0.Add(4*time.Second), t0.Add(4*time.Second+20*time.Millisecond), time.Second) // 2 missed
	s := o.snapshot()
	if s.dropped[dropTickMissed] != 2 || s.lag != 20*time.Millisecond || !s.lastTick.Equal(t0.Add(4*time.Second)) {
		t.Errorf("missed %d, lag %v, last %v; want 2, 20ms, %v", s.dropped[dropTickMissed], s.lag, s.lastTick, t0.Add(4*time.Second))
	}
}

func TestSpoolUsage(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"a.json": 10, "b.json": 32} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "quarantine"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, size, err := spoolUsage(dir)
	if err != nil || files != 2 || size != 42 {
		t.Errorf("spoolUsage = %d files, %d bytes, %v; want 2, 42, nil", files, size, err)
	}
	if files, size, err := spoolUsage(filepath.Join(dir, "missing")); err != nil || files != 0 || size != 0 {
		t.Errorf("missing spool = %d, %d, %v; want empty", files, size, err)
	}
}

// runningNode is the benchmark's node (8 GPUs, 16 jobs sharing them) run
// for real by Agent.Run at interval, with /metrics on a loopback port.
func runningNode(t *testing.T, interval time.Duration) (*Agent, string) {
	t.Helper()
	n := newBenchNode(t, benchGPUs, benchJobs, false)
	ln, err := metricsrv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := n.agent
	a.opts.Interval = interval
	a.opts.MetricsListener = ln
	a.opts.MetricsJobsToken = testMetricsToken
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for a.obs.snapshot().lastTick.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no sampling tick within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return a, "http://" + ln.Addr().String() + "/metrics"
}

func get(t *testing.T, c *http.Client, url string) (time.Duration, []byte) {
	t.Helper()
	start := time.Now()
	resp, err := getAs(c, url, testMetricsToken)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return time.Since(start), body
}

func p99(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}

func TestMetricsAnswersFastWhileSampling(t *testing.T) {
	a, url := runningNode(t, 50*time.Millisecond)
	c := &http.Client{Timeout: 2 * time.Second}

	// The scrape takes no lock the sampling loop holds: with the agent's
	// lock and the GPU taken (as a tick stuck in the driver would hold
	// them) it still answers, with the readings of the last tick.
	a.mu.Lock()
	a.gpuSem <- struct{}{}
	start := time.Now()
	resp, err := getAs(c, url, testMetricsToken) // no t.Fatal with the locks held: Run could not stop
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	d := time.Since(start)
	a.release()
	a.mu.Unlock()
	if err != nil {
		t.Fatalf("scrape with the sampling loop blocked: %v after %v", err, d)
	}
	if !bytes.Contains(body, []byte("gpuprof_gpu_job_info{")) {
		t.Fatalf("scrape with the sampling loop blocked lacks the job series:\n%s", body)
	}
	t.Logf("scrape with the sampling loop blocked: %v", d)

	var ds []time.Duration
	for range 300 {
		d, body = get(t, c, url)
		ds = append(ds, d)
	}
	fams := families(t, http.Header{"Content-Type": []string{"text/plain; version=0.0.4"}}, body)
	if n := count(fams, "gpuprof_gpu_job_info"); n != benchJobs {
		t.Errorf("%d info series, want %d", n, benchJobs)
	}
	if n := count(fams, "gpuprof_gpu_utilization_percent"); n != benchGPUs {
		t.Errorf("%d GPUs with a utilisation, want %d", n, benchGPUs)
	}
	// The bound is 50 ms; a scrape is a copy and some formatting,
	// well under a millisecond on an idle machine.
	if got := p99(ds); got > 50*time.Millisecond {
		t.Errorf("p99 of %d scrapes while sampling 8 GPUs = %v, want < 50ms", len(ds), got)
	}
	t.Logf("p99 %v, max %v over %d scrapes", p99(ds), ds[len(ds)-1], len(ds))
}

// smallReceiveBuffer makes the kernel buffer next to nothing of what a
// client does not read, so the server's writes to it block.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024)
	})
	return errors.Join(err, serr)
}

func TestStuckScrapersDoNotDelayTicks(t *testing.T) {
	const interval = 100 * time.Millisecond
	a, url := runningNode(t, interval)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics")
	dialer := net.Dialer{Control: smallReceiveBuffer}
	req := "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var conns []net.Conn
	dial := func() net.Conn {
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		return c
	}
	// Clients that ask (many times over, pipelined) and never read: the
	// server's handlers block writing to them.
	for range 4 {
		c := dial()
		if _, err := io.WriteString(c, strings.Repeat(req, 50)); err != nil {
			t.Fatal(err)
		}
	}
	// Clients that read one byte a second.
	for range 2 {
		c := dial()
		if _, err := io.WriteString(c, strings.Repeat(req, 50)); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			r := bufio.NewReaderSize(c, 16)
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Second):
				}
				if _, err := r.ReadByte(); err != nil {
					return
				}
			}
		})
	}
	// Clients that send their request one byte at a time and never end it.
	for range 2 {
		c := dial()
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := c.Write([]byte{req[i%(len(req)-4)]}); err != nil {
					return
				}
			}
		})
	}
	defer func() {
		close(stop)
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}()

	before := a.obs.snapshot()
	ticks := map[time.Time]bool{}
	var maxLag time.Duration
	var scrapes []time.Duration
	hc := &http.Client{Timeout: 2 * time.Second}
	end := time.Now().Add(3 * time.Second)
	for time.Now().Before(end) {
		s := a.obs.snapshot()
		ticks[s.lastTick] = true
		maxLag = max(maxLag, s.lag)
		if len(ticks)%2 == 0 {
			d, _ := get(t, hc, url) // a healthy Prometheus beside the stuck ones
			scrapes = append(scrapes, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	after := a.obs.snapshot()
	if missed := after.dropped[dropTickMissed] - before.dropped[dropTickMissed]; missed != 0 {
		t.Errorf("%d ticks missed with stuck scrapers", missed)
	}
	// 30 ticks are due in 3 s; allow for a loaded shared machine.
	if len(ticks) < 24 {
		t.Errorf("%d sampling ticks in 3s at %v, want about 30", len(ticks), interval)
	}
	if maxLag >= interval {
		t.Errorf("a tick started %v late, want less than the interval %v", maxLag, interval)
	}
	if len(scrapes) == 0 || slices.Max(scrapes) > time.Second {
		t.Errorf("healthy scrapes beside stuck ones: %v", scrapes)
	}
	t.Logf("%d ticks, max lag %v, %d healthy scrapes, slowest %v", len(ticks), maxLag, len(scrapes), slices.Max(scrapes))
}

func TestListenMetricsUnix(t *testing.T) {
	// Short path: a unix socket path is limited to 108 bytes.
	dir, err := os.MkdirTemp("", "gpm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "run", "metrics.sock")
	f := newFixture(t, nil)
	ln, err := metricsrv.Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode %v, %v; want 0666", fi.Mode().Perm(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.a.serveMetrics(ctx, ln); close(done) }()
	if _, err := metricsrv.Listen("unix:" + path); err == nil {
		t.Error("a second endpoint on a socket in use was opened")
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	_, body := get(t, c, "http://agent/metrics")
	if !bytes.Contains(body, []byte("gpuprof_gpu_")) && !bytes.Contains(body, []byte("gpuprof_agent_running_jobs 0")) {
		t.Errorf("unexpected exposition over the unix socket:\n%s", body)
	}
	cancel()
	<-done
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after stop: %v", err)
	}
}

// flakyCollector refuses pushes until ok is set.
type flakyCollector struct{ ok bool }

func (c *flakyCollector) Push(context.Context, profile.Job) error {
	if !c.ok {
		return errors.New("collector unreachable")
	}
	return nil
}

func TestMetricsOutboxAndSpool(t *testing.T) {
	f := newFixture(t, nil)
	c := &flakyCollector{}
	f.a.opts.Collector, f.a.opts.Outbox = c, true
	h := f.a.MetricsHandler()
	if _, ok := value(scrape(t, h, false), "gpuprof_agent_outbox_profiles", nil); ok {
		t.Error("outbox length before any delivery pass")
	}
	f.start("21", minorRef(0))
	f.tick(1)
	f.do(hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{JobID: "21"}, End: f.now, ExitKnown: true}})
	// The finished profile waits in the spool until the persister drains it.
	files, size, err := spoolUsage(f.spool.Path)
	if err != nil || files != 1 || size == 0 {
		t.Fatalf("spool after the epilog: %d files, %d bytes, %v; want one record", files, size, err)
	}
	f.a.obs.spool(files, size)
	fams := scrape(t, h, false)
	if got, _ := value(fams, "gpuprof_agent_spool_files", nil); got != 1 {
		t.Errorf("spool files = %v, want 1", got)
	}
	if got, _ := value(fams, "gpuprof_agent_spool_bytes", nil); got != float64(size) {
		t.Errorf("spool bytes = %v, want %d", got, size)
	}
	f.a.drainSpool(context.Background())

	ctx := context.Background()
	f.a.deliver(ctx) // refused: stays queued
	fams = scrape(t, h, false)
	if got, _ := value(fams, "gpuprof_agent_outbox_profiles", nil); got != 1 {
		t.Errorf("outbox after a refused push = %v, want 1", got)
	}
	if age, ok := value(fams, "gpuprof_agent_outbox_oldest_age_seconds", nil); !ok || age < 0 || age > 60 {
		t.Errorf("outbox oldest age = %v (present %v), want the seconds since the epilog", age, ok)
	}
	if old := f.a.obs.snapshot().outboxOld; time.Since(old) > time.Minute || time.Since(old) < 0 {
		t.Errorf("oldest queued profile created at %v, want just now", old)
	}
	c.ok = true
	f.now = f.now.Add(time.Hour) // past the retry back-off
	f.a.deliver(ctx)
	fams = scrape(t, h, false)
	if got, _ := value(fams, "gpuprof_agent_outbox_profiles", nil); got != 0 {
		t.Errorf("outbox after delivery = %v, want 0", got)
	}
	if got, _ := value(fams, "gpuprof_agent_outbox_oldest_age_seconds", nil); got != 0 {
		t.Errorf("oldest age of an empty outbox = %v, want 0", got)
	}
}

// TestMetricsCollectors: what runs in the agent's process but is not the
// agent (the query socket's refusal counter) is on the agent's /metrics,
// and one that clashes with the agent's own series is refused at New.
func TestMetricsCollectors(t *testing.T) {
	f := newFixture(t, nil)
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuprof_agent_queries_refused_total", Help: "test"}, []string{"reason"})
	refused.WithLabelValues("too_many_connections").Add(3)
	opts := Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(f.dir, "agent2.sock"),
		Interval: time.Second, FlushInterval: time.Minute, SeriesPoints: 64,
		Procfs: f.procfs, CgroupRoot: filepath.Join(f.dir, "cgroup"),
		Clock:      func() time.Time { return f.now },
		Collectors: []prometheus.Collector{refused},
	}
	a, err := New(context.Background(), opts, f.node, f.db, f.spool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, a.MetricsHandler(), false)
	if got, ok := value(fams, "gpuprof_agent_queries_refused_total", map[string]string{"reason": "too_many_connections"}); !ok || got != 3 {
		t.Errorf("refusals = %v (present %v), want 3", got, ok)
	}
	opts.Collectors = []prometheus.Collector{refused, refused}
	if _, err := New(context.Background(), opts, f.node, f.db, f.spool, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		t.Error("New took a collector registered twice")
	}
}

// testMetricsToken is the scraper's token in these tests
// (Options.MetricsJobsToken).
const testMetricsToken = "scraper-token-0123456789abcdef"

// getAs GETs url bearing token ("" for none).
func getAs(c *http.Client, url, token string) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.Do(req)
}

// TestMetricsJobSeriesOnlyToScraper (issue 39, finding 7): the metrics
// socket may be every local user's to reach, and a job's id, user,
// account and use are its owner's and the admins' to see. A scrape
// without the scraper's token, or with another, gets the node-level
// series and no series naming a job or a user; with no token configured,
// no scrape does.
func TestMetricsJobSeriesOnlyToScraper(t *testing.T) {
	f := newFixture(t, nil)
	f.withMetrics(f.node)
	f.proc(4100, "101", "python", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 40})
	f.start("101", minorRef(0))
	f.tick(2)
	jobLabels := func(body string) []string {
		var bad []string
		for line := range strings.Lines(body) {
			if !strings.HasPrefix(line, "#") && (strings.Contains(line, `job="`) || strings.Contains(line, `user="`) || strings.Contains(line, `account="`)) {
				bad = append(bad, strings.TrimSpace(line))
			}
		}
		return bad
	}
	get := func(a *Agent, header string) string {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		rec := httptest.NewRecorder()
		a.MetricsHandler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /metrics: %d", rec.Code)
		}
		return rec.Body.String()
	}
	for _, header := range []string{"", "Bearer wrong", "Bearer " + testMetricsToken + "x", "Basic " + testMetricsToken, testMetricsToken} {
		body := get(f.a, header)
		if bad := jobLabels(body); len(bad) > 0 {
			t.Errorf("Authorization %q: per-job series served: %q", header, bad)
		}
		if !strings.Contains(body, "gpuprof_gpu_utilization_percent{") || !strings.Contains(body, "gpuprof_agent_running_jobs 1") {
			t.Errorf("Authorization %q: node-level series missing:\n%s", header, body)
		}
	}
	if body := get(f.a, "Bearer "+testMetricsToken); !strings.Contains(body, `gpuprof_gpu_job_info{`) || !strings.Contains(body, `job="101"`) {
		t.Errorf("the scraper's token: no per-job series:\n%s", body)
	}
	// No token configured: per-job series to no one.
	f.a.opts.MetricsJobsToken = ""
	for _, header := range []string{"", "Bearer ", "Bearer " + testMetricsToken} {
		if bad := jobLabels(get(f.a, header)); len(bad) > 0 {
			t.Errorf("no token set, Authorization %q: per-job series served: %q", header, bad)
		}
	}
}

// TestOwnShareCountsTheJobsOwnProcesses: a job's share of a GPU, for its
// profile and its /metrics gauges alike, sums only the processes
// attributed to it (procOwn): not another job's, not a foreign one, not
// one whose class says it belongs to a job the agent did not hold when it
// was seen (procOtherJob) even where its job id matches. Before the one
// rule, the gauges' own sum counted that last one.
func TestOwnShareCountsTheJobsOwnProcesses(t *testing.T) {
	a := &Agent{}
	a.pids = map[int]pidInfo{
		1: {job: "7", class: procOwn, name: "train"},
		2: {job: "7", class: procOtherJob, name: "stale"},
		3: {class: procForeign, name: "miner"},
		4: {job: "8", class: procOwn, name: "other"},
		5: {job: "7", class: procOwn, name: "eval"},
	}
	mib := func(n uint64) gpu.Opt[uint64] { return gpu.Some(n << 20) }
	procs := []gpu.ProcessSample{
		{PID: 1, MemoryUsed: mib(100), SMUtil: gpu.Some[uint32](60)},
		{PID: 2, MemoryUsed: mib(1000), SMUtil: gpu.Some[uint32](30)},
		{PID: 3, MemoryUsed: mib(1000), SMUtil: gpu.Some[uint32](30)},
		{PID: 4, MemoryUsed: mib(1000), SMUtil: gpu.Some[uint32](30)},
		{PID: 5, MemoryUsed: mib(20), SMUtil: gpu.Some[uint32](50)},
	}
	var seen []string
	mem, util := a.ownShare("7", procs, func(info pidInfo) { seen = append(seen, info.name) })
	if mem != mib(120) || util != gpu.Some[uint32](100) {
		t.Errorf("job 7's share = %v, %v; want 120 MiB and 100 %% (60+50, at most 100)", mem, util)
	}
	if strings.Join(seen, ",") != "train,eval" {
		t.Errorf("processes seen = %v, want train,eval", seen)
	}
	// One own process without a memory reading: the sum is unknown, not
	// the others' alone.
	procs[4].MemoryUsed = gpu.Opt[uint64]{}
	if mem, util := a.ownShare("7", procs, nil); mem.Valid || util != gpu.Some[uint32](100) {
		t.Errorf("with one reading missing: %v, %v; want memory unknown, 100 %%", mem, util)
	}
}
