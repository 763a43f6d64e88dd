package agent

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

const gib = 1 << 30

// fixture is an agent on a simulated node with a fake procfs and clock.
type fixture struct {
	t      *testing.T
	dir    string
	procfs string
	node   *sim.Node
	devs   []gpu.Device
	db     *store.DB
	spool  spool.Dir
	now    time.Time
	a      *Agent
	logs   *logBuffer // what the agents of this fixture logged
}

// logBuffer collects log lines; the agent may log from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newFixture(t *testing.T, minors []int) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, procfs: filepath.Join(dir, "proc"), now: time.Unix(1_800_000_000, 0), logs: &logBuffer{}}
	if err := os.MkdirAll(filepath.Join(f.procfs, "pressure"), 0o755); err != nil {
		t.Fatal(err)
	}
	devs, err := sim.Init(filepath.Join(dir, "sim"), sim.NodeSpec{GPUs: 4, Model: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 * gib, Minors: minors})
	if err != nil {
		t.Fatal(err)
	}
	f.devs = devs
	f.node, err = sim.Open(filepath.Join(dir, "sim"), sim.WithProcfs(f.procfs))
	if err != nil {
		t.Fatal(err)
	}
	f.db, err = store.Open(context.Background(), filepath.Join(dir, "gpuprof.db"), store.Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	f.spool = spool.Dir{Path: filepath.Join(dir, "spool")}
	f.a = f.newAgent()
	return f
}

func (f *fixture) newAgent() *Agent {
	f.t.Helper()
	a, err := New(context.Background(), Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(f.dir, "agent.sock"),
		Interval: time.Second, FlushInterval: time.Minute, SeriesPoints: 64,
		Procfs: f.procfs, CgroupRoot: filepath.Join(f.dir, "cgroup"),
		Clock: func() time.Time { return f.now },
	}, f.node, f.db, f.spool, slog.New(slog.NewTextHandler(f.logs, nil)))
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// fixtureUID is the owner the fixture's prologs name (start) and the real
// uid of its processes (proc).
const fixtureUID = 1000

// statusOf is /proc/PID/status as far as the agent reads it: the real,
// effective, saved and filesystem uids.
func statusOf(name string, uid int) string {
	return fmt.Sprintf("Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t%d\t%d\t%d\t%d\nGid:\t100\t100\t100\t100\n", name, uid, uid, uid, uid)
}

// proc creates a fake /proc/PID for a process of job (environ only: no
// cgroup, as under proctrack/linuxproc) run by the job's owner, and
// registers its GPU use.
func (f *fixture) proc(pid int, job, name string, use ...sim.Usage) {
	f.t.Helper()
	d := filepath.Join(f.procfs, fmt.Sprint(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		f.t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, name, 1000+pid)
	for file, data := range map[string]string{
		"stat":    stat,
		"comm":    name + "\n",
		"environ": "PATH=/bin\x00SLURM_JOB_ID=" + job + "\x00",
		"status":  statusOf(name, fixtureUID),
	} {
		if err := os.WriteFile(filepath.Join(d, file), []byte(data), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	f.node.Register(sim.Process{PID: pid, Name: name, Usage: use})
}

func (f *fixture) do(req hookproto.Request) {
	f.t.Helper()
	var resp hookproto.Response
	if err := f.a.Handle(context.Background(), req, &resp); err != nil {
		f.t.Fatalf("%s: %v", req.Op, err)
	}
}

func (f *fixture) start(job string, refs ...hookproto.GPURef) {
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{JobID: job, User: "u" + job, UID: fixtureUID, Start: f.now, GPUs: refs}})
}

func (f *fixture) end(job string, exit int) profile.Job {
	f.t.Helper()
	f.do(hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{JobID: job}, End: f.now, ExitKnown: true, ExitStatus: exit}})
	if _, err := ingest.DrainSpool(context.Background(), f.db, f.spool, ingest.Options{}, f.a.log); err != nil {
		f.t.Fatal(err)
	}
	j, err := f.db.GetJob(context.Background(), profile.Key{Cluster: "c", JobID: job, Node: "n1"})
	if err != nil {
		f.t.Fatalf("job %s: %v", job, err)
	}
	return j
}

