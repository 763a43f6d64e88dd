package nvml

import (
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestInventory(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	devs, err := n.open(t).Devices(ctx)
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) != 8 {
		t.Fatalf("got %d GPUs, want 8", len(devs))
	}
	for i, got := range devs {
		sd := n.gpus[i].dev
		want := gpu.Device{
			Index:       i,
			UUID:        sd.UUID,
			Name:        "NVIDIA H100 80GB HBM3",
			Minor:       sd.Minor,
			PCIBusID:    sd.PciBusID,
			MemoryTotal: 81920 << 20,
		}
		if got.Index != want.Index || got.UUID != want.UUID || got.Name != want.Name || got.Minor != want.Minor ||
			got.PCIBusID != want.PCIBusID || got.MemoryTotal != want.MemoryTotal || got.MIGEnabled || len(got.MIG) != 0 {
			t.Errorf("device %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

func TestInventorySkipsUnreadableGPU(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	// Inside a job's device cgroup NVML refuses the GPUs the job lacks.
	n.gpus[2].dev.GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NO_PERMISSION }
	n.gpus[5].dev.GetMinorNumberFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	s := n.open(t)
	devs, err := s.Devices(ctx)
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) != 7 {
		t.Fatalf("got %d GPUs, want 7 (one unreadable)", len(devs))
	}
	for _, d := range devs {
		if d.UUID == n.gpus[5].dev.UUID && d.Minor != -1 {
			t.Errorf("GPU without minor number: Minor = %d, want -1", d.Minor)
		}
		if d.Index == 2 {
			t.Errorf("unreadable GPU 2 listed: %+v", d)
		}
	}
	if _, err := s.SampleDevice(ctx, n.gpus[2].dev.UUID); !errors.Is(err, gpu.ErrNotFound) {
		t.Errorf("SampleDevice(unreadable GPU): err = %v, want ErrNotFound", err)
	}
}

func TestMIG(t *testing.T) {
	n := newFakeNode(dgxa100.New())
	parent := n.gpus[0]
	inst := []*mock.Device{
		migHandle(migUUID(1), "NVIDIA A100-SXM4-40GB MIG 1g.5gb", 7, 0, 4864<<20),
		migHandle(migUUID(2), "NVIDIA A100-SXM4-40GB MIG 3g.20gb+me", 2, 0, 19968<<20),
		migHandle(migUUID(3), "", 1, 0, 9856<<20),
	}
	parent.enableMIG(inst...)
	s := n.open(t)

	devs, err := s.Devices(ctx)
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	got := devs[0]
	if !got.MIGEnabled || devs[1].MIGEnabled {
		t.Errorf("MIGEnabled = %v, %v; want true, false", got.MIGEnabled, devs[1].MIGEnabled)
	}
	want := []gpu.MIGDevice{
		{UUID: migUUID(1), ParentUUID: parent.dev.UUID, GPUInstanceID: 7, ComputeInstanceID: 0, Profile: "1g.5gb", MemoryTotal: 4864 << 20},
		{UUID: migUUID(2), ParentUUID: parent.dev.UUID, GPUInstanceID: 2, ComputeInstanceID: 0, Profile: "3g.20gb+me", MemoryTotal: 19968 << 20},
		{UUID: migUUID(3), ParentUUID: parent.dev.UUID, GPUInstanceID: 1, ComputeInstanceID: 0, Profile: "10gb", MemoryTotal: 9856 << 20},
	}
	if len(got.MIG) != len(want) {
		t.Fatalf("got %d MIG instances, want %d: %+v", len(got.MIG), len(want), got.MIG)
	}
	for i := range want {
		if got.MIG[i] != want[i] {
			t.Errorf("MIG %d:\n got %+v\nwant %+v", i, got.MIG[i], want[i])
		}
	}

	t.Run("sample instance", func(t *testing.T) {
		smp, err := s.SampleDevice(ctx, migUUID(2))
		if err != nil {
			t.Fatalf("SampleDevice: %v", err)
		}
		wantSmp := gpu.DeviceSample{UUID: migUUID(2), Time: fixedTime, MemoryUsed: gpu.Some[uint64](19968 << 20 / 4)}
		if smp != wantSmp {
			t.Errorf("\n got %+v\nwant %+v", smp, wantSmp)
		}
	})
	t.Run("processes attributed to instances", func(t *testing.T) {
		parent.procs = []nvml.ProcessInfo{
			{Pid: 10, UsedGpuMemory: gib(2), GpuInstanceId: 2, ComputeInstanceId: 0},
			{Pid: 11, UsedGpuMemory: gib(1), GpuInstanceId: 7, ComputeInstanceId: 0},
			{Pid: 12, UsedGpuMemory: gib(1), GpuInstanceId: 9, ComputeInstanceId: 0},
		}
		procs, err := s.Processes(ctx, parent.dev.UUID)
		if err != nil {
			t.Fatalf("Processes: %v", err)
		}
		wantOwner := []string{migUUID(2), migUUID(1), parent.dev.UUID}
		if len(procs) != len(wantOwner) {
			t.Fatalf("got %+v, want %d processes", procs, len(wantOwner))
		}
		for i, p := range procs {
			if p.UUID != wantOwner[i] || p.SMUtil.Valid {
				t.Errorf("process %d: UUID %q SMUtil %+v; want %q and no SM utilisation", p.PID, p.UUID, p.SMUtil, wantOwner[i])
			}
		}
		if c := len(parent.dev.GetProcessUtilizationCalls()); c != 0 {
			t.Errorf("GetProcessUtilization called %d times in MIG mode", c)
		}
	})
	t.Run("instance accounting unsupported", func(t *testing.T) {
		if _, err := s.Accounting(ctx, migUUID(1)); !errors.Is(err, gpu.ErrUnsupported) {
			t.Errorf("err = %v, want ErrUnsupported", err)
		}
	})
}

func TestInventoryFailureShutsDown(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	n.srv.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	if _, err := New(n.srv, testLogger(t)); !errors.Is(err, nvml.ERROR_UNKNOWN) || errors.Is(err, ErrLibrary) {
		t.Errorf("err = %v, want ERROR_UNKNOWN and not ErrLibrary", err)
	}
	if c := len(n.srv.ShutdownCalls()); c != 1 {
		t.Errorf("Shutdown called %d times after a failed inventory, want 1", c)
	}
}

func TestMIGProfile(t *testing.T) {
	tests := []struct {
		name   string
		device string
		memory uint64
		want   string
	}{
		{"from name", "NVIDIA A100-SXM4-40GB MIG 1g.5gb", 0, "1g.5gb"},
		{"media extension", "NVIDIA H100 80GB HBM3 MIG 1g.10gb+me", gib(10), "1g.10gb+me"},
		{"from memory, rounded up", "NVIDIA H100 80GB HBM3", 40192 << 20, "40gb"},
		{"exact GiB", "", gib(20), "20gb"},
		{"nothing known", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := migProfile(tt.device, tt.memory); got != tt.want {
				t.Errorf("migProfile(%q, %d) = %q, want %q", tt.device, tt.memory, got, tt.want)
			}
		})
	}
}

func TestPCIBusID(t *testing.T) {
	fill := func(dst []int8, s string) {
		for i, c := range []byte(s) {
			dst[i] = int8(c)
		}
	}
	tests := []struct {
		name   string
		busID  string
		legacy string
		want   string
	}{
		{"current field", "00000000:17:00.0", "0000:17:00.0", "00000000:17:00.0"},
		{"legacy field only", "", "0000:17:00.0", "0000:17:00.0"},
		{"neither", "", "", ""},
		{"full length", "0123456789abcdef0123456789abcde", "", "0123456789abcdef0123456789abcde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p nvml.PciInfo
			fill(p.BusId[:], tt.busID)
			fill(p.BusIdLegacy[:], tt.legacy)
			if got := pciBusID(p); got != tt.want {
				t.Errorf("pciBusID = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCStringUnsigned(t *testing.T) {
	if got := cString([]uint8{'a', 'b', 0, 'c'}); got != "ab" {
		t.Errorf("cString = %q, want %q", got, "ab")
	}
}
