package nodefaults

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
)

// A hung GPU backend inside a hook (NVML never answering) is covered by the
// unit tests of gpu.WithTimeout and of the hooks' deadline; it cannot be
// caused from outside a real driver, so it has no test here.

// TestAgentKilled kills the agent with SIGKILL in the middle of a job. With
// the agent still down at the epilog, the epilog spools the job's end and
// the writer (here `gpuprof ingest`) finishes it from the agent's last
// flush; with the agent restarted first, the agent resumes the job and the
// profile covers both sides of the gap.
func TestAgentKilled(t *testing.T) {
	t.Parallel()

	t.Run("epilog while the agent is down", func(t *testing.T) {
		t.Parallel()
		n := newNode(t, nil)
		a := n.startAgent(t)
		env := hookEnv("101", "1")
		n.hook(t, "prolog", env)
		burn := n.startBurn(t, "101", "1", "6GiB", "40")
		// The agent flushes once when the job starts, before the burn runs;
		// a flushed peak of 6 GiB is therefore at least its second flush.
		flushed := n.waitJob(t, "101", "a flush with the burn's memory", func(j profile.Job) bool {
			return len(j.GPUs) == 1 && j.GPUs[0].MemPeak == 6*gib
		})
		a.kill(t)
		burn.stop(t)
		n.hook(t, "epilog", withExit(env, 0))
		if j := n.profiles(t)["101"]; j.Status == profile.StatusFinished {
			t.Errorf("job finished in the database before any writer ran: the epilog wrote SQLite")
		}
		n.ingest(t, true)

		got := n.mustShow(t, "101")
		if got.Status != profile.StatusFinished {
			t.Errorf("status = %q, want %q", got.Status, profile.StatusFinished)
		}
		if !got.Partial || !hasReason(got, "agent unreachable at job end", "readings stop at") {
			t.Errorf("partial = %v, reasons %q; want partial with \"agent unreachable at job end: readings stop at …\"", got.Partial, got.PartialReasons)
		}
		if got.Source != profile.SourceAgent {
			t.Errorf("source = %q, want %q (the agent's flushed readings kept)", got.Source, profile.SourceAgent)
		}
		if len(got.GPUs) != 1 {
			t.Fatalf("%d GPUs, want 1", len(got.GPUs))
		}
		g := got.GPUs[0]
		if g.MemPeak != 6*gib {
			t.Errorf("mem_peak = %d, want %d (the burn's 6 GiB)", g.MemPeak, 6*gib)
		}
		if g.Samples < flushed.GPUs[0].Samples || g.Samples == 0 {
			t.Errorf("samples = %d, want at least the %d flushed before the kill", g.Samples, flushed.GPUs[0].Samples)
		}
		if g.UtilHist[40] == 0 {
			t.Errorf("no sample at the burn's 40%% utilisation: histogram %v", nonZeroBins(g.UtilHist))
		}
		if !got.ExitKnown || got.ExitStatus != 0 || got.End.IsZero() {
			t.Errorf("exit known %v status %d end %v; want the epilog's exit 0 and an end time", got.ExitKnown, got.ExitStatus, got.End)
		}
	})

	t.Run("agent restarted before the epilog", func(t *testing.T) {
		t.Parallel()
		n := newNode(t, nil)
		a := n.startAgent(t)
		env := hookEnv("102", "2")
		n.hook(t, "prolog", env)
		before := n.startBurn(t, "102", "2", "4GiB", "30")
		flushed := n.waitJob(t, "102", "a flush with the first burn's memory", func(j profile.Job) bool {
			return len(j.GPUs) == 1 && j.GPUs[0].MemPeak == 4*gib
		})
		a.kill(t)
		before.stop(t)
		// Down for many sampling intervals: a gap the profile must admit
		// (stored times have whole seconds, so a gap shorter than a second
		// plus two intervals is not called one).
		time.Sleep(10 * interval)
		n.startAgent(t)
		after := n.startBurn(t, "102", "2", "8GiB", "70")
		n.waitJob(t, "102", "a flush with the second burn's memory", func(j profile.Job) bool {
			return len(j.GPUs) == 1 && j.GPUs[0].MemPeak == 8*gib
		})
		after.stop(t)
		n.hook(t, "epilog", withExit(env, 0))
		n.waitJob(t, "102", "finished", func(j profile.Job) bool { return j.Status == profile.StatusFinished })

		got := n.mustShow(t, "102")
		if got.Source != profile.SourceAgent {
			t.Errorf("source = %q, want %q", got.Source, profile.SourceAgent)
		}
		if !got.Partial || !hasReason(got, "no readings from", "agent not running") {
			t.Errorf("partial = %v, reasons %q; want a reason about the readings gap while the agent was not running", got.Partial, got.PartialReasons)
		}
		if hasReason(got, "agent unreachable") {
			t.Errorf("reasons %q: the restarted agent finished the job, yet a reason says it was unreachable", got.PartialReasons)
		}
		if len(got.GPUs) != 1 {
			t.Fatalf("%d GPUs, want 1", len(got.GPUs))
		}
		g := got.GPUs[0]
		if g.UtilHist[30] == 0 || g.UtilHist[70] == 0 {
			t.Errorf("utilisation histogram %v: want samples at 30%% (before the kill) and at 70%% (after the restart)", nonZeroBins(g.UtilHist))
		}
		if g.MemPeak != 8*gib {
			t.Errorf("mem_peak = %d, want %d", g.MemPeak, 8*gib)
		}
		if g.Samples <= flushed.GPUs[0].Samples {
			t.Errorf("samples = %d, want more than the %d flushed before the kill", g.Samples, flushed.GPUs[0].Samples)
		}
	})

	// The other side of a crash loop: the agent is down when the job
	// starts and back while it runs. It must pick up the job the prolog
	// recorded alone and sample it.
	t.Run("agent down at the prolog, back during the job", func(t *testing.T) {
		t.Parallel()
		n := newNode(t, nil)
		env := hookEnv("103", "3")
		n.hook(t, "prolog", env)
		n.startAgent(t)
		burn := n.startBurn(t, "103", "3", "3GiB", "20")
		n.waitJob(t, "103", "a flush with the burn's memory", func(j profile.Job) bool {
			return len(j.GPUs) == 1 && j.GPUs[0].MemPeak == 3*gib
		})
		burn.stop(t)
		n.hook(t, "epilog", withExit(env, 0))
		n.waitJob(t, "103", "finished", func(j profile.Job) bool { return j.Status == profile.StatusFinished })

		got := n.mustShow(t, "103")
		if !got.Partial || !hasReason(got, "agent unreachable at job start") {
			t.Errorf("partial = %v, reasons %q; want partial: the agent missed the start", got.Partial, got.PartialReasons)
		}
		if len(got.GPUs) != 1 || got.GPUs[0].MemPeak != 3*gib || got.GPUs[0].UtilHist[20] == 0 {
			t.Errorf("GPUs %v, want one with the burn's 3 GiB peak and samples at 20%%", gpuSummary(got))
		}
		if !got.ExitKnown || got.End.IsZero() {
			t.Errorf("exit known %v end %v; want the epilog's exit and end", got.ExitKnown, got.End)
		}
	})
}

