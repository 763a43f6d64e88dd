package collect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// usageJob is a profile of job id on node for account and partition with
// one GPU of each model, running from start for d (finished when d > 0).
func usageJob(id, node, account, partition string, start time.Time, d time.Duration, models ...string) profile.Job {
	j := profile.Job{
		Key:  profile.Key{Cluster: "lab", JobID: id, Node: node},
		User: "alice", UID: aliceUID, GID: 100, Account: account, Partition: partition,
		Start: start, Status: profile.StatusRunning, Source: profile.SourceAgent,
	}
	for i, m := range models {
		g := profile.NewGPU(gpu.Device{UUID: "GPU-" + id + "-" + node + "-" + string(rune('a'+i)), Name: m, MemoryTotal: 80 << 30},
			i, start, time.Second, 0)
		g.Observe(profile.Reading{Time: start.Add(time.Second), Util: gpu.Some[uint32](50), MemUsed: gpu.Some[uint64](1 << 30), Processes: 1}, time.Second)
		j.GPUs = append(j.GPUs, g)
	}
	if d > 0 {
		j.Finish(start.Add(d))
	}
	return j
}

// scrapeMetrics calls the handler as Prometheus does (OpenMetrics when
// asked), runs promtool on the classic text, and parses the answer with
// the Prometheus project's own parser.
func scrapeMetrics(t *testing.T, h http.Handler, openMetrics bool) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if openMetrics {
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	if openMetrics {
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !bytes.HasSuffix(body, []byte("# EOF\n")) {
			t.Fatalf("asked for OpenMetrics, got %q", ct)
		}
	} else {
		promtoolCheck(t, body)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.ResponseFormat(rec.Header()))
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
		fams[strings.TrimSuffix(mf.GetName(), "_total")] = mf
	}
}

// promtoolCheck runs Prometheus's own linter (Debian's prometheus package)
// on an exposition in the classic text format.
func promtoolCheck(t *testing.T, body []byte) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no promtool: %v", err)
		}
		t.Logf("promtool not installed; not linted")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\n%s", err, out, body)
	}
}

