package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// exitNoSlurm is testcluster.sh's exit status for "Slurm is missing and
// cannot be installed".
const exitNoSlurm = 3

// binaryBuild holds the gpuprof binary built for this test run. It is set
// once, by the first test that needs it, and removed by TestMain: building
// takes long enough that tests which skip should not pay for it.
var binaryBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// clusterTestsAtOnce is how many tests of this package run a cluster of
// their own at once (ownClusters). Most of these tests spend their minutes
// waiting on sleeping Slurm jobs, not on a CPU, but four clusters starting
// and working at once is what CI's 2-core machine was measured to bear.
const clusterTestsAtOnce = 4

// parallelSlots is the -parallel TestMain gives the package when go test
// is given none: enough for every parallel test of the package at once.
// What bounds the work is not go test's slots but ownClusters (tests with
// a cluster of their own) and the shared node's lease (tests on the shared
// cluster), whose waiters use no CPU: with fewer slots, tests waiting for
// the lease held slots that tests with a cluster of their own (the long
// what-if runs among them) then waited for (doc.go, "The node's lease").
const parallelSlots = 32

// ownClusters holds a token for each test running a cluster of its own
// (startCluster), at most clusterTestsAtOnce. It is set once, before any
// test runs, and never replaced.
var ownClusters = make(chan struct{}, clusterTestsAtOnce)

// timedSlots bounds a test's parallel subtests that hold a wall-clock time
// to GOMAXPROCS at once, as go test's default -parallel ran them before
// TestMain raised it for the cluster tests: their stand-ins spin or
// spawn, and more of them than cores would slow one another past the
// bound they check.
type timedSlots chan struct{}

func newTimedSlots() timedSlots { return make(timedSlots, runtime.GOMAXPROCS(0)) }

// hold takes a slot until t ends; call it after t.Parallel.
func (s timedSlots) hold(t *testing.T) {
	s <- struct{}{}
	t.Cleanup(func() { <-s })
}

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if n := runtime.GOMAXPROCS(0); !explicit && n < parallelSlots {
		if err := flag.Set("test.parallel", strconv.Itoa(parallelSlots)); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: -test.parallel: %v\n", err)
			os.Exit(2)
		}
	}
	code := m.Run()
	stopShared(code != 0)
	if binaryBuild.dir != "" {
		_ = os.RemoveAll(binaryBuild.dir)
	}
	os.Exit(code)
}

// skipOrFail skips a test whose environment cannot run it, except in CI,
// whose machine is meant to have everything: there a skip would hide a
// broken pipeline.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, so not skipping: "+format, args...)
	}
	t.Skipf(format, args...)
}

// moduleRoot returns the repository root; go test runs a package's tests in
// the package directory, e2e/.
func moduleRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatalf("module root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// gpuprofBinary returns $GPUPROF_BIN, or a gpuprof built from this tree.
func gpuprofBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GPUPROF_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatalf("GPUPROF_BIN: %v", err)
		}
		if fi, err := os.Stat(abs); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("GPUPROF_BIN=%s is not an executable file (%v)", p, err)
		}
		return abs
	}
	root := moduleRoot(t)
	binaryBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "gpuprof-e2e-bin-")
		if err != nil {
			binaryBuild.err = fmt.Errorf("build gpuprof: %w", err)
			return
		}
		binaryBuild.dir = dir
		// slurmd runs the hooks and jobs run the simulated CUDA program:
		// both must reach the binary whatever their user.
		if err := os.Chmod(dir, 0o755); err != nil {
			binaryBuild.err = fmt.Errorf("build gpuprof: %w", err)
			return
		}
		path := filepath.Join(dir, "gpuprof")
		// go test puts its own toolchain first in PATH. gpuprof-hook
		// beside gpuprof: the hook wrappers run it, as on an installed node,
		// and it hands what the agent does not take to gpuprof-hook-full.
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/gpuprof", "./cmd/gpuprof-hook", "./cmd/gpuprof-hook-full")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryBuild.err = fmt.Errorf("go build ./cmd/gpuprof ./cmd/gpuprof-hook ./cmd/gpuprof-hook-full: %w\n%s", err, out)
			return
		}
		binaryBuild.path = path
	})
	if binaryBuild.err != nil {
		t.Fatal(binaryBuild.err)
	}
	return binaryBuild.path
}

// requireClusterHost skips (or, in CI, fails) before anything expensive
// when the machine cannot run a test cluster.
func requireClusterHost(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "needs root to run the Slurm daemons and create device files")
	}
}