// nonZeroBins renders a utilisation histogram's occupied bins, for messages.
func nonZeroBins(h []uint32) map[int]uint32 {
	m := map[int]uint32{}
	for i, c := range h {
		if c > 0 {
			m[i] = c
		}
	}
	return m
}

// TestAgentNotRunning runs hooks on a node whose agent is not running: they
// must finish within the deadline and spool, never write the database,
// what makes a minimal finished profile once the node's writer applies it,
// with the job's GPUs named by UUID (the hooks ask the GPU backend). The
// same from gpuprof's hooks and gpuprof-hook's, to the log lines.
func TestAgentNotRunning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		prolog     bool
		wantReason string
	}{
		{name: "prolog and epilog", prolog: true, wantReason: "agent unreachable at job start"},
		{name: "epilog only", prolog: false, wantReason: "no readings: the agent never saw this job"},
		{name: "gpuprof-hook/prolog and epilog", prolog: true, wantReason: "agent unreachable at job start"},
		{name: "gpuprof-hook/epilog only", prolog: false, wantReason: "no readings: the agent never saw this job"},
	}
	logs := make([]string, len(tests))
	t.Cleanup(func() {
		for i := range 2 {
			if logs[i] != "" && logs[i+2] != "" && logs[i] != logs[i+2] {
				t.Errorf("%s: gpuprof-hook logged\n%s\ngpuprof logged\n%s", tests[i].name, logs[i+2], logs[i])
			}
		}
	})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := newNode(t, nil)
			if strings.HasPrefix(tt.name, "gpuprof-hook/") {
				n.hookBin = hookBin
			}
			defer func() { logs[i] = hookLogShape(n.readLog(t), n.dir) }()
			env := hookEnv("201", "0,3")
			if tt.prolog {
				n.hook(t, "prolog", env)
			}
			n.hook(t, "epilog", withExit(env, 3))
			n.ingest(t, false)

			got := n.mustShow(t, "201")
			if got.Status != profile.StatusFinished || got.Source != profile.SourceHook {
				t.Errorf("status %q source %q, want %q from %q", got.Status, got.Source, profile.StatusFinished, profile.SourceHook)
			}
			if !got.Partial || !hasReason(got, tt.wantReason) {
				t.Errorf("partial = %v, reasons %q; want %q", got.Partial, got.PartialReasons, tt.wantReason)
			}
			if !got.ExitKnown || got.ExitStatus != 3 {
				t.Errorf("exit known %v status %d, want exit 3", got.ExitKnown, got.ExitStatus)
			}
			if got.User != "alice" || got.UID != jobUID || got.Node != nodeName || got.Cluster != clusterName {
				t.Errorf("user %q uid %d node %q cluster %q; want alice, %d, %s, %s", got.User, got.UID, got.Node, got.Cluster, jobUID, nodeName, clusterName)
			}
			uuids := n.uuidsByMinor(t)
			var gotGPUs, wantGPUs []string
			for _, g := range got.GPUs {
				gotGPUs = append(gotGPUs, fmt.Sprintf("%d:%s", g.SlurmIndex, g.UUID))
			}
			for _, i := range []int{0, 3} {
				wantGPUs = append(wantGPUs, fmt.Sprintf("%d:%s", i, uuids[i]))
			}
			if !slices.Equal(gotGPUs, wantGPUs) {
				t.Errorf("GPUs (slurm index:uuid) = %v, want %v", gotGPUs, wantGPUs)
			}
		})
	}
}

