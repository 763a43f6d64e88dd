package nvml

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// go-nvml's simulated servers wire identity, memory and MIG calls only; the
// readings gpuprof needs are nil functions that panic when called. fakeGPU
// holds the state behind the functions this file fills in, so a test
// changes a field instead of re-wiring mocks.
type fakeGPU struct {
	dev *server.Device

	util     nvml.Utilization
	powerMW  uint32
	energyMJ uint64
	tempC    uint32
	memUsed  uint64 // what GetMemoryInfo_v2 reports as used
	readRet  nvml.Return

	procs       []nvml.ProcessInfo
	procsRet    nvml.Return
	procUtil    []nvml.ProcessUtilizationSample // returned when newer than the caller's timestamp
	procUtilRet nvml.Return

	accMode    nvml.EnableState
	accModeRet nvml.Return
	accPids    []int
	accStats   map[uint32]nvml.AccountingStats

	registered uint64 // event types registered

	// GPM: whether the driver says the GPU has it, and the performance
	// counters a sample copies, of the GPU and of each GPU instance.
	gpmSupported  bool
	gpmSupportRet nvml.Return
	gpmSampleRet  nvml.Return
	gpm           gpmCounters
	migGPM        map[int]*gpmCounters
}

// gpmCounters are cumulative performance counters: seconds elapsed and, per
// metric, percent-seconds of activity, so that the mean between two samples
// is the difference over the time.
type gpmCounters struct {
	t    float64
	busy map[nvml.GpmMetricId]float64
}

// run advances the counters by secs seconds at the given activity.
func (c *gpmCounters) run(secs float64, pct map[nvml.GpmMetricId]float64) {
	if c.busy == nil {
		c.busy = map[nvml.GpmMetricId]float64{}
	}
	c.t += secs
	for id, p := range pct {
		c.busy[id] += p * secs
	}
}

func (c *gpmCounters) copy() gpmCounters {
	out := gpmCounters{t: c.t, busy: map[nvml.GpmMetricId]float64{}}
	for id, v := range c.busy {
		out.busy[id] = v
	}
	return out
}

// fakeGpmSample is a GPM sample buffer: what GpmSampleGet copied into it.
type fakeGpmSample struct {
	taken bool
	snap  gpmCounters
	freed bool
}

func (f *fakeGpmSample) Free() nvml.Return {
	f.freed = true
	return nvml.SUCCESS
}

// Get and MigGet are the sample's own methods, which gpuprof does not
// call (it asks the device).
func (f *fakeGpmSample) Get(nvml.Device) nvml.Return         { return nvml.ERROR_NOT_SUPPORTED }
func (f *fakeGpmSample) MigGet(nvml.Device, int) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }

// fakeNode is a simulated server with every fakeGPU wired in, and an event
// set that delivers the events queued in it.
type fakeNode struct {
	srv  *server.Server
	gpus []*fakeGPU
	set  *mock.EventSet

	mu      sync.Mutex // the conformance suite drains events from a goroutine
	events  []nvml.EventData
	waitRet nvml.Return // returned by Wait once the queue is empty; ERROR_TIMEOUT by default

	gpmSamples    []*fakeGpmSample // every buffer allocated
	gpmMetricsRet nvml.Return      // returned by GpmMetricsGet
	gpmMetricRet  map[nvml.GpmMetricId]nvml.Return
}

// fixedTime stamps every sample and event of a fake node's Sampler.
var fixedTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newFakeNode(srv *server.Server) *fakeNode {
	n := &fakeNode{srv: srv, waitRet: nvml.ERROR_TIMEOUT}
	n.set = &mock.EventSet{
		WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
			n.mu.Lock()
			defer n.mu.Unlock()
			if len(n.events) == 0 {
				return nvml.EventData{}, n.waitRet
			}
			ev := n.events[0]
			n.events = n.events[1:]
			return ev, nvml.SUCCESS
		},
		FreeFunc: func() nvml.Return { return nvml.SUCCESS },
	}
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return n.set, nvml.SUCCESS }
	n.wireGPM()
	for _, d := range srv.Devices {
		g := &fakeGPU{
			dev:      d.(*server.Device),
			powerMW:  69_000,
			energyMJ: 1_000_000,
			tempC:    33,
			accMode:  nvml.FEATURE_DISABLED,
			accStats: make(map[uint32]nvml.AccountingStats),

			gpmSupported: true,
			migGPM:       map[int]*gpmCounters{},
		}
		g.wire()
		n.gpus = append(n.gpus, g)
	}
	return n
}

// wireGPM fills the library's GPM functions: buffers that record what a
// device copied into them, and metrics computed from two of them as NVML
// does, the mean of each metric over the time between them.
func (n *fakeNode) wireGPM() {
	n.gpmMetricRet = map[nvml.GpmMetricId]nvml.Return{}
	n.srv.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		smp := &fakeGpmSample{}
		n.gpmSamples = append(n.gpmSamples, smp)
		return smp, nvml.SUCCESS
	}
	n.srv.GpmSampleFreeFunc = func(s nvml.GpmSample) nvml.Return { return s.Free() }
	n.srv.GpmMetricsGetFunc = func(m *nvml.GpmMetricsGetType) nvml.Return {
		if n.gpmMetricsRet != nvml.SUCCESS {
			return n.gpmMetricsRet
		}
		s1, ok1 := m.Sample1.(*fakeGpmSample)
		s2, ok2 := m.Sample2.(*fakeGpmSample)
		if !ok1 || !ok2 || !s1.taken || !s2.taken || s1.freed || s2.freed {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		dt := s2.snap.t - s1.snap.t
		for i := range m.NumMetrics {
			id := nvml.GpmMetricId(m.Metrics[i].MetricId)
			switch ret, bad := n.gpmMetricRet[id]; {
			case bad:
				m.Metrics[i].NvmlReturn = uint32(ret)
			case dt <= 0:
				m.Metrics[i].NvmlReturn = uint32(nvml.ERROR_NO_DATA)
			default:
				m.Metrics[i].NvmlReturn = uint32(nvml.SUCCESS)
				m.Metrics[i].Value = (s2.snap.busy[id] - s1.snap.busy[id]) / dt
			}
		}
		return nvml.SUCCESS
	}
}

