package nodefaults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

const (
	gib = uint64(1) << 30

	// The node's timing, as the fault tests need it: short enough that a
	// test sees several samples and flushes within a second or two.
	deadline      = 2 * time.Second
	interval      = 200 * time.Millisecond
	flushInterval = 500 * time.Millisecond

	// hookSlack is how much longer than the deadline a hook process may
	// take, start and exit included.
	hookSlack = 300 * time.Millisecond

	// nodeName and clusterName are what slurmd puts in the hook
	// environment; the configuration leaves both empty, as a site would.
	nodeName    = "gpu01"
	clusterName = "faults"

	// waitTimeout bounds every wait for the agent or the database.
	waitTimeout = 20 * time.Second
)

// node is one simulated GPU node: a directory with its configuration,
// database, spool, socket, log, simulated GPU state, gres.conf and the four
// device files it names.
type node struct {
	dir    string
	config string // configuration file
	cfg    config.Config
	gres   string
	// hookBin runs the hooks: gpuprofBin, or hookBin (gpuprof-hook) in
	// the tests that check the two run the same hook.
	hookBin string
}

// newNode creates a node in a fresh directory. edit, when not nil, changes
// the configuration before it is written.
func newNode(t *testing.T, edit func(dir string, c *config.Config)) *node {
	t.Helper()
	// Not t.TempDir: unix socket paths must stay under 108 bytes, and test
	// names make those directories long.
	dir, err := os.MkdirTemp("", "nf-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("NODEFAULTS_KEEP") != "" {
			t.Logf("kept node directory %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	if err := os.Mkdir(filepath.Join(dir, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Regular files stand in for /dev/nvidia0-3: their minor is taken from
	// the name, as slurmd does.
	for i := range 4 {
		if err := os.WriteFile(filepath.Join(dir, "dev", fmt.Sprintf("nvidia%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gres := filepath.Join(dir, "gres.conf")
	gresText := "# the node's GPUs, as Slurm lists them\nName=gpu Type=h100 File=" + filepath.Join(dir, "dev", "nvidia[0-3]") + "\n"
	if err := os.WriteFile(gres, []byte(gresText), 0o644); err != nil {
		t.Fatal(err)
	}

	c := config.Default()
	c.DB = filepath.Join(dir, "gpuprof.db")
	c.SpoolDir = filepath.Join(dir, "spool")
	c.Socket = filepath.Join(dir, "agent.sock")
	// Each node its own query socket: the default, /run/gpuprof, is one
	// for all the tests running at once.
	c.QuerySocket = filepath.Join(dir, "run", "query.sock")
	c.LogFile = filepath.Join(dir, "gpuprof.log")
	c.Agent.GPU = "sim"
	c.Agent.Interval = config.Duration(interval)
	c.Agent.FlushInterval = config.Duration(flushInterval)
	c.Hooks.Deadline = config.Duration(deadline)
	c.Hooks.GresConf = gres
	c.Sim.Dir = filepath.Join(dir, "sim")
	if edit != nil {
		edit(dir, &c)
	}
	n := &node{dir: dir, cfg: c, gres: gres, hookBin: gpuprofBin}
	n.config = n.writeConfig(t, "gpuprof.toml", c)
	return n
}

// writeConfig writes c as a configuration file of the node and returns its
// path.
func (n *node) writeConfig(t *testing.T, name string, c config.Config) string {
	t.Helper()
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		t.Fatalf("encode configuration: %v", err)
	}
	path := filepath.Join(n.dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --- the agent ---

// agentProc is a running `gpuprof agent`.
type agentProc struct {
	cmd    *exec.Cmd
	output string // file with its stdout and stderr
	done   chan struct{}
	err    error // Wait's result, valid once done is closed
}

// startAgent starts the agent and waits until it answers on its socket.
func (n *node) startAgent(t *testing.T) *agentProc {
	t.Helper()
	out, err := os.CreateTemp(n.dir, "agent-*.out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(gpuprofBin, "agent", "--config", n.config)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start agent: %v", err)
	}
	a := &agentProc{cmd: cmd, output: out.Name(), done: make(chan struct{})}
	go func() {
		a.err = cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() { a.stop(t) })

	for start := time.Now(); time.Since(start) < waitTimeout; time.Sleep(50 * time.Millisecond) {
		select {
		case <-a.done:
			t.Fatalf("agent exited before answering: %v\n%s", a.err, a.dump())
		default:
		}
		if c, err := net.Dial("unix", n.cfg.Socket); err == nil {
			c.Close()
			return a
		}
	}
	t.Fatalf("agent not answering on %s after %s\n%s", n.cfg.Socket, waitTimeout, a.dump())
	return nil
}

func (a *agentProc) dump() string {
	b, _ := os.ReadFile(a.output)
	return "agent output:\n" + string(b)
}

// kill kills the agent with SIGKILL, as the OOM killer or a crash would:
// no final flush, its socket file left behind.
func (a *agentProc) kill(t *testing.T) {
	t.Helper()
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("agent still running 10s after SIGKILL")
	}
}

// stop ends the agent with SIGTERM, as systemd does; SIGKILL after 10 s.
func (a *agentProc) stop(t *testing.T) {
	t.Helper()
	select {
	case <-a.done:
		return
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
		t.Errorf("agent ignored SIGTERM for 10s\n%s", a.dump())
	}
}

// running reports whether the agent process is still alive.
func (a *agentProc) running() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

// --- hooks ---

// jobUID is the owner of the tests' jobs: the uid the simulated programs
// (startBurn) run as, since the agent charges a program to a job only when
// its real uid is the job's owner.
var jobUID = os.Getuid()

// hookEnv is the environment slurmd gives a prolog or epilog of a job on
// this node holding the given Slurm GPU indices (SLURM_JOB_GPUS).
func hookEnv(jobID, gpus string) map[string]string {
	return map[string]string{
		"SLURM_JOB_ID":        jobID,
		"SLURM_JOB_USER":      "alice",
		"SLURM_JOB_UID":       strconv.Itoa(jobUID),
		"SLURM_JOB_GID":       strconv.Itoa(jobUID),
		"SLURMD_NODENAME":     nodeName,
		"SLURM_CLUSTER_NAME":  clusterName,
		"SLURM_JOB_PARTITION": "gpu",
		"SLURM_JOB_ACCOUNT":   "lab",
		"SLURM_JOB_GPUS":      gpus,
		"PATH":                "/usr/sbin:/usr/bin:/sbin:/bin",
	}
}

// withExit returns env with the epilog's exit code of a job that exited
// with status.
func withExit(env map[string]string, status int) map[string]string {
	e := maps.Clone(env)
	e["SLURM_JOB_EXIT_CODE"] = fmt.Sprint(status << 8) // a raw wait status
	return e
}

// hookRun is the outcome of one hook process.
type hookRun struct {
	kind           string
	exit           int
	wall           time.Duration
	stdout, stderr string
}

// runHook runs `gpuprof prolog` or `gpuprof epilog` (or gpuprof-hook's,
// n.hookBin) with exactly env (as `env -i` would) plus the
// SLURM_SCRIPT_CONTEXT slurmd sets.
func (n *node) runHook(t *testing.T, configPath, kind string, env map[string]string) hookRun {
	t.Helper()
	cmd := exec.Command(n.hookBin, kind, "--config", configPath)
	cmd.Env = []string{"SLURM_SCRIPT_CONTEXT=" + kind + "_slurmd"}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := hookRun{kind: kind, wall: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	default:
		t.Errorf("%s: %v", kind, err)
		r.exit = -1
	}
	return r
}

// checkHook reports what slurmd would hold against a hook: a non-zero exit
// (drains the node), output (slurmd does not expect any) and, when
// timed, running past the deadline.
func checkHook(t *testing.T, job string, r hookRun, timed bool) {
	t.Helper()
	if r.exit != 0 {
		t.Errorf("job %q: %s exit status = %d, want 0 (stderr: %q)", job, r.kind, r.exit, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("job %q: %s wrote to stdout: %q", job, r.kind, r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("job %q: %s wrote to stderr: %q", job, r.kind, r.stderr)
	}
	if timed && r.wall >= deadline+hookSlack {
		t.Errorf("job %q: %s took %s, want < deadline %s + %s", job, r.kind, r.wall.Round(time.Millisecond), deadline, hookSlack)
	}
}

// hook runs a hook with the node's configuration and checks it (timed).
func (n *node) hook(t *testing.T, kind string, env map[string]string) hookRun {
	t.Helper()
	r := n.runHook(t, n.config, kind, env)
	checkHook(t, env["SLURM_JOB_ID"], r, true)
	return r
}

// --- simulated CUDA programs ---

// burnProc is a running `gpuprof simgpu burn`.
type burnProc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{}
	err    error
}

// startBurn starts a simulated CUDA program of job jobID that sees the
// GPUs in cudaVisible, holding mem and util until stopped.
func (n *node) startBurn(t *testing.T, jobID, cudaVisible, mem, util string) *burnProc {
	t.Helper()
	cmd := exec.Command(gpuprofBin, "simgpu", "burn", "--config", n.config, "--mem", mem, "--util", util)
	// What the job's program inherits from slurmstepd, as far as the agent
	// cares: its job id (read from /proc/PID/environ) and its GPUs.
	cmd.Env = []string{"SLURM_JOB_ID=" + jobID, "CUDA_VISIBLE_DEVICES=" + cudaVisible, "PATH=/usr/bin:/bin"}
	b := &burnProc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start burn of job %s: %v", jobID, err)
	}
	go func() {
		b.err = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-b.done
	})
	return b
}

// stop ends the burn with SIGTERM, as scancel or the job's end does, and
// fails the test if it had already ended: it was meant to hold its GPUs
// until now.
func (b *burnProc) stop(t *testing.T) {
	t.Helper()
	select {
	case <-b.done:
		t.Fatalf("burn ended before it was stopped: %v\n%s", b.err, b.stderr)
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("burn ignored SIGTERM for 10s")
	}
}

// --- reading profiles ---

// show returns the job's profile as `gpuprof show ID --json` prints it;
// found is false when the command says the job is not in the database.
func (n *node) show(t *testing.T, jobID string) (j profile.Job, found bool) {
	t.Helper()
	cmd := exec.Command(gpuprofBin, "show", jobID, "--json", "--config", n.config)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), store.ErrNotFound.Error()) {
			return profile.Job{}, false
		}
		t.Fatalf("gpuprof show %s: %v\n%s", jobID, err, stderr.String())
	}
	var views []jobView
	if err := json.Unmarshal(stdout.Bytes(), &views); err != nil {
		t.Fatalf("gpuprof show %s --json: %v\n%s", jobID, err, stdout.String())
	}
	if len(views) != 1 || len(views[0].Profiles) != 1 {
		t.Fatalf("gpuprof show %s --json: want one job with one profile (one cluster, one node), got\n%s", jobID, stdout.String())
	}
	return views[0].Profiles[0], true
}

// jobView is one element of `gpuprof show --json`: a job of one cluster
// with its profile on each node it ran on (other fields are not checked
// here).
type jobView struct {
	Cluster  string        `json:"cluster"`
	JobID    string        `json:"job_id"`
	Profiles []profile.Job `json:"profiles"`
}

// ingest is the node's database writer when no agent runs: `gpuprof
// ingest` applies what the hooks spooled. Unless the database may exist
// already (an earlier ingest made it), it first checks that the hooks left
// it alone: a hook never writes SQLite.
func (n *node) ingest(t *testing.T, dbMayExist bool) {
	t.Helper()
	if _, err := os.Stat(n.cfg.DB); !dbMayExist && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the database exists before any writer ran (%v): a hook wrote SQLite", err)
	}
	out, err := exec.Command(gpuprofBin, "ingest", "--config", n.config).CombinedOutput()
	if err != nil {
		t.Fatalf("gpuprof ingest: %v\n%s", err, out)
	}
}

