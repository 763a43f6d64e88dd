package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// dbLock is a write lock on a database held by another process: an sqlite3
// shell inside BEGIN EXCLUSIVE, as a stuck backup or an admin's shell would
// hold it.
type dbLock struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  bool
}

func lockDB(t *testing.T, path string) *dbLock {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		skipOrFail(t, "sqlite3 is missing: %v", err)
	}
	cmd := exec.Command("sqlite3", path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &dbLock{cmd: cmd, stdin: stdin}
	t.Cleanup(l.release)
	if _, err := fmt.Fprintln(stdin, ".timeout 10000\nBEGIN EXCLUSIVE;\nSELECT 'locked';"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("sqlite3 did not take the lock: %q %v", line, err)
	}
	return l
}

func (l *dbLock) release() {
	if l.done {
		return
	}
	l.done = true
	_, _ = fmt.Fprintln(l.stdin, "COMMIT;")
	_ = l.stdin.Close()
	_ = l.cmd.Wait()
}

// TestSpooledRecordsJoinTheirJob: with the database locked while a hook
// runs and the agent away, a job's records go through the spool. Whatever
// the order in which the spool, the agent's own discovery and the epilog
// arrive, the job ends as exactly one finished profile under the real
// cluster and node names (the configuration names neither, as a new
// admin's does not; slurmd's node is "localhost", not the host name), with
// the agent's readings when the agent ran during the job, and the
// scheduler view from jobcomp. It runs on the shared cluster, its
// partition's hooks (jobcomp among them) recording into its own gpuprof.
func TestSpooledRecordsJoinTheirJob(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := sharedTempDir(t, "gpuprof-e2e-spool-")
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := sharedCluster(t)
	c.hooks(t, bin, cfgPath)
	simDir := filepath.Join(work, "sim")
	if err := os.Mkdir(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(work, "gpuprof.db")
	spoolDir := filepath.Join(work, "spool")
	socket := filepath.Join(work, "agent.sock")
	logFile := filepath.Join(work, "gpuprof.log")
	text := fmt.Sprintf(`db = %q
spool_dir = %q
socket = %q
query_socket = %q
log_file = %q
slurm_conf = %q

[agent]
gpu = "sim"
interval = "1s"
flush_interval = "2s"

[hooks]
deadline = "2s"
gres_conf = %q

[sim]
dir = %q
gpus = 4
model = "NVIDIA H100 80GB HBM3"
memory = "80GiB"
`, dbPath, spoolDir, socket, filepath.Join(work, "run", "query.sock"), logFile, c.Conf, filepath.Join(c.Dir, "etc", "gres.conf"), simDir)
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{logFile, filepath.Join(work, "agent.out")} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 80 lines)\n%s", f, lastLines(string(data), 80))
				}
			}
		}
	})

	var agent *process
	startAgent := func() {
		t.Helper()
		agent = startProcess(t, filepath.Join(work, "agent.out"), os.Environ(), bin, "agent", "--config", cfgPath)
		waitAgent(t, agent, socket, filepath.Join(work, "agent.out"))
	}
	stopAgent := func() {
		t.Helper()
		_ = agent.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-agent.done:
		case <-time.After(20 * time.Second):
			t.Fatal("agent ignored SIGTERM")
		}
	}
	submit := func(name, mem string, d time.Duration) string {
		t.Helper()
		return c.sbatch(t, "-J", name, "--gres=gpu:1", "-o", filepath.Join(work, "%j.out"),
			"--chdir", work, "--export=ALL,GPUPROF_CONFIG="+cfgPath,
			"--wrap", fmt.Sprintf("%s simgpu burn --mem %s --util 50 --for %s", shellQuote(bin), mem, d))
	}
	// A job may first wait for GPUs other tests' jobs hold on the shared
	// node: each wait is queueTimeout.
	waitSpooled := func(kind, id string) {
		t.Helper()
		deadline := time.Now().Add(queueTimeout)
		for time.Now().Before(deadline) {
			names, _ := filepath.Glob(filepath.Join(spoolDir, "*."+kind+".json"))
			for _, n := range names {
				if data, err := os.ReadFile(n); err == nil && strings.Contains(string(data), `"job_id":"`+id+`"`) {
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("no %s record of job %s in the spool after %s", kind, id, queueTimeout)
	}
	waitSeen := func(id string) {
		t.Helper()
		deadline := time.Now().Add(queueTimeout)
		for !programSeen(bin, cfgPath, id) {
			if time.Now().After(deadline) {
				t.Fatalf("the agent never recorded job %s's program", id)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	// 1. The prolog spooled (database locked, agent down); the agent starts
	// mid-job and finds the job's process; the epilog reaches the agent.
	lock := lockDB(t, dbPath)
	midJob := submit("spool-prolog-agent-mid-job", "6GiB", 25*time.Second)
	waitSpooled("hookstart", midJob)
	lock.release()
	startAgent()
	c.waitQueueEmpty(t, []string{midJob}, 2*time.Minute)
	waitProfiles(t, bin, cfgPath, []string{midJob})
	stopAgent()

	// 2. The same, the agent never started until after the job: the epilog
	// writes the database itself.
	lock = lockDB(t, dbPath)
	noAgent := submit("spool-prolog-no-agent", "3GiB", 5*time.Second)
	waitSpooled("hookstart", noAgent)
	lock.release()
	c.waitQueueEmpty(t, []string{noAgent}, 2*time.Minute)
	startAgent()
	waitProfiles(t, bin, cfgPath, []string{noAgent})

	// 3. The spool holds the epilog instead: the prolog reached the
	// agent, which is stopped before the job ends with the database
	// locked.
	epilog := submit("spool-epilog", "5GiB", 20*time.Second)
	waitSeen(epilog)
	stopAgent()
	lock = lockDB(t, dbPath)
	c.waitQueueEmpty(t, []string{epilog}, 2*time.Minute)
	waitSpooled("hookend", epilog)
	lock.release()
	startAgent()
	waitProfiles(t, bin, cfgPath, []string{epilog})

	ids := []string{midJob, noAgent, epilog}
	// Let the agent drain the jobcomp records the lock sent to the spool.
	deadline := time.Now().Add(30 * time.Second)
	var views []jobJSON
	for {
		out, err := gpuprofOutput(bin, "jobs", "--config", cfgPath, "--json")
		if err != nil {
			t.Fatal(err)
		}
		views = nil
		if err := json.Unmarshal(out, &views); err != nil {
			t.Fatalf("jobs --json: %v\n%s", err, out)
		}
		withSched := 0
		for _, v := range views {
			if v.Sched != nil {
				withSched++
			}
		}
		if withSched >= len(ids) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}

	t.Run("each-job-once", func(t *testing.T) {
		seen := map[string]int{}
		for _, v := range views {
			seen[v.JobID]++
			for _, p := range v.Profiles {
				if p.Cluster != "gpuproftest" || p.Node != "localhost" {
					t.Errorf("job %s: profile under %s/%s, want gpuproftest/localhost (slurm.conf's cluster, slurmd's node)", p.JobID, p.Cluster, p.Node)
				}
			}
		}
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("gpuprof jobs lists job %s %d times, want once", id, seen[id])
			}
		}
		if len(views) != len(ids) {
			t.Errorf("gpuprof jobs lists %d jobs, want %d", len(views), len(ids))
		}
	})
	wantPeak := map[string]uint64{midJob: 6 * gib, epilog: 5 * gib}
	for _, id := range ids {
		t.Run("job-"+id, func(t *testing.T) {
			var v *jobJSON
			for i := range views {
				if views[i].JobID == id {
					v = &views[i]
				}
			}
			if v == nil {
				t.Fatal("not listed")
			}
			if len(v.Profiles) != 1 {
				t.Fatalf("%d profiles, want 1 (one node)", len(v.Profiles))
			}
			p := v.Profiles[0]
			if p.Status != profile.StatusFinished {
				t.Errorf("status %s, want finished", p.Status)
			}
			if v.Sched == nil {
				t.Error("no scheduler view (jobcomp's record)")
			} else if v.Sched.State != "COMPLETED" {
				t.Errorf("scheduler state %s, want COMPLETED", v.Sched.State)
			}
			if want, ok := wantPeak[id]; ok {
				if len(p.GPUs) != 1 || p.GPUs[0].MemPeak != want {
					t.Errorf("GPUs %+v, want one with the agent's reading of the %d GiB the job held", p.GPUs, want/gib)
				}
			}
			// Issue 30: the spooled prolog joins the job as a direct one
			// does: its GPU keeps Slurm's index, and the prolog was seen.
			for _, g := range p.GPUs {
				if g.SlurmIndex < 0 {
					t.Errorf("GPU %s has Slurm index %d, want the prolog's (SLURM_JOB_GPUS)", g.UUID, g.SlurmIndex)
				}
			}
			for _, r := range p.PartialReasons {
				if strings.HasPrefix(r, "prolog not seen") {
					t.Errorf("partial reason %q: the prolog reached the spool", r)
				}
			}
		})
	}
	t.Run("no-phantom-node", func(t *testing.T) {
		out, err := gpuprofOutput(bin, "plan", "--config", cfgPath, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var plan map[string]any
		if err := json.Unmarshal(out, &plan); err != nil {
			t.Fatalf("plan --json: %v", err)
		}
		if n, ok := findNumber(plan, "current_gpus"); !ok || n > 4 {
			t.Errorf("plan's inventory: current_gpus = %v (found %v), want at most the node's 4", n, ok)
		}
	})
	t.Run("node-healthy", func(t *testing.T) {
		if drained := c.run(t, "sinfo", "-R", "-h"); drained != "" {
			t.Errorf("sinfo -R: %s, want no drained node", drained)
		}
	})
}

// findNumber returns the first number stored under key anywhere in v.
func findNumber(v any, key string) (float64, bool) {
	switch x := v.(type) {
	case map[string]any:
		if n, ok := x[key].(float64); ok {
			return n, true
		}
		for _, e := range x {
			if n, ok := findNumber(e, key); ok {
				return n, true
			}
		}
	case []any:
		for _, e := range x {
			if n, ok := findNumber(e, key); ok {
				return n, true
			}
		}
	}
	return 0, false
}
