package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
)

// The utilisation pattern of TestPrometheusScrape's job: two phases of a
// simulated CUDA program on its one GPU.
var promPhases = []struct {
	util int
	d    time.Duration
}{{30, 12 * time.Second}, {80, 12 * time.Second}}

// TestPrometheusScrape runs a real Prometheus (Debian's prometheus
// package) that scrapes the agent and `gpuprof serve` every second while a
// job with a known utilisation pattern runs on the simulated GPU node
// under the real test cluster. It asks Prometheus' HTTP API the queries
// docs/prometheus.md gives — the job's utilisation joined through
// gpuprof_gpu_job_info, its own share, its power, and serve's GPU-hours
// by account — and compares them with the profile the collector stored
// once the job ended: the utilisation summed over the job (and so its mean
// over the profile's samples) within one sample's worth, the GPU-seconds
// to the second. promtool check metrics passes on both
// endpoints' live output.
//
// Not parallel: it compares scrapes made every second with the agent's
// samples, and other tests' load delays both. It runs on the shared
// cluster (go test runs it before the parallel tests, so alone there too;
// the cluster starts for it), with its partition's prolog and epilog and
// no jobcomp.
func TestPrometheusScrape(t *testing.T) {
	requireClusterHost(t)
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		skipOrFail(t, "no prometheus binary (Debian package prometheus): %v", err)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		skipOrFail(t, "no promtool (Debian package prometheus): %v", err)
	}
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	nodeCfg := filepath.Join(work, "gpuprof.toml")
	c := sharedCluster(t)
	c.hooks(t, bin, nodeCfg)
	c.withoutJobComp(t)
	ensureMunge(t)

	simDir, outDir, centralDir := filepath.Join(work, "sim"), filepath.Join(work, "out"), filepath.Join(work, "central")
	// The central database's directory is root's (serve runs as root
	// here): root refuses to open a database where every account may
	// swap it (docs/security.md).
	if err := os.Mkdir(centralDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{simDir, outDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	serveAddr, serveMetrics, agentMetrics, promAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)

	// The central host: serve with its own database and /metrics.
	cc := config.Default()
	cc.Cluster = "gpuproftest"
	cc.DB = filepath.Join(centralDir, "central.db")
	cc.SpoolDir = filepath.Join(centralDir, "spool")
	cc.LogFile = filepath.Join(centralDir, "gpuprof.log")
	cc.Serve.Listen = serveAddr
	cc.Serve.MetricsListen = serveMetrics
	cc.Serve.SlurmUser = pushUser(t)
	// The node is the test cluster's "localhost". serve's default rule
	// accepts its pushes where that name resolves to the address munge
	// reports for this host (127.0.0.1 for both here); where munged
	// reports another (its host name's address), node_hosts lists it.
	if host := mungeHost(t); !resolvesTo(t, "localhost", host) {
		cc.Serve.NodeHosts = map[string][]string{host: {"localhost"}}
		t.Logf("munge reports this host as %s, which localhost does not resolve to: serve.node_hosts lists it", host)
	}
	// No jobcomp feeds this collector (none runs for the test's
	// partition): the node's word places its jobs.
	cc.Serve.Placement = "sender"
	centralCfg := writeConfigFile(t, filepath.Join(centralDir, "gpuprof.toml"), cc)
	startServe(t, bin, centralCfg, serveAddr, filepath.Join(centralDir, "serve.out"))

	// The node: the test cluster's hooks and the agent, delivering to serve.
	writeCaptureConfig(t, nodeCfg, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"))
	text, err := os.ReadFile(nodeCfg)
	if err != nil {
		t.Fatal(err)
	}
	text = bytes.Replace(text, []byte(`db = `), []byte(fmt.Sprintf("collector = %q\ndb = ", "http://"+serveAddr)), 1)
	// The per-job series go only to the scraper bearing this token
	// (agent.metrics_jobs_token_file).
	tokenFile := filepath.Join(work, "metrics-token")
	if err := os.WriteFile(tokenFile, []byte(e2eMetricsToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text = bytes.Replace(text, []byte("[agent]\n"), []byte(fmt.Sprintf("[agent]\nmetrics_listen = %q\nmetrics_jobs_token_file = %q\n", agentMetrics, tokenFile)), 1)
	if err := os.WriteFile(nodeCfg, text, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(nodeCfg, true)
	if err != nil || cfg.Collector == "" || cfg.Agent.MetricsListen != agentMetrics {
		t.Fatalf("node configuration: %v (collector %q, metrics_listen %q)\n%s", err, cfg.Collector, cfg.Agent.MetricsListen, text)
	}
	agent := startProcess(t, filepath.Join(work, "agent.out"), os.Environ(), bin, "agent", "--config", nodeCfg)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{filepath.Join(work, "agent.out"), cfg.LogFile, cc.LogFile, filepath.Join(centralDir, "serve.out"), filepath.Join(work, "prometheus.out")} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 40 lines)\n%s", f, lastLines(string(data), 40))
				}
			}
		}
	})
	waitAgent(t, agent, cfg.Socket, filepath.Join(work, "agent.out"))

	// Prometheus, scraping both every second, as docs/prometheus.md says.
	promCfg := filepath.Join(work, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpuprof
    honor_labels: true
    authorization:
      credentials_file: %q
    static_configs:
      - targets: [%q]
  - job_name: gpuprof-serve
    honor_labels: true
    static_configs:
      - targets: [%q]
`, tokenFile, agentMetrics, serveMetrics)), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := startProcess(t, filepath.Join(work, "prometheus.out"), os.Environ(), promBin,
		"--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(work, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	api := promAPI{t: t, base: "http://" + promAddr}
	waitFor(t, "Prometheus ready and both targets up", time.Minute, func() (bool, string) {
		if !prom.running() {
			t.Fatalf("prometheus exited: %v", prom.err)
		}
		var targets struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		}
		if err := api.getOK("/api/v1/targets", nil, &targets); err != nil {
			return false, err.Error()
		}
		up := 0
		for _, tg := range targets.ActiveTargets {
			if tg.Health == "up" {
				up++
			}
		}
		return up == 2, fmt.Sprintf("%+v", targets.ActiveTargets)
	})

	// The job: 30 % for 12 s, then 80 % for 12 s, on one GPU.
	var script []string
	for _, ph := range promPhases {
		script = append(script, fmt.Sprintf("%s simgpu burn --mem 6GiB --util %d --for %s", shellQuote(bin), ph.util, ph.d))
	}
	id := c.sbatch(t, "-J", "e2e-prometheus", "-o", filepath.Join(outDir, "%j.out"), "--chdir", work,
		"--export=ALL,GPUPROF_CONFIG="+nodeCfg, "--gres=gpu:1", "--wrap", strings.Join(script, "; "))
	t.Logf("job %s submitted", id)

	// While it runs: the info series carries the Slurm job id in "job"
	// (honor_labels), and both endpoints pass promtool.
	waitFor(t, "the job's info series in Prometheus", 2*time.Minute, func() (bool, string) {
		r := api.query(`gpuprof_gpu_job_info{job="` + id + `"}`)
		return len(r) == 1, fmt.Sprint(r)
	})
	promtoolLive(t, promtool, "http://"+agentMetrics+"/metrics", e2eMetricsToken, "gpuprof_gpu_job_info{")

	c.waitQueueEmpty(t, []string{id}, queueTimeout)
	var p profile.Job
	waitFor(t, "the finished profile at the collector", drainTimeout, func() (bool, string) {
		// Not found until the agent's outbox has delivered it.
		out, err := gpuprofOutput(bin, "show", id, "--config", centralCfg, "--json")
		if err != nil {
			return false, err.Error()
		}
		var vs []jobJSON
		if err := json.Unmarshal(out, &vs); err != nil {
			t.Fatalf("gpuprof show %s --json: %v\n%s", id, err, out)
		}
		if len(vs) != 1 || len(vs[0].Profiles) != 1 || vs[0].Profiles[0].Status != profile.StatusFinished {
			return false, string(out)
		}
		p = vs[0].Profiles[0]
		return true, ""
	})
	if len(p.GPUs) != 1 || p.GPUs[0].Samples < 10 {
		t.Fatalf("profile: %d GPUs, %+v; want one GPU with its samples", len(p.GPUs), p.GPUs)
	}
	g := p.GPUs[0]
	profMean, _ := g.UtilMean()
	t.Logf("profile: %s..%s, %d samples, mean %.2f %%, max %d %%", p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339), g.Samples, profMean, g.UtilMax)

	// Give Prometheus the scrapes after the end: the info series' stale
	// marker, serve's counters.
	waitFor(t, "serve's GPU-seconds in Prometheus", time.Minute, func() (bool, string) {
		r := api.query(`gpuprof_serve_gpu_seconds_total`)
		return len(r) > 0, fmt.Sprint(r)
	})

	t.Run("utilisation over time", func(t *testing.T) {
		// docs/prometheus.md: a job's utilisation over time.
		q := `gpuprof_gpu_job_info{job="` + id + `"}
  * on (gpu) group_left
gpuprof_gpu_utilization_percent`
		// Prometheus evaluates a point per step from the latest sample
		// within its lookback, so a scrape that comes late after the job's
		// end (a loaded machine) leaves the info series' last value
		// standing for every step until it: points that no scrape of the
		// job backs (seen: four more at 80 % than the profile had). The
		// points compared end one scrape interval after the last scrape
		// that carried the job's info series, where a punctual scrape
		// ends it. An agent that kept the series after the job's end
		// would have it in later scrapes, and so in the points compared.
		scrapes := api.rawSampleTimes(`gpuprof_gpu_job_info{job="`+id+`"}`, time.Now(), time.Since(p.Start)+time.Minute)
		if len(scrapes) == 0 {
			t.Fatalf("no scrape of the agent carried job %s's info series", id)
		}
		lastScrape := scrapes[len(scrapes)-1]
		until := p.End.Add(5 * time.Second)
		if cut := lastScrape.Add(time.Second); cut.Before(until) {
			until = cut
		}
		t.Logf("%d scrapes carried the info series, the last %s after the profile's end; points compared up to %s after it",
			len(scrapes), lastScrape.Sub(p.End).Round(time.Millisecond), until.Sub(p.End).Round(time.Millisecond))
		series := api.queryRange(q, p.Start.Add(-5*time.Second), until, time.Second)
		if len(series) != 1 {
			t.Fatalf("%d series, want 1 (one GPU): %v", len(series), series)
		}
		s := series[0]
		for k, want := range map[string]string{"job": id, "gpu": g.UUID, "user": p.User, "account": p.Account, "partition": p.Partition} {
			if s.Metric[k] != want {
				t.Errorf("label %s = %q, want %q (from the info series)", k, s.Metric[k], want)
			}
		}
		var sum, peak float64
		for _, v := range s.Values {
			sum += v
			peak = max(peak, v)
		}
		// Prometheus has a point per second while the info series
		// existed as scraped; the profile a sample per interval while the
		// job was registered. The job's idle edges (prolog to program,
		// program to epilog) are shorter than a second and fall between
		// scrapes or not, so the counts of points differ by an edge or
		// two, each at 0 %: compare the sums (utilisation × seconds, the
		// GPU's work), and the means over the profile's own sample count.
		// One sample's worth: a sample of the highest phase more or less.
		oneSample := float64(promPhases[len(promPhases)-1].util)
		step := interval.Seconds()
		work, profWork := sum*step, float64(g.UtilSum)*step
		t.Logf("Prometheus' points: %v; profile's histogram: %s", s.Values, histText(g.UtilHist))
		t.Logf("Prometheus: %d points at 1 s, sum %.0f %%·s, mean of its points %.2f %%, max %.0f %%; profile: %d samples, sum %.0f %%·s, mean %.2f %%",
			len(s.Values), work, sum/float64(len(s.Values)), peak, g.Samples, profWork, profMean)
		const eps = 1e-9 // a difference of exactly one sample is within it
		if math.Abs(work-profWork) > oneSample*step+eps {
			t.Errorf("utilisation × time from Prometheus %.0f %%·s, profile %.0f %%·s: differ by more than one sample (%.0f)", work, profWork, oneSample*step)
		}
		if promMean, tol := sum/float64(g.Samples), oneSample/float64(g.Samples); math.Abs(promMean-profMean) > tol+eps {
			t.Errorf("mean utilisation from Prometheus over the profile's %d samples %.2f %%, profile %.2f %%: differ by more than one sample (%.2f)",
				g.Samples, promMean, profMean, tol)
		}
		if math.Abs(peak-float64(g.UtilMax)) > 0.5 {
			t.Errorf("peak from Prometheus %.0f %%, profile %d %%", peak, g.UtilMax)
		}
		// The same sum as one instant query over the job's window.
		window := int(until.Sub(p.Start).Seconds()) + 6
		total := api.queryAt(fmt.Sprintf(`sum_over_time((%s)[%ds:1s])`, q, window), until.Truncate(time.Second))
		if len(total) != 1 || math.Abs(total[0].Value*step-profWork) > oneSample*step+eps {
			t.Errorf("sum_over_time = %v, want one series at %.0f ±%.0f", total, profWork/step, oneSample)
		}
	})

	t.Run("own share", func(t *testing.T) {
		series := api.queryRange(`gpuprof_job_gpu_utilization_percent{job="`+id+`"}`, p.Start, p.End, time.Second)
		if len(series) != 1 {
			t.Fatalf("%d series, want 1: %v", len(series), series)
		}
		var peak float64
		for _, v := range series[0].Values {
			peak = max(peak, v)
		}
		if math.Abs(peak-float64(g.UtilMax)) > 0.5 {
			t.Errorf("own share peaks at %.0f %%, profile %d %% (the job is alone on its GPU)", peak, g.UtilMax)
		}
	})

	t.Run("power by job", func(t *testing.T) {
		q := `sum by (job, user, account) (
  gpuprof_gpu_job_info{job="` + id + `"}
    * on (gpu) group_left
  gpuprof_gpu_power_watts
)`
		series := api.queryRange(q, p.Start, p.End, time.Second)
		if len(series) != 1 || series[0].Metric["job"] != id || series[0].Metric["user"] != p.User {
			t.Fatalf("got %v, want one series of job %s, user %s", series, id, p.User)
		}
		for _, v := range series[0].Values {
			if v <= 0 {
				t.Errorf("power %v W, want > 0", v)
				break
			}
		}
	})

	t.Run("serve counters", func(t *testing.T) {
		promtoolLive(t, promtool, "http://"+serveMetrics+"/metrics", "", "gpuprof_serve_gpu_seconds_total{")
		// docs/prometheus.md: GPU-hours by account (of jobs finished).
		r := api.query(`sum by (account) (gpuprof_serve_gpu_seconds_total) / 3600`)
		wantH := float64(p.End.Unix()-p.Start.Unix()) / 3600
		if len(r) != 1 || r[0].Metric["account"] != p.Account || math.Abs(r[0].Value-wantH) > 1e-9 {
			t.Errorf("GPU-hours by account = %v, want one series account=%q at %.6f", r, p.Account, wantH)
		}
		r = api.query(`sum by (account, partition, model) (gpuprof_serve_jobs_finished_total)`)
		if len(r) != 1 || r[0].Value != 1 || r[0].Metric["model"] != g.Model || r[0].Metric["partition"] != p.Partition {
			t.Errorf("jobs finished = %v, want 1 of model %q, partition %q", r, g.Model, p.Partition)
		}
		r = api.query(`gpuprof_serve_delivery_lag_seconds_count`)
		if len(r) != 1 || r[0].Value != 1 {
			t.Errorf("delivery lag observations = %v, want 1", r)
		}
		r = api.query(`histogram_quantile(0.99, sum by (le) (gpuprof_serve_delivery_lag_seconds_bucket))`)
		if len(r) != 1 || !(r[0].Value >= 0 && r[0].Value <= drainTimeout.Seconds()) {
			t.Errorf("p99 delivery lag = %v, want one value in [0, %s]", r, drainTimeout)
		}
		r = api.query(`sum(gpuprof_serve_pushes_rejected_total)`)
		if len(r) != 1 || r[0].Value != 0 {
			t.Errorf("rejected pushes = %v, want 0", r)
		}
	})

	t.Run("info series gone after the end", func(t *testing.T) {
		// The first scrape of the agent after the job's end marks the
		// series stale; on a loaded machine it can come after serve's
		// counters above. An agent that kept the series would keep it in
		// every scrape until the deadline.
		deadline := time.Now().Add(30 * time.Second)
		for {
			r := api.query(`gpuprof_gpu_job_info{job="` + id + `"}`)
			if len(r) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("30 s after the job: %v, want no info series (stale)", r)
				return
			}
			time.Sleep(time.Second)
		}
	})
}

// histText writes a utilisation histogram's non-empty bins as "value×count".
func histText(h []uint32) string {
	var b strings.Builder
	for v, n := range h {
		if n > 0 {
			fmt.Fprintf(&b, "%d%%×%d ", v, n)
		}
	}
	return strings.TrimSpace(b.String())
}

// promtoolLive runs promtool check metrics on an endpoint's live output
// (the classic text format, as promtool reads it), which must contain
// want.
func promtoolLive(t *testing.T, promtool, u, token, want string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	if !bytes.Contains(body, []byte(want)) {
		t.Errorf("%s has no %s:\n%s", u, want, body)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics on %s: %v\n%s\n%s", u, err, out, body)
	}
}

// waitFor polls ok every 500 ms until it holds, failing the test after
// timeout with the last state ok described.
func waitFor(t *testing.T, what string, timeout time.Duration, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, state := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s; last: %s", what, timeout, state)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// promAPI queries Prometheus' HTTP API (/api/v1).
type promAPI struct {
	t    *testing.T
	base string
}

// promSeries is one series of a query's answer: its labels and values
// (one for an instant vector, one per step for a range).
type promSeries struct {
	Metric map[string]string
	Value  float64
	Values []float64
}

func (a promAPI) getOK(path string, q url.Values, into any) error {
	u := a.base + path
	if q != nil {
		u += "?" + q.Encode()
	}
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: %d %v: %s", u, resp.StatusCode, err, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", u, env.Status, env.Error)
	}
	return json.Unmarshal(env.Data, into)
}

// promValue decodes a [time, "value"] pair.
func promValue(t *testing.T, pair []any) float64 {
	t.Helper()
	if len(pair) != 2 {
		t.Fatalf("sample %v: want [time, value]", pair)
	}
	s, _ := pair[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("sample %v: %v", pair, err)
	}
	return v
}

func (a promAPI) query(q string) []promSeries { return a.queryAt(q, time.Time{}) }

// queryAt runs an instant query at t (now when zero).
func (a promAPI) queryAt(q string, at time.Time) []promSeries {
	a.t.Helper()
	v := url.Values{"query": {q}}
	if !at.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`
		} `json:"result"`
	}
	if err := a.getOK("/api/v1/query", v, &data); err != nil {
		a.t.Fatalf("query %s: %v", q, err)
	}
	if data.ResultType != "vector" {
		a.t.Fatalf("query %s: result type %q, want vector", q, data.ResultType)
	}
	out := make([]promSeries, len(data.Result))
	for i, r := range data.Result {
		out[i] = promSeries{Metric: r.Metric, Value: promValue(a.t, r.Value)}
	}
	return out
}