// mustShow is show for a job that must be in the database.
func (n *node) mustShow(t *testing.T, jobID string) profile.Job {
	t.Helper()
	j, ok := n.show(t, jobID)
	if !ok {
		t.Fatalf("job %s: no profile in the database\nlog:\n%s", jobID, n.readLog(t))
	}
	return j
}

// profiles reads the database directly (cheaper than a process per poll):
// every profile by job id, or nil while the database does not exist yet.
func (n *node) profiles(t *testing.T) map[string]profile.Job {
	t.Helper()
	if _, err := os.Stat(n.cfg.DB); err != nil {
		return nil
	}
	ctx := context.Background()
	db, err := store.Open(ctx, n.cfg.DB, store.Options{ReadOnly: true, BusyTimeout: time.Second})
	if err != nil {
		// The agent may be creating or migrating it right now.
		t.Logf("read database: %v", err)
		return nil
	}
	defer db.Close()
	jobs, err := db.ListJobs(ctx, store.Filter{})
	if err != nil {
		t.Logf("read database: %v", err)
		return nil
	}
	m := make(map[string]profile.Job, len(jobs))
	for _, j := range jobs {
		m[j.JobID] = j
	}
	return m
}

// waitProfiles polls the database until cond holds for its profiles and
// returns them; it fails the test after waitTimeout saying what was
// awaited.
func (n *node) waitProfiles(t *testing.T, what string, cond func(map[string]profile.Job) bool) map[string]profile.Job {
	t.Helper()
	var last map[string]profile.Job
	for start := time.Now(); time.Since(start) < waitTimeout; time.Sleep(100 * time.Millisecond) {
		last = n.profiles(t)
		if cond(last) {
			return last
		}
	}
	t.Fatalf("waited %s for %s; database has %d profiles\nlog:\n%s", waitTimeout, what, len(last), n.readLog(t))
	return nil
}