// hookLogShape is a node's log without what differs from run to run: the
// times, the durations and the node's directory.
func hookLogShape(log, dir string) string {
	log = strings.ReplaceAll(log, dir, "DIR")
	return regexp.MustCompile(`(time|took)=\S+`).ReplaceAllString(log, "$1=X")
}

// TestDatabaseLocked holds the database's write lock from another process
// for 30 s while the agent runs and jobs start and end, some through the
// agent and some through hooks that cannot reach it. Every hook must exit 0
// within the deadline; nothing may be lost: once the lock is released every
// profile is in the database, finished.
func TestDatabaseLocked(t *testing.T) {
	t.Parallel()
	const hold = 30 * time.Second
	n := newNode(t, nil)
	a := n.startAgent(t) // creates the database
	// Hooks of a second configuration find no agent (another socket) and
	// spool their records for it.
	directCfg := n.cfg
	directCfg.Socket = filepath.Join(n.dir, "no-agent.sock")
	direct := n.writeConfig(t, "direct.toml", directCfg)

	type lockedJob struct {
		id, gpu string
		config  string
		burn    bool
	}
	jobs := []lockedJob{
		{id: "301", gpu: "0", config: n.config, burn: true},
		{id: "302", gpu: "1", config: n.config, burn: true},
		{id: "303", gpu: "2", config: n.config, burn: true},
		{id: "304", gpu: "3", config: n.config, burn: true},
		{id: "311", gpu: "0", config: direct},
		{id: "312", gpu: "1", config: direct},
	}
	hooks := func(kind string) {
		parallel(len(jobs), 0, func(i int) {
			j := jobs[i]
			env := hookEnv(j.id, j.gpu)
			if kind == "epilog" {
				env = withExit(env, 0)
			}
			checkHook(t, j.id, n.runHook(t, j.config, kind, env), true)
		})
		t.Logf("slowest %s during the lock: %s (hook's own measure)", kind, n.slowestHook(t, kind))
	}

	waitUnlocked := startLocker(t, n.cfg.DB, hold)
	lockedAt := time.Now()
	hooks("prolog")
	var burns []*burnProc
	for _, j := range jobs {
		if j.burn {
			burns = append(burns, n.startBurn(t, j.id, j.gpu, "2GiB", "50"))
		}
	}
	time.Sleep(2 * time.Second) // ten sampling intervals of the burns
	for _, b := range burns {
		b.stop(t)
	}
	hooks("epilog")

	if held := time.Since(lockedAt); held > hold-2*time.Second {
		t.Fatalf("the jobs took %s of the %s lock: too little left to check that they were recorded during it", held, hold)
	}
	// While locked, every job's record waits in the spool: the agent's
	// finished profiles and the direct hooks' start and end records. The
	// agent reads the spool during the lock too: where it took a direct
	// job's spooled prolog and then its epilog, that job's end record has
	// become one more finished profile (see the direct jobs' check below).
	got := n.spoolKinds(t)
	taken := got[hookproto.KindProfile] - 4
	wantSpool := map[string]int{hookproto.KindProfile: 4 + taken, hookproto.KindHookStart: 2, hookproto.KindHookEnd: 2 - taken}
	if wantSpool[hookproto.KindHookEnd] == 0 {
		delete(wantSpool, hookproto.KindHookEnd)
	}
	if taken < 0 || taken > 2 || !maps.Equal(got, wantSpool) {
		t.Errorf("spool during the lock = %v, want 4 profiles of the agent's jobs, 2 hook starts and 2 hook ends of the direct ones (an end the agent took in may be a profile instead)", got)
	}
	if m := n.profiles(t); len(m) != 0 {
		t.Errorf("%d profiles in the database during the lock, want none (nothing can write)", len(m))
	}

	waitUnlocked()
	n.waitProfiles(t, "every job finished after the lock", func(m map[string]profile.Job) bool {
		for _, j := range jobs {
			if m[j.id].Status != profile.StatusFinished {
				return false
			}
		}
		return true
	})
	for _, j := range jobs {
		got := n.mustShow(t, j.id)
		switch {
		case j.burn:
			if got.Source != profile.SourceAgent || got.Partial {
				t.Errorf("job %s: source %q partial %v %q; want a complete profile from the agent", j.id, got.Source, got.Partial, got.PartialReasons)
			}
			if len(got.GPUs) != 1 || got.GPUs[0].MemPeak != 2*gib {
				t.Errorf("job %s: GPUs %+v, want one with the burn's 2 GiB peak", j.id, gpuSummary(got))
			}
		default:
			// The agent reads the spool while the database is locked: it
			// may take the spooled prolog and sample the job from then on
			// (saying so), or the epilog's record may come first and the
			// hooks' minimal profile stand.
			hooksOnly := got.Source == profile.SourceHook && hasReason(got, "agent unreachable at job start")
			taken := got.Source == profile.SourceAgent && hasReason(got, "the prolog did not reach the agent")
			if !hooksOnly && !taken {
				t.Errorf("job %s: source %q reasons %q; want the direct hooks' minimal profile, or the agent's from the spooled prolog on", j.id, got.Source, got.PartialReasons)
			}
			if got.Cluster != clusterName || got.Node != nodeName {
				t.Errorf("job %s under %s/%s, want %s/%s", j.id, got.Cluster, got.Node, clusterName, nodeName)
			}
		}
	}
	if got := n.spoolKinds(t); len(got) != 0 {
		t.Errorf("spool after the lock = %v, want empty (every record applied)", got)
	}
	if bad, _ := os.ReadDir(filepath.Join(n.cfg.SpoolDir, "bad")); len(bad) > 0 {
		t.Errorf("%d spool records quarantined, want none", len(bad))
	}
	if !a.running() {
		t.Errorf("agent exited during the lock\n%s", a.dump())
	}
}

