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

	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// The names slurmd gives the hooks in these tests; the fixture's agent
// guesses "c"/"n1" (its options), as an agent without configured names
// guesses slurm.conf's ClusterName and the host name.
const (
	slurmCluster = "gpuproftest"
	slurmNode    = "localhost"
)

// hookProfile is what a prolog that reached neither the agent nor the
// database spools: a minimal running profile under slurmd's names.
func (f *fixture) hookProfile(job string, start time.Time, minor int) profile.Job {
	js := hookproto.JobStart{Cluster: slurmCluster, Node: slurmNode, JobID: job, User: "alice", UID: fixtureUID, GID: 1001,
		Account: "physics", Partition: "gpu", Start: start}
	devs, idx, _ := hookproto.Resolve(f.devs, []hookproto.GPURef{minorRef(minor)})
	j := hookproto.NewProfile(js, devs, idx, time.Second, 64, f.a.versions, profile.SourceHook)
	j.MarkPartial("agent unreachable at job start")
	return j
}

func (f *fixture) spoolPut(kind string, v any) {
	f.t.Helper()
	if _, err := f.spool.Put(kind, v); err != nil {
		f.t.Fatal(err)
	}
}

// rows returns every profile of the database, by key.
func (f *fixture) rows() map[profile.Key]profile.Job {
	f.t.Helper()
	js, err := f.db.ListJobs(context.Background(), store.Filter{})
	if err != nil {
		f.t.Fatal(err)
	}
	m := map[profile.Key]profile.Job{}
	for _, j := range js {
		m[j.Key] = j
	}
	return m
}

// onlyRow fails unless the database holds exactly one profile of job, under
// slurmd's names, and returns it.
func (f *fixture) onlyRow(job string) profile.Job {
	f.t.Helper()
	var got []profile.Job
	for _, j := range f.rows() {
		if j.JobID == job {
			got = append(got, j)
		}
	}
	if len(got) != 1 {
		f.t.Fatalf("job %s has %d rows, want 1: %+v", job, len(got), got)
	}
	if got[0].Cluster != slurmCluster || got[0].Node != slurmNode {
		f.t.Errorf("job %s under %s/%s, want slurmd's %s/%s", job, got[0].Cluster, got[0].Node, slurmCluster, slurmNode)
	}
	return got[0]
}

// The prolog found the database locked and the agent down: its record went
// to the spool. The agent, started mid-job, found the job from its process
// in its Slurm cgroup first (under its own guessed names) and flushed it;
// then it read the spool. The epilog reaches the agent. One finished
// profile results, under slurmd's names, with the agent's readings and the
// prolog's fields.
func TestSpooledPrologJoinsDiscoveredJob(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	start := f.now
	hp := f.hookProfile("5", start, 0)
	f.spoolPut(hookproto.KindHookStart, hp)

	f.now = f.now.Add(30 * time.Second)
	f.procAs(500, fixtureUID, nil, cgSlurm("5"), "train", sim.Usage{UUID: f.devs[0].UUID, Mem: 9 * gib, Util: 70})
	f.tick(3) // discovered under c/n1
	f.a.flush(ctx)
	if _, ok := f.rows()[profile.Key{Cluster: "c", JobID: "5", Node: "n1"}]; !ok {
		t.Fatal("the discovered job was not flushed under the agent's guessed names (test premise)")
	}

	f.a.drain(ctx) // the spool: slurmd's names, the prolog's record
	f.tick(2)
	f.a.flush(ctx)
	running := f.onlyRow("5")
	if running.Status != profile.StatusRunning {
		t.Fatalf("status %s, want running", running.Status)
	}

	f.do(hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{Cluster: slurmCluster, Node: slurmNode, JobID: "5"},
		End: f.now, ExitKnown: true}})
	f.a.drain(ctx)
	f.a.flush(ctx)
	j := f.onlyRow("5")
	if j.Status != profile.StatusFinished {
		t.Errorf("status %s, want finished", j.Status)
	}
	if len(j.GPUs) != 1 || j.GPUs[0].MemPeak != 9*gib {
		t.Errorf("GPUs %+v, want one with the agent's 9 GiB peak", j.GPUs)
	}
	if !j.Start.Equal(start) || j.Account != "physics" || j.Partition != "gpu" || j.UID != fixtureUID || j.User != "alice" {
		t.Errorf("start %v account %q partition %q user %q uid %d; want the prolog's %v, physics, gpu, alice, %d",
			j.Start, j.Account, j.Partition, j.User, j.UID, start, fixtureUID)
	}
	if len(f.a.jobs) != 0 || len(f.a.orphans) != 0 {
		t.Errorf("agent still holds %d jobs and %d orphans", len(f.a.jobs), len(f.a.orphans))
	}
}

