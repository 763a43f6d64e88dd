package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// The node of the CPU budget in the node-capture issue: 8 GPUs, 16 running
// jobs (two per GPU, so every GPU takes the per-process attribution path),
// one process per job, sampled every second.
const (
	benchGPUs = 8
	benchJobs = 16
)

// benchNode is an agent on a simulated node with a fake procfs and a
// virtual clock, built for benchmarks and the tests of a full node (the
// test fixture has 4 GPUs).
type benchNode struct {
	agent *Agent
	now   time.Time
}

// newBenchNode starts jobs jobs on a node of gpus GPUs, job k on GPU
// k mod gpus with one process. With procFiles the processes are
// procs/PID.json files, as `simgpu burn` writes them, so every sampler call
// scans the directory as it does under scripts/bench-agent.sh; otherwise
// they are registered in memory and the sampler costs next to nothing,
// leaving the agent's own work: PID → job mapping through procfs,
// attribution, profile accumulation, IO wait.
func newBenchNode(b testing.TB, gpus, jobs int, procFiles bool, opts ...sim.Option) *benchNode {
	b.Helper()
	return newBenchNodeWith(b, gpus, jobs, procFiles, nil, nil, opts...)
}

// newBenchNodeWith is newBenchNode with the sampler wrapped by wrap (nil:
// the node itself) and the agent's options changed by set (nil: none).
func newBenchNodeWith(b testing.TB, gpus, jobs int, procFiles bool, wrap func(*sim.Node) gpu.Sampler, set func(*Options), opts ...sim.Option) *benchNode {
	b.Helper()
	dir := b.TempDir()
	procfs := filepath.Join(dir, "proc")
	simDir := filepath.Join(dir, "sim")
	// Node-wide IO counters as a kernel with PSI has them: sampled each tick.
	benchFile(b, filepath.Join(procfs, "pressure", "io"), "some avg10=0.00 avg60=0.00 avg300=0.00 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=100000\n")
	benchFile(b, filepath.Join(procfs, "stat"), "cpu  10 0 10 1000 5 0 0 0 0 0\n")

	devs, err := sim.Init(simDir, sim.NodeSpec{GPUs: gpus, Model: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 * gib})
	if err != nil {
		b.Fatal(err)
	}
	n := &benchNode{now: time.Unix(1_800_000_000, 0)}
	clock := func() time.Time { return n.now }
	node, err := sim.Open(simDir, append([]sim.Option{sim.WithProcfs(procfs), sim.WithClock(clock)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "gpuprof.db"), store.Options{BusyTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	o := Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(dir, "agent.sock"),
		Interval: time.Second, FlushInterval: 10 * time.Second, SeriesPoints: 1024,
		Procfs: procfs, CgroupRoot: filepath.Join(dir, "cgroup"),
		Clock: clock,
	}
	if set != nil {
		set(&o)
	}
	var sampler gpu.Sampler = node
	if wrap != nil {
		sampler = wrap(node)
	}
	n.agent, err = New(context.Background(), o, sampler, db, spool.Dir{Path: filepath.Join(dir, "spool")}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}

	for k := range jobs {
		job := strconv.Itoa(1000 + k)
		pid := 40000 + k
		g := k % gpus
		var resp hookproto.Response
		req := hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{JobID: job, User: "u", UID: 1000, Start: n.now, GPUs: []hookproto.GPURef{minorRef(g)}}}
		if err := n.agent.Handle(context.Background(), req, &resp); err != nil {
			b.Fatalf("start %s: %v", job, err)
		}
		name := fmt.Sprintf("train%d", k)
		start := uint64(1000 + pid)
		pd := filepath.Join(procfs, strconv.Itoa(pid))
		benchFile(b, filepath.Join(pd, "stat"), fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, name, start))
		benchFile(b, filepath.Join(pd, "comm"), name+"\n")
		benchFile(b, filepath.Join(pd, "environ"), "PATH=/bin\x00SLURM_JOB_ID="+job+"\x00")
		benchFile(b, filepath.Join(pd, "status"), statusOf(name, 1000))
		use := sim.Usage{UUID: devs[g].UUID, Mem: uint64(4+k) * gib, Util: uint32(15 + 3*k)}
		if !procFiles {
			node.Register(sim.Process{PID: pid, Name: name, Usage: []sim.Usage{use}})
			continue
		}
		data, err := json.Marshal(map[string]any{"pid": pid, "start_time": start, "name": name, "gpus": []sim.Usage{use}})
		if err != nil {
			b.Fatal(err)
		}
		benchFile(b, filepath.Join(simDir, "procs", strconv.Itoa(pid)+".json"), string(data))
	}
	if procFiles {
		// The node's scan cache keeps a scan of procs/ only once the
		// directory has been still for 20 ms (sim.WithScanCache); before
		// that every call would scan, which no steady-state tick does.
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

func benchFile(b testing.TB, path, data string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
}

// tick advances the virtual clock one interval and samples every job.
func (n *benchNode) tick() {
	n.now = n.now.Add(time.Second)
	n.agent.sample(context.Background(), "")
}

// check fails the benchmark unless every job has a reading of its process:
// a benchmark of a tick that attributes nothing would measure nothing.
func (n *benchNode) check(b *testing.B) {
	b.Helper()
	n.agent.mu.Lock()
	defer n.agent.mu.Unlock()
	if len(n.agent.jobs) != benchJobs {
		b.Fatalf("%d running jobs, want %d", len(n.agent.jobs), benchJobs)
	}
	for id, st := range n.agent.jobs {
		g := st.prof.GPUs[0]
		if !g.Shared || g.ProcSamples == 0 || g.MemPeak == 0 {
			b.Fatalf("job %s: shared %v, %d samples with its process, peak %d; want shared with readings", id, g.Shared, g.ProcSamples, g.MemPeak)
		}
	}
}

// reportCore adds the share of one core the measured operation costs when
// it runs once per second, the unit of the CPU target.
func reportCore(b *testing.B, perSecond float64) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*perSecond/1e9*100, "%core")
}

