// Command benchingest measures one collector (`gpuprof serve`, the real
// binary, over its real transport: HTTP with a munge credential per
// request, decoded by the real unmunge) taking the pushes of many
// simulated nodes whose jobs all end at once, as after a maintenance: the
// pushes per second it accepts, each push's latency, the collector's CPU
// (its own and its unmunge children's) and peak RSS, and a user's query
// latency before and during the burst.
//
// Each simulated node pushes its jobs one after another, like an agent's
// outbox: a push refused as busy (429, 503) or not answered is tried
// again after the agent's own backoff (2 s, 4 s, 8 s …) with a new
// credential, as the agent does. A push's first credential is made before
// the burst (munge on this machine would otherwise share the collector's
// cores with it twice over); a retry's is made when it is sent.
//
// It is a benchmark harness, not a product command (scripts/bench-ingest.sh
// runs it). It needs munged running and root (it makes a user's
// credential as uid 65534).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

type options struct {
	bin           string
	dir           string
	nodes         int
	jobsPerNode   int
	gpusPerJob    int
	seconds       int // each job's length at 1 s sampling: its series' points
	queryEvery    time.Duration
	userUID       int
	encodeWorkers int
	userAddr      string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "gpuprof binary")
	flag.StringVar(&o.dir, "dir", "", "work directory (database, config, log)")
	flag.IntVar(&o.nodes, "nodes", 1000, "simulated nodes")
	flag.IntVar(&o.jobsPerNode, "jobs", 2, "jobs ending on each node in the burst")
	flag.IntVar(&o.gpusPerJob, "gpus", 4, "GPUs per job")
	flag.IntVar(&o.seconds, "seconds", 600, "each job's length in seconds (1 s samples: series points per GPU)")
	flag.DurationVar(&o.queryEvery, "query-every", 500*time.Millisecond, "a user's query this often during the burst")
	flag.IntVar(&o.userUID, "user-uid", 65534, "the querying user's uid (owns every tenth job)")
	flag.IntVar(&o.encodeWorkers, "encode-workers", 4, "munge processes at once while making credentials")
	flag.StringVar(&o.userAddr, "user-addr", "127.0.0.2", "the querying user's source address (loopback: the nodes push from 127.0.0.1; \"\" shares theirs)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "benchingest:", err)
		os.Exit(1)
	}
}

func nodeName(i int) string { return fmt.Sprintf("node%04d", i) }