// sample is the value of the series of family name (without _total) whose
// labels are exactly want; ok false when there is none.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// usageSeries is every jobs and GPU-seconds series of an exposition, as
// "name{account,partition,model}" → value.
func usageSeries(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, name := range []string{"gpuprof_serve_jobs_finished", "gpuprof_serve_gpu_seconds"} {
		for _, m := range fams[name].GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[name+"{"+l["account"]+","+l["partition"]+","+l["model"]+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}

func labels(account, partition, model string) map[string]string {
	return map[string]string{"account": account, "partition": partition, "model": model}
}

// TestMetricsCountOncePerJob pushes profiles through the collector's HTTP
// API and checks the counters after each: a job counts once whatever the
// re-pushes and nodes, GPU-seconds add up per node profile and GPU, a late
// running snapshot changes nothing, and the delivery lag is observed once
// per profile.
func TestMetricsCountOncePerJob(t *testing.T) {
	clock := t0.Add(10 * time.Hour)
	metrics := NewMetrics(func() time.Time { return clock })
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Metrics: metrics})
	push := func(j profile.Job) {
		t.Helper()
		body := mustJSON(t, j)
		if w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, rootOn(j.Node), "POST", "/v1/profiles", body)); w.Code != http.StatusNoContent {
			t.Fatalf("push %s/%s: %d %s", j.JobID, j.Node, w.Code, w.Body)
		}
	}
	h100, a100 := "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"
	type want struct {
		series map[string]float64
		lag    uint64 // observations
		stale  float64
	}
	steps := []struct {
		name string
		push profile.Job
		want want
	}{
		{"running snapshot counts nothing", usageJob("7", "gpu01", "lab", "gpu", t0, 0, h100),
			want{series: map[string]float64{}}},
		{"finished, 1 GPU, 1 h", usageJob("7", "gpu01", "lab", "gpu", t0, time.Hour, h100),
			want{series: map[string]float64{
				"gpuprof_serve_jobs_finished{lab,gpu," + h100 + "}": 1, "gpuprof_serve_gpu_seconds{lab,gpu," + h100 + "}": 3600,
			}, lag: 1}},
		{"the same again (a lost acknowledgement)", usageJob("7", "gpu01", "lab", "gpu", t0, time.Hour, h100),
			want{series: map[string]float64{
				"gpuprof_serve_jobs_finished{lab,gpu," + h100 + "}": 1, "gpuprof_serve_gpu_seconds{lab,gpu," + h100 + "}": 3600,
			}, lag: 1}},
		{"a late running snapshot", usageJob("7", "gpu01", "lab", "gpu", t0, 0, h100),
			want{series: map[string]float64{
				"gpuprof_serve_jobs_finished{lab,gpu," + h100 + "}": 1, "gpuprof_serve_gpu_seconds{lab,gpu," + h100 + "}": 3600,
			}, lag: 1, stale: 1}},
		{"the job's second node: GPU-seconds, not a second job", usageJob("7", "gpu02", "lab", "gpu", t0, time.Hour, h100, h100),
			want{series: map[string]float64{
				"gpuprof_serve_jobs_finished{lab,gpu," + h100 + "}": 1, "gpuprof_serve_gpu_seconds{lab,gpu," + h100 + "}": 3 * 3600,
			}, lag: 2, stale: 1}},
		{"another account, two models, 30 min", usageJob("8", "gpu03", "ml", "long", t0, 30*time.Minute, h100, a100),
			want{series: map[string]float64{
				"gpuprof_serve_jobs_finished{lab,gpu," + h100 + "}": 1, "gpuprof_serve_gpu_seconds{lab,gpu," + h100 + "}": 3 * 3600,
				"gpuprof_serve_jobs_finished{ml,long," + h100 + "}": 1, "gpuprof_serve_gpu_seconds{ml,long," + h100 + "}": 1800,
				"gpuprof_serve_jobs_finished{ml,long," + a100 + "}": 1, "gpuprof_serve_gpu_seconds{ml,long," + a100 + "}": 1800,
			}, lag: 3, stale: 1}},
	}
	for _, st := range steps {
		push(st.push)
		for _, om := range []bool{false, true} {
			fams := scrapeMetrics(t, metrics.Handler(), om)
			got := usageSeries(fams)
			if !equalSeries(got, st.want.series) {
				t.Errorf("after %q (OpenMetrics %t):\n got %v\nwant %v", st.name, om, got, st.want.series)
			}
			if n, _ := sample(fams, "gpuprof_serve_delivery_lag_seconds", nil); uint64(n) != st.want.lag {
				t.Errorf("after %q: %v lag observations, want %d", st.name, n, st.want.lag)
			}
			if n, _ := sample(fams, "gpuprof_serve_pushes_accepted", map[string]string{"outcome": AcceptStale}); n != st.want.stale {
				t.Errorf("after %q: %v stale pushes, want %v", st.name, n, st.want.stale)
			}
		}
	}
	// Every profile ended at t0+1h or t0+30m and arrived at t0+10h.
	fams := scrapeMetrics(t, metrics.Handler(), false)
	h := fams["gpuprof_serve_delivery_lag_seconds"].GetMetric()[0].GetHistogram()
	if want := (2*9 + 9.5) * 3600; math.Abs(h.GetSampleSum()-want) > 1e-6 {
		t.Errorf("lag sum %v s, want %v", h.GetSampleSum(), want)
	}

	// A restart: the totals come back from the database as they were.
	again := NewMetrics(nil)
	if err := again.Load(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	if got, want := usageSeries(scrapeMetrics(t, again.Handler(), false)), usageSeries(fams); !equalSeries(got, want) {
		t.Errorf("after Load:\n got %v\nwant %v (the live counters)", got, want)
	}
}

func equalSeries(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || math.Abs(v-w) > 1e-9 {
			return false
		}
	}
	return true
}

// TestMetricsRequeue: a requeued job's new run replaces the finished
// profile of its earlier run. The database then holds the new run only;
// the exported counters never go down and meet the database's totals again
// once the new run has finished, so a restart then reloads the same values.
func TestMetricsRequeue(t *testing.T) {
	metrics := NewMetrics(nil)
	db := openStore(t)
	ctx := context.Background()
	h100 := "NVIDIA H100 80GB HBM3"
	jobs := "gpuprof_serve_jobs_finished{lab,gpu," + h100 + "}"
	secs := "gpuprof_serve_gpu_seconds{lab,gpu," + h100 + "}"
	steps := []struct {
		name       string
		put        profile.Job
		want, load map[string]float64 // exported; and what a restart would load
	}{
		{"first run, 1 h", usageJob("9", "gpu01", "lab", "gpu", t0, time.Hour, h100),
			map[string]float64{jobs: 1, secs: 3600}, map[string]float64{jobs: 1, secs: 3600}},
		{"requeued: the new run is running", usageJob("9", "gpu01", "lab", "gpu", t0.Add(2*time.Hour), 0, h100),
			map[string]float64{jobs: 1, secs: 3600}, map[string]float64{}},
		{"another job, 20 min, while the total is below the counter", usageJob("10", "gpu02", "lab", "gpu", t0, 20*time.Minute, h100),
			map[string]float64{jobs: 1, secs: 3600}, map[string]float64{jobs: 1, secs: 1200}},
		{"the new run finished, 1.5 h", usageJob("9", "gpu01", "lab", "gpu", t0.Add(2*time.Hour), 90*time.Minute, h100),
			map[string]float64{jobs: 2, secs: 1200 + 5400}, map[string]float64{jobs: 2, secs: 1200 + 5400}},
	}
	for _, st := range steps {
		if err := metrics.store(ctx, db, st.put); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := usageSeries(scrapeMetrics(t, metrics.Handler(), false)); !equalSeries(got, st.want) {
			t.Errorf("after %q: exported %v, want %v", st.name, got, st.want)
		}
		loaded := NewMetrics(nil)
		if err := loaded.Load(ctx, db); err != nil {
			t.Fatal(err)
		}
		got := usageSeries(scrapeMetrics(t, loaded.Handler(), false))
		for k, v := range got { // a series at 0 after a reload is as good as none
			if v == 0 {
				delete(got, k)
			}
		}
		if !equalSeries(got, st.load) {
			t.Errorf("after %q: a reload gives %v, want %v", st.name, got, st.load)
		}
	}
}