// BenchmarkSample is one sampling tick of the agent (8 GPUs, 16 jobs) with
// a warm PID cache, as in steady state. "registered" is the agent's own
// work; "procfiles" adds the simulated node's scan of its process files
// (two scans per GPU per tick), which is what the agent under
// scripts/bench-agent.sh pays. %core is the share of one core at a 1 s
// interval.
func BenchmarkSample(b *testing.B) {
	for _, bc := range []struct {
		name      string
		procFiles bool
		cached    bool
	}{
		{"registered", false, false},
		{"procfiles", true, false},
		// What the agent runs: the node's scan cache (sim.WithScanCache)
		// makes it one scan per tick instead of two per GPU.
		{"procfiles-cached", true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var opts []sim.Option
			if bc.cached {
				// As cmd/gpuprof opens it for a 1 s interval; the virtual
				// clock makes that one scan per tick.
				opts = append(opts, sim.WithScanCache(500*time.Millisecond))
			}
			n := newBenchNode(b, benchGPUs, benchJobs, bc.procFiles, opts...)
			n.tick()
			n.check(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n.tick()
			}
			b.StopTimer()
			n.check(b)
			reportCore(b, 1)
		})
	}
}

// BenchmarkFlush is one write of the 16 running profiles to the database
// (one transaction), which the agent does every flush_interval (10 s by
// default): %core is at that rate. Its cost grows with the time series,
// which stops growing at series_points (1024) points: "600s" is the end of
// scripts/bench-agent.sh's run, "1h" a job past the cap.
func BenchmarkFlush(b *testing.B) {
	for _, bc := range []struct {
		name  string
		ticks int
	}{
		{"600s", 600},
		{"1h", 3600},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := newBenchNode(b, benchGPUs, benchJobs, false)
			for range bc.ticks {
				n.tick()
			}
			n.check(b)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n.agent.flush(ctx)
			}
			b.StopTimer()
			running, err := n.agent.db.RunningJobs(ctx, "", "")
			if err != nil {
				b.Fatal(err)
			}
			if len(running) != benchJobs {
				b.Fatalf("%d running jobs in the database after flush, want %d", len(running), benchJobs)
			}
			reportCore(b, 0.1)
		})
	}
}