// The agent starts mid-job with the prolog's record in the spool and the
// database still locked: it samples the job from the spooled record. The
// epilog is spooled too: the agent finishes its own profile with it.
func TestSpooledPrologAndEpilogWithAgentMidJob(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	start := f.now
	f.spoolPut(hookproto.KindHookStart, f.hookProfile("6", start, 1))
	f.proc(600, "6", "train", sim.Usage{UUID: f.devs[1].UUID, Mem: 5 * gib, Util: 40})
	f.now = f.now.Add(20 * time.Second)

	f.a.takeSpooledHooks(ctx) // the database is locked: only the spool is read
	if st := f.a.jobs["6"]; st == nil || st.prof.Cluster != slurmCluster || st.prof.Node != slurmNode {
		t.Fatalf("spooled prolog not taken under slurmd's names: %+v", f.a.jobs)
	}
	f.tick(4)
	f.a.drain(ctx)
	f.a.flush(ctx)

	f.now = f.now.Add(time.Second)
	f.spoolPut(hookproto.KindHookEnd, hookproto.JobEnd{Job: f.hookProfile("6", start, 1), End: f.now, ExitKnown: true, ExitStatus: 2})
	f.a.drain(ctx)
	f.a.flush(ctx)
	j := f.onlyRow("6")
	if j.Status != profile.StatusFinished || !j.End.Equal(f.now) || j.ExitStatus != 2 {
		t.Errorf("status %s end %v exit %d; want finished at the epilog's %v with exit 2", j.Status, j.End, j.ExitStatus, f.now)
	}
	if len(j.GPUs) != 1 || j.GPUs[0].MemPeak != 5*gib {
		t.Errorf("GPUs %+v, want the agent's 5 GiB peak", j.GPUs)
	}
	if !strings.Contains(strings.Join(j.PartialReasons, ";"), "no readings before") {
		t.Errorf("partial reasons %q, want the missing start of the readings named", j.PartialReasons)
	}
	// What the prolog said stays, as when it wrote the row itself (the
	// hooks now always spool when the agent is away: issue 41).
	if !slices.Contains(j.PartialReasons, "agent unreachable at job start") {
		t.Errorf("partial reasons %q, want the prolog's \"agent unreachable at job start\" kept", j.PartialReasons)
	}
	if left, _ := f.spool.List(); len(left) != 0 {
		t.Errorf("%d spool records left", len(left))
	}
}