// gpuSummary renders a profile's GPUs for messages.
func gpuSummary(j profile.Job) []string {
	var s []string
	for _, g := range j.GPUs {
		s = append(s, fmt.Sprintf("{index %d uuid %s mem_peak %d samples %d shared %v}", g.SlurmIndex, g.UUID, g.MemPeak, g.Samples, g.Shared))
	}
	return s
}

// TestDiskUnwritable puts the database and the spool where nothing can be
// written. The agent must refuse to start with a clear error; the hooks
// must still exit 0, quietly and in time, and log the job and the reason
// the record was lost.
func TestDiskUnwritable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		nonRoot    bool // root writes anywhere: the case cannot happen to root
		prepare    func(t *testing.T, dir string) string
		wantReason string
	}{
		{
			name: "file where the directory should be",
			prepare: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "state")
				if err := os.WriteFile(p, []byte("not a directory"), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantReason: "not a directory",
		},
		{
			name:    "read-only directory",
			nonRoot: true,
			prepare: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "state")
				if err := os.Mkdir(p, 0o555); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantReason: "permission denied",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.nonRoot && os.Geteuid() == 0 {
				t.Skip("root writes into read-only directories; the file-as-directory case covers root")
			}
			n := newNode(t, func(dir string, c *config.Config) {
				state := tt.prepare(t, dir)
				c.DB = filepath.Join(state, "gpuprof.db")
				c.SpoolDir = filepath.Join(state, "spool")
			})

			out, wall, err := runWithin(t, 10*time.Second, gpuprofBin, "agent", "--config", n.config)
			if err == nil {
				t.Errorf("agent with an unwritable database exited 0 after %s, want an error; output:\n%s", wall, out)
			} else if !strings.Contains(out, "open database") || !strings.Contains(out, tt.wantReason) {
				t.Errorf("agent output %q, want it to say it cannot open the database (%s)", out, tt.wantReason)
			}

			env := hookEnv("401", "2")
			n.hook(t, "prolog", env)
			n.hook(t, "epilog", withExit(env, 0))
			for _, kind := range []string{"prolog", "epilog"} {
				if lines := n.logLines(t, "hook="+kind, "job=401", "record lost", tt.wantReason); len(lines) == 0 {
					t.Errorf("%s: no log line with job=401, \"record lost\" and %q\nlog:\n%s", kind, tt.wantReason, n.readLog(t))
				}
			}
		})
	}
}

