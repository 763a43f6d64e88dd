package nvml

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/gputest"
)

var ctx = context.Background()

func TestConformance(t *testing.T) {
	t.Run("dgxh100", func(t *testing.T) {
		gputest.RunConformance(t, func(t *testing.T) gpu.Sampler {
			return newFakeNode(dgxh100.New()).open(t)
		})
	})
	t.Run("dgxa100 with MIG", func(t *testing.T) {
		gputest.RunConformance(t, func(t *testing.T) gpu.Sampler {
			n := newFakeNode(dgxa100.New())
			n.gpus[3].enableMIG(
				migHandle(migUUID(1), "NVIDIA A100-SXM4-40GB MIG 3g.20gb", 1, 0, gib(20)),
				migHandle(migUUID(2), "NVIDIA A100-SXM4-40GB MIG 3g.20gb", 2, 0, gib(20)),
			)
			return n.open(t)
		})
	})
	t.Run("with timeout wrapper", func(t *testing.T) {
		gputest.RunConformance(t, func(t *testing.T) gpu.Sampler {
			return gpu.WithTimeout(newFakeNode(dgxh100.New()).open(t), 5*time.Second)
		})
	})
}

func TestSampleDevice(t *testing.T) {
	const na32, na64 = math.MaxUint32, math.MaxUint64
	tests := []struct {
		name    string
		set     func(g *fakeGPU)
		want    gpu.DeviceSample
		wantErr error
	}{
		{
			name: "every reading",
			set: func(g *fakeGPU) {
				g.util = nvml.Utilization{Gpu: 55, Memory: 20}
				g.powerMW, g.tempC, g.memUsed = 350_000, 61, gib(40)
			},
			want: gpu.DeviceSample{
				MemoryUsed: gpu.Some(gib(40)), Util: gpu.Some[uint32](55), MemUtil: gpu.Some[uint32](20),
				PowerMW: gpu.Some[uint32](350_000), TempC: gpu.Some[uint32](61),
			},
		},
		{
			name: "zero is a reading",
			set:  func(g *fakeGPU) { g.powerMW, g.tempC = 0, 0 },
			want: gpu.DeviceSample{
				MemoryUsed: gpu.Some[uint64](0), Util: gpu.Some[uint32](0), MemUtil: gpu.Some[uint32](0),
				PowerMW: gpu.Some[uint32](0), TempC: gpu.Some[uint32](0),
			},
		},
		{
			name: "not-available sentinels",
			set: func(g *fakeGPU) {
				g.util = nvml.Utilization{Gpu: na32, Memory: na32}
				g.powerMW, g.tempC, g.memUsed = na32, na32, na64
			},
		},
		{
			name: "utilisation sentinel only",
			set:  func(g *fakeGPU) { g.util = nvml.Utilization{Gpu: na32, Memory: 7} },
			want: gpu.DeviceSample{
				MemoryUsed: gpu.Some[uint64](0), MemUtil: gpu.Some[uint32](7),
				PowerMW: gpu.Some[uint32](69_000), TempC: gpu.Some[uint32](33),
			},
		},
		{
			name: "not supported",
			set:  func(g *fakeGPU) { g.readRet = nvml.ERROR_NOT_SUPPORTED },
		},
		{
			name: "unexpected failure",
			set:  func(g *fakeGPU) { g.readRet = nvml.ERROR_UNKNOWN },
		},
		{
			name:    "GPU lost",
			set:     func(g *fakeGPU) { g.readRet = nvml.ERROR_GPU_IS_LOST },
			wantErr: nvml.ERROR_GPU_IS_LOST,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			s := n.open(t)
			g := n.gpus[1]
			tt.set(g)
			got, err := s.SampleDevice(ctx, g.dev.UUID)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("SampleDevice: %v", err)
			}
			want := tt.want
			want.UUID, want.Time = g.dev.UUID, fixedTime
			if got != want {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestReadingFailureWarnsOnce(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	var logs logBuffer
	s, err := New(n.srv, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	g := n.gpus[0]
	g.readRet = nvml.ERROR_UNKNOWN
	for range 3 {
		if _, err := s.SampleDevice(ctx, g.dev.UUID); err != nil {
			t.Fatalf("SampleDevice: %v", err)
		}
	}
	// memory, utilisation, power, temperature: one warning each (the
	// energy counter is not read by SampleDevice).
	if got, want := logs.count("recorded as missing"), 4; got != want {
		t.Errorf("got %d warnings over 3 samples, want %d:\n%s", got, want, logs.buf.String())
	}
}

func TestProcesses(t *testing.T) {
	tests := []struct {
		name  string
		procs []nvml.ProcessInfo
		util  []nvml.ProcessUtilizationSample
		want  []gpu.ProcessSample
	}{
		{
			name: "idle",
			want: []gpu.ProcessSample{},
		},
		{
			name:  "memory sentinel dropped",
			procs: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: gib(3)}, {Pid: 200, UsedGpuMemory: math.MaxUint64}},
			want: []gpu.ProcessSample{
				{PID: 100, MemoryUsed: gpu.Some(gib(3))},
				{PID: 200},
			},
		},
		{
			name:  "utilisation averaged per process",
			procs: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: gib(1)}, {Pid: 200, UsedGpuMemory: gib(2)}, {Pid: 300, UsedGpuMemory: 0}},
			util: []nvml.ProcessUtilizationSample{
				{Pid: 100, TimeStamp: 10, SmUtil: 40},
				{Pid: 100, TimeStamp: 20, SmUtil: 61},
				{Pid: 200, TimeStamp: 20, SmUtil: math.MaxUint32},
				{Pid: 300, TimeStamp: 15, SmUtil: 0},
			},
			want: []gpu.ProcessSample{
				{PID: 100, MemoryUsed: gpu.Some(gib(1)), SMUtil: gpu.Some[uint32](51)},
				{PID: 200, MemoryUsed: gpu.Some(gib(2))},
				{PID: 300, MemoryUsed: gpu.Some[uint64](0), SMUtil: gpu.Some[uint32](0)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			s := n.open(t)
			g := n.gpus[4]
			g.procs, g.procUtil = tt.procs, tt.util
			got, err := s.Processes(ctx, g.dev.UUID)
			if err != nil {
				t.Fatalf("Processes: %v", err)
			}
			if got == nil {
				t.Fatal("Processes returned nil, want an empty slice for no process")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d processes, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				want := tt.want[i]
				want.UUID = g.dev.UUID
				if got[i] != want {
					t.Errorf("process %d:\n got %+v\nwant %+v", i, got[i], want)
				}
			}
		})
	}
}

func TestProcessesErrors(t *testing.T) {
	tests := []struct {
		name    string
		ret     nvml.Return
		wantErr error
	}{
		{"not supported", nvml.ERROR_NOT_SUPPORTED, gpu.ErrUnsupported},
		{"no permission", nvml.ERROR_NO_PERMISSION, nvml.ERROR_NO_PERMISSION},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			s := n.open(t)
			n.gpus[0].procsRet = tt.ret
			if _, err := s.Processes(ctx, n.gpus[0].dev.UUID); !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestProcessUtilizationTimestamps(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	s := n.open(t)
	g := n.gpus[0]
	g.procs = []nvml.ProcessInfo{{Pid: 7, UsedGpuMemory: gib(1)}}
	g.procUtil = []nvml.ProcessUtilizationSample{{Pid: 7, TimeStamp: 1_000, SmUtil: 20}, {Pid: 7, TimeStamp: 2_000, SmUtil: 30}}

	steps := []struct {
		name      string
		add       []nvml.ProcessUtilizationSample
		wantSince uint64
		wantUtil  gpu.Opt[uint32]
	}{
		{name: "first call reads the driver's buffer", wantSince: 0, wantUtil: gpu.Some[uint32](25)},
		{name: "no new sample", wantSince: 2_000},
		{name: "only newer samples", add: []nvml.ProcessUtilizationSample{{Pid: 7, TimeStamp: 3_000, SmUtil: 90}}, wantSince: 2_000, wantUtil: gpu.Some[uint32](90)},
		{name: "newest timestamp kept", wantSince: 3_000},
	}
	for i, st := range steps {
		g.procUtil = append(g.procUtil, st.add...)
		got, err := s.Processes(ctx, g.dev.UUID)
		if err != nil {
			t.Fatalf("%s: Processes: %v", st.name, err)
		}
		calls := g.dev.GetProcessUtilizationCalls()
		if len(calls) != i+1 {
			t.Fatalf("%s: %d GetProcessUtilization calls, want %d", st.name, len(calls), i+1)
		}
		if since := calls[i].V; since != st.wantSince {
			t.Errorf("%s: asked for samples since %d, want %d", st.name, since, st.wantSince)
		}
		if len(got) != 1 || got[0].SMUtil != st.wantUtil {
			t.Errorf("%s: got %+v, want SMUtil %+v", st.name, got, st.wantUtil)
		}
	}
}

// TestMissingSymbols simulates drivers that lack optional functions: the
// value is missing or the call answers ErrUnsupported, and the function is
// never called (on a real library that would kill the process).
func TestMissingSymbols(t *testing.T) {
	tests := []struct {
		symbol string
		check  func(t *testing.T, n *fakeNode, s *Sampler)
	}{
		{"nvmlDeviceGetTotalEnergyConsumption", func(t *testing.T, n *fakeNode, s *Sampler) {
			if _, err := s.Energy(ctx, n.gpus[0].dev.UUID); !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("Energy: err = %v, want ErrUnsupported", err)
			}
			if got := sample(t, s, n.gpus[0]); !got.PowerMW.Valid {
				t.Errorf("got power %+v; want power read", got.PowerMW)
			}
			if c := len(n.gpus[0].dev.GetTotalEnergyConsumptionCalls()); c != 0 {
				t.Errorf("GetTotalEnergyConsumption called %d times", c)
			}
		}},
		{"nvmlDeviceGetTemperature", func(t *testing.T, n *fakeNode, s *Sampler) {
			got := sample(t, s, n.gpus[0])
			if got.TempC.Valid || !got.PowerMW.Valid {
				t.Errorf("got temperature %+v, power %+v; want temperature missing, power read", got.TempC, got.PowerMW)
			}
			if c := len(n.gpus[0].dev.GetTemperatureCalls()); c != 0 {
				t.Errorf("GetTemperature called %d times", c)
			}
		}},
		{"nvmlDeviceGetMemoryInfo_v2", func(t *testing.T, n *fakeNode, s *Sampler) {
			g := n.gpus[0]
			g.dev.MemoryInfo.Used, g.memUsed = gib(9), gib(8)
			if got := sample(t, s, g); got.MemoryUsed != gpu.Some(gib(9)) {
				t.Errorf("MemoryUsed = %+v, want v1's %d", got.MemoryUsed, gib(9))
			}
			if c := len(g.dev.GetMemoryInfo_v2Calls()); c != 0 {
				t.Errorf("GetMemoryInfo_v2 called %d times", c)
			}
		}},
		{"nvmlDeviceGetProcessUtilization", func(t *testing.T, n *fakeNode, s *Sampler) {
			g := n.gpus[0]
			g.procs = []nvml.ProcessInfo{{Pid: 5, UsedGpuMemory: gib(1)}}
			g.procUtil = []nvml.ProcessUtilizationSample{{Pid: 5, TimeStamp: 1, SmUtil: 50}}
			got, err := s.Processes(ctx, g.dev.UUID)
			if err != nil || len(got) != 1 || got[0].SMUtil.Valid || !got[0].MemoryUsed.Valid {
				t.Errorf("got %+v, %v; want one process with memory and no SM utilisation", got, err)
			}
			if c := len(g.dev.GetProcessUtilizationCalls()); c != 0 {
				t.Errorf("GetProcessUtilization called %d times", c)
			}
		}},
		{"nvmlEventSetCreate", func(t *testing.T, n *fakeNode, s *Sampler) {
			if _, err := s.XIDEvents(ctx); !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("XIDEvents: err = %v, want ErrUnsupported", err)
			}
			if c := len(n.srv.EventSetCreateCalls()); c != 0 {
				t.Errorf("EventSetCreate called %d times", c)
			}
		}},
		{"nvmlDeviceGetAccountingPids", func(t *testing.T, n *fakeNode, s *Sampler) {
			if _, err := s.Accounting(ctx, n.gpus[0].dev.UUID); !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("Accounting: err = %v, want ErrUnsupported", err)
			}
			if c := len(n.gpus[0].dev.GetAccountingModeCalls()); c != 0 {
				t.Errorf("GetAccountingMode called %d times", c)
			}
		}},
		{"nvmlDeviceGetMigDeviceHandleByIndex", func(t *testing.T, n *fakeNode, s *Sampler) {
			if c := len(n.gpus[0].dev.GetMigModeCalls()); c != 0 {
				t.Errorf("GetMigMode called %d times", c)
			}
		}},
		{"nvmlSystemGetCudaDriverVersion", func(t *testing.T, n *fakeNode, s *Sampler) {
			v, err := s.Versions(ctx)
			if err != nil || v != (gpu.Versions{Driver: "550.54.15"}) {
				t.Errorf("Versions = %+v, %v; want the driver only", v, err)
			}
			if c := len(n.srv.SystemGetCudaDriverVersionCalls()); c != 0 {
				t.Errorf("SystemGetCudaDriverVersion called %d times", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.symbol, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			n.srv.LookupSymbolFunc = func(name string) error {
				if name == tt.symbol {
					return errors.New("undefined symbol: " + name)
				}
				return nil
			}
			tt.check(t, n, n.open(t))
		})
	}
}

func TestWithoutExtensions(t *testing.T) {
	tests := []struct {
		name string
		prep func(n *fakeNode) []Option
	}{
		{"Extensions returns nil", func(n *fakeNode) []Option {
			n.srv.ExtensionsFunc = func() nvml.ExtendedInterface { return nil }
			return nil
		}},
		{"symbol checker", func(n *fakeNode) []Option {
			n.srv.ExtensionsFunc = nil // would panic if called
			return []Option{WithSymbolChecker(func(string) bool { return false })}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			s := n.open(t, tt.prep(n)...)
			got := sample(t, s, n.gpus[0])
			if got.TempC.Valid || !got.PowerMW.Valid || !got.MemoryUsed.Valid {
				t.Errorf("got %+v; want every reading but temperature", got)
			}
			if _, err := s.Energy(ctx, n.gpus[0].dev.UUID); !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("Energy: err = %v, want ErrUnsupported", err)
			}
			got = sample(t, s, n.gpus[0])
			if got.Activity.Valid {
				t.Errorf("activity %+v without GPM functions", got.Activity)
			}
			if _, err := s.XIDEvents(ctx); !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("XIDEvents: err = %v, want ErrUnsupported", err)
			}
		})
	}
}

