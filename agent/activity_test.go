package agent

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
)

// clocked reopens the fixture's simulated node on the fixture's clock (its
// activity intervals then are the agent's intervals) behind wrap, and
// starts a new agent on it.
func (f *fixture) clocked(wrap func(*sim.Node) gpu.Sampler, opts ...func(*Options)) {
	f.t.Helper()
	n, err := sim.Open(filepath.Join(f.dir, "sim"), sim.WithProcfs(f.procfs), sim.WithClock(func() time.Time { return f.now }))
	if err != nil {
		f.t.Fatal(err)
	}
	f.node = n
	var s gpu.Sampler = n
	if wrap != nil {
		s = wrap(n)
	}
	o := Options{
		Cluster: "c", Node: "n1", Socket: filepath.Join(f.dir, "agent.sock"),
		Interval: time.Second, FlushInterval: time.Minute, SeriesPoints: 64,
		Procfs: f.procfs, CgroupRoot: filepath.Join(f.dir, "cgroup"),
		Clock: func() time.Time { return f.now },
	}
	for _, fn := range opts {
		fn(&o)
	}
	f.a, err = New(context.Background(), o, s, f.db, f.spool, f.a.log)
	if err != nil {
		f.t.Fatal(err)
	}
}

func pct(v float64) *float64 { return &v }

// TestActivityPerJob: the duty cycle and the SM activity of a job apart, in
// the job's scope; the device's on a shared GPU, marked as such.
func TestActivityPerJob(t *testing.T) {
	f := newFixture(t, nil)
	f.clocked(nil)
	g0, g1 := f.devs[0].UUID, f.devs[1].UUID
	f.start("30", minorRef(0))
	f.start("31", minorRef(1))
	f.start("32", minorRef(1))
	// Job 30 alone: a loop of tiny kernels. Jobs 31 and 32 share GPU 1.
	f.proc(300, "30", "tiny", sim.Usage{UUID: g0, Mem: gib, Util: 16, SM: pct(0.02), Tensor: pct(0), DRAM: pct(0)})
	f.proc(310, "31", "mm", sim.Usage{UUID: g1, Mem: gib, Util: 60, SM: pct(55), Tensor: pct(50), DRAM: pct(10)})
	f.proc(320, "32", "mm", sim.Usage{UUID: g1, Mem: gib, Util: 30, SM: pct(30), Tensor: pct(20), DRAM: pct(5)})
	f.tick(10)

	j := f.end("30", 0)
	a := j.GPUs[0].Activity
	if a == nil {
		t.Fatal("job 30: no activity")
	}
	if a.Scope != profile.ActivityScopeGPU {
		t.Errorf("job 30: scope %q, want gpu", a.Scope)
	}
	if m, _ := a.SM.Mean(); math.Abs(m-0.02) > 1e-9 {
		t.Errorf("job 30: SM activity %v %%, want 0.02 %% (its duty cycle is 16 %%)", m)
	}
	if u := mean(t, j.GPUs[0]); u < 10 {
		t.Errorf("job 30: duty cycle %v %%, want about 16 %%", u)
	}
	// Ten ticks, each 1 s after the previous (the start's reading began
	// the first interval; the epilog's came in the instant of the last).
	if a.SM.N != 10 || a.Seconds != 10 {
		t.Errorf("job 30: %d SM readings over %g s, want 10 over 10 s", a.SM.N, a.Seconds)
	}
	for _, id := range []string{"31", "32"} {
		a := f.end(id, 0).GPUs[0].Activity
		if a == nil || a.Scope != profile.ActivityScopeSharedGPU {
			t.Fatalf("job %s: activity %+v, want the device's, scope shared_gpu", id, a)
		}
		if m, _ := a.SM.Mean(); math.Abs(m-85) > 1e-9 {
			t.Errorf("job %s: SM %v %%, want the device's 85 %% (55 + 30)", id, m)
		}
	}
}

// TestActivityNotBeforeTheJob: the first reading of a job measures an
// interval that began before it (the GPU's previous sample was taken for
// the metrics, or for the job before): it is not the job's.
func TestActivityNotBeforeTheJob(t *testing.T) {
	f := newFixture(t, nil)
	f.clocked(nil)
	g0 := f.devs[0].UUID
	f.start("40", minorRef(0))
	f.proc(400, "40", "busy", sim.Usage{UUID: g0, Util: 90, SM: pct(90)})
	f.tick(3)
	f.end("40", 0)
	f.node.Unregister(400)
	// The next job starts 2 s later (a gap the agent would bridge): the
	// GPU was last sampled at the previous job's end.
	f.now = f.now.Add(2 * time.Second)
	f.start("41", minorRef(0))
	f.proc(410, "41", "light", sim.Usage{UUID: g0, Util: 10, SM: pct(1)})
	f.tick(2)
	a := f.end("41", 0).GPUs[0].Activity
	// The end's reading comes in the instant of the last tick: no time,
	// no activity.
	if a == nil || a.SM.N != 2 || a.SM.Sum != 2 {
		t.Errorf("job 41: %+v; want 2 readings of 1 %% (the ticks; none of the 2 s before the job)", a)
	}
}

// TestActivityUnknownWithoutGPM: a GPU without GPM (an A100) records no
// activity: unknown, not 0.
func TestActivityUnknownWithoutGPM(t *testing.T) {
	f := newFixture(t, nil)
	f.clocked(func(n *sim.Node) gpu.Sampler { return noGPM{n} })
	f.start("50", minorRef(2))
	f.proc(500, "50", "x", sim.Usage{UUID: f.devs[2].UUID, Util: 50})
	f.tick(3)
	if a := f.end("50", 0).GPUs[0].Activity; a != nil {
		t.Errorf("activity %+v without GPM, want nil", a)
	}
}

