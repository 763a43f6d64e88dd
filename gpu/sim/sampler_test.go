package sim

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestSampleAndProcesses(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	g0, g1, g2 := devs[0].UUID, devs[1].UUID, devs[2].UUID

	// 101 and 102 share GPU 0; 102 also uses GPU 1.
	fakeProc(t, procfs, 101, 'S', 5000)
	writeProc(t, dir, procFile{PID: 101, StartTime: 5000, Name: "python", GPUs: []Usage{{UUID: g0, Mem: 6 * gib, Util: 40}}})
	fakeProc(t, procfs, 102, 'R', 6000)
	writeProc(t, dir, procFile{PID: 102, StartTime: 6000, Name: "train", GPUs: []Usage{{UUID: g0, Mem: 10 * gib, Util: 70}, {UUID: g1, Mem: 1 * gib, Util: 5}}})
	// Dead: no /proc entry.
	writeProc(t, dir, procFile{PID: 103, StartTime: 7000, GPUs: []Usage{{UUID: g0, Mem: 20 * gib, Util: 50}}})
	// PID reused by another process since it registered.
	fakeProc(t, procfs, 104, 'S', 9999)
	writeProc(t, dir, procFile{PID: 104, StartTime: 8000, GPUs: []Usage{{UUID: g0, Mem: 20 * gib, Util: 50}}})
	// Exited, not yet reaped.
	fakeProc(t, procfs, 105, 'Z', 8100)
	writeProc(t, dir, procFile{PID: 105, StartTime: 8100, GPUs: []Usage{{UUID: g0, Mem: 20 * gib, Util: 50}}})
	// Malformed or foreign files, all of live PIDs.
	for _, pid := range []int{106, 107, 108} {
		fakeProc(t, procfs, pid, 'S', 1)
	}
	writeRaw(t, dir, "106.json", `{"pid":106,"gpus":[{"uuid":"`+g0) // truncated
	writeRaw(t, dir, "107.json", `{"pid":999,"gpus":[{"uuid":"`+g0+`","mem_bytes":1}]}`)
	writeRaw(t, dir, "108.json", `{"pid":108,"gpus":[{"uuid":"`+g0+`","mem_bytes":-1}]}`)
	writeRaw(t, dir, ".tmp-101-123", `{"pid":101,"gpus":[{"uuid":"`+g0+`","mem_bytes":1}]}`)
	writeRaw(t, dir, "notes.txt", "hello")
	writeRaw(t, dir, "0.json", `{"pid":0,"gpus":[{"uuid":"`+g0+`","mem_bytes":1}]}`)

	clock := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	n, err := Open(dir, WithProcfs(procfs), WithClock(func() time.Time { return clock }))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer n.Close()

	tests := []struct {
		name      string
		uuid      string
		wantProcs []gpu.ProcessSample
		want      gpu.DeviceSample
	}{
		{
			name: "shared GPU",
			uuid: g0,
			wantProcs: []gpu.ProcessSample{
				{PID: 101, UUID: g0, MemoryUsed: gpu.Some[uint64](6 * gib), SMUtil: gpu.Some[uint32](40)},
				{PID: 102, UUID: g0, MemoryUsed: gpu.Some[uint64](10 * gib), SMUtil: gpu.Some[uint32](70)},
			},
			want: gpu.DeviceSample{UUID: g0, Time: clock, MemoryUsed: gpu.Some[uint64](16 * gib), Util: gpu.Some[uint32](100),
				MemUtil: gpu.Some[uint32](50), PowerMW: gpu.Some[uint32](700_000), TempC: gpu.Some[uint32](80)},
		},
		{
			name:      "one light process",
			uuid:      g1,
			wantProcs: []gpu.ProcessSample{{PID: 102, UUID: g1, MemoryUsed: gpu.Some[uint64](1 * gib), SMUtil: gpu.Some[uint32](5)}},
			want: gpu.DeviceSample{UUID: g1, Time: clock, MemoryUsed: gpu.Some[uint64](1 * gib), Util: gpu.Some[uint32](5),
				MemUtil: gpu.Some[uint32](2), PowerMW: gpu.Some[uint32](92_000), TempC: gpu.Some[uint32](32)},
		},
		{
			name:      "idle GPU",
			uuid:      g2,
			wantProcs: []gpu.ProcessSample{},
			want: gpu.DeviceSample{UUID: g2, Time: clock, MemoryUsed: gpu.Some[uint64](0), Util: gpu.Some[uint32](0),
				MemUtil: gpu.Some[uint32](0), PowerMW: gpu.Some[uint32](60_000), TempC: gpu.Some[uint32](30)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			procs, err := n.Processes(ctx, tt.uuid)
			if err != nil {
				t.Fatalf("Processes: %v", err)
			}
			if !equalProcs(procs, tt.wantProcs) {
				t.Errorf("Processes = %+v, want %+v", procs, tt.wantProcs)
			}
			if procs == nil {
				t.Errorf("Processes returned nil, want an empty slice")
			}
			s, err := n.SampleDevice(ctx, tt.uuid)
			if err != nil {
				t.Fatalf("SampleDevice: %v", err)
			}
			if s != tt.want {
				t.Errorf("SampleDevice = %+v, want %+v", s, tt.want)
			}
			if _, err := n.Energy(ctx, tt.uuid); !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("Energy: err = %v, want ErrUnsupported; the sim leaves energy to the agent's power integration", err)
			}
		})
	}

	for _, pid := range []string{"103", "104", "105"} {
		if exists(filepath.Join(dir, procsDirName, pid+".json")) {
			t.Errorf("process file of dead PID %s was not collected", pid)
		}
	}
	if !exists(filepath.Join(dir, procsDirName, "106.json")) {
		t.Errorf("malformed file of a live PID was removed; only dead ones are collected")
	}
}