func (n *fakeNode) queue(evs ...nvml.EventData) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, evs...)
}

func (g *fakeGPU) wire() {
	d := g.dev
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		// The server sets PciBusID but leaves PciInfo.BusId empty.
		var p nvml.PciInfo
		for i, c := range []byte(d.PciBusID) {
			p.BusId[i] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return g.util, g.readRet }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return g.powerMW, g.readRet }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return g.energyMJ, g.readRet }
	d.GetTemperatureFunc = func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
		if s != nvml.TEMPERATURE_GPU {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		return g.tempC, g.readRet
	}
	v1 := d.GetMemoryInfoFunc
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		m, ret := v1()
		if g.readRet != nvml.SUCCESS {
			return nvml.Memory{}, g.readRet
		}
		return m, ret
	}
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		total := d.MemoryInfo.Total
		return nvml.Memory_v2{Total: total, Used: g.memUsed, Free: total - min(total, g.memUsed)}, g.readRet
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return g.procs, g.procsRet }
	d.GetProcessUtilizationFunc = func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		if g.procUtilRet != nvml.SUCCESS {
			return nil, g.procUtilRet
		}
		var out []nvml.ProcessUtilizationSample
		for _, smp := range g.procUtil {
			if smp.TimeStamp > since {
				out = append(out, smp)
			}
		}
		if len(out) == 0 {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return out, nvml.SUCCESS
	}
	d.GetAccountingModeFunc = func() (nvml.EnableState, nvml.Return) { return g.accMode, g.accModeRet }
	d.GetAccountingPidsFunc = func() ([]int, nvml.Return) { return g.accPids, nvml.SUCCESS }
	d.GetAccountingStatsFunc = func(pid uint32) (nvml.AccountingStats, nvml.Return) {
		st, ok := g.accStats[pid]
		if !ok {
			return nvml.AccountingStats{}, nvml.ERROR_NOT_FOUND
		}
		return st, nvml.SUCCESS
	}
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		sup := nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION}
		if g.gpmSupported {
			sup.IsSupportedDevice = 1
		}
		return sup, g.gpmSupportRet
	}
	take := func(c *gpmCounters, s nvml.GpmSample) nvml.Return {
		smp, ok := s.(*fakeGpmSample)
		if !ok || smp.freed {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		if g.gpmSampleRet != nvml.SUCCESS {
			return g.gpmSampleRet
		}
		smp.snap, smp.taken = c.copy(), true
		return nvml.SUCCESS
	}
	d.GpmSampleGetFunc = func(s nvml.GpmSample) nvml.Return { return take(&g.gpm, s) }
	d.GpmMigSampleGetFunc = func(gi int, s nvml.GpmSample) nvml.Return {
		c, ok := g.migGPM[gi]
		if !ok {
			return nvml.ERROR_NOT_FOUND
		}
		return take(c, s)
	}
	d.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
		g.registered |= types
		return nvml.SUCCESS
	}
}

// open builds a Sampler on the node that logs to the test and is closed
// when the test ends.
func (n *fakeNode) open(t *testing.T, opts ...Option) *Sampler {
	t.Helper()
	s, err := New(n.srv, testLogger(t), append([]Option{WithClock(func() time.Time { return fixedTime })}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// logBuffer collects log lines for tests that count warnings.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(substr string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Count(b.buf.Bytes(), []byte(substr))
}

// migHandle is a MIG instance handle; the simulated servers create GPU and
// compute instances but no MIG device handles.
func migHandle(uuid, name string, gi, ci int, total uint64) *mock.Device {
	return &mock.Device{
		GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetNameFunc:              func() (string, nvml.Return) { return name, nvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return gi, nvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return ci, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: total, Free: total}, nvml.SUCCESS
		},
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: total, Used: total / 4, Free: total - total/4}, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
	}
}

// enableMIG puts g in MIG mode with the given instances in slots 0, 2, 4...
// (NVML's slots are sparse; the odd ones answer ERROR_NOT_FOUND).
func (g *fakeGPU) enableMIG(instances ...*mock.Device) {
	g.dev.MigMode = nvml.DEVICE_MIG_ENABLE
	for _, m := range instances {
		if gi, ret := m.GetGpuInstanceId(); ret == nvml.SUCCESS && g.migGPM[gi] == nil {
			g.migGPM[gi] = &gpmCounters{}
		}
	}
	g.dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	g.dev.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i%2 == 1 || i/2 >= len(instances) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return instances[i/2], nvml.SUCCESS
	}
}

func gib(n uint64) uint64 { return n << 30 }

func migUUID(i int) string { return fmt.Sprintf("MIG-00000000-0000-0000-0000-%012d", i) }
