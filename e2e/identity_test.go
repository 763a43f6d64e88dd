package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// TestForeignProcessesCannotClaimJobs is issue 25's first attack on the
// real test cluster (proctrack/linuxproc, as most of these tests), with
// notices and the cancel action on. User B's busy job waits, held, while
// user A starts two idle programs outside any job: one with SLURM_JOB_ID
// set to B's job in its environment, one moved into a cgroup directory
// named like B's job in a hierarchy users are delegated (systemd's). Then
// B's job runs, and an idle control job of B's in the same partition.
// B's job must be recorded with B as owner, the GPU Slurm gave it and B's
// readings; it must never be warned or cancelled (the control job is:
// the action works); it stays finished while A's programs still claim it,
// also after the agent restarts.
func TestForeignProcessesCannotClaimJobs(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	requireUserTools(t)
	lookAlikeRoot := "/sys/fs/cgroup/systemd"
	if _, err := os.Stat(filepath.Join(lookAlikeRoot, "cgroup.procs")); err != nil {
		skipOrFail(t, "no cgroup v1 name=systemd hierarchy to make a look-alike job directory in: %v", err)
	}
	bin := gpuprofBinary(t)
	work := sharedTempDir(t, "gpuprof-e2e-identity-")
	cfgPath := filepath.Join(work, "gpuprof.toml")
	// The node to itself: on a node other tests' jobs share, Slurm gives
	// the victim whichever GPU they left free, possibly one of A's.
	c := wholeNode(t)
	// The scope's partition is the one where the cancel action is on.
	cancel := c.Name
	c.hooks(t, bin, cfgPath)
	c.withoutJobComp(t) // as on its own cluster before, with no JobCompType
	simDir, outDir, mailDir := filepath.Join(work, "sim"), filepath.Join(work, "out"), filepath.Join(work, "mail")
	for _, d := range []string{simDir, outDir, mailDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	logFile := writeNoticesConfig(t, cfgPath, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"),
		writeStandInSendmail(t, work, mailDir), cancel+"-none", cancel, false)
	suffix := strconv.Itoa(os.Getpid() % 100000)
	a := addUser(t, "gpuprof-a-"+suffix)
	b := addUser(t, "gpuprof-b-"+suffix)
	// B's jobs are charged to the scope's account.
	c.addUser(t, b.name)

	agents := 0
	startAgent := func() *process {
		agents++
		out := filepath.Join(work, fmt.Sprintf("agent%d.out", agents))
		p := startProcess(t, out, c.env(), bin, "agent", "--config", cfgPath)
		waitAgent(t, p, filepath.Join(work, "agent.sock"), out)
		return p
	}
	t.Cleanup(func() {
		if t.Failed() {
			if data, err := os.ReadFile(logFile); err == nil {
				t.Logf("==== %s (last 80 lines)\n%s", logFile, lastLines(string(data), 80))
			}
		}
	})
	agent := startAgent()
	uuidByMinor := simUUIDs(t, simDir)

	// B's busy job, held so that A's programs are there first.
	victim := sbatchAs(t, c.cluster, b, "--hold", "-p", cancel, "-A", c.Name, "--gres=gpu:1", "-J", "e2e-victim", "-o", filepath.Join(outDir, "%j.out"),
		"--chdir", work, "--wrap", `echo "gpuprof-e2e gpus=$SLURM_JOB_GPUS"; `+shellQuote(bin)+
			" simgpu burn --config "+shellQuote(cfgPath)+" --mem 70GiB --util 99 --for 70s; echo finished")

	// A's idle programs, outside any job.
	claimEnv := func(extra ...string) []string {
		return append([]string{"PATH=/usr/bin:/bin"}, extra...)
	}
	burnArgs := []string{"simgpu", "burn", "--config", cfgPath, "--mem", "0", "--util", "0", "--for", "10m"}
	byEnv := startAs(t, a, claimEnv("SLURM_JOB_ID="+victim, "CUDA_VISIBLE_DEVICES=2"), bin, burnArgs...)
	byCgroup := startAs(t, a, claimEnv("CUDA_VISIBLE_DEVICES=3"), bin, burnArgs...)
	// The subtree systemd would delegate to A (A's own uid: nothing of the
	// host's is touched), holding a directory named like B's job.
	slice := filepath.Join(lookAlikeRoot, "user.slice")
	if _, err := os.Stat(slice); os.IsNotExist(err) {
		if err := os.Mkdir(slice, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(slice) })
	}
	userSlice := filepath.Join(slice, fmt.Sprintf("user-%d.slice", a.uid))
	lookAlike := filepath.Join(userSlice, fmt.Sprintf("user@%d.service/job_%s/step_0", a.uid, victim))
	if err := os.MkdirAll(lookAlike, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = byCgroup.Process.Kill() // a cgroup with a process in it cannot be removed
		_ = byCgroup.Wait()
		removeCgroupTree(userSlice)
	})
	if err := os.WriteFile(filepath.Join(lookAlike, "cgroup.procs"), []byte(strconv.Itoa(byCgroup.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", byCgroup.Process.Pid)); !strings.Contains(string(data), "/job_"+victim+"/") {
		t.Fatalf("test premise: A's program is not in the look-alike directory:\n%s", data)
	}
	time.Sleep(5 * time.Second) // several samples see A's programs first

	c.run(t, "scontrol", "release", victim)
	control := sbatchAs(t, c.cluster, b, "-p", cancel, "-A", c.Name, "--gres=gpu:1", "-J", "e2e-control", "-o", filepath.Join(outDir, "%j.out"),
		"--chdir", work, "--wrap", "sleep 90")
	t.Logf("victim %s, control %s; A's programs: pid %d (environment), pid %d (cgroup)", victim, control, byEnv.Process.Pid, byCgroup.Process.Pid)
	// The victim on GPU 0 and the control placed: other tests' jobs on
	// the GPUs left, each with its own agent and simulated GPUs, change
	// nothing this test checks.
	c.waitPlaced(t, queueTimeout)
	c.share(t)
	c.waitQueueEmpty(t, []string{victim, control}, queueTimeout)
	// What follows reads the agent's records and restarts it: the node
	// is no longer needed.
	c.end(t)

	checkVictim := func(when string) {
		t.Helper()
		got := showJob(t, bin, cfgPath, victim)
		if len(got) != 1 {
			t.Fatalf("%s: job %s has %d profiles, want 1: %+v", when, victim, len(got), got)
		}
		p := got[0]
		output, _ := os.ReadFile(filepath.Join(outDir, victim+".out"))
		gpus := jobGPUs(t, string(output))
		if p.Status != profile.StatusFinished || p.User != b.name || p.UID != b.uid {
			t.Errorf("%s: job %s is %s of %q (uid %d), want finished, B's (%s, uid %d)", when, victim, p.Status, p.User, p.UID, b.name, b.uid)
		}
		if len(gpus) != 1 || len(p.GPUs) != 1 || p.GPUs[0].UUID != uuidByMinor[gpus[0]] {
			t.Fatalf("%s: job %s on GPUs %v, Slurm gave it %v", when, victim, gpuUUIDsOf(p), gpus)
		}
		if g := p.GPUs[0]; g.MemPeak != 70*gib || g.UtilMax != 99 || g.Shared {
			t.Errorf("%s: job %s: peak %d GiB, util max %d, shared %v; want B's 70 GiB, 99 %%, not shared", when, victim, g.MemPeak/gib, g.UtilMax, g.Shared)
		}
		if !strings.Contains(string(output), "finished") {
			t.Errorf("%s: job %s did not run to its end:\n%s", when, victim, output)
		}
	}
	waitProfiles(t, bin, cfgPath, []string{victim, control})
	checkVictim("at its end")
	notices := noticesByJob(t, bin, cfgPath)
	if n := notices[victim]; len(n) != 0 {
		t.Errorf("B's busy job %s got notices: %+v", victim, n)
	}
	cancelled := false
	for _, n := range notices[control] {
		cancelled = cancelled || n.Rule == profile.RuleCancel && n.Status == profile.NoticeCanceled
	}
	if !cancelled {
		t.Errorf("the idle control job %s was not cancelled (the action must work): %+v", control, notices[control])
	}

	// A's programs still claim the finished job.
	time.Sleep(5 * time.Second)
	checkVictim("while A's programs still claim it")
	stopProcess(t, agent)
	startAgent()
	time.Sleep(5 * time.Second)
	checkVictim("after an agent restart")
	if data, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(data), "foreign process on a GPU") {
		t.Errorf("the agent's log names no foreign process (%v)", err)
	}
}

func gpuUUIDsOf(j profile.Job) []string {
	var out []string
	for _, g := range j.GPUs {
		out = append(out, g.UUID)
	}
	return out
}

// sbatchAs submits a job as u and returns its id.
func sbatchAs(t *testing.T, c *cluster, u unixUser, args ...string) string {
	t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", u.name, "--", "sbatch", "--parsable"}, args...)...)
	cmd.Env = c.env()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("sbatch as %s: %v\n%s", u.name, err, stderr)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	return id
}

// startAs starts a program as u (real and effective uid and gid), outside
// any job, and kills it when the test ends.
func startAs(t *testing.T, u unixUser, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	pw, err := user.LookupId(strconv.Itoa(u.uid))
	if err != nil {
		t.Fatal(err)
	}
	gid, err := strconv.Atoi(pw.Gid)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(gid)}, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s as %s: %v", name, u.name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// removeCgroupTree removes a cgroup directory tree, deepest first (its
// processes have ended by then).
func removeCgroupTree(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
}