// cluster is a running test cluster (see contrib/slurm/testcluster.sh).
type cluster struct {
	// Dir holds everything the cluster writes: etc/, log/, hooks/, dev/.
	Dir string
	// Conf is its slurm.conf; every Slurm command must get it as SLURM_CONF.
	Conf   string
	script string
}

type clusterOptions struct {
	// Accounting adds slurmdbd and MariaDB, so sacct works.
	Accounting bool
	// JobComp makes slurmctld run `GPUProfBin jobcomp --config
	// GPUProfConfig` as its jobcomp/script at the end of every job.
	JobComp bool
	// MailProg makes slurmctld send job mail through contrib/slurm's
	// mailprog.sh wrapper (the package example's MailProg= line) around
	// GPUProfBin and GPUProfConfig, instead of /bin/true.
	MailProg bool
	// GPUProfBin and GPUProfConfig make the Prolog and Epilog run
	// `GPUProfBin prolog|epilog --config GPUProfConfig`; with no GPUProfBin
	// the hooks do nothing.
	GPUProfBin    string
	GPUProfConfig string
	// HookEnv makes the hooks save their environment to
	// Dir/hooks/env/<prolog|epilog>.<jobid>.
	HookEnv bool
	// Configless runs slurmd as a configless node's: no slurm.conf, the
	// files fetched from slurmctld into SlurmdSpoolDir/conf-cache.
	Configless bool
	// GPUs is the node's GPU count (TESTCLUSTER_GPUS); 0: 4.
	GPUs int
	// ByPartition makes the hooks hand each job to its partition's
	// wrappers (testcluster.sh --by-partition; the shared cluster).
	ByPartition bool
}

// errNoSlurm is launch's error where Slurm is missing and cannot be
// installed: the caller skips (or, in CI, fails).
var errNoSlurm = errors.New("slurm cannot be installed here")

