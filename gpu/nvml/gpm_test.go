package nvml

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/gputest"
)

// The loads of docs/real-gpu.md, as measured on an H200.
var (
	matmulLoad = map[nvml.GpmMetricId]float64{
		nvml.GPM_METRIC_SM_UTIL: 92.4, nvml.GPM_METRIC_SM_OCCUPANCY: 13.7, nvml.GPM_METRIC_ANY_TENSOR_UTIL: 89.7,
		nvml.GPM_METRIC_DRAM_BW_UTIL: 15.7, nvml.GPM_METRIC_FP16_UTIL: 40, nvml.GPM_METRIC_FP32_UTIL: 2,
	}
	tinyKernelLoad = map[nvml.GpmMetricId]float64{nvml.GPM_METRIC_SM_UTIL: 0.02}
)

// ticking opens n with a clock the test moves; tick moves it and runs
// every given GPU's counters for the same time at load.
type ticking struct {
	now time.Time
}

func (c *ticking) clock() time.Time { return c.now }

func (c *ticking) tick(d time.Duration, load map[nvml.GpmMetricId]float64, counters ...*gpmCounters) {
	c.now = c.now.Add(d)
	for _, k := range counters {
		k.run(d.Seconds(), load)
	}
}

// want is the Activity of an interval of d at load (every metric read, the
// unlisted ones at 0).
func want(d time.Duration, load map[nvml.GpmMetricId]float64) gpu.Opt[gpu.Activity] {
	a := gpu.Activity{Interval: d}
	for _, id := range gpmMetrics {
		*activityField(&a, id) = gpu.Some(load[id])
	}
	return gpu.Some(a)
}

// near reports whether two activities agree to 1e-9 in every value (the
// fake's counters divide in floating point).
func near(a, b gpu.Opt[gpu.Activity]) bool {
	if a.Valid != b.Valid || a.Value.Interval != b.Value.Interval {
		return false
	}
	for _, id := range gpmMetrics {
		x, y := *activityField(&a.Value, id), *activityField(&b.Value, id)
		if x.Valid != y.Valid || math.Abs(x.Value-y.Value) > 1e-9 {
			return false
		}
	}
	return true
}

func TestActivityIntervals(t *testing.T) {
	n := newFakeNode(dgxh200.New())
	c := &ticking{now: fixedTime}
	s := n.open(t, WithClock(c.clock))
	g := n.gpus[2]

	steps := []struct {
		name string
		d    time.Duration
		load map[nvml.GpmMetricId]float64
		want gpu.Opt[gpu.Activity]
	}{
		{name: "first sample: no interval yet"},
		{name: "matmul", d: time.Second, load: matmulLoad, want: want(time.Second, matmulLoad)},
		// Only what happened since the previous sample: the end sample
		// of one interval starts the next.
		{name: "tiny kernels", d: 2 * time.Second, load: tinyKernelLoad, want: want(2*time.Second, tinyKernelLoad)},
		{name: "idle", d: time.Second, want: want(time.Second, nil)},
	}
	for i, st := range steps {
		c.tick(st.d, st.load, &g.gpm)
		got := sample(t, s, g).Activity
		if !near(got, st.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", st.name, got, st.want)
		}
		if calls := len(g.dev.GpmSampleGetCalls()); calls != i+1 {
			t.Errorf("%s: %d GPM samples taken after %d readings, want one per reading", st.name, calls, i+1)
		}
	}
	if got := len(n.gpmSamples); got != 2*len(n.gpus) {
		t.Errorf("%d GPM sample buffers for %d GPUs, want two per GPU", got, len(n.gpus))
	}
}