// TestMetricsRejected counts every refused push under its reason, and an
// accepted one under none.
func TestMetricsRejected(t *testing.T) {
	metrics := NewMetrics(nil)
	s, m, _ := newTestServer(t, ServerOptions{PushUIDs: []int{0}, PushHosts: []string{nodeAddr}, MaxBody: 4096, Metrics: metrics})
	good := mustJSON(t, usageJob("7", "gpu01", "lab", "gpu", t0, time.Hour, "NVIDIA H100"))
	big := mustJSON(t, usageJob("8", "gpu01", "lab", "gpu", t0, time.Hour, strings.Repeat("x", 5000)))
	invalid := mustJSON(t, usageJob("9", "", "lab", "gpu", t0, time.Hour, "NVIDIA H100"))
	pushes := []struct {
		body  []byte
		authz string
		want  int
	}{
		{good, signed(m, rootNode, "POST", "/v1/profiles", good), http.StatusNoContent},
		{good, "", http.StatusUnauthorized},
		{good, signed(m, rootNode, "POST", "/v1/profiles", invalid), http.StatusUnauthorized},
		{good, signed(m, alice, "POST", "/v1/profiles", good), http.StatusForbidden},
		{good, signed(m, Identity{UID: 0, Host: "192.168.9.9"}, "POST", "/v1/profiles", good), http.StatusForbidden},
		{[]byte(`{"job_id":`), signed(m, rootNode, "POST", "/v1/profiles", []byte(`{"job_id":`)), http.StatusBadRequest},
		{invalid, signed(m, rootNode, "POST", "/v1/profiles", invalid), http.StatusBadRequest},
		{big, signed(m, rootNode, "POST", "/v1/profiles", big), http.StatusRequestEntityTooLarge},
	}
	for i, p := range pushes {
		if w := serve(s.Handler(), "POST", "/v1/profiles", p.body, p.authz); w.Code != p.want {
			t.Fatalf("push %d: %d, want %d", i, w.Code, p.want)
		}
	}
	fams := scrapeMetrics(t, metrics.Handler(), true)
	want := map[string]float64{RejectUnauthenticated: 2, RejectForbidden: 2, RejectBadProfile: 2, RejectTooLarge: 1, RejectBusy: 0, RejectError: 0}
	for reason, n := range want {
		if got, ok := sample(fams, "gpuprof_serve_pushes_rejected", map[string]string{"reason": reason}); !ok || got != n {
			t.Errorf("rejected{reason=%q} = %v (present %t), want %v", reason, got, ok, n)
		}
	}
	if got, _ := sample(fams, "gpuprof_serve_pushes_accepted", map[string]string{"outcome": AcceptFinished}); got != 1 {
		t.Errorf("accepted{outcome=finished} = %v, want 1", got)
	}
	if got, ok := sample(fams, "gpuprof_serve_jobs_finished", labels("lab", "gpu", "NVIDIA H100")); !ok || got != 1 {
		t.Errorf("jobs finished = %v (present %t), want 1", got, ok)
	}
}

// TestMetricsOff: without Metrics the collector stores as before.
func TestMetricsOff(t *testing.T) {
	var metrics *Metrics
	db := openStore(t)
	j := usageJob("7", "gpu01", "lab", "gpu", t0, time.Hour, "NVIDIA H100")
	if err := metrics.store(context.Background(), db, j); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetJob(context.Background(), j.Key); err != nil {
		t.Errorf("GetJob: %v", err)
	}
	if h := metrics.countRejects(http.NotFound); h == nil {
		t.Error("countRejects of a nil Metrics returned nil")
	}
}