// tick advances the clock one interval and samples.
func (f *fixture) tick(n int) {
	for range n {
		f.now = f.now.Add(time.Second)
		f.a.sample(context.Background(), "")
	}
}

func minorRef(m int) hookproto.GPURef { return hookproto.GPURef{SlurmIndex: m, Minor: m} }

func mean(t *testing.T, g profile.GPU) float64 {
	t.Helper()
	m, ok := g.UtilMean()
	if !ok {
		t.Fatalf("GPU %s: no utilisation samples", g.UUID)
	}
	return m
}

func TestExclusiveGPUsDifferentLoads(t *testing.T) {
	f := newFixture(t, nil)
	f.start("10", minorRef(0), minorRef(1))
	f.proc(100, "10", "python", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 80}, sim.Usage{UUID: f.devs[1].UUID, Mem: 4 * gib, Util: 20})
	f.tick(10)
	f.node.Unregister(100)
	f.tick(1)
	j := f.end("10", 0)

	if j.Status != profile.StatusFinished || len(j.GPUs) != 2 {
		t.Fatalf("status %s, %d GPUs; want finished with 2", j.Status, len(j.GPUs))
	}
	for i, want := range []struct {
		mem  uint64
		util uint32
	}{{10 * gib, 80}, {4 * gib, 20}} {
		g := j.GPUs[i]
		if g.UUID != f.devs[i].UUID {
			t.Errorf("GPU %d: uuid %s, want %s", i, g.UUID, f.devs[i].UUID)
		}
		if g.MemPeak != want.mem {
			t.Errorf("GPU %d: peak %d, want %d", i, g.MemPeak, want.mem)
		}
		if p50, _ := g.UtilPercentile(50); p50 != want.util {
			t.Errorf("GPU %d: util p50 %d, want %d", i, p50, want.util)
		}
		if g.IdleAllocation || g.Shared {
			t.Errorf("GPU %d: idle=%v shared=%v, want neither", i, g.IdleAllocation, g.Shared)
		}
		if len(g.Processes) != 1 || g.Processes[0] != "python" {
			t.Errorf("GPU %d: processes %v, want [python]", i, g.Processes)
		}
		if !g.EnergyValid || g.EnergyJ <= 0 {
			t.Errorf("GPU %d: energy %v (valid %v), want > 0 from integrated power", i, g.EnergyJ, g.EnergyValid)
		}
	}
	if !j.ExitKnown || j.ExitStatus != 0 || j.Driver == "" {
		t.Errorf("exit known %v status %d driver %q", j.ExitKnown, j.ExitStatus, j.Driver)
	}
}

func TestIdleAllocation(t *testing.T) {
	f := newFixture(t, nil)
	f.start("11", minorRef(2))
	f.tick(5)
	j := f.end("11", 0)
	g := j.GPUs[0]
	if !g.IdleAllocation {
		t.Errorf("idle allocation not flagged: samples %d procs %d max %d", g.Samples, g.ProcSamples, g.UtilMax)
	}
	if g.MemPeak != 0 || g.Samples < 5 {
		t.Errorf("peak %d samples %d, want 0 and ≥5", g.MemPeak, g.Samples)
	}
}