func run(ctx context.Context, o options) error {
	if o.bin == "" || o.dir == "" {
		return errors.New("-bin and -dir are required")
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	addr, pid, stopServe, err := o.startServe()
	if err != nil {
		return err
	}
	defer stopServe()
	url := "http://" + addr

	// The pushes and their first credentials, before the burst.
	pushes := make([]push, 0, o.nodes*o.jobsPerNode)
	for n := range o.nodes {
		for k := range o.jobsPerNode {
			pushes = append(pushes, push{node: n, job: k})
		}
	}
	t := time.Now()
	if err := o.credentials(pushes); err != nil {
		return err
	}
	fmt.Printf("credentials for %d pushes made in %s\n", len(pushes), time.Since(t).Round(time.Millisecond))
	pushBytes := len(o.body(0, 0))

	query, queryURI := o.userQuery(ctx, url)
	var idle []time.Duration
	for range 10 {
		d, _, err := query()
		if err != nil {
			return err
		}
		idle = append(idle, d)
		time.Sleep(100 * time.Millisecond)
	}

	cpu0, err := procCPU(pid)
	if err != nil {
		return err
	}
	side := o.watch(pid, query)
	start := time.Now()
	ps := o.pushAll(ctx, url, pushes)
	wall := time.Since(start)
	side.end()
	cpu1, err := procCPU(pid)
	if err != nil {
		return err
	}
	hwm, _ := procHWM(pid)
	_, rowsAfter, err := query()
	if err != nil {
		return err
	}
	var dbBytes int64
	for _, f := range []string{"central.db", "central.db-wal"} {
		if st, err := os.Stat(filepath.Join(o.dir, f)); err == nil {
			dbBytes += st.Size()
		}
	}

	lat := ps.lat
	slices.Sort(lat)
	slices.Sort(idle)
	during := side.during
	slices.Sort(during)
	gpus := len(lat) * o.gpusPerJob
	fmt.Printf("burst: %d nodes × %d jobs × %d GPUs (%d-point series, %d-byte push bodies)\n",
		o.nodes, o.jobsPerNode, o.gpusPerJob, o.seconds, pushBytes)
	fmt.Printf("accepted %d pushes (%d GPU profiles) in %.1f s: %.1f pushes/s, %.1f GPU profiles/s; %d attempts, %d refused as busy and retried, %d failed\n",
		len(lat), gpus, wall.Seconds(), float64(len(lat))/wall.Seconds(), float64(gpus)/wall.Seconds(), ps.attempts.Load(), ps.refused.Load(), ps.failed.Load())
	fmt.Printf("push latency (first send to acceptance, retries included): p50 %s  p99 %s  max %s\n",
		pct(lat, 50), pct(lat, 99), pct(lat, 100))
	c := cpu1 - cpu0
	fmt.Printf("collector CPU: %.1f s over %.1f s wall (%.2f cores), %.1f ms a push; peak RSS %d MiB (VmHWM %d MiB)\n",
		c, wall.Seconds(), c/wall.Seconds(), 1000*c/float64(max(len(lat), 1)), side.peakRSS>>20, hwm>>20)
	fmt.Printf("user query from %s (%s, %d rows during, %d after): idle p50 %s p99 %s; during the burst (%d queries) p50 %s p99 %s max %s\n",
		cmp.Or(o.userAddr, "the nodes' address"), queryURI, side.queryRows, rowsAfter, pct(idle, 50), pct(idle, 99), len(during), pct(during, 50), pct(during, 99), pct(during, 100))
	fmt.Printf("database after the burst: %d bytes (%.0f a GPU profile)\n", dbBytes, float64(dbBytes)/float64(max(gpus, 1)))
	return nil
}

// push is one job's profile to push: its node, its number there and the
// credential made for its first send.
type push struct {
	node, job int
	cred      string
}

// startServe writes the collector's configuration under o.dir (a fresh
// database, every node's name accepted from 127.0.0.1) and starts
// `gpuprof serve` with it on a free loopback port. stop ends it (SIGTERM)
// and waits for it.
func (o options) startServe() (addr string, pid int, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", 0, nil, err
	}
	addr = ln.Addr().String()
	ln.Close()
	names := make([]string, o.nodes)
	for i := range names {
		names[i] = strconv.Quote(nodeName(i))
	}
	conf := fmt.Sprintf(`cluster = "bench"
db = %q
spool_dir = %q
log_file = %q
[serve]
listen = %q
# The simulated jobs have no Slurm records here: accept each on the word
# of the authenticated node (serve.placement's default would hold them).
placement = "sender"
node_hosts = { "127.0.0.1" = [%s] }
`, filepath.Join(o.dir, "central.db"), filepath.Join(o.dir, "spool"), filepath.Join(o.dir, "serve.log"), addr, strings.Join(names, ", "))
	confPath := filepath.Join(o.dir, "gpuprof.toml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return "", 0, nil, err
	}
	for _, f := range []string{"central.db", "central.db-wal", "central.db-shm"} {
		os.Remove(filepath.Join(o.dir, f))
	}
	serve := exec.Command(o.bin, "serve", "--config", confPath)
	serve.Stdout, serve.Stderr = os.Stderr, os.Stderr
	if err := serve.Start(); err != nil {
		return "", 0, nil, err
	}
	stop = func() {
		serve.Process.Signal(syscall.SIGTERM)
		serve.Wait()
	}
	if err := waitListening(addr, 20*time.Second); err != nil {
		stop()
		return "", 0, nil, err
	}
	return addr, serve.Process.Pid, stop, nil
}