func TestActivityUnsupported(t *testing.T) {
	tests := []struct {
		name      string
		node      func() *fakeNode
		set       func(n *fakeNode)
		wantAsked bool // whether the driver was asked
	}{
		{
			name: "Ampere: the policy table rules it out",
			node: func() *fakeNode { return newFakeNode(dgxa100.New()) },
		},
		{
			name:      "Hopper the driver says has none (a vGPU)",
			node:      func() *fakeNode { return newFakeNode(dgxh100.New()) },
			set:       func(n *fakeNode) { n.gpus[0].gpmSupported = false },
			wantAsked: true,
		},
		{
			name:      "driver cannot tell",
			node:      func() *fakeNode { return newFakeNode(dgxh100.New()) },
			set:       func(n *fakeNode) { n.gpus[0].gpmSupportRet = nvml.ERROR_NOT_SUPPORTED },
			wantAsked: true,
		},
		{
			name:      "support query fails",
			node:      func() *fakeNode { return newFakeNode(dgxh100.New()) },
			set:       func(n *fakeNode) { n.gpus[0].gpmSupportRet = nvml.ERROR_UNKNOWN },
			wantAsked: true,
		},
		{
			name: "no GPM functions in the driver",
			node: func() *fakeNode { return newFakeNode(dgxh100.New()) },
			set: func(n *fakeNode) {
				n.srv.LookupSymbolFunc = func(name string) error {
					if name == "nvmlGpmMetricsGet" {
						return errors.New("undefined symbol: " + name)
					}
					return nil
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.node()
			if tt.set != nil {
				tt.set(n)
			}
			c := &ticking{now: fixedTime}
			s := n.open(t, WithClock(c.clock))
			g := n.gpus[0]
			for range 3 {
				c.tick(time.Second, matmulLoad, &g.gpm)
				if got := sample(t, s, g).Activity; got.Valid {
					t.Fatalf("activity %+v; want none, never 0", got.Value)
				}
			}
			if asked := len(g.dev.GpmQueryDeviceSupportCalls()) > 0; asked != tt.wantAsked {
				t.Errorf("driver asked for GPM support: %v, want %v", asked, tt.wantAsked)
			}
			if calls := len(g.dev.GpmSampleGetCalls()); calls != 0 {
				t.Errorf("%d GPM samples taken on a GPU without GPM", calls)
			}
		})
	}
}

// TestActivityUnknownArchitecture: a generation newer than the table (or
// one NVML cannot name) is not ruled out; the driver decides.
func TestActivityUnknownArchitecture(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	g := n.gpus[0]
	g.dev.GetArchitectureFunc = func() (nvml.DeviceArchitecture, nvml.Return) { return nvml.DEVICE_ARCH_UNKNOWN, nvml.SUCCESS }
	c := &ticking{now: fixedTime}
	s := n.open(t, WithClock(c.clock))
	sample(t, s, g)
	c.tick(time.Second, matmulLoad, &g.gpm)
	if got := sample(t, s, g).Activity; !near(got, want(time.Second, matmulLoad)) {
		t.Errorf("got %+v, want the matmul's activity", got)
	}
}

func TestActivityFailures(t *testing.T) {
	type step struct {
		name string
		fail func(n *fakeNode, g *fakeGPU) // before the sample; undone after it
		d    time.Duration
		want gpu.Opt[gpu.Activity]
	}
	sampleFails := func(n *fakeNode, g *fakeGPU) { g.gpmSampleRet = nvml.ERROR_UNKNOWN }
	metricsFail := func(n *fakeNode, g *fakeGPU) { n.gpmMetricsRet = nvml.ERROR_UNKNOWN }
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "a failed sample ends one interval and starts none",
			steps: []step{
				{name: "first"},
				{name: "fails", fail: sampleFails, d: time.Second},
				{name: "no start to measure from", d: time.Second},
				{name: "measured again", d: 3 * time.Second, want: want(3*time.Second, matmulLoad)},
			},
		},
		{
			name: "failed metrics lose their interval only",
			steps: []step{
				{name: "first"},
				{name: "metrics fail", fail: metricsFail, d: time.Second},
				{name: "its end starts the next", d: 2 * time.Second, want: want(2*time.Second, matmulLoad)},
			},
		},
		{
			name: "a failed first sample",
			steps: []step{
				{name: "first fails", fail: sampleFails},
				{name: "then the first", d: time.Second},
				{name: "measured", d: time.Second, want: want(time.Second, matmulLoad)},
			},
		},
		{
			name: "the GPU lost",
			steps: []step{
				{name: "first"},
				{name: "lost", fail: func(n *fakeNode, g *fakeGPU) { g.readRet = nvml.ERROR_GPU_IS_LOST }, d: time.Second},
				{name: "back, no start", d: time.Second},
				{name: "measured", d: time.Second, want: want(time.Second, matmulLoad)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			c := &ticking{now: fixedTime}
			s := n.open(t, WithClock(c.clock))
			g := n.gpus[1]
			for _, st := range tt.steps {
				if st.fail != nil {
					st.fail(n, g)
				}
				c.tick(st.d, matmulLoad, &g.gpm)
				got, err := s.SampleDevice(ctx, g.dev.UUID)
				g.gpmSampleRet, n.gpmMetricsRet, g.readRet = nvml.SUCCESS, nvml.SUCCESS, nvml.SUCCESS
				if err != nil {
					if errors.Is(err, nvml.ERROR_GPU_IS_LOST) {
						continue
					}
					t.Fatalf("%s: SampleDevice: %v", st.name, err)
				}
				if !near(got.Activity, st.want) {
					t.Errorf("%s:\n got %+v\nwant %+v", st.name, got.Activity, st.want)
				}
			}
		})
	}
}