func TestSharedGPUPerProcessAttribution(t *testing.T) {
	f := newFixture(t, nil)
	uuid := f.devs[3].UUID
	f.start("20", minorRef(3))
	f.start("21", minorRef(3))
	f.start("22", minorRef(3))
	f.proc(200, "20", "a", sim.Usage{UUID: uuid, Mem: 2 * gib, Util: 10})
	f.proc(210, "21", "b", sim.Usage{UUID: uuid, Mem: 3 * gib, Util: 30})
	f.proc(220, "22", "c", sim.Usage{UUID: uuid, Mem: 5 * gib, Util: 50})
	f.tick(6)
	for job, want := range map[string]struct {
		mem  uint64
		util float64
	}{"20": {2 * gib, 10}, "21": {3 * gib, 30}, "22": {5 * gib, 50}} {
		j := f.end(job, 0)
		g := j.GPUs[0]
		if !g.Shared {
			t.Errorf("job %s: not marked shared", job)
		}
		if g.MemPeak != want.mem {
			t.Errorf("job %s: peak %d GiB, want %d GiB", job, g.MemPeak/gib, want.mem/gib)
		}
		// The first sample (at start) saw no processes: 0 %.
		if m := mean(t, g); m < want.util*0.7 || m > want.util {
			t.Errorf("job %s: mean util %.1f, want about %.0f", job, m, want.util)
		}
		if g.EnergyValid {
			t.Errorf("job %s: energy attributed on a shared GPU", job)
		}
	}
}

func TestMinorNotIndex(t *testing.T) {
	// Device files' minors in PCI order are 2,3,0,1: Slurm's GPU with minor
	// 0 is the third device, not NVML index 0.
	f := newFixture(t, []int{2, 3, 0, 1})
	f.start("30", hookproto.GPURef{SlurmIndex: 0, Minor: 0})
	f.tick(1)
	j := f.end("30", 0)
	if got, want := j.GPUs[0].UUID, f.devs[2].UUID; got != want {
		t.Fatalf("slurm index 0 (minor 0) mapped to %s, want %s (device with minor 0)", got, want)
	}
	// Without a minor (no gres.conf files) Slurm's index is the PCI order.
	f.start("31", hookproto.GPURef{SlurmIndex: 1, Minor: -1})
	j = f.end("31", 0)
	if got, want := j.GPUs[0].UUID, f.devs[1].UUID; got != want {
		t.Fatalf("slurm index 1 by PCI order mapped to %s, want %s", got, want)
	}
}

func TestResumeAfterRestartMarksGap(t *testing.T) {
	f := newFixture(t, nil)
	f.start("40", minorRef(0))
	f.proc(400, "40", "train", sim.Usage{UUID: f.devs[0].UUID, Mem: 30 * gib, Util: 90})
	f.tick(3)
	f.a.flush(context.Background())

	// The agent dies (no final flush); a new one starts 60 s later.
	f.now = f.now.Add(60 * time.Second)
	f.a = f.newAgent()
	if err := f.a.resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.node.Register(sim.Process{PID: 400, Name: "train", Usage: []sim.Usage{{UUID: f.devs[0].UUID, Mem: 40 * gib, Util: 90}}})
	f.tick(2)
	j := f.end("40", 0)
	g := j.GPUs[0]
	if g.MemPeak != 40*gib {
		t.Errorf("peak %d GiB, want 40 (readings after the restart kept)", g.MemPeak/gib)
	}
	if g.Samples < 5 {
		t.Errorf("samples %d, want ≥5 (before and after the restart)", g.Samples)
	}
	if !j.Partial || !strings.Contains(strings.Join(j.PartialReasons, ";"), "agent not running") {
		t.Errorf("partial %v reasons %q; want the gap recorded", j.Partial, j.PartialReasons)
	}
}