// rawSampleTimes returns the times of the samples Prometheus stored for
// selector q (one per scrape that carried a series; stale markers left
// out) in the window before at, oldest first.
func (a promAPI) rawSampleTimes(q string, at time.Time, window time.Duration) []time.Time {
	a.t.Helper()
	v := url.Values{"query": {fmt.Sprintf("%s[%ds]", q, int(window.Seconds())+1)},
		"time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Values [][]any `json:"values"`
		} `json:"result"`
	}
	if err := a.getOK("/api/v1/query", v, &data); err != nil {
		a.t.Fatalf("query %s: %v", v.Get("query"), err)
	}
	if data.ResultType != "matrix" {
		a.t.Fatalf("query %s: result type %q, want matrix", v.Get("query"), data.ResultType)
	}
	var out []time.Time
	for _, r := range data.Result {
		for _, pair := range r.Values {
			if len(pair) != 2 {
				a.t.Fatalf("sample %v: want [time, value]", pair)
			}
			sec, ok := pair[0].(float64)
			if !ok {
				a.t.Fatalf("sample %v: want [time, value]", pair)
			}
			out = append(out, time.UnixMilli(int64(math.Round(sec*1000))))
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// queryRange runs a range query from start to end at step.
func (a promAPI) queryRange(q string, start, end time.Time, step time.Duration) []promSeries {
	a.t.Helper()
	v := url.Values{"query": {q},
		"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix(), 10)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][]any           `json:"values"`
		} `json:"result"`
	}
	if err := a.getOK("/api/v1/query_range", v, &data); err != nil {
		a.t.Fatalf("query_range %s: %v", q, err)
	}
	if data.ResultType != "matrix" {
		a.t.Fatalf("query_range %s: result type %q, want matrix", q, data.ResultType)
	}
	out := make([]promSeries, len(data.Result))
	for i, r := range data.Result {
		out[i].Metric = r.Metric
		for _, pair := range r.Values {
			out[i].Values = append(out[i].Values, promValue(a.t, pair))
		}
	}
	return out
}

// e2eMetricsToken is the scraper's token for the agent's per-job series.
const e2eMetricsToken = "e2e-scraper-token-0123456789"
