package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
)

// The attacks of issue 25, item 1, on a simulated node: user A (uidA) runs
// programs that claim the job ids of user B (uidB), in their environment
// or in a cgroup directory of their own that looks like Slurm's. A job's
// owner, GPUs and existence must stay Slurm's.

const (
	uidA = 1001
	uidB = 1002
)

// Cgroups as /proc/PID/cgroup shows them on a cgroup v2 node.
const (
	cgSessionA = "0::/user.slice/user-1001.slice/session-3.scope\n"
	// A directory A made in the subtree systemd delegates to A.
	cgLookAlike903 = "0::/user.slice/user-1001.slice/user@1001.service/job_903/step_0/user/task_0\n"
)

// cgSlurm is the cgroup Slurm (cgroup v2) puts a task of job in.
func cgSlurm(job string) string {
	return "0::/system.slice/slurmstepd.scope/job_" + job + "/step_0/user/task_0\n"
}

// procAs creates /proc/PID for a process of real uid with env in its
// environment and, unless cgroup is empty, cgroup as its /proc/PID/cgroup,
// and registers its GPU use.
func (f *fixture) procAs(pid, uid int, env []string, cgroup, name string, use ...sim.Usage) {
	f.t.Helper()
	d := filepath.Join(f.procfs, fmt.Sprint(pid))
	files := map[string]string{
		"stat":    fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, name, 1000+pid),
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

// startAs is the prolog of job for user (uid) on refs.
func (f *fixture) startAs(job, user string, uid int, partition string, refs ...hookproto.GPURef) {
	f.t.Helper()
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: "c", Node: "n1", JobID: job, User: user, UID: uid, GID: 100,
		Partition: partition, Account: "lab", Start: f.now, GPUs: refs}})
}

func heldJobs(a *Agent) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ids []string
	for id := range a.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// A's program with SLURM_JOB_ID=103 and CUDA_VISIBLE_DEVICES=2 runs before
// B's job 103 (GPU 3) starts. Job 103 keeps B, GPU 3 and B's readings,
// whether the node runs its jobs in cgroups or not (proctrack/linuxproc).
func TestClaimedJobIDKeepsSlurmsOwnerAndGPUs(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cgA, cgB   string
		envB       []string
		wantShared bool
	}{
		{name: "linuxproc", envB: []string{"SLURM_JOB_ID=103", "CUDA_VISIBLE_DEVICES=3"}},
		{name: "cgroup v2", cgA: cgSessionA, cgB: cgSlurm("103"), envB: []string{"SLURM_JOB_ID=103", "CUDA_VISIBLE_DEVICES=0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.procAs(700, uidA, []string{"SLURM_JOB_ID=103", "CUDA_VISIBLE_DEVICES=2"}, tt.cgA, "burn",
				sim.Usage{UUID: f.devs[2].UUID, Mem: 5 * gib, Util: 10})
			f.tick(3)
			if ids := heldJobs(f.a); len(ids) != 0 {
				t.Errorf("before any prolog the agent holds jobs %v, want none (a process's environment is not Slurm's word)", ids)
			}
			f.startAs("103", "bob", uidB, "gpu", minorRef(3))
			f.procAs(710, uidB, tt.envB, tt.cgB, "train", sim.Usage{UUID: f.devs[3].UUID, Mem: 70 * gib, Util: 99})
			f.tick(5)
			j := f.end("103", 0)
			if j.User != "bob" || j.UID != uidB {
				t.Errorf("job 103 of %q (uid %d), want bob (uid %d) as the prolog said", j.User, j.UID, uidB)
			}
			if len(j.GPUs) != 1 || j.GPUs[0].UUID != f.devs[3].UUID {
				t.Fatalf("job 103 GPUs %v, want only GPU 3 (%s)", gpuUUIDs(j), f.devs[3].UUID)
			}
			g := j.GPUs[0]
			if g.MemPeak != 70*gib || g.UtilMax != 99 || g.Shared {
				t.Errorf("job 103 on GPU 3: peak %d GiB, util max %d, shared %v; want B's 70 GiB, 99 %%, not shared", g.MemPeak/gib, g.UtilMax, g.Shared)
			}
			if n := strings.Count(f.logs.String(), "foreign process"); n != 1 {
				t.Errorf("%d log lines about the foreign process, want 1:\n%s", n, f.logs)
			}
		})
	}
}

func gpuUUIDs(j profile.Job) []string {
	var out []string
	for _, g := range j.GPUs {
		out = append(out, g.UUID)
	}
	return out
}