// TestSpoolUnwritable leaves the database writable but not the spool,
// where the agent makes a finished profile durable first. The agent must
// keep running and, the spool failing, write the finished profile to the
// database itself: the job ends complete, through the agent, nothing lost.
func TestSpoolUnwritable(t *testing.T) {
	t.Parallel()
	n := newNode(t, func(dir string, c *config.Config) {
		blocker := filepath.Join(dir, "state")
		if err := os.WriteFile(blocker, []byte("not a directory"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.SpoolDir = filepath.Join(blocker, "spool")
	})
	a := n.startAgent(t)
	env := hookEnv("402", "1")
	n.hook(t, "prolog", env)
	burn := n.startBurn(t, "402", "1", "3GiB", "20")
	n.waitJob(t, "402", "a flush with the burn's memory", func(j profile.Job) bool {
		return len(j.GPUs) == 1 && j.GPUs[0].MemPeak == 3*gib
	})
	burn.stop(t)
	n.hook(t, "epilog", withExit(env, 0))

	got := n.mustShow(t, "402")
	if got.Status != profile.StatusFinished || got.Source != profile.SourceAgent {
		t.Errorf("status %q source %q, want finished by the agent", got.Status, got.Source)
	}
	if hasReason(got, "agent unreachable") {
		t.Errorf("reasons %q: the agent was reachable", got.PartialReasons)
	}
	if len(got.GPUs) != 1 || got.GPUs[0].MemPeak != 3*gib {
		t.Errorf("GPUs %v, want one with the 3 GiB peak", gpuSummary(got))
	}
	if lines := n.logLines(t, "component=agent", "job=402", "spool not writable"); len(lines) == 0 {
		t.Errorf("no agent log line with job=402 saying the spool was not writable\nlog:\n%s", n.readLog(t))
	}
	// The agent and the hooks share the log file. The agent creates it,
	// and its creating open once wrote at its own offset, not at the end:
	// each later agent line overwrote the hook lines appended since, so
	// under load (the agent logging after the epilog) the log held none
	// of them (internal/safefs.OpenAppend; TestOpenAppendSharedLog).
	if lines := n.logLines(t, "hook=prolog", "job=402", "msg=done"); len(lines) == 0 {
		t.Errorf("no prolog line of job 402 in the log\nlog:\n%s", n.readLog(t))
	}
	if lines := n.logLines(t, "hook=epilog", "job=402", "via=agent"); len(lines) == 0 {
		t.Errorf("the epilog did not end the job through the agent\nlog:\n%s", n.readLog(t))
	}
	if !a.running() {
		t.Errorf("agent exited\n%s", a.dump())
	}
}

// runWithin runs a command with a time limit and returns its combined
// output, how long it ran and its error.
func runWithin(t *testing.T, limit time.Duration, name string, args ...string) (string, time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("%s %v still running after %s\n%s", name, args, limit, out)
	}
	return string(out), wall, err
}

// TestNVMLMissing configures the real GPU backend on a node without the
// NVIDIA library. The agent must fail fast with a message naming NVML,
// not a crash; the hooks, which name GPUs from the driver's /proc files
// (gpu/nvproc), find none on this node and must record the jobs minimally
// as on any node whose agent is down, with the GPUs known by Slurm index
// only.
func TestNVMLMissing(t *testing.T) {
	t.Parallel()
	n := newNode(t, func(_ string, c *config.Config) {
		c.Agent.GPU = "nvml"
		c.NVML.Library = "/nonexistent/libnvidia-ml.so.1"
	})

	cmd := exec.Command(gpuprofBin, "agent", "--gpu", "nvml", "--config", n.config)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		wall := time.Since(start)
		if err == nil {
			t.Errorf("agent without NVML exited 0, want an error")
		}
		if wall >= 2*time.Second {
			t.Errorf("agent without NVML took %s to fail, want < 2s", wall)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("agent without NVML still running after 10s")
	}
	msg := stderr.String()
	if !strings.Contains(msg, "NVML") {
		t.Errorf("agent stderr %q does not mention NVML", msg)
	}
	for _, crash := range []string{"panic", "goroutine ", "runtime."} {
		if strings.Contains(msg, crash) {
			t.Errorf("agent stderr has %q, want a plain error message:\n%s", crash, msg)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("agent stdout %q, want empty", stdout.String())
	}

	env := hookEnv("501", "0,2")
	n.hook(t, "prolog", env)
	n.hook(t, "epilog", withExit(env, 0))
	n.ingest(t, false)
	got := n.mustShow(t, "501")
	if got.Status != profile.StatusFinished || got.Source != profile.SourceHook {
		t.Errorf("status %q source %q, want %q from %q", got.Status, got.Source, profile.StatusFinished, profile.SourceHook)
	}
	if !hasReason(got, "GPU UUIDs unknown") {
		t.Errorf("reasons %q, want one saying the GPU UUIDs are unknown", got.PartialReasons)
	}
	var idx []int
	for _, g := range got.GPUs {
		idx = append(idx, g.SlurmIndex)
	}
	if !slices.Equal(idx, []int{0, 2}) {
		t.Errorf("GPUs by slurm index = %v, want [0 2] (kept without UUIDs)", idx)
	}
	if lines := n.logLines(t, "job=501", "GPU inventory unavailable", "nvidia kernel module"); len(lines) == 0 {
		t.Errorf("no log line saying the hooks found no NVIDIA driver\nlog:\n%s", n.readLog(t))
	}
}

// hostileComment is a 10 KB SLURM_JOB_COMMENT full of terminal escapes,
// control characters, C1 controls, bidi overrides and invalid UTF-8: what a
// user may put in --comment to forge log lines or garble a terminal.
func hostileComment() string {
	var b strings.Builder
	for b.Len() < 10<<10 {
		b.WriteString("\x1b[31mred\x1b[0m \x1b]0;title\x07 line\r\nforged level=ERROR\t\x08\x7f \u009b2J \u202eevil\u202c \xff\xfe ")
	}
	return b.String()
}

// TestMalformedEnvironment gives the hooks environments slurmd should never
// produce, and some it does. They must exit 0 quietly every time; a job
// with a valid id must be recorded with what could be made of the rest,
// and a job without one must be logged with the reason.
func TestMalformedEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		id      string
		gpus    string
		comment string
		// wantRecorded: a profile must exist, with these Slurm GPU indices.
		wantRecorded bool
		wantIdx      []int
		// wantPartial: the profile must be marked partial; its GPUs are
		// then not checked.
		wantPartial bool
		// wantLog: each hook logs a line with all of these.
		wantLog []string
	}{
		{name: "job id with shell syntax", id: "abc$(rm)", gpus: "0", wantLog: []string{"job not recorded: bad environment", "SLURM_JOB_ID", "abc$(rm)"}},
		{name: "empty job id", id: "", gpus: "0", wantLog: []string{"job not recorded: bad environment", "SLURM_JOB_ID: missing"}},
		{name: "GPU ranges", id: "601", gpus: "0,2-3", wantRecorded: true, wantIdx: []int{0, 2, 3}},
		{name: "no GPUs", id: "602", gpus: "", wantRecorded: true},
		{name: "reverse GPU range", id: "603", gpus: "3-1", wantRecorded: true, wantLog: []string{"job=603", "environment problem", "reverse range"}},
		{name: "GPU list not numbers", id: "604", gpus: "x", wantRecorded: true, wantLog: []string{"job=604", "environment problem", "not a non-negative number"}},
		{name: "GPU index beyond the node", id: "606", gpus: "7", wantRecorded: true, wantPartial: true},
		{name: "hostile comment", id: "605", gpus: "1", comment: hostileComment(), wantRecorded: true, wantIdx: []int{1}, wantLog: []string{"job=605", "SLURM_JOB_COMMENT", "truncated"}},
	}
	for _, mode := range []string{"agent", "direct"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			n := newNode(t, nil)
			var a *agentProc
			if mode == "agent" {
				a = n.startAgent(t)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					env := hookEnv(tt.id, tt.gpus)
					if tt.comment != "" {
						env["SLURM_JOB_COMMENT"] = tt.comment
					}
					n.hook(t, "prolog", env)
					n.hook(t, "epilog", withExit(env, 0))
					for _, kind := range []string{"prolog", "epilog"} {
						if tt.wantLog != nil && len(n.logLines(t, append([]string{"hook=" + kind}, tt.wantLog...)...)) == 0 {
							t.Errorf("%s: no log line with %q\nlog:\n%s", kind, tt.wantLog, n.readLog(t))
						}
					}
					if !tt.wantRecorded {
						return
					}
					if mode == "agent" {
						n.waitJob(t, tt.id, "finished", func(j profile.Job) bool { return j.Status == profile.StatusFinished })
					} else {
						n.ingest(t, true)
					}
					got := n.mustShow(t, tt.id)
					if got.Status != profile.StatusFinished {
						t.Errorf("status %q, want %q", got.Status, profile.StatusFinished)
					}
					var idx []int
					for _, g := range got.GPUs {
						idx = append(idx, g.SlurmIndex)
					}
					switch {
					case tt.wantPartial && !got.Partial:
						t.Errorf("profile not partial (GPUs %v), want partial: a GPU could not be resolved", gpuSummary(got))
					case !tt.wantPartial && !slices.Equal(idx, tt.wantIdx):
						t.Errorf("GPUs by slurm index = %v, want %v", idx, tt.wantIdx)
					}
					if tt.comment != "" {
						checkCleanComment(t, got.Comment)
					}
				})
			}
			checkLogUnforged(t, n.readLog(t))
			if a != nil {
				resp, err := hookproto.Client{Socket: n.cfg.Socket}.Do(context.Background(), hookproto.Request{Op: hookproto.OpStatus})
				if err != nil || len(resp.Running) != 0 {
					t.Errorf("agent after the malformed jobs: running %v, err %v; want alive with no job left running", resp.Running, err)
				}
			}
		})
	}
}

