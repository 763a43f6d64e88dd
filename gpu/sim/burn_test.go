package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestSelectDevices(t *testing.T) {
	// node.json lists devices in index order; CUDA sorts them by PCI bus,
	// so list them out of bus order to see that it does.
	devs := NodeSpec{GPUs: 4, Model: DefaultModel, MemoryTotal: DefaultMemory, Minors: []int{3, 2, 1, 0}}.devices()
	devs[0].PCIBusID, devs[3].PCIBusID = devs[3].PCIBusID, devs[0].PCIBusID
	// In CUDA order: devs[3], devs[1], devs[2], devs[0].
	byBus := []gpu.Device{devs[3], devs[1], devs[2], devs[0]}
	u := func(i int) string { return byBus[i].UUID }
	allowAll := func(string) error { return nil }

	tests := []struct {
		name    string
		opts    BurnOptions
		open    func(string) error
		want    []int // positions in byBus
		wantErr error
	}{
		{name: "unset means all", want: []int{0, 1, 2, 3}},
		{name: "ordinal", opts: BurnOptions{Visible: "2"}, want: []int{2}},
		{name: "ordinals keep their order", opts: BurnOptions{Visible: "3,0"}, want: []int{3, 0}},
		{name: "spaces", opts: BurnOptions{Visible: " 1 , 2"}, want: []int{1, 2}},
		{name: "full UUID", opts: BurnOptions{Visible: u(1)}, want: []int{1}},
		{name: "UUID prefix", opts: BurnOptions{Visible: u(3)[:12] + "," + u(0)[:10]}, want: []int{3, 0}},
		{name: "mixed", opts: BurnOptions{Visible: "1," + u(2)}, want: []int{1, 2}},
		{name: "invalid entry stops parsing", opts: BurnOptions{Visible: "0,2,x,1"}, want: []int{0, 2}},
		{name: "out of range stops parsing", opts: BurnOptions{Visible: "1,4,0"}, want: []int{1}},
		{name: "repeat stops parsing", opts: BurnOptions{Visible: "0,2,0,1"}, want: []int{0, 2}},
		{name: "ambiguous prefix stops parsing", opts: BurnOptions{Visible: "3,GPU-"}, want: []int{3}},
		{name: "unknown UUID stops parsing", opts: BurnOptions{Visible: "1,GPU-zzz,2"}, want: []int{1}},
		{name: "MIG UUID is no device here", opts: BurnOptions{Visible: "MIG-" + u(0)[4:]}, wantErr: ErrNoDevice},
		{name: "minus one hides all", opts: BurnOptions{Visible: "-1"}, wantErr: ErrNoDevice},
		{name: "NoDevFiles", opts: BurnOptions{Visible: "NoDevFiles"}, wantErr: ErrNoDevice},
		{name: "set but empty hides all", opts: BurnOptions{VisibleSet: true}, wantErr: ErrNoDevice},
		{name: "out of range first", opts: BurnOptions{Visible: "7"}, wantErr: ErrNoDevice},
		{name: "first devices", opts: BurnOptions{Visible: "3,1,0", Devices: 2}, want: []int{3, 1}},
		{name: "more devices than visible", opts: BurnOptions{Visible: "3,1", Devices: 3}, wantErr: ErrInvalidDevice},
		{name: "negative devices", opts: BurnOptions{Devices: -1}, wantErr: ErrInvalidOptions},
		{
			// Slurm with ConstrainDevices=yes: the job may open only minors 1
			// and 0 (byBus 2 and 0), which CUDA then numbers 1 and 0.
			name: "device cgroup renumbers",
			opts: BurnOptions{DevDir: "/dev", Visible: "1"},
			open: denyExcept("/dev/nvidia1", "/dev/nvidia0"),
			want: []int{2},
		},
		{
			name: "device cgroup leaves nothing",
			opts: BurnOptions{DevDir: "/dev"},
			open: denyExcept(),
			want: nil, wantErr: ErrNoDevice,
		},
		{
			name: "missing device files hide nothing",
			opts: BurnOptions{DevDir: "/dev"},
			open: func(p string) error { return &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT} },
			want: []int{0, 1, 2, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := tt.open
			if open == nil {
				open = allowAll
			}
			got, err := selectDevices(devs, tt.opts, open)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			var want []gpu.Device
			for _, i := range tt.want {
				want = append(want, byBus[i])
			}
			if tt.wantErr == nil && !sameDevices(got, want) {
				t.Errorf("got %v, want %v", uuids(got), uuids(want))
			}
		})
	}
}