// credentials makes each push's first credential with o.encodeWorkers
// munge processes at once, before the burst.
func (o options) credentials(pushes []push) error {
	var encErr atomic.Value
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range o.encodeWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(pushes) {
					return
				}
				body := o.body(pushes[i].node, pushes[i].job)
				c, err := encode(0, collect.Binding(http.MethodPost, "/v1/profiles", body))
				if err != nil {
					encErr.Store(err)
					return
				}
				pushes[i].cred = c
			}
		})
	}
	wg.Wait()
	if e, _ := encErr.Load().(error); e != nil {
		return e
	}
	return nil
}

// userQuery is a user's query, timed, and its URI: the first page of
// their jobs as `gpuprof jobs` asks, with a fresh credential each time,
// from o.userAddr where it is set. It returns how long the answer took
// and how many jobs it had.
func (o options) userQuery(ctx context.Context, url string) (query func() (time.Duration, int, error), uri string) {
	// The user asks from another host than the nodes (as from a login
	// node): the collector shares its decode slots out by host.
	userClient := client
	if o.userAddr != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(o.userAddr)}}
		userClient = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 2 * time.Minute}
	}
	// A user's query: the first page of their jobs as `gpuprof jobs` asks.
	uri = "/v1/jobs"
	if q := collect.ViewFilterQuery(store.ViewFilter{Limit: 50}); q != "" {
		uri += "?" + q
	}
	query = func() (time.Duration, int, error) {
		cred, err := encode(o.userUID, collect.Binding(http.MethodGet, uri, nil))
		if err != nil {
			return 0, 0, err
		}
		t := time.Now()
		code, body, err := sendWith(ctx, userClient, http.MethodGet, url+uri, nil, cred)
		d := time.Since(t)
		if err == nil && code != 200 {
			err = fmt.Errorf("query: %d %s", code, body)
		}
		var views []json.RawMessage
		if err == nil {
			err = json.Unmarshal(body, &views)
		}
		return d, len(views), err
	}
	return query, uri
}

// sideWatch is what runs beside the burst: a user's query every
// o.queryEvery (their latencies, and the rows of the last) and the
// collector's RSS every 200 ms (its peak). Its fields are read after end.
type sideWatch struct {
	mu        sync.Mutex
	during    []time.Duration
	queryRows int
	peakRSS   int64
	stop      chan struct{}
	wg        sync.WaitGroup
}

// watch starts the side watch of the collector pid.
func (o options) watch(pid int, query func() (time.Duration, int, error)) *sideWatch {
	w := &sideWatch{stop: make(chan struct{})}
	w.wg.Go(func() {
		tk := time.NewTicker(o.queryEvery)
		defer tk.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tk.C:
			}
			d, n, err := query()
			if err != nil {
				fmt.Fprintln(os.Stderr, "query during the burst:", err)
				continue
			}
			w.mu.Lock()
			w.during, w.queryRows = append(w.during, d), n
			w.mu.Unlock()
		}
	})
	w.wg.Go(func() {
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			if r, err := procRSS(pid); err == nil && r > w.peakRSS {
				w.peakRSS = r
			}
			select {
			case <-w.stop:
				return
			case <-tk.C:
			}
		}
	})
	return w
}

// end stops the side watch and waits for it.
func (w *sideWatch) end() {
	close(w.stop)
	w.wg.Wait()
}

// pushStats is what the burst's pushes did: the accepted ones' latency
// (first send to acceptance), the sends, those refused as busy and
// retried, and those that failed for good.
type pushStats struct {
	mu                        sync.Mutex
	lat                       []time.Duration
	attempts, refused, failed atomic.Int64
}