// A spooled prolog record of a job whose epilog never comes, taken by an
// agent started after the job ended: the row is closed by the no-epilog
// rule within two reconcile checks, never left running.
func TestSpooledPrologWithoutEpilogIsClosed(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	slurmd := filepath.Join(f.dir, "slurmd")
	if err := os.MkdirAll(slurmd, 0o755); err != nil {
		t.Fatal(err)
	}
	f.a.opts.SlurmdSpoolDir = slurmd
	start := f.now
	f.spoolPut(hookproto.KindHookStart, f.hookProfile("7", start, 2))
	f.now = f.now.Add(time.Hour) // the agent starts long after; no step is left

	f.a.drain(ctx)
	if len(f.a.jobs) != 0 {
		t.Fatal("a job slurmd no longer runs was taken for sampling")
	}
	if len(f.a.orphans) != 1 {
		t.Fatalf("%d orphans, want the spooled job's row", len(f.a.orphans))
	}
	took := f.now
	f.a.reconcile(ctx)
	f.now = f.now.Add(reconcileEvery)
	f.a.reconcile(ctx)
	f.a.drain(ctx)
	j := f.onlyRow("7")
	if j.Status != profile.StatusFinished || !j.Partial {
		t.Fatalf("status %s partial %v; want finished, partial", j.Status, j.Partial)
	}
	if !j.End.Equal(took) {
		t.Errorf("end %v, want the first check without steps %v (an upper bound, said so)", j.End, took)
	}
	if !strings.Contains(strings.Join(j.PartialReasons, ";"), "end is unknown") {
		t.Errorf("partial reasons %q, want the unknown end said", j.PartialReasons)
	}
	if d := f.now.Sub(took); d > 2*reconcileEvery {
		t.Errorf("closed %v after the agent took it in, want at most two reconcile checks", d)
	}
	f.a.drain(ctx)
	if len(f.a.jobs)+len(f.a.orphans) != 0 {
		t.Error("the closed job came back")
	}
}

// An agent restarted after a job ended without its epilog does not sample
// the job's GPUs (that would add idle readings after its end): the row is
// closed at its last reading.
func TestResumedDeadJobNotSampled(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.proc(800, "8", "train", sim.Usage{UUID: f.devs[3].UUID, Mem: 2 * gib, Util: 90})
	f.start("8", minorRef(3))
	f.tick(3)
	f.a.flush(ctx)
	last := f.a.jobs["8"].prof.LastSample
	f.node.Unregister(800)

	f.now = f.now.Add(time.Hour)
	slurmd := filepath.Join(f.dir, "slurmd")
	if err := os.MkdirAll(slurmd, 0o755); err != nil {
		t.Fatal(err)
	}
	f.a = f.newAgent()
	f.a.opts.SlurmdSpoolDir = slurmd
	if err := f.a.resume(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.a.jobs) != 0 || len(f.a.orphans) != 1 {
		t.Fatalf("%d jobs %d orphans after resume, want the dead job as an orphan", len(f.a.jobs), len(f.a.orphans))
	}
	f.tick(2)
	f.a.reconcile(ctx)
	f.a.reconcile(ctx)
	f.a.drain(ctx)
	j, err := f.db.GetJob(ctx, profile.Key{Cluster: "c", JobID: "8", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != profile.StatusFinished || !j.End.Equal(last) {
		t.Errorf("status %s end %v, want finished at its last reading %v", j.Status, j.End, last)
	}
}

// slurm.conf's SlurmdSpoolDir may name slurmd's node with %n: the agent
// looks for step sockets under slurmd's name once a hook told it, not under
// the host name it guessed.
func TestSlurmdSpoolDirUsesSlurmdsNodeName(t *testing.T) {
	f := newFixture(t, nil)
	f.a.opts.SlurmdSpoolDir = filepath.Join(f.dir, "slurmd-%n")
	if _, known := f.a.hasSteps("1"); known {
		t.Fatal("a spool directory that does not exist was read")
	}
	if err := os.MkdirAll(filepath.Join(f.dir, "slurmd-"+slurmNode), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.dir, "slurmd-"+slurmNode, slurmNode+"_9.0"), "")
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: slurmCluster, Node: slurmNode, JobID: "9", Start: f.now}})
	f.a.mu.Lock()
	alive, known := f.a.hasSteps("9")
	f.a.mu.Unlock()
	if !known || !alive {
		t.Errorf("hasSteps = %v, %v under slurmd's node name; want true, true", alive, known)
	}
}