// TestActivity: a GPU of a model with GPM reports the activity its live
// processes state (or cause by default) over the interval since its
// previous sample, none at its first; a model without GPM never does.
func TestActivity(t *testing.T) {
	ctx := context.Background()
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name  string
		model string
		gpm   bool
	}{
		{"Hopper", "NVIDIA H100 80GB HBM3", true},
		{"Ampere", "NVIDIA A100-SXM4-80GB", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sim")
			procfs := filepath.Join(t.TempDir(), "proc")
			devs, err := Init(dir, NodeSpec{GPUs: 3, Model: tt.model, MemoryTotal: 80 * gib})
			if err != nil {
				t.Fatal(err)
			}
			g0, g1, g2 := devs[0].UUID, devs[1].UUID, devs[2].UUID
			// A tiny-kernel loop (16 % duty cycle, 0.02 % of the SMs) and a
			// matmul sharing GPU 0; a default burn alone on GPU 1.
			fakeProc(t, procfs, 201, 'S', 1)
			writeProc(t, dir, procFile{PID: 201, StartTime: 1, GPUs: []Usage{{UUID: g0, Util: 16, SM: f(0.02), Tensor: f(0), DRAM: f(0)}}})
			fakeProc(t, procfs, 202, 'S', 2)
			writeProc(t, dir, procFile{PID: 202, StartTime: 2, GPUs: []Usage{
				{UUID: g0, Util: 94, SM: f(92.4), Tensor: f(89.7), DRAM: f(15.7)},
				{UUID: g1, Util: 40},
			}})
			clock := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			n, err := Open(dir, WithProcfs(procfs), WithClock(func() time.Time { return clock }))
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			for _, uuid := range []string{g0, g1, g2} {
				if s, err := n.SampleDevice(ctx, uuid); err != nil || s.Activity.Valid {
					t.Errorf("first sample of %s: activity %+v, err %v; want none (no interval yet)", uuid, s.Activity, err)
				}
			}
			clock = clock.Add(1500 * time.Millisecond)
			want := map[string]gpu.Opt[gpu.Activity]{
				g0: gpu.Some(gpu.Activity{Interval: 1500 * time.Millisecond, SM: gpu.Some(92.42), Tensor: gpu.Some(89.7), DRAM: gpu.Some(15.7)}),
				g1: gpu.Some(gpu.Activity{Interval: 1500 * time.Millisecond, SM: gpu.Some(40.0), Tensor: gpu.Some(0.0), DRAM: gpu.Some(20.0)}),
				g2: gpu.Some(gpu.Activity{Interval: 1500 * time.Millisecond, SM: gpu.Some(0.0), Tensor: gpu.Some(0.0), DRAM: gpu.Some(0.0)}),
			}
			for _, uuid := range []string{g0, g1, g2} {
				s, err := n.SampleDevice(ctx, uuid)
				if err != nil {
					t.Fatal(err)
				}
				w := want[uuid]
				if !tt.gpm {
					w = gpu.Opt[gpu.Activity]{}
				}
				got := s.Activity
				if got.Valid && w.Valid && math.Abs(got.Value.SM.Value-w.Value.SM.Value) < 1e-9 {
					got.Value.SM = w.Value.SM // 92.4 + 0.02 in floating point
				}
				if got != w {
					t.Errorf("activity of %s:\n got %+v\nwant %+v", uuid, s.Activity, w)
				}
			}
		})
	}
}