func TestInitFailure(t *testing.T) {
	for _, ret := range []nvml.Return{
		nvml.ERROR_LIBRARY_NOT_FOUND,
		nvml.ERROR_DRIVER_NOT_LOADED,
		nvml.ERROR_LIB_RM_VERSION_MISMATCH,
		nvml.ERROR_NO_PERMISSION,
	} {
		t.Run(ret.String(), func(t *testing.T) {
			// Every other function of this mock is nil and panics if called:
			// after a failed Init the real library kills the process instead.
			lib := &mock.Interface{InitFunc: func() nvml.Return { return ret }}
			s, err := New(lib, testLogger(t))
			if s != nil {
				t.Errorf("New returned a Sampler with error %v", err)
			}
			if !errors.Is(err, ErrLibrary) || !errors.Is(err, ret) {
				t.Errorf("err = %v, want ErrLibrary wrapping %v", err, ret)
			}
			if c := len(lib.InitCalls()); c != 1 {
				t.Errorf("Init called %d times, want 1", c)
			}
		})
	}
}

func TestOpenBogusLibrary(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "libgarbage.so")
	if err := os.WriteFile(garbage, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing", "libnvidia-ml.so.1"), garbage} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := Open(path, testLogger(t))
			if !errors.Is(err, ErrLibrary) || !errors.Is(err, nvml.ERROR_LIBRARY_NOT_FOUND) {
				t.Errorf("Open(%s): err = %v, want ErrLibrary wrapping ERROR_LIBRARY_NOT_FOUND", path, err)
			}
			if s != nil {
				t.Errorf("Open(%s) returned a Sampler", path)
			}
		})
	}
}