// Prolog and epilog both spooled (the agent unreachable throughout): the
// job has ended, so the agent does not sample it; the ingest stores the
// hooks' minimal profile, finished.
func TestSpooledPrologAndEpilogOfEndedJob(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	hp := f.hookProfile("10", f.now, 0)
	f.spoolPut(hookproto.KindHookStart, hp)
	f.now = f.now.Add(5 * time.Second)
	f.spoolPut(hookproto.KindHookEnd, hookproto.JobEnd{Job: hp, End: f.now, ExitKnown: true})
	f.a.drain(ctx)
	if len(f.a.jobs)+len(f.a.orphans) != 0 {
		t.Fatalf("the agent holds the ended job: %d jobs, %d orphans", len(f.a.jobs), len(f.a.orphans))
	}
	j := f.onlyRow("10")
	if j.Status != profile.StatusFinished || j.Source != profile.SourceHook || !j.End.Equal(f.now) {
		t.Errorf("status %s source %s end %v; want the hooks' finished profile ending %v", j.Status, j.Source, j.End, f.now)
	}
}

// TestSpooledHookRecordsTakeMemorySize: the hooks name GPUs from the
// driver's /proc files (gpu/nvproc), which give no memory size; the agent,
// draining their records of an ended job, stores the GPU with its own
// inventory's memory size.
func TestSpooledHookRecordsTakeMemorySize(t *testing.T) {
	f := newFixture(t, nil)
	hp := f.hookProfile("11", f.now, 0)
	want := hp.GPUs[0].MemoryTotal
	hp.GPUs[0].MemoryTotal = 0 // as gpu/nvproc leaves it
	f.spoolPut(hookproto.KindHookStart, hp)
	f.now = f.now.Add(5 * time.Second)
	f.spoolPut(hookproto.KindHookEnd, hookproto.JobEnd{Job: hp, End: f.now, ExitKnown: true})
	f.a.drain(context.Background())
	j := f.onlyRow("11")
	if want == 0 || len(j.GPUs) != 1 || j.GPUs[0].MemoryTotal != want {
		t.Errorf("GPUs %+v, want one with the inventory's memory size %d", j.GPUs, want)
	}
}