// startCluster starts a cluster in a fresh temporary directory and stops it
// when the test ends, printing the daemons' logs if the test failed. It
// first waits for a token of ownClusters, held until the test ends: call
// it once a test.
func startCluster(t *testing.T, o clusterOptions) *cluster {
	t.Helper()
	requireSlurmHost(t)
	start := time.Now()
	ownClusters <- struct{}{}
	// Registered first, so it runs last: after the cluster's stop.
	t.Cleanup(func() { <-ownClusters })
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %s for one of the %d own clusters at once", waited.Round(time.Second), clusterTestsAtOnce)
	}
	c := newCluster(t.TempDir())
	// Registered before start so that a half-started cluster is stopped
	// too; it runs before t.TempDir's removal (cleanups run last first).
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Log(c.logTails())
		}
	})
	took, err := c.launch(o)
	if errors.Is(err, errNoSlurm) {
		skipOrFail(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster up in %s (%s)", c.Dir, took.Round(time.Millisecond))
	return c
}

// requireSlurmHost skips (or, in CI, fails) where no test cluster can run:
// not root, or no Slurm and no apt-get to install it.
func requireSlurmHost(t testing.TB) {
	t.Helper()
	requireClusterHost(t)
	if _, err := exec.LookPath("apt-get"); err != nil {
		if _, err := os.Stat("/usr/sbin/slurmctld"); err != nil {
			skipOrFail(t, "Slurm is not installed and there is no apt-get to install it")
		}
	}
}

func newCluster(dir string) *cluster {
	// go test runs a package's tests in the package directory, e2e/.
	script, _ := filepath.Abs(filepath.Join("..", "contrib", "slurm", "testcluster.sh"))
	return &cluster{Dir: dir, Conf: filepath.Join(dir, "etc", "slurm.conf"), script: script}
}

// launch starts the cluster (testcluster.sh start) and says how long it
// took; errNoSlurm where Slurm cannot be installed.
func (c *cluster) launch(o clusterOptions) (time.Duration, error) {
	args := []string{c.script, "start", c.Dir}
	for _, f := range []struct {
		on   bool
		flag string
	}{{o.Accounting, "--accounting"}, {o.JobComp, "--jobcomp"}, {o.Configless, "--configless"}, {o.MailProg, "--mailprog"}, {o.ByPartition, "--by-partition"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	// Installing Slurm and MariaDB on a fresh machine takes about a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	gpus := o.GPUs
	if gpus == 0 {
		gpus = 4
	}
	cmd.Env = append(os.Environ(), "GPUPROF_BIN="+o.GPUProfBin, "GPUPROF_CONFIG="+o.GPUProfConfig, "TESTCLUSTER_HOOK_ENV=0", fmt.Sprintf("TESTCLUSTER_GPUS=%d", gpus))
	if o.HookEnv {
		cmd.Env = append(cmd.Env, "TESTCLUSTER_HOOK_ENV=1")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == exitNoSlurm {
		return 0, fmt.Errorf("%w:\n%s", errNoSlurm, stderr.String())
	}
	if err != nil {
		return 0, fmt.Errorf("testcluster.sh start: %w\n%s", err, stderr.String())
	}
	if want := "SLURM_CONF=" + c.Conf; !strings.Contains(stdout.String(), want) {
		return 0, fmt.Errorf("testcluster.sh start printed %q, want a line %q", stdout.String(), want)
	}
	return time.Since(start), nil
}

// stop stops what launch started (testcluster.sh stop); Dir stays.
func (c *cluster) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", c.script, "stop", c.Dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("testcluster.sh stop: %w\n%s", err, out)
	}
	return nil
}

// logTails returns the last 60 lines of each daemon's log.
func (c *cluster) logTails() string {
	var b strings.Builder
	for _, name := range []string{"slurmctld.log", "slurmd.log", "slurmdbd.log"} {
		if tail := c.logTail(name, 60); tail != "" {
			fmt.Fprintf(&b, "==== %s (last 60 lines)\n%s\n", name, tail)
		}
	}
	return b.String()
}

// env returns the environment for a Slurm command of this cluster.
func (c *cluster) env(extra ...string) []string {
	return append(append(os.Environ(), "SLURM_CONF="+c.Conf), extra...)
}

// run runs a Slurm command (sbatch, squeue, ...) and returns its trimmed
// standard output, failing the test if it fails.
func (c *cluster) run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := c.output(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// output runs a Slurm command and returns its trimmed standard output; safe
// to call from other goroutines than the test's.
func (c *cluster) output(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// logTail returns the last n lines of a log under Dir/log, or "".
func (c *cluster) logTail(name string, n int) string {
	data, err := os.ReadFile(filepath.Join(c.Dir, "log", name))
	if err != nil {
		return ""
	}
	return lastLines(string(data), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// jobState returns a job's state as squeue shows it ("" once the job has
// left the queue).
func (c *cluster) jobState(id string) (string, error) {
	return c.output("squeue", "-h", "-j", id, "-o", "%T")
}

// waitQueueEmpty waits until none of ids is in the queue.
func (c *cluster) waitQueueEmpty(t testing.TB, ids []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := c.run(t, "squeue", "-h", "-o", "%i %T %j")
		var left []string
		for line := range strings.SplitSeq(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && slices.Contains(ids, f[0]) {
				left = append(left, line)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, jobs still queued:\n%s", timeout, strings.Join(left, "\n"))
		}
		time.Sleep(time.Second)
	}
}

// process is a long-running child of the test (the agent), stopped with
// SIGTERM when the test ends.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startProcess starts name with args, its output going to logPath, and
// registers a cleanup that sends SIGTERM and waits (then SIGKILL).
func startProcess(t *testing.T, logPath string, env []string, name string, args ...string) *process {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	// Its own process group: a ^C to go test must not reach it before the
	// cleanup has stopped the cluster that talks to it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			t.Errorf("%s ignored SIGTERM for 15s; killing it", name)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// running reports whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// TestClusterDatabaseTmpdir: each test cluster's MariaDB keeps its
// temporary files in a directory of its own. At start-up, and in
// mariadb-install-db's bootstrap, MariaDB deletes every "#sql*" file in
// its tmpdir as left over from an earlier run; with the default /tmp, one
// cluster's server starting deleted another cluster's bootstrap tables
// while several started at once (mariadb-install-db failed: "Unknown
// table 'mysql.tmp_user_sys'"). Fails on a testcluster.sh without
// --tmpdir (the server says /tmp).
func TestClusterDatabaseTmpdir(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	c := sharedCluster(t)
	out, err := exec.Command("mariadb", "--no-defaults", "-S", filepath.Join(c.Dir, "run", "mariadb.sock"),
		"-u", "root", "-N", "-B", "-e", "SELECT @@tmpdir").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb: %v\n%s", err, out)
	}
	got := strings.TrimRight(strings.TrimSpace(string(out)), "/")
	if want := filepath.Join(c.Dir, "dbtmp"); got != want {
		t.Errorf("MariaDB's tmpdir is %q, want the cluster's own %q", got, want)
	}
}