// denyExcept answers like a device cgroup that allows only the given paths;
// allowed character devices without a driver answer ENXIO.
func denyExcept(allowed ...string) func(string) error {
	return func(p string) error {
		for _, a := range allowed {
			if p == a {
				return &fs.PathError{Op: "open", Path: p, Err: syscall.ENXIO}
			}
		}
		return &fs.PathError{Op: "open", Path: p, Err: syscall.EPERM}
	}
}

func uuids(devs []gpu.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.UUID
	}
	return out
}

func TestBurnUsage(t *testing.T) {
	used := DefaultSpec().devices()[:3]
	u := func(i int, mem uint64, util uint32) Usage { return Usage{UUID: used[i].UUID, Mem: mem, Util: util} }
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		o       BurnOptions
		want    []Usage
		wantErr error
	}{
		{name: "nothing given", want: []Usage{{UUID: used[0].UUID}, {UUID: used[1].UUID}, {UUID: used[2].UUID}}},
		{
			name: "one value for all", o: BurnOptions{Mem: []uint64{gib}, Util: []uint32{40}},
			want: []Usage{u(0, gib, 40), u(1, gib, 40), u(2, gib, 40)},
		},
		{
			name: "one value per GPU", o: BurnOptions{Mem: []uint64{1, 2, 3}, Util: []uint32{10, 20, 30}},
			want: []Usage{u(0, 1, 10), u(1, 2, 20), u(2, 3, 30)},
		},
		{
			name: "activity stated", o: BurnOptions{Util: []uint32{16}, SM: []float64{0.02}, Tensor: []float64{0, 1, 2}},
			want: []Usage{
				{UUID: used[0].UUID, Util: 16, SM: f(0.02), Tensor: f(0)},
				{UUID: used[1].UUID, Util: 16, SM: f(0.02), Tensor: f(1)},
				{UUID: used[2].UUID, Util: 16, SM: f(0.02), Tensor: f(2)},
			},
		},
		{name: "wrong count", o: BurnOptions{Mem: []uint64{1, 2}}, wantErr: ErrInvalidOptions},
		{name: "wrong activity count", o: BurnOptions{DRAM: []float64{1, 2}}, wantErr: ErrInvalidOptions},
		{name: "utilisation above 100", o: BurnOptions{Util: []uint32{101}}, wantErr: ErrInvalidOptions},
		{name: "SM activity above 100", o: BurnOptions{SM: []float64{100.1}}, wantErr: ErrInvalidOptions},
		{name: "tensor activity below 0", o: BurnOptions{Tensor: []float64{-1}}, wantErr: ErrInvalidOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := burnUsage(used, tt.o)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			// As the process file holds them: the pointers' values compared.
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if tt.want == nil {
				w = []byte("null")
			}
			if string(g) != string(w) {
				t.Errorf("got %s, want %s", g, w)
			}
		})
	}
}

