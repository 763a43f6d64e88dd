package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/profile"
)

// Issue 39, finding 1: a PID is reused once its process is gone (anyone can
// cycle the counter within one sampling interval). A process is a (PID,
// start time) pair: a new process under an old PID is attributed afresh,
// and the notice rules take their evidence from the same processes for a
// whole window.

// replaceProc puts a new process under pid: the old one's /proc entry goes,
// the new one's start time is start (field 22 of stat), its real uid uid,
// its environment env and (unless empty) its cgroup cgroup; its GPU use
// replaces the old one's.
func (f *fixture) replaceProc(pid int, start uint64, uid int, env []string, cgroup, name string, use ...sim.Usage) {
	f.t.Helper()
	f.node.Unregister(pid)
	d := filepath.Join(f.procfs, fmt.Sprint(pid))
	if err := os.RemoveAll(d); err != nil {
		f.t.Fatal(err)
	}
	files := map[string]string{
		"stat":    fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, name, start),
		"comm":    name + "\n",
		"environ": strings.Join(append([]string{"PATH=/bin"}, env...), "\x00") + "\x00",
		"status":  statusOf(name, uid),
	}
	if cgroup != "" {
		files["cgroup"] = cgroup
	}
	for file, data := range files {
		writeFile(f.t, filepath.Join(d, file), data)
	}
	f.node.Register(sim.Process{PID: pid, Name: name, Usage: use})
}

// The attack of finding 1: the attacker's process (PID 700, job 102, GPU 0)
// exits and the victim's new process, busy at 95 % with 40 GiB on the
// victim's GPU 1, gets PID 700. It is the victim's job's, not the
// attacker's: the victim's job is busy, gets no idle notice and is not
// cancelled; the attacker's job is not charged with the victim's load.
func TestReusedPIDAttributedAfresh(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cgA, cgB   string
		envA, envB []string
	}{
		{name: "linuxproc", envA: []string{"SLURM_JOB_ID=102"}, envB: []string{"SLURM_JOB_ID=103"}},
		{name: "cgroup v2", cgA: cgSlurm("102"), cgB: cgSlurm("103")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newNoticeFixture(t, func(c *config.NoticesConfig) {
				c.Cancel.Enabled, c.Cancel.Partitions = true, []string{"debug"}
				c.Cancel.Grace, c.Cancel.Wait = config.Duration(5*time.Second), 0
			})
			f.startAs("102", "mallory", uidA, "debug", minorRef(0))
			f.startIn("103", "debug", minorRef(1)) // uid fixtureUID
			f.replaceProc(700, 5000, uidA, tt.envA, tt.cgA, "cycle", sim.Usage{UUID: f.devs[0].UUID, Mem: gib, Util: 50})
			f.replaceProc(710, 5001, fixtureUID, []string{"SLURM_JOB_ID=103"}, tt.cgB, "setup", sim.Usage{UUID: f.devs[1].UUID, Mem: 40 * gib, Util: 95})
			f.tick(2)
			// The victim's setup ends; the attacker's process exits and
			// the victim's training gets its PID.
			f.node.Unregister(710)
			f.replaceProc(700, 5300, fixtureUID, tt.envB, tt.cgB, "train", sim.Usage{UUID: f.devs[1].UUID, Mem: 40 * gib, Util: 95})
			f.tick(30)
			f.deliver()
			for _, r := range f.notices("103") {
				t.Errorf("the busy victim's job got notice %s (%s): %s", r.Rule, r.Status, r.Evidence)
			}
			if calls, _ := os.ReadFile(filepath.Join(f.mails, "scancel")); strings.Contains(string(calls), "103") {
				t.Errorf("scancel ran for the victim's job: %q", calls)
			}
			v := f.end("103", 0)
			if g := v.GPUs[0]; g.UtilMax != 95 || g.MemPeak != 40*gib || mean(t, g) < 90 {
				t.Errorf("victim's GPU 1: util max %d, mean %.1f, peak %d GiB; want its process's 95 %% and 40 GiB", g.UtilMax, mean(t, g), g.MemPeak/gib)
			}
			a := f.end("102", 0)
			if g := a.GPUs[0]; g.MemPeak > gib || g.UtilMax > 50 {
				t.Errorf("attacker's GPU 0: util max %d, peak %d GiB; want no more than its own process's", g.UtilMax, g.MemPeak/gib)
			}
		})
	}
}

// An idle notice and a cancel need their evidence from the same
// processes for their whole window: a process replaced under its PID
// restarts the window, even when both were idle and the job's own.
func TestNoticeEvidenceFromSameProcesses(t *testing.T) {
	f := newNoticeFixture(t, func(c *config.NoticesConfig) {
		c.Cancel.Enabled, c.Cancel.Partitions = true, []string{"debug"}
		c.Cancel.Grace, c.Cancel.Wait = config.Duration(5*time.Second), 0
	})
	idle := sim.Usage{UUID: f.devs[0].UUID, Mem: 0, Util: 0}
	f.startIn("40", "debug", minorRef(0))
	f.replaceProc(800, 7000, fixtureUID, []string{"SLURM_JOB_ID=40"}, "", "wait", idle)
	f.tick(7)
	f.replaceProc(800, 7700, fixtureUID, []string{"SLURM_JOB_ID=40"}, "", "wait", idle)
	f.tick(7) // idle 14 s, but only 7 s with these processes
	if n := f.deliver(); n != 0 {
		t.Fatalf("%d notices from evidence of two processes under one PID, want none yet: %+v", n, f.notices("40"))
	}
	f.tick(4) // 11 s with the same processes
	if n := f.deliver(); n != 1 {
		t.Fatalf("%d notices after a whole window with the same processes, want the idle_job one", n)
	}
	// Before the cancel: the process is replaced again. The cancel waits
	// for a window and the grace with the new one.
	f.tick(2)
	f.replaceProc(800, 9000, fixtureUID, []string{"SLURM_JOB_ID=40"}, "", "wait", idle)
	f.tick(10)
	f.deliver()
	for _, r := range f.notices("40") {
		if r.Rule == profile.RuleCancel {
			t.Fatalf("cancelled on evidence from two processes: %+v", r)
		}
	}
	f.tick(7)
	f.deliver()
	cancelled := false
	for _, r := range f.notices("40") {
		cancelled = cancelled || r.Rule == profile.RuleCancel
	}
	if !cancelled {
		t.Errorf("not cancelled after a window and the grace with the same processes: %+v", f.notices("40"))
	}
}