func equalProcs(a, b []gpu.ProcessSample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestProcessAppearsAndDisappears(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	uuid := devs[3].UUID

	fakeProc(t, procfs, 4242, 'S', 77)
	writeProc(t, dir, procFile{PID: 4242, StartTime: 77, GPUs: []Usage{{UUID: uuid, Mem: 3 * gib, Util: 20}}})
	s, err := n.SampleDevice(ctx, uuid)
	if err != nil || s.MemoryUsed.Value != 3*gib {
		t.Fatalf("after start: MemoryUsed = %v, err %v, want %d", s.MemoryUsed, err, 3*gib)
	}

	// The process exits: the driver frees its memory at once.
	if err := os.RemoveAll(filepath.Join(procfs, "4242")); err != nil {
		t.Fatal(err)
	}
	s, err = n.SampleDevice(ctx, uuid)
	if err != nil || s.MemoryUsed.Value != 0 || s.Util.Value != 0 {
		t.Errorf("after exit: sample = %+v, err %v, want nothing used", s, err)
	}
	procs, err := n.Processes(ctx, uuid)
	if err != nil || len(procs) != 0 {
		t.Errorf("after exit: Processes = %+v, %v, want none", procs, err)
	}
}

func TestAbsurdValuesPassThrough(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	uuid := devs[0].UUID
	fakeProc(t, procfs, 10, 'S', 1)
	fakeProc(t, procfs, 11, 'S', 1)
	writeRaw(t, dir, "10.json", `{"pid":10,"gpus":[{"uuid":"`+uuid+`","mem_bytes":18446744073709551615,"util_percent":4000000000}]}`)
	writeRaw(t, dir, "11.json", `{"pid":11,"gpus":[{"uuid":"`+uuid+`","mem_bytes":5,"util_percent":4000000000}]}`)
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	procs, err := n.Processes(ctx, uuid)
	if err != nil || len(procs) != 2 {
		t.Fatalf("Processes = %+v, %v", procs, err)
	}
	if procs[0].MemoryUsed.Value != math.MaxUint64 || procs[0].SMUtil.Value != 4000000000 {
		t.Errorf("process reading = %+v, want the file's values unchanged", procs[0])
	}
	if _, dropped := gpu.SanitizeProcess(procs[0], devs[0].MemoryTotal); dropped != 2 {
		t.Errorf("SanitizeProcess dropped %d readings, want 2", dropped)
	}
	s, err := n.SampleDevice(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if s.MemoryUsed.Value != devs[0].MemoryTotal || s.Util.Value != 100 {
		t.Errorf("device sample = %+v, want memory capped at %d and util at 100", s, devs[0].MemoryTotal)
	}
	if _, dropped := gpu.Sanitize(s, devs[0].MemoryTotal); dropped != 0 {
		t.Errorf("Sanitize dropped %d device readings, want 0", dropped)
	}
}

func TestRegister(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	uuid := devs[1].UUID

	// PID 900 has no /proc entry: registered processes need none.
	n.Register(Process{PID: 900, Name: "virtual", Usage: []Usage{{UUID: uuid, Mem: 2 * gib, Util: 30}}})
	// A registration replaces a process file of the same PID.
	fakeProc(t, procfs, 901, 'S', 1)
	writeProc(t, dir, procFile{PID: 901, StartTime: 1, GPUs: []Usage{{UUID: uuid, Mem: 50 * gib, Util: 50}}})
	n.Register(Process{PID: 901, Usage: []Usage{{UUID: uuid, Mem: 1 * gib, Util: 10}}})

	s, err := n.SampleDevice(ctx, uuid)
	if err != nil || s.MemoryUsed.Value != 3*gib || s.Util.Value != 40 {
		t.Fatalf("with registrations: sample = %+v, %v, want 3 GiB at 40 %%", s, err)
	}
	n.Unregister(900)
	n.Unregister(901)
	s, err = n.SampleDevice(ctx, uuid)
	if err != nil || s.MemoryUsed.Value != 50*gib || s.Util.Value != 50 {
		t.Errorf("after Unregister: sample = %+v, %v, want the process file's 50 GiB at 50 %%", s, err)
	}
}

func TestUnknownUUIDAndClose(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		call func(uuid string) error
	}{
		{name: "SampleDevice", call: func(u string) error { _, err := n.SampleDevice(ctx, u); return err }},
		{name: "Processes", call: func(u string) error { _, err := n.Processes(ctx, u); return err }},
		{name: "Accounting", call: func(u string) error { _, err := n.Accounting(ctx, u); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call("GPU-00000000-0000-0000-0000-000000000000"); !errors.Is(err, gpu.ErrNotFound) {
				t.Errorf("unknown UUID: error = %v, want %v", err, gpu.ErrNotFound)
			}
		})
	}
	if _, err := n.Accounting(ctx, devs[0].UUID); !errors.Is(err, gpu.ErrUnsupported) {
		t.Errorf("Accounting error = %v, want %v", err, gpu.ErrUnsupported)
	}
	v, err := n.Versions(ctx)
	if err != nil || v != (gpu.Versions{Driver: "550.54.15-sim", CUDADriver: "12.4"}) {
		t.Errorf("Versions = %+v, %v", v, err)
	}
	got, err := n.Devices(ctx)
	if err != nil || !sameDevices(got, devs) {
		t.Errorf("Devices = %+v, %v, want %+v", got, err, devs)
	}

	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := n.SampleDevice(ctx, devs[0].UUID); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: error = %v, want %v", err, ErrClosed)
	}
	if _, err := n.Devices(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: Devices error = %v, want %v", err, ErrClosed)
	}
}