// TestBurnRegistersWithNode runs a real burn in this process, with the real
// /proc, and watches it through a Node as the agent would.
func TestBurnRegistersWithNode(t *testing.T) {
	if _, err := readStat("/proc", os.Getpid()); err != nil {
		t.Skipf("no readable /proc here: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	devs, err := Init(dir, DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Burn(ctx, BurnOptions{Dir: dir, Visible: "2," + devs[0].UUID[:9], Mem: []uint64{6 * gib}, Util: []uint32{40, 60}, Name: "python"})
	}()

	want := map[string]gpu.ProcessSample{
		devs[2].UUID: {PID: os.Getpid(), UUID: devs[2].UUID, MemoryUsed: gpu.Some[uint64](6 * gib), SMUtil: gpu.Some[uint32](40)},
		devs[0].UUID: {PID: os.Getpid(), UUID: devs[0].UUID, MemoryUsed: gpu.Some[uint64](6 * gib), SMUtil: gpu.Some[uint32](60)},
	}
	waitFor(t, "burn to register", func() bool {
		procs, err := n.Processes(context.Background(), devs[2].UUID)
		return err == nil && len(procs) == 1
	})
	for uuid, w := range want {
		procs, err := n.Processes(context.Background(), uuid)
		if err != nil || len(procs) != 1 || procs[0] != w {
			t.Errorf("Processes(%s) = %+v, %v, want [%+v]", uuid, procs, err, w)
		}
	}
	if procs, _ := n.Processes(context.Background(), devs[1].UUID); len(procs) != 0 {
		t.Errorf("GPU 1, not visible to the burn, has processes %+v", procs)
	}
	pf, err := readProcFile(procPath(dir, os.Getpid()), os.Getpid())
	if err != nil || pf.Name != "python" || pf.StartTime == 0 {
		t.Errorf("process file = %+v, %v, want name python and a start time", pf, err)
	}

	// 6 + 75 GiB exceed the card, but a burn's own earlier registration
	// does not count against it.
	err = checkMemory(dir, "/proc", devs[2:3], []Usage{{UUID: devs[2].UUID, Mem: 75 * gib}})
	if err != nil {
		t.Errorf("checkMemory skips this process's own file, got %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("cancelled Burn returned %v, want nil (a normal stop)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Burn did not stop after cancel")
	}
	if exists(procPath(dir, os.Getpid())) {
		t.Errorf("process file left behind after the burn stopped")
	}
	procs, err := n.Processes(context.Background(), devs[2].UUID)
	if err != nil || len(procs) != 0 {
		t.Errorf("after the burn: Processes = %+v, %v, want none", procs, err)
	}
}

func TestBurnForDuration(t *testing.T) {
	if _, err := readStat("/proc", os.Getpid()); err != nil {
		t.Skipf("no readable /proc here: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	if _, err := Init(dir, DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := Burn(context.Background(), BurnOptions{Dir: dir, For: 50 * time.Millisecond, Devices: 1}); err != nil {
		t.Fatalf("Burn: %v", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("Burn returned after %s, want at least 50ms", d)
	}
	if exists(procPath(dir, os.Getpid())) {
		t.Errorf("process file left behind")
	}
}

func TestBurnReRegistersWhenCollected(t *testing.T) {
	if _, err := readStat("/proc", os.Getpid()); err != nil {
		t.Skipf("no readable /proc here: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	if _, err := Init(dir, DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Burn(ctx, BurnOptions{Dir: dir, Devices: 1}) }()
	path := procPath(dir, os.Getpid())
	waitFor(t, "burn to register", func() bool { return exists(path) })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "burn to register again", func() bool { return exists(path) })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Burn: %v", err)
	}
}

func TestBurnFails(t *testing.T) {
	dir, procfs, devs := newTestNode(t)
	// A fake /proc for this process, and another process holding 70 GiB
	// of GPU 0.
	fakeProc(t, procfs, os.Getpid(), 'R', 1)
	fakeProc(t, procfs, 300, 'S', 2)
	writeProc(t, dir, procFile{PID: 300, StartTime: 2, GPUs: []Usage{{UUID: devs[0].UUID, Mem: 70 * gib}}})

	tests := []struct {
		name    string
		opts    BurnOptions
		wantErr error
	}{
		{name: "no node", opts: BurnOptions{Dir: t.TempDir()}, wantErr: fs.ErrNotExist},
		{name: "no device", opts: BurnOptions{Visible: "NoDevFiles"}, wantErr: ErrNoDevice},
		{name: "out of memory", opts: BurnOptions{Visible: "0", Mem: []uint64{11 * gib}}, wantErr: ErrOutOfMemory},
		{name: "bad values", opts: BurnOptions{Util: []uint32{1, 2}}, wantErr: ErrInvalidOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			if o.Dir == "" {
				o.Dir = dir
			}
			o.Procfs = procfs
			o.For = time.Millisecond
			if err := Burn(context.Background(), o); !errors.Is(err, tt.wantErr) {
				t.Errorf("Burn error = %v, want %v", err, tt.wantErr)
			}
			if exists(procPath(dir, os.Getpid())) {
				t.Errorf("a failed burn left its process file")
			}
		})
	}

	// 10 GiB still fit beside the 70 GiB.
	if err := Burn(context.Background(), BurnOptions{Dir: dir, Procfs: procfs, Visible: "0", Mem: []uint64{10 * gib}, For: time.Millisecond}); err != nil {
		t.Errorf("Burn of the remaining memory: %v", err)
	}
}

func TestOpenDevice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nvidia0")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := openDevice(path); err != nil {
		t.Errorf("openDevice of a readable file: %v", err)
	}
	if err := openDevice(filepath.Join(dir, "nvidia9")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("openDevice of a missing file: %v, want %v", err, fs.ErrNotExist)
	}
	if os.Geteuid() == 0 {
		return // root opens anything; the EPERM path is covered by TestSelectDevices
	}
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := openDevice(path); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("openDevice of a forbidden file: %v, want %v", err, fs.ErrPermission)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