// After B's job 104 finished, a process claiming it (A's, by environment or
// a look-alike cgroup; B's, lingering in the job's Slurm cgroup) does not
// reopen it, and neither does it after an agent restart, which forgot
// which jobs ended.
func TestFinishedJobNotReopenedByProcess(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	slurmd := filepath.Join(f.dir, "slurmd") // slurmd holds no step of job 104 any more
	if err := os.MkdirAll(slurmd, 0o755); err != nil {
		t.Fatal(err)
	}
	f.a.opts.SlurmdSpoolDir = slurmd
	f.startAs("104", "bob", uidB, "gpu", minorRef(1))
	f.procAs(720, uidB, []string{"SLURM_JOB_ID=104"}, "", "train", sim.Usage{UUID: f.devs[1].UUID, Mem: 20 * gib, Util: 50})
	f.tick(3)
	f.node.Unregister(720)
	f.end("104", 0)

	finished := func(when string) {
		t.Helper()
		if ids := heldJobs(f.a); slices.Contains(ids, "104") {
			t.Errorf("%s: job 104 sampled again", when)
		}
		f.a.flush(ctx)
		j, err := f.db.GetJob(ctx, profile.Key{Cluster: "c", JobID: "104", Node: "n1"})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != profile.StatusFinished || j.User != "bob" || j.UID != uidB || len(j.GPUs) != 1 || j.GPUs[0].MemPeak != 20*gib {
			t.Errorf("%s: job 104 is %s of %q (uid %d), GPUs %v; want finished, bob's, B's 20 GiB peak", when, j.Status, j.User, j.UID, gpuUUIDs(j))
		}
	}
	f.now = f.now.Add(30 * time.Second)
	f.procAs(730, uidA, []string{"SLURM_JOB_ID=104"}, "", "burn", sim.Usage{UUID: f.devs[1].UUID, Mem: 1 * gib, Util: 5})
	f.tick(3)
	finished("after A's claim")

	// The agent restarts: it no longer knows that 104 ended here.
	f.node.Unregister(730)
	f.a = f.newAgent()
	f.a.opts.SlurmdSpoolDir = slurmd
	if err := f.a.resume(ctx); err != nil {
		t.Fatal(err)
	}
	f.procAs(731, uidA, []string{"SLURM_JOB_ID=104"}, "", "burn", sim.Usage{UUID: f.devs[1].UUID, Mem: 1 * gib, Util: 5})
	f.procAs(732, uidA, nil, "0::/user.slice/user-1001.slice/user@1001.service/job_104/step_0\n", "burn",
		sim.Usage{UUID: f.devs[2].UUID, Mem: 1 * gib, Util: 5})
	f.procAs(733, uidB, nil, cgSlurm("104"), "lingering", sim.Usage{UUID: f.devs[3].UUID, Mem: 1 * gib, Util: 5})
	f.tick(3)
	finished("after a restart")
}

// A's processes sit in a directory of A's own named job_903: one before
// B's job 903 starts (on GPU 2), one on B's GPU 3 while it runs. Neither is
// job 903's: B's job keeps its owner, GPU and readings; A's load on GPU 3
// is charged to nobody, and the profile says so.
func TestLookAlikeCgroupIsForeign(t *testing.T) {
	f := newFixture(t, nil)
	f.procAs(740, uidA, nil, cgLookAlike903, "idle", sim.Usage{UUID: f.devs[2].UUID, Mem: 1 * gib, Util: 0})
	f.tick(3)
	if ids := heldJobs(f.a); len(ids) != 0 {
		t.Errorf("before any prolog the agent holds jobs %v, want none (a look-alike cgroup is not Slurm's)", ids)
	}
	f.startAs("903", "bob", uidB, "gpu", minorRef(3))
	f.procAs(750, uidB, nil, cgSlurm("903"), "train", sim.Usage{UUID: f.devs[3].UUID, Mem: 60 * gib, Util: 95})
	f.procAs(741, uidA, nil, cgLookAlike903, "sneak", sim.Usage{UUID: f.devs[3].UUID, Mem: 10 * gib, Util: 4})
	f.tick(5)
	j := f.end("903", 0)
	if j.User != "bob" || j.UID != uidB || len(j.GPUs) != 1 || j.GPUs[0].UUID != f.devs[3].UUID {
		t.Fatalf("job 903 of %q (uid %d) on %v, want bob's on GPU 3 only", j.User, j.UID, gpuUUIDs(j))
	}
	if g := j.GPUs[0]; g.MemPeak != 60*gib || g.UtilMax != 95 {
		t.Errorf("job 903: peak %d GiB, util max %d; want B's own 60 GiB and 95 %% (A's 10 GiB charged to nobody)", g.MemPeak/gib, g.UtilMax)
	}
	want := fmt.Sprintf("foreign process uid %d on GPU 3", uidA)
	if !strings.Contains(strings.Join(j.PartialReasons, "; "), want) {
		t.Errorf("partial reasons %q, want %q", j.PartialReasons, want)
	}
}