// BenchmarkPersist is one round of the agent's persister as it runs every
// flush_interval (10 s): ten one-second ticks of new readings (not timed),
// then what persistLoop does, the spool drain with its look at the
// database's running rows, and the flush of the 16 running profiles. %core
// is at that rate. "600s" starts at the end of scripts/bench-agent.sh's
// run, "1h" with jobs whose series reached the cap (series_points, 1024).
func BenchmarkPersist(b *testing.B) {
	for _, bc := range []struct {
		name  string
		ticks int
	}{
		{"600s", 600},
		{"1h", 3600},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := newBenchNode(b, benchGPUs, benchJobs, false)
			ctx := context.Background()
			for i := range bc.ticks {
				n.tick()
				if i%10 == 9 {
					n.agent.drain(ctx)
					n.agent.flush(ctx)
				}
			}
			n.check(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				for range 10 {
					n.tick()
				}
				b.StartTimer()
				n.agent.drain(ctx)
				n.agent.flush(ctx)
			}
			b.StopTimer()
			n.check(b)
			running, err := n.agent.db.RunningJobs(ctx, "", "")
			if err != nil {
				b.Fatal(err)
			}
			if len(running) != benchJobs {
				b.Fatalf("%d running jobs in the database after the rounds, want %d", len(running), benchJobs)
			}
			reportCore(b, 0.1)
		})
	}
}

// realCost is the simulated node charged, per call, the CPU that the NVML
// calls gpu/nvml makes for it cost on a real driver (sim.H200Cost, what
// `[sim] real_cost` charges the agent's process too): it spins that long.
// Unlike sim.Charged it charges GPM by gpm, whatever the model, and counts
// the calls. The node's own work is the registered processes' (next to
// nothing), so the benchmark is the agent's work plus the driver's.
type realCost struct {
	*sim.Node
	gpm      bool   // charge the GPM sample and metrics calls of each SampleDevice
	energyMJ uint64 // the counter Energy returns, growing
	calls    map[string]int
}

func (r *realCost) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	r.calls["SampleDevice"]++
	sim.Spin(sim.H200Cost.Device(r.gpm))
	return r.Node.SampleDevice(ctx, uuid)
}

func (r *realCost) Processes(ctx context.Context, uuid string) ([]gpu.ProcessSample, error) {
	r.calls["Processes"]++
	sim.Spin(sim.H200Cost.ProcessList())
	return r.Node.Processes(ctx, uuid)
}

func (r *realCost) XIDEvents(ctx context.Context) ([]gpu.XIDEvent, error) {
	r.calls["XIDEvents"]++
	sim.Spin(sim.H200Cost.EventWait)
	return r.Node.XIDEvents(ctx)
}

func (r *realCost) Accounting(ctx context.Context, uuid string) ([]gpu.AccountingStats, error) {
	sim.Spin(sim.H200Cost.AccountingMode)
	return r.Node.Accounting(ctx, uuid)
}

func (r *realCost) Energy(context.Context, string) (uint64, error) {
	r.calls["Energy"]++
	sim.Spin(sim.H200Cost.Energy)
	r.energyMJ += 700_000
	return r.energyMJ, nil
}

// BenchmarkSampleRealCost is one sampling tick of the agent on 8 GPUs with
// 16 jobs (two per GPU) at 1 s, with every NVML call charged its cost on a
// real driver (realCost), so that the agent's CPU on a real node shows
// without a GPU:
//
//   - "energy-every-tick" is the agent before issue #28: the energy
//     counter read with every sample of every GPU, no GPM;
//   - "energy-every-minute+gpm" is the agent now: the counter read at
//     most once a minute per GPU (and at each job's start and end, not in
//     the steady state measured here), power integrated between, and GPM
//     sampled on every GPU every tick;
//   - "energy-every-minute" is the same without GPM (a GPU before Hopper).
//
// %core is the share of one core at one tick a second, %core/GPU that over
// the 8 GPUs. Run it with -benchtime=600x or more: the counter reads come
// every 60th tick.
func BenchmarkSampleRealCost(b *testing.B) {
	for _, bc := range []struct {
		name  string
		every time.Duration
		gpm   bool
	}{
		{"energy-every-tick", time.Second, false},
		{"energy-every-minute+gpm", time.Minute, true},
		{"energy-every-minute", time.Minute, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var rc *realCost
			n := newBenchNodeWith(b, benchGPUs, benchJobs, false,
				func(node *sim.Node) gpu.Sampler {
					rc = &realCost{Node: node, gpm: bc.gpm, calls: map[string]int{}}
					return rc
				},
				func(o *Options) { o.EnergyEvery = bc.every })
			n.tick()
			n.check(b)
			clear(rc.calls)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n.tick()
			}
			b.StopTimer()
			n.check(b)
			reportCore(b, 1)
			perTick := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perTick/1e9*100/benchGPUs, "%core/GPU")
			b.ReportMetric(float64(rc.calls["Energy"])/float64(b.N), "energy-reads/tick")
		})
	}
}