// TestActivityMetricFails: a metric the driver could not compute is left
// invalid; the others stand.
func TestActivityMetricFails(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	n.gpmMetricRet[nvml.GPM_METRIC_ANY_TENSOR_UTIL] = nvml.ERROR_NOT_SUPPORTED
	c := &ticking{now: fixedTime}
	s := n.open(t, WithClock(c.clock))
	g := n.gpus[0]
	sample(t, s, g)
	c.tick(time.Second, matmulLoad, &g.gpm)
	w := want(time.Second, matmulLoad)
	w.Value.Tensor = gpu.Opt[float64]{}
	if got := sample(t, s, g).Activity; !near(got, w) {
		t.Errorf("\n got %+v\nwant %+v", got, w)
	}
}

// TestActivityMIG: each MIG instance reads its GPU instance's activity
// through the parent's GpmMigSampleGet; NVML gives no duty cycle there.
func TestActivityMIG(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	g := n.gpus[3]
	g.enableMIG(
		migHandle(migUUID(1), "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 1, 0, gib(40)),
		migHandle(migUUID(2), "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 2, 0, gib(40)),
	)
	c := &ticking{now: fixedTime}
	s := n.open(t, WithClock(c.clock))
	for _, uuid := range []string{migUUID(1), migUUID(2)} {
		if got, err := s.SampleDevice(ctx, uuid); err != nil || got.Activity.Valid {
			t.Fatalf("first sample of %s: %+v, %v; want no activity", uuid, got.Activity, err)
		}
	}
	c.tick(time.Second, matmulLoad, g.migGPM[1])
	g.migGPM[2].run(1, tinyKernelLoad)
	for uuid, w := range map[string]gpu.Opt[gpu.Activity]{
		migUUID(1): want(time.Second, matmulLoad),
		migUUID(2): want(time.Second, tinyKernelLoad),
	} {
		got, err := s.SampleDevice(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got.Activity, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", uuid, got.Activity, w)
		}
		if got.Util.Valid {
			t.Errorf("%s: duty cycle %+v on a MIG instance, where NVML has none", uuid, got.Util)
		}
	}
	gis := map[int]int{}
	for _, call := range g.dev.GpmMigSampleGetCalls() {
		gis[call.N]++
	}
	if gis[1] != 2 || gis[2] != 2 || len(gis) != 2 {
		t.Errorf("GpmMigSampleGet per GPU instance: %v, want two each of 1 and 2", gis)
	}
}

func TestActivityMIGWithoutDriverSupport(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	n.srv.LookupSymbolFunc = func(name string) error {
		if name == "nvmlGpmMigSampleGet" {
			return errors.New("undefined symbol: " + name)
		}
		return nil
	}
	g := n.gpus[3]
	g.enableMIG(migHandle(migUUID(1), "NVIDIA H100 80GB HBM3 MIG 7g.80gb", 1, 0, gib(80)))
	c := &ticking{now: fixedTime}
	s := n.open(t, WithClock(c.clock))
	for range 2 {
		c.tick(time.Second, matmulLoad, g.migGPM[1])
		if got, err := s.SampleDevice(ctx, migUUID(1)); err != nil || got.Activity.Valid {
			t.Fatalf("got %+v, %v; want no activity", got.Activity, err)
		}
	}
	if calls := len(g.dev.GpmMigSampleGetCalls()); calls != 0 {
		t.Errorf("GpmMigSampleGet called %d times on a driver without it", calls)
	}
}

func TestCloseFreesGPMSamples(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	n.gpus[0].enableMIG(migHandle(migUUID(1), "NVIDIA H100 80GB HBM3 MIG 7g.80gb", 1, 0, gib(80)))
	s, err := New(n.srv, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	// The hooks open a Sampler for its inventory alone: no GPM then.
	if _, err := s.Devices(ctx); err != nil {
		t.Fatal(err)
	}
	if len(n.gpmSamples) != 0 || len(n.gpus[1].dev.GpmQueryDeviceSupportCalls()) != 0 {
		t.Errorf("GPM set up (%d buffers) before any sample", len(n.gpmSamples))
	}
	sample(t, s, n.gpus[1])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if want := 2 * (len(n.gpus) + 1); len(n.gpmSamples) != want {
		t.Errorf("%d GPM buffers allocated, want %d (two per GPU and MIG instance)", len(n.gpmSamples), want)
	}
	for i, smp := range n.gpmSamples {
		if !smp.freed {
			t.Errorf("GPM buffer %d not freed by Close", i)
		}
	}
}

func TestConformanceGPM(t *testing.T) {
	t.Run("dgxh100 with MIG and GPM", func(t *testing.T) {
		gputest.RunConformance(t, func(t *testing.T) gpu.Sampler {
			n := newFakeNode(dgxh100.New())
			n.gpus[3].enableMIG(
				migHandle(migUUID(1), "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 1, 0, gib(40)),
				migHandle(migUUID(2), "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 2, 0, gib(40)),
			)
			// Counters that run between the suite's calls: an idle GPU
			// with a clock that moves.
			c := &ticking{now: fixedTime}
			return n.open(t, WithClock(func() time.Time {
				c.tick(time.Second, nil, append(gpmOf(n), &n.gpus[3].gpm)...)
				return c.now
			}))
		})
	})
}

func gpmOf(n *fakeNode) []*gpmCounters {
	var out []*gpmCounters
	for _, g := range n.gpus {
		out = append(out, &g.gpm)
		for _, c := range g.migGPM {
			out = append(out, c)
		}
	}
	return out
}

func TestEnergy(t *testing.T) {
	tests := []struct {
		name    string
		set     func(g *fakeGPU)
		mig     bool
		want    uint64
		wantErr error
	}{
		{name: "counter", set: func(g *fakeGPU) { g.energyMJ = 12_345_678 }, want: 12_345_678},
		{name: "not supported", set: func(g *fakeGPU) { g.readRet = nvml.ERROR_NOT_SUPPORTED }, wantErr: gpu.ErrUnsupported},
		{name: "GPU lost", set: func(g *fakeGPU) { g.readRet = nvml.ERROR_GPU_IS_LOST }, wantErr: nvml.ERROR_GPU_IS_LOST},
		{name: "MIG instance", mig: true, wantErr: gpu.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			g := n.gpus[5]
			uuid := g.dev.UUID
			if tt.mig {
				g.enableMIG(migHandle(migUUID(1), "NVIDIA H100 80GB HBM3 MIG 7g.80gb", 1, 0, gib(80)))
				uuid = migUUID(1)
			}
			if tt.set != nil {
				tt.set(g)
			}
			s := n.open(t)
			got, err := s.Energy(ctx, uuid)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("Energy = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	t.Run("not-available sentinel", func(t *testing.T) {
		n := newFakeNode(dgxh100.New())
		n.gpus[0].energyMJ = math.MaxUint64
		if _, err := n.open(t).Energy(ctx, n.gpus[0].dev.UUID); err == nil || errors.Is(err, gpu.ErrUnsupported) {
			t.Errorf("err = %v, want a (passing) failure, not ErrUnsupported", err)
		}
	})
}