func TestEndWithoutStartAndRepeatedStart(t *testing.T) {
	f := newFixture(t, nil)
	f.start("50", minorRef(1))
	f.start("50", minorRef(1)) // a repeated prolog changes nothing
	if n := len(f.a.jobs); n != 1 {
		t.Fatalf("%d running jobs after a repeated start, want 1", n)
	}
	f.do(hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{JobID: "51", GPUs: []hookproto.GPURef{minorRef(2)}}, End: f.now}})
	if _, err := ingest.DrainSpool(context.Background(), f.db, f.spool, ingest.Options{}, f.a.log); err != nil {
		t.Fatal(err)
	}
	j, err := f.db.GetJob(context.Background(), profile.Key{Cluster: "c", JobID: "51", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if !j.Partial || j.Status != profile.StatusFinished || len(j.GPUs) != 1 {
		t.Errorf("unseen job: partial %v status %s gpus %d", j.Partial, j.Status, len(j.GPUs))
	}
}

func TestAbsurdReadingsDropped(t *testing.T) {
	f := newFixture(t, nil)
	f.start("60", minorRef(0), minorRef(1))
	// A process claiming more memory than the card, and more than 100 %.
	f.proc(600, "60", "weird", sim.Usage{UUID: f.devs[0].UUID, Mem: 500 * gib, Util: 400})
	f.tick(4)
	j := f.end("60", 0)
	g := j.GPUs[0]
	if g.MemPeak > g.MemoryTotal || g.UtilMax > 100 {
		t.Errorf("absurd readings stored: peak %d > total %d or util max %d", g.MemPeak, g.MemoryTotal, g.UtilMax)
	}
}

func TestXIDAttributedToJobOnThatGPU(t *testing.T) {
	f := newFixture(t, nil)
	f.start("70", minorRef(0))
	f.start("71", minorRef(1))
	f.tick(1)
	if err := sim.RecordXID(filepath.Join(f.dir, "sim"), f.devs[1].UUID, 79, f.now); err != nil {
		t.Fatal(err)
	}
	f.tick(1)
	if g := f.end("70", 0).GPUs[0]; g.XIDCount != 0 {
		t.Errorf("job 70 got %d XIDs from another GPU", g.XIDCount)
	}
	g := f.end("71", 0).GPUs[0]
	if g.XIDCount != 1 || len(g.XIDs) != 1 || g.XIDs[0].Code != 79 {
		t.Errorf("job 71 XIDs: count %d %+v, want one XID 79", g.XIDCount, g.XIDs)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIOWaitScopes(t *testing.T) {
	psi := func(totalUS int) string {
		return fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", totalUS)
	}
	t.Run("cgroup", func(t *testing.T) {
		f := newFixture(t, nil)
		cg := filepath.Join(f.dir, "cgroup/system.slice/slurmstepd.scope/job_80/io.pressure")
		writeFile(t, cg, psi(0))
		f.start("80", minorRef(0))
		// 10 s of job time of which 2.5 s stalled on IO.
		for i := 1; i <= 10; i++ {
			writeFile(t, cg, psi(i*250_000))
			f.tick(1)
		}
		j := f.end("80", 0)
		frac, ok := j.IO.Fraction()
		if !ok || j.IO.Scope != profile.IOScopeCgroup || frac < 0.24 || frac > 0.26 {
			t.Errorf("IO wait %.3f (ok %v) scope %q, want 0.25 from the cgroup", frac, ok, j.IO.Scope)
		}
	})
	t.Run("node PSI fallback", func(t *testing.T) {
		f := newFixture(t, nil)
		node := filepath.Join(f.procfs, "pressure/io")
		writeFile(t, node, psi(0))
		f.start("81", minorRef(0))
		for i := 1; i <= 4; i++ {
			writeFile(t, node, psi(i*500_000))
			f.tick(1)
		}
		j := f.end("81", 0)
		frac, ok := j.IO.Fraction()
		if !ok || j.IO.Scope != profile.IOScopeNode || frac < 0.49 || frac > 0.51 {
			t.Errorf("IO wait %.3f (ok %v) scope %q, want 0.5 node-wide", frac, ok, j.IO.Scope)
		}
	})
	t.Run("proc stat iowait fallback", func(t *testing.T) {
		f := newFixture(t, nil)
		stat := filepath.Join(f.procfs, "stat")
		// user nice system idle iowait irq softirq steal guest guest_nice
		writeFile(t, stat, "cpu 0 0 0 0 0 0 0 0 0 0\n")
		f.start("82", minorRef(0))
		for i := 1; i <= 4; i++ {
			writeFile(t, stat, fmt.Sprintf("cpu %d 0 0 %d %d 0 0 0 0 0\n", 50*i, 40*i, 10*i))
			f.tick(1)
		}
		j := f.end("82", 0)
		frac, ok := j.IO.Fraction()
		if !ok || j.IO.Scope != profile.IOScopeNode || frac < 0.09 || frac > 0.11 {
			t.Errorf("IO wait %.3f (ok %v) scope %q, want 0.10 from /proc/stat", frac, ok, j.IO.Scope)
		}
	})
	t.Run("none", func(t *testing.T) {
		f := newFixture(t, nil)
		f.start("83", minorRef(0))
		f.tick(3)
		if _, ok := f.end("83", 0).IO.Fraction(); ok {
			t.Error("IO wait reported with no source to measure it")
		}
	})
}

func TestCgroupMapsPIDToJob(t *testing.T) {
	f := newFixture(t, nil)
	uuid := f.devs[0].UUID
	f.start("90", minorRef(0))
	f.start("91", minorRef(0))
	// PID 900 has no SLURM_JOB_ID in its environment but sits in job 91's
	// cgroup: the cgroup wins.
	f.proc(900, "", "cg", sim.Usage{UUID: uuid, Mem: 7 * gib, Util: 40})
	writeFile(t, filepath.Join(f.procfs, "900/cgroup"), "0::/system.slice/slurmstepd.scope/job_91/step_0/user/task_0\n")
	f.tick(3)
	if g := f.end("91", 0).GPUs[0]; g.MemPeak != 7*gib {
		t.Errorf("job 91 peak %d GiB, want 7 (PID mapped through its cgroup)", g.MemPeak/gib)
	}
	if g := f.end("90", 0).GPUs[0]; g.MemPeak != 0 {
		t.Errorf("job 90 peak %d GiB, want 0 (no process of its own)", g.MemPeak/gib)
	}
}

func TestAbandonedJobClosedWhenSlurmdHasNoStep(t *testing.T) {
	f := newFixture(t, nil)
	spoolDir := filepath.Join(f.dir, "slurmd")
	writeFile(t, filepath.Join(spoolDir, "n1_95.4294967292"), "")
	f.a.opts.SlurmdSpoolDir = spoolDir
	f.start("95", minorRef(0))
	f.now = f.now.Add(5 * time.Minute)
	f.tick(1)

	ctx := context.Background()
	f.a.reconcile(ctx)
	f.a.reconcile(ctx)
	if len(f.a.jobs) != 1 {
		t.Fatal("job with a live step was closed")
	}
	if err := os.Remove(filepath.Join(spoolDir, "n1_95.4294967292")); err != nil {
		t.Fatal(err)
	}
	f.a.reconcile(ctx) // first sight of no step: not yet
	if len(f.a.jobs) != 1 {
		t.Fatal("job closed on the first check without steps")
	}
	f.a.reconcile(ctx)
	if len(f.a.jobs) != 0 {
		t.Fatal("abandoned job still running after two checks without steps")
	}
	if _, err := ingest.DrainSpool(ctx, f.db, f.spool, ingest.Options{}, f.a.log); err != nil {
		t.Fatal(err)
	}
	j, err := f.db.GetJob(ctx, profile.Key{Cluster: "c", JobID: "95", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != profile.StatusFinished || !j.Partial || !j.End.Equal(j.LastSample) {
		t.Errorf("status %s partial %v end %v last sample %v", j.Status, j.Partial, j.End, j.LastSample)
	}
}

// SampleNow is the sampling loop's tick for drivers on a virtual clock: each
// call adds one reading at the clock's time to every running job.
func TestSampleNowTakesOneTick(t *testing.T) {
	f := newFixture(t, []int{0, 1, 2, 3})
	f.proc(4242, "77", "python", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 50})
	f.start("77", minorRef(0))
	for range 3 {
		f.now = f.now.Add(time.Second)
		f.a.SampleNow(context.Background())
	}
	j := f.end("77", 0)
	// One reading at the start, three ticks, one at the end.
	if got, want := j.GPUs[0].Samples, 5; got != want {
		t.Errorf("samples = %d, want %d", got, want)
	}
	if got, want := j.LastSample, f.now.Truncate(time.Second); !got.Equal(want) {
		t.Errorf("last sample %v, want %v", got, want)
	}
}

// Slurm 22.05 runs no prolog when a requeued job starts again on the same
// node: the agent finds the new run from its processes, once slurmd holds
// a step of the job again (a process alone never reopens a finished job),
// and only from the processes of the owner the first run's prolog named.
func TestRequeuedRunDiscoveredWithoutProlog(t *testing.T) {
	f := newFixture(t, nil)
	slurmd := filepath.Join(f.dir, "slurmd")
	if err := os.MkdirAll(slurmd, 0o755); err != nil {
		t.Fatal(err)
	}
	f.a.opts.SlurmdSpoolDir = slurmd
	uuid := f.devs[1].UUID
	f.start("100", minorRef(1))
	f.proc(1000, "100", "first", sim.Usage{UUID: uuid, Mem: 1 * gib, Util: 30})
	f.tick(4)
	first := f.end("100", 0)
	if first.GPUs[0].MemPeak != 1*gib {
		t.Fatalf("first run peak %d GiB, want 1", first.GPUs[0].MemPeak/gib)
	}

	// The first run's process lingers a moment: it must not bring the job back.
	f.tick(2)
	if len(f.a.jobs) != 0 {
		t.Fatal("a lingering process of the ended run restarted the job")
	}
	f.node.Unregister(1000)
	f.now = f.now.Add(5 * time.Second)

	// The requeued run: a new process of job 100, no prolog. Until slurmd
	// holds a step of it, it is no job's.
	f.proc(1001, "100", "second", sim.Usage{UUID: uuid, Mem: 3 * gib, Util: 60})
	f.tick(2)
	if len(f.a.jobs) != 0 {
		t.Fatal("a process reopened the finished job without a step of it at slurmd")
	}
	// Another user's process claiming it does not either.
	f.procAs(1002, uidA, []string{"SLURM_JOB_ID=100"}, "", "claim", sim.Usage{UUID: f.devs[2].UUID, Mem: 1 * gib, Util: 5})
	writeFile(t, filepath.Join(slurmd, "n1_100.0"), "")
	f.tick(5)
	if len(f.a.jobs) != 1 {
		t.Fatalf("%d running jobs, want the requeued run discovered", len(f.a.jobs))
	}
	f.a.flush(context.Background())
	j := f.end("100", 0)
	if len(j.GPUs) != 1 || j.UID != fixtureUID || j.User != "u100" {
		t.Fatalf("second run of %q (uid %d) on %v, want the first run's owner on GPU 1 only", j.User, j.UID, gpuUUIDs(j))
	}
	g := j.GPUs[0]
	if g.UUID != uuid || g.MemPeak != 3*gib {
		t.Errorf("second run: gpu %s peak %d GiB, want %s and 3 GiB", g.UUID, g.MemPeak/gib, uuid)
	}
	if !j.Start.After(first.End) || !j.Partial || !strings.Contains(strings.Join(j.PartialReasons, ";"), "prolog not seen") {
		t.Errorf("second run: start %v (first ended %v) partial %v reasons %q", j.Start, first.End, j.Partial, j.PartialReasons)
	}
}

// TestOneJobSampleKeepsOtherPIDs is the failure CI once showed through the
// simulated node: a job's program that has exited but is still listed on its
// GPU (a driver or a cached scan a moment behind) must not be charged to the
// next job there. The agent knows that PID's job from the samples before;
// the one-job sample of another job's epilog must not make it forget, or a
// fresh lookup of the dead PID finds no job and the load counts as the new
// job's own.
func TestOneJobSampleKeepsOtherPIDs(t *testing.T) {
	f := newFixture(t, nil)
	f.proc(500, "11", "old", sim.Usage{UUID: f.devs[0].UUID, Mem: 2 * gib, Util: 22})
	f.proc(600, "12", "other", sim.Usage{UUID: f.devs[1].UUID, Mem: 2 * gib, Util: 50})
	f.start("11", minorRef(0))
	f.start("12", minorRef(1))
	f.tick(3)
	f.end("11", 0)
	f.end("12", 0) // a one-job sample of GPU 1 only
	// Job 11's program is gone from /proc but still listed on GPU 0.
	if err := os.RemoveAll(filepath.Join(f.procfs, "500")); err != nil {
		t.Fatal(err)
	}
	f.start("14", minorRef(0))
	f.tick(3)
	got := f.end("14", 0)
	if len(got.GPUs) != 1 {
		t.Fatalf("job 14: %d GPUs, want 1", len(got.GPUs))
	}
	if g := got.GPUs[0]; g.UtilMax != 0 || g.MemPeak != 0 {
		t.Errorf("job 14 on GPU 0: util max %d, memory peak %d; want 0 and 0 (the load is job 11's exited program)", g.UtilMax, g.MemPeak)
	}
}

// TestForwardedHook: a hook gpuprof-hook forwarded (OpHook) runs as the
// request Options.Forwarded builds from it, and that request's outcome is
// reported back (finish); an agent without Forwarded, or a hook Forwarded
// refuses, records nothing, so gpuprof-hook hands the hook to the full one.
func TestForwardedHook(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	hook := &fwd.Hook{Kind: "prolog", ConfigSum: "s"}
	running := func() []string {
		var resp hookproto.Response
		if err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpStatus}, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Running
	}
	var resp hookproto.Response
	if err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpHook, Hook: hook}, &resp); err == nil || !strings.Contains(err.Error(), "no forwarded hook") {
		t.Errorf("agent without Forwarded: %v", err)
	}
	var finished []error
	f.a.opts.Forwarded = func(h fwd.Hook) (hookproto.Request, func(error), error) {
		if h.ConfigSum != "s" {
			return hookproto.Request{}, nil, fmt.Errorf("%w: sum %s", fwd.ErrOtherConfig, h.ConfigSum)
		}
		return hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{JobID: "90", User: "u90", UID: fixtureUID, Start: f.now,
				GPUs: []hookproto.GPURef{{SlurmIndex: 0, Minor: -1}}}},
			func(err error) { finished = append(finished, err) }, nil
	}
	for range 3 {
		if err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpHook, Hook: &fwd.Hook{Kind: "prolog", ConfigSum: "t"}}, &resp); err == nil || len(finished) != 0 || len(running()) != 0 {
			t.Errorf("refused hook: err %v, finished %v, running %v", err, finished, running())
		}
	}
	// Another configuration is said once per sum, not once per hook.
	if n := strings.Count(f.logs.String(), "hooks read another configuration"); n != 1 {
		t.Errorf("another configuration logged %d times, want once:\n%s", n, f.logs.String())
	}
	if err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpHook}, &resp); err == nil {
		t.Error("OpHook without its hook taken")
	}
	if err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpHook, Hook: hook}, &resp); err != nil {
		t.Fatal(err)
	}
	if len(finished) != 1 || finished[0] != nil || !slices.Equal(running(), []string{"90"}) {
		t.Errorf("forwarded prolog: finished %v, running %v", finished, running())
	}
}