// A spooled prolog record is a Slurm record like the prolog that reaches
// the agent: whatever the order in which it, the agent's discovery of the
// job from its processes and the epilog (direct or spooled) arrive, the
// finished profile has the prolog's owner, account, partition, start and
// GPUs with their Slurm index, and no "prolog not seen" — as a job whose
// prolog reached the agent.
func TestSpooledPrologMergesLikeDirect(t *testing.T) {
	const job = "20"
	// Slurm's GPU 0 is the device of minor 2 (gres.conf's order is not
	// NVML's): the index must come from the record, not from the device.
	ref := hookproto.GPURef{SlurmIndex: 0, Minor: 2}
	record := func(f *fixture, start time.Time) profile.Job {
		js := hookproto.JobStart{Cluster: slurmCluster, Node: slurmNode, JobID: job, User: "alice", UID: fixtureUID, GID: 1001,
			Account: "physics", Partition: "gpu", Comment: "run 3", Start: start}
		devs, idx, _ := hookproto.Resolve(f.devs, []hookproto.GPURef{ref})
		j := hookproto.NewProfile(js, devs, idx, time.Second, 64, f.a.versions, profile.SourceHook)
		j.MarkPartial("agent unreachable at job start")
		return j
	}
	running := func(f *fixture) {
		f.procAs(900, fixtureUID, nil, cgSlurm(job), "train", sim.Usage{UUID: f.devs[2].UUID, Mem: 7 * gib, Util: 60})
	}
	// The epilog's record: Slurm 22.05 gives the epilog no start time, so
	// its start is the epilog's own time (hooks.jobStart).
	endDirect := func(f *fixture) {
		f.do(hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{Cluster: slurmCluster, Node: slurmNode, JobID: job,
			User: "alice", UID: fixtureUID, GID: 1001, Account: "physics", Partition: "gpu", Comment: "run 3",
			Start: f.now, GPUs: []hookproto.GPURef{ref}}, End: f.now, ExitKnown: true}})
	}
	endSpooled := func(f *fixture, _ time.Time) {
		f.spoolPut(hookproto.KindHookEnd, hookproto.JobEnd{Job: record(f, f.now), End: f.now, ExitKnown: true})
	}
	tests := []struct {
		name string
		run  func(f *fixture, start time.Time)
	}{
		{"direct prolog (the reference)", func(f *fixture, start time.Time) {
			running(f)
			f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{Cluster: slurmCluster, Node: slurmNode, JobID: job, User: "alice",
				UID: fixtureUID, GID: 1001, Account: "physics", Partition: "gpu", Comment: "run 3", Start: start,
				GPUs: []hookproto.GPURef{ref}}})
			f.tick(3)
			endDirect(f)
		}},
		{"spool before discovery", func(f *fixture, start time.Time) {
			f.spoolPut(hookproto.KindHookStart, record(f, start))
			running(f)
			f.now = f.now.Add(20 * time.Second)
			f.a.drain(context.Background())
			f.tick(3)
			endDirect(f)
		}},
		{"spool after discovery", func(f *fixture, start time.Time) {
			f.spoolPut(hookproto.KindHookStart, record(f, start))
			running(f)
			f.now = f.now.Add(20 * time.Second)
			f.tick(3) // found from its process first
			f.a.flush(context.Background())
			f.a.drain(context.Background())
			f.tick(2)
			endDirect(f)
		}},
		{"spool before discovery, epilog spooled too", func(f *fixture, start time.Time) {
			f.spoolPut(hookproto.KindHookStart, record(f, start))
			running(f)
			f.now = f.now.Add(20 * time.Second)
			f.a.drain(context.Background())
			f.tick(3)
			f.a.flush(context.Background())
			endSpooled(f, start)
		}},
		{"spool after discovery, epilog spooled too", func(f *fixture, start time.Time) {
			running(f)
			f.now = f.now.Add(20 * time.Second)
			f.tick(3) // found from its process; prolog and epilog wait in the spool
			f.a.flush(context.Background())
			f.spoolPut(hookproto.KindHookStart, record(f, start))
			endSpooled(f, start)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			ctx := context.Background()
			start := f.now
			tt.run(f, start)
			f.a.drain(ctx)
			f.a.flush(ctx)
			f.a.drain(ctx)
			j := f.onlyRow(job)
			if j.Status != profile.StatusFinished {
				t.Fatalf("status %s, want finished", j.Status)
			}
			if j.User != "alice" || j.UID != fixtureUID || j.GID != 1001 || j.Account != "physics" || j.Partition != "gpu" ||
				j.Comment != "run 3" || !j.Start.Equal(start) {
				t.Errorf("user %q uid %d gid %d account %q partition %q comment %q start %v; want the prolog's alice %d 1001 physics gpu \"run 3\" %v",
					j.User, j.UID, j.GID, j.Account, j.Partition, j.Comment, j.Start, fixtureUID, start)
			}
			if len(j.GPUs) != 1 || j.GPUs[0].UUID != f.devs[2].UUID || j.GPUs[0].SlurmIndex != 0 {
				t.Errorf("GPUs %s, want the device of minor 2 as Slurm's GPU 0", gpuSummary(j.GPUs))
			} else if j.GPUs[0].MemPeak != 7*gib {
				t.Errorf("GPU peak %d GiB, want the agent's 7", j.GPUs[0].MemPeak/gib)
			}
			for _, r := range j.PartialReasons {
				if strings.HasPrefix(r, "prolog not seen") {
					t.Errorf("partial reason %q: the spooled prolog was seen", r)
				}
			}
			if left, _ := f.spool.List(); len(left) != 0 {
				t.Errorf("%d spool records left", len(left))
			}
		})
	}
}

func gpuSummary(gs []profile.GPU) string {
	var s []string
	for _, g := range gs {
		s = append(s, fmt.Sprintf("{%s index %d}", g.UUID, g.SlurmIndex))
	}
	return "[" + strings.Join(s, " ") + "]"
}