// With notices and the cancel action on, A's idle program claiming B's
// busy job 903 makes nobody mail or cancel job 903; B's idle job 902 in
// the same partition is cancelled (the action works).
func TestNoticesNeverCancelAnotherUsersJob(t *testing.T) {
	f := newNoticeFixture(t, func(c *config.NoticesConfig) {
		c.Cancel.Enabled, c.Cancel.Partitions = true, []string{"debug"}
		c.Cancel.Grace, c.Cancel.Wait = config.Duration(5*time.Second), 0
	})
	f.procAs(760, uidA, []string{"SLURM_JOB_ID=903", "CUDA_VISIBLE_DEVICES=2"}, "", "idle",
		sim.Usage{UUID: f.devs[2].UUID})
	f.procAs(761, uidA, nil, cgLookAlike903, "idle", sim.Usage{UUID: f.devs[0].UUID})
	f.tick(2)
	f.startAs("903", "bob", uidB, "debug", minorRef(3))
	f.procAs(770, uidB, []string{"SLURM_JOB_ID=903"}, "", "train", sim.Usage{UUID: f.devs[3].UUID, Mem: 60 * gib, Util: 95})
	f.startAs("902", "bob", uidB, "debug", minorRef(1))
	f.tick(12)
	f.deliver()
	f.tick(10)
	f.deliver()
	calls, _ := os.ReadFile(filepath.Join(f.mails, "scancel"))
	if strings.Contains(string(calls), "903") {
		t.Errorf("scancel calls %q: B's busy job 903 cancelled", calls)
	}
	if !strings.Contains(string(calls), "902") {
		t.Errorf("scancel calls %q, want the idle control job 902 cancelled", calls)
	}
	if rs := f.notices("903"); len(rs) != 0 {
		t.Errorf("notices to busy job 903: %+v", rs)
	}
}

// A job found from a process in its Slurm cgroup (the agent restarted
// mid-job) is provisional: no notice goes to the owner its process
// suggests, and the first Slurm record (here the prolog, late) replaces
// every field: owner, start and GPUs. Readings of the GPUs Slurm names are
// kept; a GPU Slurm does not name is dropped.
func TestDiscoveredJobIsProvisional(t *testing.T) {
	f := newNoticeFixture(t, nil)
	start := f.now
	f.now = f.now.Add(time.Minute)
	// A root process in the job (sudo inside the job) is seen first.
	f.procAs(780, 0, nil, cgSlurm("905"), "sudo", sim.Usage{UUID: f.devs[0].UUID})
	f.procAs(781, uidA, nil, cgSlurm("905"), "train", sim.Usage{UUID: f.devs[1].UUID, Mem: 8 * gib, Util: 0})
	f.tick(25)
	if ids := heldJobs(f.a); !slices.Equal(ids, []string{"905"}) {
		t.Fatalf("held jobs %v, want 905 found from its Slurm cgroup", ids)
	}
	if n := f.deliver(); n != 0 {
		t.Errorf("%d notices to a job whose owner no Slurm record named", n)
	}
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: "c", Node: "n1", JobID: "905", User: "alice", UID: uidA, GID: 100,
		Partition: "gpu", Account: "lab", Start: start, GPUs: []hookproto.GPURef{minorRef(1), minorRef(2)}}})
	f.tick(2)
	j := f.end("905", 0)
	if j.User != "alice" || j.UID != uidA || !j.Start.Equal(start) || j.Partition != "gpu" {
		t.Errorf("job 905 of %q (uid %d) from %v in %q; want the prolog's alice (uid %d) from %v in gpu", j.User, j.UID, j.Start, j.Partition, uidA, start)
	}
	if got, want := gpuUUIDs(j), []string{f.devs[1].UUID, f.devs[2].UUID}; !slices.Equal(got, want) {
		t.Fatalf("job 905 GPUs %v, want the prolog's %v", got, want)
	}
	if g := j.GPUs[0]; g.MemPeak != 8*gib || g.Samples < 25 {
		t.Errorf("GPU 1: peak %d GiB over %d samples, want 8 GiB over the samples from before the prolog too", g.MemPeak/gib, g.Samples)
	}
}