// pushAll sends every push, each node's in turn from a goroutine of its
// own, retrying a busy refusal with the agent's backoff and a fresh
// credential, and returns what they did.
func (o options) pushAll(ctx context.Context, url string, pushes []push) *pushStats {
	st := &pushStats{}
	var wg sync.WaitGroup
	for n := range o.nodes {
		wg.Go(func() {
			for k := range o.jobsPerNode {
				p := pushes[n*o.jobsPerNode+k]
				t := time.Now()
				for try := 0; ; try++ {
					cred := p.cred
					body := o.body(p.node, p.job)
					if try > 0 {
						c, err := encode(0, collect.Binding(http.MethodPost, "/v1/profiles", body))
						if err != nil {
							st.failed.Add(1)
							fmt.Fprintln(os.Stderr, "munge:", err)
							return
						}
						cred = c
					}
					st.attempts.Add(1)
					code, msg, err := send(ctx, http.MethodPost, url+"/v1/profiles", body, cred)
					if err == nil && code < 300 {
						st.mu.Lock()
						st.lat = append(st.lat, time.Since(t))
						st.mu.Unlock()
						break
					}
					if err == nil && code != http.StatusTooManyRequests && code != http.StatusServiceUnavailable {
						st.failed.Add(1)
						fmt.Fprintf(os.Stderr, "push %s/%d refused for good: %d %s\n", nodeName(p.node), p.job, code, msg)
						break
					}
					st.refused.Add(1)
					time.Sleep(min(time.Second<<min(try+1, 16), 5*time.Minute)) // the agent's backoff
				}
			}
		})
	}
	wg.Wait()
	return st
}

// body is the push of job k of node n: a finished profile of gpusPerJob
// GPUs sampled every second for o.seconds, deterministic so that a retry
// sends the same bytes.
func (o options) body(n, k int) []byte {
	start := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	id := strconv.Itoa(100000 + n*o.jobsPerNode + k)
	uid := 2000 + n%50
	if (n*o.jobsPerNode+k)%10 == 0 {
		uid = o.userUID
	}
	j := profile.Job{Key: profile.Key{Cluster: "bench", JobID: id, Node: nodeName(n)}, User: "u" + strconv.Itoa(uid), UID: uid, GID: 100,
		Account: "acct", Partition: "gpu", Start: start, Status: profile.StatusRunning, Source: profile.SourceAgent,
		SampleInterval: time.Second, Driver: "550.54.15"}
	for g := range o.gpusPerJob {
		gp := profile.NewGPU(gpu.Device{UUID: fmt.Sprintf("GPU-%s-%d-%d", nodeName(n), k, g), Name: "NVIDIA H100 80GB HBM3", Minor: g,
			MemoryTotal: 80 << 30}, g, start, time.Second, profile.DefaultMaxPoints)
		for s := range o.seconds {
			u := uint32((s*7 + g*13 + n) % 101)
			gp.Observe(profile.Reading{Time: start.Add(time.Duration(s) * time.Second), Util: gpu.Some(u),
				MemUsed: gpu.Some(uint64(30<<30 + (s%40)<<20)), PowerMW: gpu.Some(uint32(300_000 + 1000*u)), TempC: gpu.Some(uint32(60)),
				Processes: 1}, time.Second)
		}
		j.GPUs = append(j.GPUs, gp)
	}
	j.LastSample = start.Add(time.Duration(o.seconds-1) * time.Second)
	j.Finish(start.Add(time.Duration(o.seconds) * time.Second))
	b, err := json.Marshal(j)
	if err != nil {
		panic(err)
	}
	return b
}

// encode makes a munge credential for payload as uid.
func encode(uid int, payload []byte) (string, error) {
	cmd := exec.Command("munge")
	cmd.Stdin = bytes.NewReader(payload)
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("munge as uid %d: %w", uid, err)
	}
	return strings.TrimSpace(string(out)), nil
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2000}, Timeout: 2 * time.Minute}

func send(ctx context.Context, method, url string, body []byte, cred string) (int, []byte, error) {
	return sendWith(ctx, client, method, url, body, cred)
}

func sendWith(ctx context.Context, client *http.Client, method, url string, body []byte, cred string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "MUNGE "+cred)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func waitListening(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("serve not listening on %s within %s", addr, within)
}

// procCPU is the process's CPU seconds, its reaped children's (unmunge)
// included: utime, stime, cutime, cstime of /proc/PID/stat.
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var ticks float64
	for _, i := range []int{11, 12, 13, 14} { // fields 14–17, counted from state (field 3)
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return ticks / 100, nil // USER_HZ
}

func procStatus(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s", key)
}

func procRSS(pid int) (int64, error) { return procStatus(pid, "VmRSS") }
func procHWM(pid int) (int64, error) { return procStatus(pid, "VmHWM") }

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := (p*len(d) + 99) / 100
	return d[min(max(i, 1), len(d))-1].Round(time.Millisecond)
}