func TestXIDEvents(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := RecordXID(dir, devs[0].UUID, 13, t0); err != nil {
		t.Fatalf("RecordXID: %v", err)
	}
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	got, err := n.XIDEvents(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("first drain = %+v, %v, want no event recorded before Open", got, err)
	}
	if err := RecordXID(dir, devs[1].UUID, 79, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := RecordXID(dir, devs[2].UUID, 48, t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, xidFileName)
	appendTo(t, log, "garbage\n"+`{"uuid":"GPU-not-here","xid":31,"time":"2025-03-01T12:00:03Z"}`+"\n")
	// A line a writer has not finished yet.
	appendTo(t, log, `{"uuid":"`+devs[3].UUID+`","xid":94,`)

	got, err = n.XIDEvents(ctx)
	want := []gpu.XIDEvent{
		{UUID: devs[1].UUID, XID: 79, Time: t0.Add(time.Second)},
		{UUID: devs[2].UUID, XID: 48, Time: t0.Add(2 * time.Second)},
	}
	if err != nil || !equalXIDs(got, want) {
		t.Fatalf("second drain = %+v, %v, want %+v", got, err, want)
	}

	appendTo(t, log, `"time":"2025-03-01T12:00:04Z"}`+"\n")
	got, err = n.XIDEvents(ctx)
	want = []gpu.XIDEvent{{UUID: devs[3].UUID, XID: 94, Time: t0.Add(4 * time.Second)}}
	if err != nil || !equalXIDs(got, want) {
		t.Fatalf("third drain = %+v, %v, want the completed line %+v", got, err, want)
	}
	got, err = n.XIDEvents(ctx)
	if err != nil || len(got) != 0 {
		t.Errorf("fourth drain = %+v, %v, want nothing new", got, err)
	}

	if err := RecordXID(dir, "GPU-nope", 13, t0); !errors.Is(err, gpu.ErrNotFound) {
		t.Errorf("RecordXID on an unknown GPU: error = %v, want %v", err, gpu.ErrNotFound)
	}
}

func TestXIDLogTruncated(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if err := RecordXID(dir, devs[0].UUID, uint64(i), t0); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := os.Truncate(filepath.Join(dir, xidFileName), 0); err != nil {
		t.Fatal(err)
	}
	if err := RecordXID(dir, devs[0].UUID, 79, t0); err != nil {
		t.Fatal(err)
	}
	got, err := n.XIDEvents(ctx)
	want := []gpu.XIDEvent{{UUID: devs[0].UUID, XID: 79, Time: t0}}
	if err != nil || !equalXIDs(got, want) {
		t.Errorf("after truncation: %+v, %v, want %+v", got, err, want)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func equalXIDs(a, b []gpu.XIDEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UUID != b[i].UUID || a[i].XID != b[i].XID || !a[i].Time.Equal(b[i].Time) {
			return false
		}
	}
	return true
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{
			name: "plain",
			line: "7935 (cat) R 7931 7931 4812 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 81893 3133440 390 18446744073709551615 0",
			want: procStat{comm: "cat", state: 'R', startTime: 81893},
		},
		{
			name: "comm with spaces and parens",
			line: "12 (a) b (c)) S 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0",
			want: procStat{comm: "a) b (c)", state: 'S', startTime: 555},
		},
		{name: "truncated", line: "12 (x) S 1 2 3", wantErr: true},
		{name: "no comm", line: "12 x S", wantErr: true},
		{name: "bad start", line: "12 (x) S 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 soon 0 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.line)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStatOfThisProcess(t *testing.T) {
	st, err := readStat("/proc", os.Getpid())
	if err != nil {
		t.Skipf("no readable /proc here: %v", err)
	}
	// The kernel keeps the first 15 bytes of the executable's name.
	exe := filepath.Base(os.Args[0])
	if want := exe[:min(len(exe), 15)]; st.comm != want || st.startTime == 0 {
		t.Errorf("own stat = %+v, want comm %q and a start time", st, want)
	}
}

// A scan re-reads a process file only when it changed: a file rewritten in
// place (same size, other content, other time) or replaced (rename) gives
// its new usage at once, a process whose PID was reused is dropped, and a
// file left as it was costs no read (its parse is reused: changing its
// bytes behind the node's back without touching its identity keeps the
// old reading).
func TestScanRereadsChangedFilesOnly(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	uuid := devs[0].UUID
	mem := func() uint64 {
		t.Helper()
		s, err := n.SampleDevice(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		return s.MemoryUsed.Value
	}
	fakeProc(t, procfs, 500, 'S', 9)
	writeProc(t, dir, procFile{PID: 500, StartTime: 9, GPUs: []Usage{{UUID: uuid, Mem: 3 * gib, Util: 20}}})
	if got := mem(); got != 3*gib {
		t.Fatalf("first scan: %d bytes, want %d", got, 3*gib)
	}
	// Replaced by a new registration (rename: a new inode).
	writeProc(t, dir, procFile{PID: 500, StartTime: 9, GPUs: []Usage{{UUID: uuid, Mem: 5 * gib, Util: 20}}})
	if got := mem(); got != 5*gib {
		t.Errorf("after re-registering: %d bytes, want %d", got, 5*gib)
	}
	// Rewritten in place with the same length and a later time.
	path := procPath(dir, 500)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	same := []byte(strings.Replace(string(data), `"mem_bytes":5368709120`, `"mem_bytes":7516192768`, 1))
	if len(same) != len(data) {
		t.Fatal("test bug: the rewrite changes the length")
	}
	if err := os.WriteFile(path, same, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := mem(); got != 7*gib {
		t.Errorf("after an in-place rewrite: %d bytes, want %d", got, 7*gib)
	}
	// Unchanged identity: the parse is reused, not the bytes re-read.
	back := []byte(strings.Replace(string(same), `"mem_bytes":7516192768`, `"mem_bytes":6442450944`, 1))
	if err := os.WriteFile(path, back, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := mem(); got != 7*gib {
		t.Errorf("file of the same identity: %d bytes, want the cached %d (re-read although unchanged)", got, 7*gib)
	}
	// The PID now belongs to another process (start time differs).
	fakeProc(t, procfs, 500, 'S', 10)
	if got := mem(); got != 0 {
		t.Errorf("after PID reuse: %d bytes, want 0", got)
	}
}

// TestLivenessOfRealProcesses registers real child processes against the
// real /proc, where the node keeps each one's stat file open between scans:
// a live process counts, a killed one stops counting while it is a zombie
// and after it is reaped, its file is collected, and Close leaves no
// descriptor behind.
func TestLivenessOfRealProcesses(t *testing.T) {
	if _, err := readStat("/proc", os.Getpid()); err != nil {
		t.Skipf("no readable /proc here: %v", err)
	}
	ctx := context.Background()
	dir, _, devs := newTestNode(t)
	uuid := devs[0].UUID
	n, err := Open(dir) // the real /proc
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Skipf("no sleep(1): %v", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		st, err := readStat("/proc", cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		writeProc(t, dir, procFile{PID: cmd.Process.Pid, StartTime: st.startTime, GPUs: []Usage{{UUID: uuid, Mem: 1 * gib, Util: 10}}})
		return cmd
	}
	pids := func() []int {
		t.Helper()
		ps, err := n.Processes(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range ps {
			out = append(out, p.PID)
		}
		return out
	}
	a, b := start(), start()
	for range 3 { // the second and third scans read through the kept files
		if got := pids(); !slices.Equal(got, sortedPIDs(a, b)) {
			t.Fatalf("two live processes: %v, want %v", got, sortedPIDs(a, b))
		}
	}
	// Killed, not reaped: a zombie has freed its GPU memory.
	a.Process.Kill()
	waitState(t, a.Process.Pid, 'Z')
	if got := pids(); !slices.Equal(got, []int{b.Process.Pid}) {
		t.Errorf("after a's kill (zombie): %v, want [%d]", got, b.Process.Pid)
	}
	if exists(procPath(dir, a.Process.Pid)) {
		t.Error("the dead process's file was not collected")
	}
	// Reaped: its /proc entry is gone, the kept file reads ESRCH.
	b.Process.Kill()
	b.Wait()
	if got := pids(); len(got) != 0 {
		t.Errorf("after b was reaped: %v, want none", got)
	}
	if got := keptStatFiles(t); got != 0 {
		t.Errorf("%d /proc/PID/stat files open with no process left, want 0", got)
	}
	c := start()
	if got := pids(); !slices.Equal(got, []int{c.Process.Pid}) {
		t.Errorf("a new process: %v, want [%d]", got, c.Process.Pid)
	}
	if got := keptStatFiles(t); got != 1 {
		t.Errorf("%d /proc/PID/stat files open for one process, want 1", got)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if got := keptStatFiles(t); got != 0 {
		t.Errorf("%d /proc/PID/stat files open after Close, want 0", got)
	}
}

// TestScanCache checks what a cached scan may miss: a registration or an
// unregistration changes procs/ and is seen at once (a stale process would
// be charged to the next job on its GPU); only a process that died without
// unregistering is noticed up to the ttl late.
func TestScanCache(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	uuid := devs[0].UUID
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	const ttl = 500 * time.Millisecond
	n, err := Open(dir, WithProcfs(procfs), WithScanCache(ttl), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	pids := func() []int {
		t.Helper()
		ps, err := n.Processes(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range ps {
			out = append(out, p.PID)
		}
		return out
	}
	check := func(step string, want ...int) {
		t.Helper()
		if got := pids(); !slices.Equal(got, want) {
			t.Errorf("%s: processes %v, want %v", step, got, want)
		}
	}
	register := func(pid int) {
		fakeProc(t, procfs, pid, 'S', 1)
		writeProc(t, dir, procFile{PID: pid, StartTime: 1, GPUs: []Usage{{UUID: uuid, Mem: gib, Util: 10}}})
	}
	// A scan is kept only once procs/ has been still for dirSettle (two
	// changes within one kernel tick may leave its time as it was), so
	// each step first lets it settle and takes a scan the cache keeps.
	settle := func(want ...int) {
		t.Helper()
		time.Sleep(2 * dirSettle)
		check("settled", want...)
	}
	settle()
	register(700)
	check("registered, within the ttl", 700)
	settle(700)
	register(701)
	check("second registration, within the ttl", 700, 701)
	settle(700, 701)
	if err := os.Remove(procPath(dir, 701)); err != nil {
		t.Fatal(err)
	}
	check("unregistered, within the ttl", 700)
	settle(700)
	// Killed: its /proc entry goes, its process file stays.
	if err := os.RemoveAll(filepath.Join(procfs, "700")); err != nil {
		t.Fatal(err)
	}
	check("killed, within the ttl (cached)", 700)
	now = now.Add(ttl)
	check("killed, after the ttl")
	if exists(procPath(dir, 700)) {
		t.Errorf("the killed process's file is still there")
	}
}

func sortedPIDs(cmds ...*exec.Cmd) []int {
	var out []int
	for _, c := range cmds {
		out = append(out, c.Process.Pid)
	}
	slices.Sort(out)
	return out
}

func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := readStat("/proc", pid)
		if err == nil && st.state == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: state %q, %v after 5 s; want %q", pid, st.state, err, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// keptStatFiles counts this process's descriptors open on a
// /proc/PID/stat.
func keptStatFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	statRE := regexp.MustCompile(`^/proc/[0-9]+/stat$`)
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && statRE.MatchString(target) {
			n++
		}
	}
	return n
}