// checkLogUnforged fails when the log holds a raw control character (a
// terminal escape, a carriage return) or a line that the hostile comment
// forged: user text must reach the log quoted.
func checkLogUnforged(t *testing.T, log string) {
	t.Helper()
	for line := range strings.Lines(log) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "forged") {
			t.Errorf("forged log line: %q", line)
		}
		if i := strings.IndexFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
			t.Errorf("log line with control character %q at byte %d: %q", line[i], i, line)
			return
		}
	}
}

// checkCleanComment fails unless the stored comment is bounded, kept some
// of the text, and holds no character that could act on a terminal or
// reorder text.
func checkCleanComment(t *testing.T, c string) {
	t.Helper()
	if c == "" || !strings.Contains(c, "red") || !strings.Contains(c, "forged") {
		t.Errorf("comment %q: want the printable text kept", c)
	}
	if len(c) > 1024 {
		t.Errorf("comment is %d bytes, want at most 1024", len(c))
	}
	for i, r := range c {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Errorf("comment has control character %U at byte %d: %q", r, i, c)
			return
		}
	}
}

// TestEpilogBurst starts 64 jobs on one node at the same instant, half of
// them with a simulated CUDA program on a GPU shared with 15 other jobs,
// and ends them all at the same instant. Every hook must exit 0 before its
// deadline and every job get a complete finished profile.
//
// What it checks is that simultaneous requests lose or mix up nothing, so
// its hooks get a 10 s deadline: with 2 s, 64 hook processes starting on a
// small, busy machine (CI runs other packages' tests at the same time) can
// spend the deadline waiting for a CPU. The 2 s deadline is checked by the
// other tests. It is also the one test not run in parallel with the
// others: its 64 epilogs load every CPU, and the other tests' deadline
// checks should measure the hooks, not this burst.
func TestEpilogBurst(t *testing.T) {
	const jobs = 64
	n := newNode(t, func(_ string, c *config.Config) { c.Hooks.Deadline = config.Duration(10 * time.Second) })
	a := n.startAgent(t)
	id := func(i int) string { return strconv.Itoa(700 + i) }
	gpuOf := func(i int) string { return strconv.Itoa(i % 4) }
	burns := func(i int) bool { return i%2 == 0 }
	env := func(i int) map[string]string { return hookEnv(id(i), gpuOf(i)) }

	// The hooks' own deadline is checked through the log ("deadline
	// reached", below): with 64 processes starting on two CPUs, the wall
	// time of each would mostly measure the wait for a CPU.
	parallel(jobs, 0, func(i int) { checkHook(t, id(i), n.runHook(t, n.config, "prolog", env(i)), false) })
	prologsDone := time.Now()
	var procs []*burnProc
	for i := range jobs {
		if burns(i) {
			procs = append(procs, n.startBurn(t, id(i), gpuOf(i), "1GiB", "5"))
		}
	}
	n.waitProfiles(t, "every burn seen by the agent", func(m map[string]profile.Job) bool {
		for i := range jobs {
			if j, ok := m[id(i)]; !ok || burns(i) && (len(j.GPUs) != 1 || j.GPUs[0].MemPeak != gib) {
				return false
			}
		}
		return true
	})
	for _, p := range procs {
		p.stop(t)
	}
	// Every job must outlive profile.MinCoverIntervals samples, or its
	// profile is rightly partial ("sampling may have missed its work"). On
	// a fast machine the burns are seen within a few hundred milliseconds,
	// so wait out the rest; stored times have whole seconds, hence the
	// extra second.
	time.Sleep(time.Until(prologsDone.Add(profile.MinCoverIntervals*interval + time.Second)))

	// Start all 64 epilogs at once, as slurmd does when a job array ends.
	var (
		start   = make(chan struct{})
		wg      sync.WaitGroup
		mu      sync.Mutex
		slowest time.Duration
	)
	for i := range jobs {
		wg.Go(func() {
			<-start
			r := n.runHook(t, n.config, "epilog", withExit(env(i), 0))
			checkHook(t, id(i), r, false)
			mu.Lock()
			slowest = max(slowest, r.wall)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	t.Logf("slowest of %d simultaneous epilogs: %s (process), %s (hook's own measure)", jobs, slowest.Round(time.Millisecond), n.slowestHook(t, "epilog"))

	t.Logf("epilogs by outcome: agent %d, spool %d",
		len(n.logLines(t, "hook=epilog", "msg=done", "via=agent")),
		len(n.logLines(t, "hook=epilog", "msg=done", "via=spool")))
	if lines := n.logLines(t, "via=database"); len(lines) > 0 {
		t.Errorf("hooks wrote the database, which only the agent writes:\n%s", strings.Join(lines, "\n"))
	}

	m := n.waitProfiles(t, "every job finished", func(m map[string]profile.Job) bool {
		for i := range jobs {
			if m[id(i)].Status != profile.StatusFinished {
				return false
			}
		}
		return true
	})
	for i := range jobs {
		j := m[id(i)]
		if j.Source != profile.SourceAgent || j.Partial || !j.ExitKnown {
			t.Errorf("job %s: source %q partial %v %q exit known %v; want a complete profile from the agent", id(i), j.Source, j.Partial, j.PartialReasons, j.ExitKnown)
			continue
		}
		want := uint64(0)
		if burns(i) {
			want = gib
		}
		if len(j.GPUs) != 1 || j.GPUs[0].SlurmIndex != i%4 || !j.GPUs[0].Shared || j.GPUs[0].MemPeak != want {
			t.Errorf("job %s: GPUs %v, want one shared GPU, slurm index %d, mem_peak %d", id(i), gpuSummary(j), i%4, want)
		}
	}
	if lines := n.logLines(t, "deadline reached"); len(lines) > 0 {
		t.Errorf("hooks hit their deadline:\n%s", strings.Join(lines, "\n"))
	}
	if !a.running() {
		t.Errorf("agent exited during the burst\n%s", a.dump())
	}
}

// TestHookBadArguments: a hook called with arguments or flags it does not
// know (a wrapper passing "$@", a typo in slurm.conf) still exits 0; any
// other command exits 2 for the same mistake.
func TestHookBadArguments(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{gpuprofBin, hookBin} {
		for _, args := range [][]string{
			{"prolog", "extra"},
			{"epilog", "--no-such-flag"},
			{"jobcomp", "extra", "--no-such-flag"},
		} {
			cmd := exec.Command(bin, args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "GPUPROF_CONFIG=/nonexistent/gpuprof.toml"}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s %v: %v, want exit 0 (a hook never fails)\n%s", filepath.Base(bin), args, err, out)
			}
		}
	}
	out, err := exec.Command(gpuprofBin, "report", "extra").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("gpuprof report extra: %v, want exit 2 (usage)\n%s", err, out)
	}
}