// noGPM is a node whose GPUs have no GPM.
type noGPM struct{ *sim.Node }

func (s noGPM) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	ds, err := s.Node.SampleDevice(ctx, uuid)
	ds.Activity = gpu.Opt[gpu.Activity]{}
	return ds, err
}

// countingEnergy gives the simulated node an energy counter that counts
// trueW watts since t0 on every GPU (its power readings say otherwise),
// and counts the reads.
type countingEnergy struct {
	*sim.Node
	now   func() time.Time
	t0    time.Time
	trueW float64
	reads map[string]int
}

func (s *countingEnergy) Energy(_ context.Context, uuid string) (uint64, error) {
	s.reads[uuid]++
	return 1_000_000_000 + uint64(s.now().Sub(s.t0).Seconds()*s.trueW*1000), nil
}

// TestEnergyCounterReadSparsely: the energy counter (4 ms a read on a real
// driver) is read at the job's start and end and once a minute between;
// the job's energy is the counter's, not the power readings' integral.
func TestEnergyCounterReadSparsely(t *testing.T) {
	for _, tt := range []struct {
		name      string
		every     time.Duration
		wantReads int
	}{
		// 150 s: the start, 60 s, 120 s, the end.
		{"default: every minute", 0, 4},
		// What the agent did before: every tick (and the end).
		{"every tick", time.Second, 152},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			var cs *countingEnergy
			f.clocked(func(n *sim.Node) gpu.Sampler {
				cs = &countingEnergy{Node: n, now: func() time.Time { return f.now }, t0: f.now, trueW: 400, reads: map[string]int{}}
				return cs
			}, func(o *Options) { o.EnergyEvery = tt.every })
			g0 := f.devs[0].UUID
			start := f.now
			f.start("60", minorRef(0))
			f.proc(600, "60", "train", sim.Usage{UUID: g0, Util: 40}) // the sim's power: 316 W
			f.tick(150)
			j := f.end("60", 0)
			if got := cs.reads[g0]; got != tt.wantReads {
				t.Errorf("%d energy counter reads over 150 s, want %d", got, tt.wantReads)
			}
			if want := f.now.Sub(start).Seconds() * 400; math.Abs(j.GPUs[0].EnergyJ-want) > 1e-6*want {
				t.Errorf("job energy %.1f J, want the counter's %.1f J", j.GPUs[0].EnergyJ, want)
			}
			if n := cs.reads[f.devs[3].UUID]; n != 0 {
				t.Errorf("energy of a GPU nobody holds read %d times without metrics", n)
			}
		})
	}
}

// migNode presents the simulated node's GPU 0 in MIG mode with one
// instance, whose readings are the GPU's (memory and GPM activity) without
// a duty cycle, as NVML gives none per MIG instance.
type migNode struct{ *sim.Node }

const migInstanceUUID = "MIG-00000000-0000-0000-0000-000000000001"

func (m migNode) Devices(ctx context.Context) ([]gpu.Device, error) {
	devs, err := m.Node.Devices(ctx)
	if err == nil {
		devs[0].MIGEnabled = true
		devs[0].MIG = []gpu.MIGDevice{{UUID: migInstanceUUID, ParentUUID: devs[0].UUID, GPUInstanceID: 1, Profile: "7g.80gb", MemoryTotal: devs[0].MemoryTotal}}
	}
	return devs, err
}

func (m migNode) parent(ctx context.Context, uuid string) string {
	if uuid == migInstanceUUID {
		devs, _ := m.Node.Devices(ctx)
		return devs[0].UUID
	}
	return uuid
}

func (m migNode) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	ds, err := m.Node.SampleDevice(ctx, m.parent(ctx, uuid))
	if uuid == migInstanceUUID {
		ds.UUID, ds.Util, ds.MemUtil, ds.PowerMW, ds.TempC = uuid, gpu.Opt[uint32]{}, gpu.Opt[uint32]{}, gpu.Opt[uint32]{}, gpu.Opt[uint32]{}
	}
	return ds, err
}

func (m migNode) Processes(ctx context.Context, uuid string) ([]gpu.ProcessSample, error) {
	ps, err := m.Node.Processes(ctx, m.parent(ctx, uuid))
	for i := range ps {
		ps[i].UUID, ps[i].SMUtil = uuid, gpu.Opt[uint32]{}
	}
	return ps, err
}

// TestActivityMIGInstance: a job on a MIG instance records its instance's
// activity, scope mig — the only utilisation NVML gives there.
func TestActivityMIGInstance(t *testing.T) {
	f := newFixture(t, nil)
	f.clocked(func(n *sim.Node) gpu.Sampler { return migNode{n} })
	f.do(hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{JobID: "70", User: "u70", UID: fixtureUID, Start: f.now,
		GPUs: []hookproto.GPURef{{SlurmIndex: 0, Minor: 0, UUID: migInstanceUUID}}}})
	f.proc(700, "70", "train", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 60, SM: pct(45), Tensor: pct(30)})
	f.tick(5)
	j := f.end("70", 0)
	g := j.GPUs[0]
	if g.UUID != migInstanceUUID || g.Samples != 0 {
		t.Fatalf("GPU %s with %d duty-cycle samples; want the MIG instance, none", g.UUID, g.Samples)
	}
	if a := g.Activity; a == nil || a.Scope != profile.ActivityScopeMIG || a.SM.Max != 45 || a.Tensor.Max != 30 {
		t.Errorf("activity %+v; want the instance's, scope mig, SM 45 %%, tensor 30 %%", a)
	}
}