// waitJob polls the database until job's profile satisfies cond.
func (n *node) waitJob(t *testing.T, jobID, what string, cond func(profile.Job) bool) profile.Job {
	t.Helper()
	m := n.waitProfiles(t, "job "+jobID+": "+what, func(m map[string]profile.Job) bool {
		j, ok := m[jobID]
		return ok && cond(j)
	})
	return m[jobID]
}

// readLog returns the node's log file (hooks and agent).
func (n *node) readLog(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(n.cfg.LogFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read log: %v", err)
	}
	return string(b)
}

// logLines returns the log lines that contain every one of parts.
func (n *node) logLines(t *testing.T, parts ...string) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(n.readLog(t)) {
		if containsAll(line, parts...) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// slowestHook returns the longest time a hook of this kind reported in
// its final log line ("took=").
func (n *node) slowestHook(t *testing.T, kind string) time.Duration {
	t.Helper()
	var slowest time.Duration
	for _, line := range n.logLines(t, "msg=done", "hook="+kind, "took=") {
		_, v, _ := strings.Cut(line, "took=")
		v, _, _ = strings.Cut(v, " ")
		if d, err := time.ParseDuration(v); err == nil {
			slowest = max(slowest, d)
		}
	}
	return slowest
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// uuidsByMinor returns the simulated GPUs' UUIDs by device minor (the
// simulated node must exist: an agent or hook has opened it).
func (n *node) uuidsByMinor(t *testing.T) map[int]string {
	t.Helper()
	devs, err := sim.LoadNode(n.cfg.Sim.Dir)
	if err != nil {
		t.Fatalf("simulated node: %v", err)
	}
	m := map[int]string{}
	for _, d := range devs {
		m[d.Minor] = d.UUID
	}
	return m
}

// spoolKinds counts the records in the node's spool by kind (the file
// names end in ".KIND.json").
func (n *node) spoolKinds(t *testing.T) map[string]int {
	t.Helper()
	entries, err := os.ReadDir(n.cfg.SpoolDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read spool: %v", err)
	}
	m := map[string]int{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		if e.IsDir() || strings.HasPrefix(name, ".") || name == e.Name() {
			continue
		}
		m[name[strings.LastIndexByte(name, '.')+1:]]++
	}
	return m
}

// hasReason reports whether one of j's partial reasons contains every part.
func hasReason(j profile.Job, parts ...string) bool {
	return slices.ContainsFunc(j.PartialReasons, func(r string) bool { return containsAll(r, parts...) })
}

// parallel runs fn for every i in [0, n) in goroutines, at most limit at
// once (0: all at once), and waits for them.
func parallel(n, limit int, fn func(i int)) {
	if limit <= 0 {
		limit = n
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}