// TestOpenDefaultLibrary loads the system's libnvidia-ml. Without one (no
// GPU on this machine) it must fail cleanly; with one it must work.
func TestOpenDefaultLibrary(t *testing.T) {
	s, err := Open("", testLogger(t))
	if err != nil {
		if !errors.Is(err, ErrLibrary) {
			t.Fatalf("Open(\"\"): err = %v, want ErrLibrary", err)
		}
		t.Logf("no NVML here: %v", err)
		return
	}
	defer s.Close()
	if _, err := s.Versions(ctx); err != nil {
		t.Errorf("Versions on the real library: %v", err)
	}
}

func TestAccounting(t *testing.T) {
	start := time.Date(2025, 2, 28, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name    string
		set     func(g *fakeGPU)
		want    []gpu.AccountingStats
		wantErr error
	}{
		{
			name:    "mode off",
			set:     func(g *fakeGPU) { g.accMode = nvml.FEATURE_DISABLED },
			wantErr: gpu.ErrUnsupported,
		},
		{
			name:    "mode not supported",
			set:     func(g *fakeGPU) { g.accModeRet = nvml.ERROR_NOT_SUPPORTED },
			wantErr: gpu.ErrUnsupported,
		},
		{
			name:    "mode unreadable",
			set:     func(g *fakeGPU) { g.accModeRet = nvml.ERROR_UNKNOWN },
			wantErr: nvml.ERROR_UNKNOWN,
		},
		{
			name: "records",
			set: func(g *fakeGPU) {
				g.accMode = nvml.FEATURE_ENABLED
				g.accPids = []int{100, 200, 300} // 300 left the circular buffer
				g.accStats[100] = nvml.AccountingStats{GpuUtilization: 87, MemoryUtilization: 30, MaxMemoryUsage: gib(20),
					Time: 90_000, StartTime: uint64(start.UnixMicro())}
				g.accStats[200] = nvml.AccountingStats{GpuUtilization: math.MaxUint32, MemoryUtilization: math.MaxUint32,
					MaxMemoryUsage: math.MaxUint64, Time: 5, StartTime: uint64(start.UnixMicro()), IsRunning: 1}
			},
			want: []gpu.AccountingStats{
				{PID: 100, GPUUtil: 87, MemUtil: 30, MaxMemory: gib(20), Time: 90 * time.Second, Start: start},
				{PID: 200, Time: 5 * time.Millisecond, Start: start, Running: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(dgxh100.New())
			s := n.open(t)
			g := n.gpus[6]
			tt.set(g)
			got, err := s.Accounting(ctx, g.dev.UUID)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Accounting: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d records, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if !got[i].Start.Equal(tt.want[i].Start) {
					t.Errorf("record %d: Start = %v, want %v", i, got[i].Start, tt.want[i].Start)
				}
				got[i].Start, tt.want[i].Start = time.Time{}, time.Time{}
				if got[i] != tt.want[i] {
					t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestUnknownUUID(t *testing.T) {
	s := newFakeNode(dgxh100.New()).open(t)
	const uuid = "GPU-ffffffff-0000-0000-0000-000000000000"
	calls := []struct {
		name string
		call func() error
	}{
		{"SampleDevice", func() error { _, err := s.SampleDevice(ctx, uuid); return err }},
		{"Processes", func() error { _, err := s.Processes(ctx, uuid); return err }},
		{"Accounting", func() error { _, err := s.Accounting(ctx, uuid); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, gpu.ErrNotFound) {
				t.Errorf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestVersions(t *testing.T) {
	s := newFakeNode(dgxh100.New()).open(t)
	got, err := s.Versions(ctx)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	if want := (gpu.Versions{Driver: "550.54.15", CUDADriver: "12.4"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestCUDAVersion(t *testing.T) {
	tests := []struct {
		name string
		in   int
		want string
	}{
		{"12.4", 12040, "12.4"},
		{"11.8", 11080, "11.8"},
		{"13.0", 13000, "13.0"},
		{"12.10", 12100, "12.10"},
		{"unknown", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cudaVersion(tt.in); got != tt.want {
				t.Errorf("cudaVersion(%d) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestClose(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	s, err := New(n.srv, testLogger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if c := len(n.srv.ShutdownCalls()); c != 1 {
		t.Errorf("Shutdown called %d times, want 1", c)
	}
	if c := len(n.set.FreeCalls()); c != 1 {
		t.Errorf("event set freed %d times, want 1", c)
	}
	if _, err := s.Devices(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Devices after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.SampleDevice(ctx, n.gpus[0].dev.UUID); !errors.Is(err, ErrClosed) {
		t.Errorf("SampleDevice after Close: err = %v, want ErrClosed", err)
	}
}

func sample(t *testing.T, s *Sampler, g *fakeGPU) gpu.DeviceSample {
	t.Helper()
	got, err := s.SampleDevice(ctx, g.dev.UUID)
	if err != nil {
		t.Fatalf("SampleDevice: %v", err)
	}
	return got
}
