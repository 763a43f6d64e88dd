package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// Multi-node mode: node agents deliver finished profiles to `gpuprof serve`
// on the controller, authenticated with munge; users query it with their
// own munge identity.

// drainTimeout bounds the wait for the agents' outboxes after the collector
// is back: a profile whose delivery failed four times waits 16 s for its
// next try.
const drainTimeout = 90 * time.Second

// ensureMunge makes sure munged answers, starting it as testcluster.sh does
// when it does not.
func ensureMunge(t *testing.T) {
	t.Helper()
	if mungeAnswers() {
		return
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "munged does not answer, and starting it needs root")
	}
	script := filepath.Join(moduleRoot(t), "contrib", "slurm", "testcluster.sh")
	out, err := exec.Command("bash", script, "munge", t.TempDir()).CombinedOutput()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == exitNoSlurm {
		skipOrFail(t, "munge cannot be installed here:\n%s", out)
	}
	if err != nil || !mungeAnswers() {
		t.Fatalf("testcluster.sh munge: %v\n%s", err, out)
	}
}

func mungeAnswers() bool {
	cred, err := exec.Command("munge", "-n").Output()
	if err != nil {
		return false
	}
	cmd := exec.Command("unmunge")
	cmd.Stdin = bytes.NewReader(cred)
	return cmd.Run() == nil
}

// mungeHost returns the address munge reports for this host, the
// ENCODE_HOST of `munge -n | unmunge --numeric`: what serve binds this
// host's pushes to, and the key under which serve.node_hosts lists the
// simulated nodes the test runs here (their names resolve nowhere).
func mungeHost(t *testing.T) string {
	t.Helper()
	cred, err := exec.Command("munge", "-n").Output()
	if err != nil {
		t.Fatalf("munge -n: %v", err)
	}
	cmd := exec.Command("unmunge", "--numeric")
	cmd.Stdin = bytes.NewReader(cred)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("unmunge --numeric: %v", err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "ENCODE_HOST:"); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("unmunge --numeric printed no ENCODE_HOST:\n%s", out)
	return ""
}

// resolvesTo says whether name resolves, on this host, to addr.
func resolvesTo(t *testing.T, name, addr string) bool {
	t.Helper()
	want, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	addrs, err := net.LookupHost(name)
	if err != nil {
		t.Logf("lookup %s: %v", name, err)
		return false
	}
	for _, a := range addrs {
		if got, err := netip.ParseAddr(a); err == nil && got.Unmap() == want.Unmap() {
			return true
		}
	}
	return false
}