func TestCandidateCgroupOwner(t *testing.T) {
	tests := []struct {
		name  string
		procs []candidateProc
		want  int
		ok    bool
	}{
		{name: "none in the cgroup", procs: []candidateProc{{pid: 1, uid: 1001}}, want: -1},
		{name: "one", procs: []candidateProc{{pid: 1, uid: 1001, cgroup: true}}, want: 1001, ok: true},
		{name: "a user before root", procs: []candidateProc{{pid: 1, uid: 0, cgroup: true}, {pid: 2, uid: 0, cgroup: true}, {pid: 3, uid: 1001, cgroup: true}}, want: 1001, ok: true},
		{name: "root alone", procs: []candidateProc{{pid: 1, uid: 0, cgroup: true}}, want: 0, ok: true},
		{name: "most processes", procs: []candidateProc{{pid: 1, uid: 1001, cgroup: true}, {pid: 2, uid: 1002, cgroup: true}, {pid: 3, uid: 1002, cgroup: true}}, want: 1002, ok: true},
		{name: "tie: lowest uid", procs: []candidateProc{{pid: 1, uid: 1002, cgroup: true}, {pid: 2, uid: 1001, cgroup: true}}, want: 1001, ok: true},
		{name: "environment claims do not count", procs: []candidateProc{{pid: 1, uid: 1002}, {pid: 2, uid: 1002}, {pid: 3, uid: 1001, cgroup: true}}, want: 1001, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &candidate{id: "1", procs: tt.procs}
			if got, ok := c.cgroupOwner(); got != tt.want || ok != tt.ok {
				t.Errorf("cgroupOwner() = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// Slurm 26.05 names a job's cgroup by its SLUID (unless CgroupJobIdPaths
// is on): the prolog's SLURM_JOB_SLUID maps it to the job. After a restart
// (profiles do not keep the SLUID) the mapping is learnt from a process in
// that cgroup whose environment names a job its own uid owns, never from
// another user's.
func TestSLUIDCgroupMapsToPrologJob(t *testing.T) {
	const sluid, otherSLUID = "s5K1KKYAYG5D00", "s0C8F3K2M1A0ZX"
	cg := func(s string) string { return "0::/system.slice/slurmstepd.scope/" + s + "/step_0/user/task_0\n" }
	f := newFixture(t, nil)
	ctx := context.Background()
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: "c", Node: "n1", JobID: "910", User: "alice", UID: uidA, GID: 100,
		Start: f.now, GPUs: []hookproto.GPURef{minorRef(0)}, SLUID: sluid}})
	f.procAs(790, uidA, nil, cg(sluid), "train", sim.Usage{UUID: f.devs[0].UUID, Mem: 12 * gib, Util: 60})
	f.procAs(791, uidA, nil, cg(otherSLUID), "other", sim.Usage{UUID: f.devs[0].UUID, Mem: 3 * gib, Util: 5})
	f.tick(3)
	f.a.mu.Lock()
	peak := f.a.jobs["910"].prof.GPUs[0].MemPeak
	f.a.mu.Unlock()
	if peak != 12*gib {
		t.Fatalf("job 910 peak %d GiB, want 12 (its process in its SLUID cgroup, not the other job's)", peak/gib)
	}
	f.a.flush(ctx)

	// A restart: the resumed job has no SLUID.
	f.node.Unregister(790)
	f.node.Unregister(791)
	f.a = f.newAgent()
	if err := f.a.resume(ctx); err != nil {
		t.Fatal(err)
	}
	f.procAs(792, uidB, []string{"SLURM_JOB_ID=910", "SLURM_JOB_SLUID=" + otherSLUID}, cg(otherSLUID), "claim",
		sim.Usage{UUID: f.devs[0].UUID, Mem: 30 * gib, Util: 90})
	f.procAs(793, uidA, []string{"SLURM_JOB_ID=910", "SLURM_JOB_SLUID=" + sluid}, cg(sluid), "train",
		sim.Usage{UUID: f.devs[0].UUID, Mem: 14 * gib, Util: 70})
	f.tick(3)
	j := f.end("910", 0)
	if g := j.GPUs[0]; g.MemPeak != 14*gib {
		t.Errorf("job 910 peak %d GiB after the restart, want its own process's 14 (not B's 30 in another job's cgroup)", g.MemPeak/gib)
	}
}