// mungeAs returns a munge credential carrying payload, made by user (""
// means this process's user).
func mungeAs(t *testing.T, username string, payload []byte) string {
	t.Helper()
	cmd := exec.Command("munge")
	if username != "" {
		cmd = exec.Command("runuser", "-u", username, "--", "munge")
	}
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("munge as %q: %v\n%s", username, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// writeConfigFile writes c as a configuration file (mode 0644: other
// users' commands read it) and checks that gpuprof would accept it.
func writeConfigFile(t *testing.T, path string, c config.Config) string {
	t.Helper()
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		t.Fatalf("encode configuration: %v", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path, true); err != nil {
		t.Fatalf("the test's own configuration %s: %v", path, err)
	}
	return path
}

// pushUser is the serve.slurm_user that lets this process's agents push:
// root may always; another user runs the test's agents only as themselves.
func pushUser(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// startServe starts `gpuprof serve` and waits until it accepts connections.
func startServe(t *testing.T, bin, cfgPath, addr, outPath string) *process {
	t.Helper()
	p := startProcess(t, outPath, os.Environ(), bin, "serve", "--config", cfgPath)
	deadline := time.Now().Add(agentTimeout)
	for {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return p
		}
		if !p.running() || time.Now().After(deadline) {
			out, _ := os.ReadFile(outPath)
			t.Fatalf("gpuprof serve not listening on %s (exited: %t, %v):\n%s", addr, !p.running(), p.err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// simNode is one simulated GPU node of a multi-node cluster: its own
// configuration, database, spool, socket, simulated GPUs and agent.
type simNode struct {
	name    string
	dir     string
	bin     string
	cfgPath string
	cfg     config.Config
	agent   *process
}

func newSimNode(t *testing.T, bin, dir, name, cluster, collector string) *simNode {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Regular files stand in for /dev/nvidia0-3: the minor is taken from
	// the name, as slurmd does.
	for i := range 4 {
		if err := os.WriteFile(filepath.Join(dir, "dev", fmt.Sprintf("nvidia%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gres := filepath.Join(dir, "gres.conf")
	if err := os.WriteFile(gres, []byte("Name=gpu File="+filepath.Join(dir, "dev", "nvidia[0-3]")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	c.Cluster, c.Node, c.Collector = cluster, name, collector
	c.DB = filepath.Join(dir, "node.db")
	c.SpoolDir = filepath.Join(dir, "spool")
	c.Socket = filepath.Join(dir, "agent.sock")
	c.LogFile = filepath.Join(dir, "gpuprof.log")
	c.Agent.GPU = "sim"
	c.Agent.Interval = config.Duration(250 * time.Millisecond)
	c.Agent.FlushInterval = config.Duration(time.Second)
	c.Hooks.GresConf = gres
	c.Sim.Dir = filepath.Join(dir, "sim")
	n := &simNode{name: name, dir: dir, bin: bin, cfg: c}
	n.cfgPath = writeConfigFile(t, filepath.Join(dir, "gpuprof.toml"), c)
	return n
}

func (n *simNode) startAgent(t *testing.T) {
	t.Helper()
	out := filepath.Join(n.dir, "agent.out")
	n.agent = startProcess(t, out, os.Environ(), n.bin, "agent", "--config", n.cfgPath)
	waitAgent(t, n.agent, n.cfg.Socket, out)
}

// hook runs the prolog or epilog with the environment slurmd gives it (and
// nothing else); like slurmd, it holds a non-zero exit or any output
// against the hook. Safe to call from any goroutine.
func (n *simNode) hook(kind, job, gpus string, exit int) error {
	cmd := exec.Command(n.bin, kind, "--config", n.cfgPath)
	uid := strconv.Itoa(os.Getuid())
	cmd.Env = []string{
		"SLURM_SCRIPT_CONTEXT=" + kind + "_slurmd", "SLURM_JOB_ID=" + job, "SLURM_JOB_USER=tester",
		"SLURM_JOB_UID=" + uid, "SLURM_JOB_GID=" + uid, "SLURMD_NODENAME=" + n.name,
		"SLURM_CLUSTER_NAME=" + n.cfg.Cluster, "SLURM_JOB_PARTITION=gpu", "SLURM_JOB_ACCOUNT=lab",
		"SLURM_JOB_GPUS=" + gpus, "SLURM_NODELIST=n[1-2]",
	}
	if kind == "epilog" {
		cmd.Env = append(cmd.Env, "SLURM_JOB_EXIT_CODE="+strconv.Itoa(exit<<8), fmt.Sprintf("SLURM_JOB_EXIT_CODE2=%d:0", exit))
	}
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		return fmt.Errorf("%s %s of job %s: %v, output %q; want exit 0 and no output", n.name, kind, job, err, out)
	}
	return nil
}

// burn runs a simulated CUDA program of job on gpus for d.
func (n *simNode) burn(job, gpus, mem string, d time.Duration) error {
	cmd := exec.Command(n.bin, "simgpu", "burn", "--config", n.cfgPath, "--mem", mem, "--util", "50", "--for", d.String())
	cmd.Env = []string{"SLURM_JOB_ID=" + job, "CUDA_VISIBLE_DEVICES=" + gpus, "PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: burn of job %s: %v\n%s", n.name, job, err, out)
	}
	return nil
}

// runJob runs one job on the node as Slurm would: prolog, program, epilog.
func (n *simNode) runJob(job, gpus, mem string, d time.Duration, exit int) error {
	return errors.Join(n.hook("prolog", job, gpus, 0), n.burn(job, gpus, mem, d), n.hook("epilog", job, gpus, exit))
}

// outboxLen reads how many profiles the node still has to deliver.
func (n *simNode) outboxLen(ctx context.Context) (int, error) {
	db, err := store.Open(ctx, n.cfg.DB, store.Options{ReadOnly: true, BusyTimeout: time.Second})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return db.OutboxLen(ctx)
}

// profileSummary is what must be identical between a node's profile and
// the collector's copy.
func profileSummary(p profile.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s %s start=%s end=%s exit=%t:%d partial=%t", p.Cluster, p.JobID, p.Node, p.Status,
		p.Start.UTC().Format(time.RFC3339Nano), p.End.UTC().Format(time.RFC3339Nano), p.ExitKnown, p.ExitStatus, p.Partial)
	for _, g := range p.GPUs {
		fmt.Fprintf(&b, " [%s idx=%d peak=%d samples=%d util_sum=%d]", g.UUID, g.SlurmIndex, g.MemPeak, g.Samples, g.UtilSum)
	}
	return b.String()
}

// TestCollectorOutageExactlyOnce runs jobs on two simulated nodes whose
// agents deliver to one collector, kills the collector (SIGKILL) for 10 s
// while jobs finish, restarts it, and checks that every profile reaches the
// controller exactly once and as the node has it, that a job that ran on
// both nodes shows both, and that the agents' outboxes drain.
func TestCollectorOutageExactlyOnce(t *testing.T) {
	t.Parallel()
	ensureMunge(t)
	bin := gpuprofBinary(t)
	work := t.TempDir()
	const cluster = "outage"
	addr := freeAddr(t)

	centralDir := filepath.Join(work, "central")
	if err := os.Mkdir(centralDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cc := config.Default()
	cc.Cluster = cluster
	cc.DB = filepath.Join(centralDir, "central.db")
	cc.SpoolDir = filepath.Join(centralDir, "spool")
	cc.LogFile = filepath.Join(centralDir, "gpuprof.log")
	cc.Serve.Listen = addr
	cc.Serve.SlurmUser = pushUser(t)
	// Both simulated nodes run on this host, under names that resolve
	// nowhere: serve's default rule would refuse them.
	cc.Serve.NodeHosts = map[string][]string{mungeHost(t): {"n1", "n2"}}
	// No jobcomp feeds this collector: the nodes' word places their jobs.
	cc.Serve.Placement = "sender"
	centralCfg := writeConfigFile(t, filepath.Join(centralDir, "gpuprof.toml"), cc)
	serve := startServe(t, bin, centralCfg, addr, filepath.Join(centralDir, "serve-1.out"))

	nodes := []*simNode{
		newSimNode(t, bin, filepath.Join(work, "n1"), "n1", cluster, "http://"+addr),
		newSimNode(t, bin, filepath.Join(work, "n2"), "n2", cluster, "http://"+addr),
	}
	for _, n := range nodes {
		n.startAgent(t)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, f := range []string{cc.LogFile, nodes[0].cfg.LogFile, nodes[1].cfg.LogFile} {
			if data, err := os.ReadFile(f); err == nil {
				t.Logf("==== %s (last 60 lines)\n%s", f, lastLines(string(data), 60))
			}
		}
	})

	var wg sync.WaitGroup
	var mu sync.Mutex
	var jobErrs []error
	run := func(fn func() error) {
		wg.Go(func() {
			if err := fn(); err != nil {
				mu.Lock()
				jobErrs = append(jobErrs, err)
				mu.Unlock()
			}
		})
	}
	want := map[string][]string{} // job → nodes
	// The multi-node job: on both nodes from the start, ending on both
	// while the collector is down.
	const multi = "7100"
	want[multi] = []string{"n1", "n2"}
	run(func() error {
		var errs [2]error
		var mwg sync.WaitGroup
		for i, n := range nodes {
			mwg.Go(func() { errs[i] = n.runJob(multi, "0", "4GiB", 7*time.Second, 0) })
		}
		mwg.Wait()
		return errors.Join(errs[:]...)
	})
	began := time.Now()
	var killedAt time.Time
	const stream = 16
	for i := range stream {
		time.Sleep(time.Until(began.Add(time.Duration(i) * 600 * time.Millisecond)))
		if i == 5 {
			// Mid-stream: profiles are being delivered and jobs are running.
			if err := serve.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-serve.done
			killedAt = time.Now()
			t.Logf("collector killed %s into the stream", killedAt.Sub(began).Round(time.Millisecond))
		}
		n := nodes[i%2]
		job := strconv.Itoa(7001 + i)
		want[job] = []string{n.name}
		run(func() error {
			return n.runJob(job, strconv.Itoa(1+(i/2)%3), fmt.Sprintf("%dMiB", 512+64*i), 1500*time.Millisecond, i%3)
		})
	}
	time.Sleep(time.Until(killedAt.Add(10 * time.Second)))
	startServe(t, bin, centralCfg, addr, filepath.Join(centralDir, "serve-2.out"))
	t.Logf("collector restarted after %s", time.Since(killedAt).Round(time.Millisecond))
	for i := range 4 {
		n := nodes[i%2]
		job := strconv.Itoa(7001 + stream + i)
		want[job] = []string{n.name}
		run(func() error { return n.runJob(job, "3", "1GiB", time.Second, 0) })
	}
	wg.Wait()
	for _, err := range jobErrs {
		t.Error(err)
	}

	// The outage must have hit deliveries, or this test proves nothing.
	failed := 0
	for _, n := range nodes {
		data, _ := os.ReadFile(n.cfg.LogFile)
		failed += strings.Count(string(data), "delivery failed")
	}
	if failed == 0 {
		t.Errorf("no agent logged a failed delivery: the collector outage went unnoticed")
	}

	ctx := context.Background()
	deadline := time.Now().Add(drainTimeout)
	for _, n := range nodes {
		for {
			left, err := n.outboxLen(ctx)
			if err == nil && left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: outbox still holds %d profiles (%v) %s after the collector came back", n.name, left, err, drainTimeout)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	t.Logf("outboxes drained %s after the restart", time.Since(killedAt.Add(10*time.Second)).Round(time.Second))

	// What each node has, from its own database.
	onNode := map[profile.Key]profile.Job{}
	for _, n := range nodes {
		for id, v := range gpuprofViews(t, bin, n.cfgPath, "--local") {
			for _, p := range v.Profiles {
				if p.Node != n.name {
					t.Errorf("%s's database holds job %s's profile of node %s", n.name, id, p.Node)
				}
				onNode[p.Key] = p
			}
		}
	}
	for job, ns := range want {
		for _, node := range ns {
			p, ok := onNode[profile.Key{Cluster: cluster, JobID: job, Node: node}]
			if !ok || p.Status != profile.StatusFinished {
				t.Errorf("node %s has no finished profile of job %s (the hooks or the agent failed)", node, job)
			}
		}
	}

	central := gpuprofViews(t, bin, centralCfg)
	seen := map[profile.Key]int{}
	for id, v := range central {
		for _, p := range v.Profiles {
			seen[p.Key]++
			if p.JobID != id {
				t.Errorf("central view of job %s holds a profile of job %s", id, p.JobID)
			}
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("central database: %d profiles of job %s on %s, want exactly 1", n, k.JobID, k.Node)
		}
	}
	for k, p := range onNode {
		if seen[k] == 0 {
			t.Errorf("job %s on %s: not in the central database (lost)", k.JobID, k.Node)
			continue
		}
		for _, cp := range central[k.JobID].Profiles {
			if cp.Node == k.Node {
				if got, want := profileSummary(cp), profileSummary(p); got != want {
					t.Errorf("job %s on %s differs between the collector and the node:\ncentral %s\n   node %s", k.JobID, k.Node, got, want)
				}
			}
		}
	}
	if len(seen) != len(onNode) {
		t.Errorf("central database holds %d profiles, the nodes %d", len(seen), len(onNode))
	}
	var multiNodes []string
	for _, p := range central[multi].Profiles {
		multiNodes = append(multiNodes, p.Node)
	}
	if !slices.Equal(multiNodes, []string{"n1", "n2"}) {
		t.Errorf("multi-node job %s: central view has profiles of nodes %v, want [n1 n2]", multi, multiNodes)
	}
}

// TestCollectorAuth checks who may push profiles to the collector and who
// sees which jobs through it, with real Unix users and real munge
// credentials: forged, mismatched, replayed and unprivileged pushes are
// refused and store nothing; a user sees only their own jobs; a member of
// admin_group sees everyone's.
func TestCollectorAuth(t *testing.T) {
	requireClusterHost(t) // creates Unix users
	t.Parallel()
	ensureMunge(t)
	requireUserTools(t)
	bin := gpuprofBinary(t)
	dir := sharedTempDir(t, "gpuprof-e2e-auth-")

	suffix := strconv.Itoa(os.Getpid() % 100000)
	admins := "gpuprof-adm-" + suffix
	runRoot(t, "groupadd", admins)
	t.Cleanup(func() { _ = exec.Command("groupdel", admins).Run() })
	alice := addUser(t, "gpuprof-alice-"+suffix)
	bob := addUser(t, "gpuprof-bob-"+suffix)
	admin := addUser(t, "gpuprof-admin-"+suffix, "-G", admins)

	const cluster = "auth"
	addr := freeAddr(t)
	cc := config.Default()
	cc.Cluster = cluster
	cc.DB = filepath.Join(dir, "central.db")
	cc.SpoolDir = filepath.Join(dir, "spool")
	cc.LogFile = filepath.Join(dir, "gpuprof.log")
	cc.AdminGroup = admins
	cc.Serve.Listen = addr
	cc.Serve.SlurmUser = "root"
	// This host pushes as node gpu01, a name that resolves nowhere.
	host := mungeHost(t)
	cc.Serve.NodeHosts = map[string][]string{host: {"gpu01"}}
	// Jobs 8202 and the forged pushes' have no jobcomp record: the node's
	// word places them (serve.placement's hold: collect TestPreClaimedJobIDHeld).
	cc.Serve.Placement = "sender"
	centralCfg := writeConfigFile(t, filepath.Join(dir, "central.toml"), cc)
	startServe(t, bin, centralCfg, addr, filepath.Join(dir, "serve.out"))
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(cc.LogFile)
			t.Logf("==== %s\n%s", cc.LogFile, lastLines(string(data), 60))
		}
	})
	userCfg := func(u unixUser) string {
		c := config.Default()
		c.Collector = "http://" + addr
		c.DB = filepath.Join(dir, u.name+".db") // never opened: the collector answers
		return writeConfigFile(t, filepath.Join(dir, u.name+".toml"), c)
	}

	// The controller's records: alice has two jobs, bob two; 8101 and 8202
	// have profiles pushed by a node (root), 8202 no scheduler record.
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	sched := func(id string, u unixUser, i int) {
		r := slurmext.JobRecord{Cluster: cluster, JobID: id, Name: "job-" + id, Account: "lab", Partition: "gpu",
			State: "COMPLETED", Submit: base.Add(time.Duration(i) * time.Minute), Start: base.Add(time.Duration(i)*time.Minute + time.Second),
			End: base.Add(time.Duration(i)*time.Minute + 30*time.Second), TimeLimit: time.Hour}
		runJobComp(t, bin, centralCfg, jobcompEnv(r, u.uid, u.name))
	}
	sched("8101", alice, 1)
	sched("8102", alice, 2)
	sched("8201", bob, 3)
	// jobcomp spools; serve stores what it spooled within its drain
	// interval (2 s): the queries below count the records once stored.
	waitFor(t, "serve stores jobcomp's three records", 30*time.Second, func() (bool, string) {
		all := gpuprofViews(t, bin, centralCfg)
		_, a := all["8101"]
		_, b := all["8102"]
		_, c := all["8201"]
		return a && b && c, fmt.Sprintf("%d jobs stored", len(all))
	})
	prof := func(id string, uid int, username string, i int) profile.Job {
		return profile.Job{
			Key:  profile.Key{Cluster: cluster, JobID: id, Node: "gpu01"},
			User: username, UID: uid, GID: uid, Account: "lab", Partition: "gpu",
			Start: base.Add(time.Duration(i)*time.Minute + time.Second), End: base.Add(time.Duration(i)*time.Minute + 30*time.Second),
			Status: profile.StatusFinished, Source: "agent", ExitKnown: true,
		}
	}
	node := collect.Client{URL: "http://" + addr, Munge: collect.Munge{Timeout: 10 * time.Second}}
	ctx := context.Background()
	for _, p := range []profile.Job{prof("8101", alice.uid, alice.name, 1), prof("8202", bob.uid, bob.name, 4)} {
		if err := node.Push(ctx, p); err != nil {
			t.Fatalf("push of job %s as root: %v, want accepted", p.JobID, err)
		}
	}

	t.Run("forged-pushes", func(t *testing.T) {
		body := func(id string) []byte {
			b, err := json.Marshal(prof(id, alice.uid, alice.name, 5))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		bind := func(b []byte) []byte { return collect.Binding(http.MethodPost, "/v1/profiles", b) }
		replayed := body("8905")
		replayCred := "MUNGE " + mungeAs(t, "", bind(replayed))
		tests := []struct {
			name string
			body []byte
			auth string
			want int
		}{
			{name: "no-credential", body: body("8901"), auth: "", want: http.StatusUnauthorized},
			{name: "garbage", body: body("8902"), auth: "MUNGE xyz", want: http.StatusUnauthorized},
			{name: "not-munge", body: body("8903"), auth: "Bearer " + mungeAs(t, "", bind(body("8903"))), want: http.StatusUnauthorized},
			{name: "other-body", body: body("8904"), auth: "MUNGE " + mungeAs(t, "", bind(body("8999"))), want: http.StatusUnauthorized},
			{name: "ordinary-user", body: body("8906"), auth: "MUNGE " + mungeAs(t, alice.name, bind(body("8906"))), want: http.StatusForbidden},
			{name: "admin-user", body: body("8907"), auth: "MUNGE " + mungeAs(t, admin.name, bind(body("8907"))), want: http.StatusForbidden},
			// A valid root credential is accepted once; munged refuses the
			// same credential again.
			{name: "root", body: replayed, auth: replayCred, want: http.StatusNoContent},
			{name: "replayed", body: replayed, auth: replayCred, want: http.StatusUnauthorized},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := postProfile(t, addr, tt.body, tt.auth); got != tt.want {
					t.Errorf("POST /v1/profiles: status %d, want %d", got, tt.want)
				}
			})
		}
		all := gpuprofViews(t, bin, centralCfg)
		for _, id := range []string{"8901", "8902", "8903", "8904", "8906", "8907", "8999"} {
			if _, ok := all[id]; ok {
				t.Errorf("job %s is in the database: a refused push stored it", id)
			}
		}
		if _, ok := all["8905"]; !ok {
			t.Errorf("job 8905 is not in the database: root's push was lost")
		}
	})

	t.Run("bound-to-sender", func(t *testing.T) {
		// Root's valid credentials of this host, for a node and a cluster
		// that are not this host's: refused, naming the node, the host
		// and the setting, and nothing stored.
		otherNode := prof("8908", alice.uid, alice.name, 6)
		otherNode.Node = "gpu02"
		otherCluster := prof("8909", alice.uid, alice.name, 7)
		otherCluster.Cluster = "elsewhere"
		for _, p := range []profile.Job{otherNode, otherCluster} {
			err := node.Push(ctx, p)
			if !errors.Is(err, collect.ErrRejected) {
				t.Errorf("push of %s/%s from %s: %v, want rejected", p.Cluster, p.Node, host, err)
				continue
			}
			for _, want := range []string{"403", p.Cluster + "/" + p.Node, host, "serve.node_hosts"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal of %s/%s lacks %q: %v", p.Cluster, p.Node, want, err)
				}
			}
		}
		all := gpuprofViews(t, bin, centralCfg)
		for _, id := range []string{"8908", "8909"} {
			if _, ok := all[id]; ok {
				t.Errorf("job %s is in the database: a refused push stored it", id)
			}
		}
	})

	t.Run("scoped-queries", func(t *testing.T) {
		tests := []struct {
			name string
			user unixUser
			want []string
		}{
			{name: "alice", user: alice, want: []string{"8101", "8102", "8905"}},
			{name: "bob", user: bob, want: []string{"8201", "8202"}},
			{name: "admin", user: admin, want: []string{"8101", "8102", "8201", "8202", "8905"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cfgPath := userCfg(tt.user)
				out, stderr, err := asUser(tt.user, bin, "jobs", "--json", "--config", cfgPath)
				if err != nil {
					t.Fatalf("gpuprof jobs as %s: %v\n%s", tt.user.name, err, stderr)
				}
				got := keys(decodeViews(t, out))
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s sees jobs %v, want %v", tt.user.name, got, tt.want)
				}
			})
		}
		// What root sees in the database itself: everything, nothing more.
		if got, want := keys(gpuprofViews(t, bin, centralCfg)), []string{"8101", "8102", "8201", "8202", "8905"}; !slices.Equal(got, want) {
			t.Errorf("the central database holds jobs %v, want %v", got, want)
		}
	})

	t.Run("no-bypass-through-the-database", func(t *testing.T) {
		// On the controller, reading the database file directly must not
		// show alice more than the collector does.
		out, stderr, err := asUser(alice, bin, "jobs", "--json", "--db", cc.DB, "--config", userCfg(alice))
		if err != nil {
			t.Logf("alice cannot read the central database directly: %v (%s)", err, strings.TrimSpace(stderr))
			return
		}
		if got, want := keys(decodeViews(t, out)), []string{"8101", "8102", "8905"}; !slices.Equal(got, want) {
			t.Errorf("alice reading %s directly sees jobs %v, want at most her own %v", cc.DB, got, want)
		}
	})

	t.Run("show-others-job", func(t *testing.T) {
		cfgPath := userCfg(alice)
		out, stderr, err := asUser(alice, bin, "show", "8101", "--json", "--config", cfgPath)
		if err != nil {
			t.Fatalf("alice: show her own job 8101: %v\n%s", err, stderr)
		}
		if v := decodeViews(t, out)["8101"]; v.Sched == nil || len(v.Profiles) != 1 {
			t.Errorf("alice: show 8101 = %s, want her job with its scheduler view and profile", out)
		}
		for _, id := range []string{"8201", "8202"} {
			out, stderr, err := asUser(alice, bin, "show", id, "--config", cfgPath)
			if err == nil || !strings.Contains(stderr, "not found") {
				t.Errorf("alice: show bob's job %s: err %v, stdout %q, stderr %q; want a not-found failure", id, err, out, stderr)
			}
		}
	})
}

// requireUserTools skips (fails in CI) without the tools that create
// users and run commands as them.
func requireUserTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"useradd", "userdel", "groupadd", "groupdel", "runuser"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "%s is missing: %v", tool, err)
		}
	}
}

// sharedTempDir is a temporary directory other users can read (mode
// 0755), removed when the test ends. Not t.TempDir: its parent is private
// to root, and the test users' commands read their configuration here.
func sharedTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type unixUser struct {
	name string
	uid  int
}

// addUser creates a Unix user (and its own group) for the test and removes
// both when the test ends.
func addUser(t *testing.T, name string, args ...string) unixUser {
	t.Helper()
	runRoot(t, "useradd", append([]string{"--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group"}, append(args, name)...)...)
	t.Cleanup(func() {
		_ = exec.Command("userdel", name).Run()
		_ = exec.Command("groupdel", name).Run()
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		t.Fatal(err)
	}
	return unixUser{name: name, uid: uid}
}

func runRoot(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// asUser runs a command as u, as that user would from a login node.
func asUser(u unixUser, name string, args ...string) (stdout []byte, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "runuser", append([]string{"-u", u.name, "--", name}, args...)...)
	var eb bytes.Buffer
	cmd.Stderr = &eb
	stdout, err = cmd.Output()
	return stdout, eb.String(), err
}

// postProfile sends a push with the given Authorization header ("" for
// none) and returns the HTTP status.
func postProfile(t *testing.T, addr string, body []byte, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/profiles", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}
