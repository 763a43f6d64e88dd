// Package gputest holds the conformance suite that every gpu.Sampler
// implementation must pass, so that the agent can rely on the contract
// written on gpu.Sampler whichever backend it runs on.
//
// It imports only package gpu and the standard library: it must not import a
// backend (gpu/nvml, gpu/sim) or go-nvml; backends import it from their tests.
package gputest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// unknownUUID is a well-formed UUID that no backend hands out.
const unknownUUID = "GPU-00000000-0000-0000-0000-00000000dead"

// xidDeadline is how long XIDEvents may take: it must drain, not wait.
const xidDeadline = time.Second

// RunConformance runs the conformance suite. newSampler must return a fresh
// Sampler of a node with at least one GPU and no compute process, and
// register its cleanup with t.Cleanup. The "close" subtest closes its
// Sampler itself, so that cleanup must tolerate a second Close (it may
// ignore its error).
func RunConformance(t *testing.T, newSampler func(t *testing.T) gpu.Sampler) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s gpu.Sampler)
	}{
		{"devices", testDevices},
		{"devices stable", testDevicesStable},
		{"sample device", testSampleDevice},
		{"activity", testActivity},
		{"energy", testEnergy},
		{"unknown uuid", testUnknownUUID},
		{"processes", testProcesses},
		{"xid events do not block", testXIDEvents},
		{"accounting", testAccounting},
		{"versions", testVersions},
		{"close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newSampler(t))
		})
	}
}

// uuids returns every UUID a Sampler answers for: GPUs and MIG instances,
// each with its memory size.
func uuids(t *testing.T, s gpu.Sampler) map[string]uint64 {
	t.Helper()
	devs, err := s.Devices(context.Background())
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	out := make(map[string]uint64)
	for _, d := range devs {
		out[d.UUID] = d.MemoryTotal
		for _, m := range d.MIG {
			out[m.UUID] = m.MemoryTotal
		}
	}
	return out
}

func testDevices(t *testing.T, s gpu.Sampler) {
	devs, err := s.Devices(context.Background())
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) == 0 {
		t.Fatal("Devices returned no GPU")
	}
	seen := make(map[string]bool)
	note := func(where, uuid string) {
		if uuid == "" {
			t.Errorf("%s: empty UUID", where)
			return
		}
		if seen[uuid] {
			t.Errorf("%s: UUID %q listed twice", where, uuid)
		}
		seen[uuid] = true
	}
	for i, d := range devs {
		note("device "+d.UUID, d.UUID)
		if d.MemoryTotal == 0 {
			t.Errorf("device %d (%s): MemoryTotal = 0, want > 0", i, d.UUID)
		}
		if !d.MIGEnabled && len(d.MIG) > 0 {
			t.Errorf("device %s: %d MIG instances with MIG disabled", d.UUID, len(d.MIG))
		}
		for _, m := range d.MIG {
			note("MIG instance of "+d.UUID, m.UUID)
			if m.ParentUUID != d.UUID {
				t.Errorf("MIG instance %s: ParentUUID = %q, want %q", m.UUID, m.ParentUUID, d.UUID)
			}
			if m.MemoryTotal > d.MemoryTotal {
				t.Errorf("MIG instance %s: MemoryTotal %d > parent's %d", m.UUID, m.MemoryTotal, d.MemoryTotal)
			}
		}
	}
}

func testDevicesStable(t *testing.T, s gpu.Sampler) {
	ctx := context.Background()
	first, err := s.Devices(ctx)
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	// Copied deeply: if the Sampler shared storage with callers, first
	// would change along with mine.
	want := make([]gpu.Device, len(first))
	for i, d := range first {
		d.MIG = append([]gpu.MIGDevice(nil), d.MIG...)
		want[i] = d
	}
	// A caller changing its copy must not change the Sampler's view.
	mine, err := s.Devices(ctx)
	if err != nil {
		t.Fatalf("second Devices: %v", err)
	}
	for i := range mine {
		mine[i].UUID += "-changed"
		for j := range mine[i].MIG {
			mine[i].MIG[j].UUID += "-changed"
		}
	}
	got, err := s.Devices(ctx)
	if err != nil {
		t.Fatalf("third Devices: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Devices changed between calls (or shares storage with callers):\n got %+v\nwant %+v", got, want)
	}
}

func testSampleDevice(t *testing.T, s gpu.Sampler) {
	for uuid, total := range uuids(t, s) {
		got, err := s.SampleDevice(context.Background(), uuid)
		if err != nil {
			t.Errorf("SampleDevice(%s): %v", uuid, err)
			continue
		}
		if got.UUID != uuid {
			t.Errorf("SampleDevice(%s).UUID = %q", uuid, got.UUID)
		}
		if got.Time.IsZero() {
			t.Errorf("SampleDevice(%s).Time is zero", uuid)
		}
		for name, u := range map[string]gpu.Opt[uint32]{"Util": got.Util, "MemUtil": got.MemUtil} {
			if u.Valid && u.Value > 100 {
				t.Errorf("SampleDevice(%s).%s = %d, want <= 100", uuid, name, u.Value)
			}
		}
		if got.MemoryUsed.Valid && got.MemoryUsed.Value > total {
			t.Errorf("SampleDevice(%s).MemoryUsed = %d, want <= MemoryTotal %d", uuid, got.MemoryUsed.Value, total)
		}
	}
}

// testActivity checks the GPM reading's contract: none at a UUID's first
// sample (no interval yet); afterwards, where the GPU gives it, an interval
// that is not negative and at least one value, each in 0–100 % on an idle
// GPU.
func testActivity(t *testing.T, s gpu.Sampler) {
	ctx := context.Background()
	ids := uuids(t, s)
	for uuid := range ids {
		got, err := s.SampleDevice(ctx, uuid)
		if err != nil {
			t.Fatalf("SampleDevice(%s): %v", uuid, err)
		}
		if got.Activity.Valid {
			t.Errorf("SampleDevice(%s): activity %+v at the first sample, want none (no interval yet)", uuid, got.Activity.Value)
		}
	}
	for uuid := range ids {
		got, err := s.SampleDevice(ctx, uuid)
		if err != nil {
			t.Fatalf("second SampleDevice(%s): %v", uuid, err)
		}
		if !got.Activity.Valid {
			continue // no GPM on this GPU
		}
		a := got.Activity.Value
		if !a.Any() {
			t.Errorf("SampleDevice(%s): valid activity without a value: %+v", uuid, a)
		}
		if a.Interval < 0 {
			t.Errorf("SampleDevice(%s): activity interval %s < 0", uuid, a.Interval)
		}
		for name, v := range map[string]gpu.Opt[float64]{"SM": a.SM, "SMOccupancy": a.SMOccupancy, "Tensor": a.Tensor,
			"DRAM": a.DRAM, "FP64": a.FP64, "FP32": a.FP32, "FP16": a.FP16} {
			if v.Valid && !(v.Value >= 0 && v.Value <= 100) {
				t.Errorf("SampleDevice(%s): %s activity %g on an idle GPU, want 0..100", uuid, name, v.Value)
			}
		}
	}
}

// testEnergy checks the energy counter: a value that does not go back, or
// ErrUnsupported; ErrNotFound for an unknown UUID.
func testEnergy(t *testing.T, s gpu.Sampler) {
	ctx := context.Background()
	for uuid := range uuids(t, s) {
		first, err := s.Energy(ctx, uuid)
		if err != nil {
			if !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("Energy(%s): %v, want a reading or ErrUnsupported", uuid, err)
			}
			continue
		}
		second, err := s.Energy(ctx, uuid)
		if err != nil {
			t.Errorf("second Energy(%s): %v", uuid, err)
			continue
		}
		if second < first {
			t.Errorf("Energy(%s) went back from %d to %d mJ", uuid, first, second)
		}
	}
	if _, err := s.Energy(ctx, unknownUUID); !errors.Is(err, gpu.ErrNotFound) {
		t.Errorf("Energy(unknown): err = %v, want ErrNotFound", err)
	}
}

func testUnknownUUID(t *testing.T, s gpu.Sampler) {
	ctx := context.Background()
	if _, err := s.SampleDevice(ctx, unknownUUID); !errors.Is(err, gpu.ErrNotFound) {
		t.Errorf("SampleDevice(unknown): err = %v, want ErrNotFound", err)
	}
	if _, err := s.Processes(ctx, unknownUUID); !errors.Is(err, gpu.ErrNotFound) {
		t.Errorf("Processes(unknown): err = %v, want ErrNotFound", err)
	}
}

func testProcesses(t *testing.T, s gpu.Sampler) {
	devs, err := s.Devices(context.Background())
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	for _, d := range devs {
		owners := map[string]bool{d.UUID: true}
		for _, m := range d.MIG {
			owners[m.UUID] = true
		}
		procs, err := s.Processes(context.Background(), d.UUID)
		if err != nil {
			t.Errorf("Processes(%s) on an idle GPU: %v", d.UUID, err)
			continue
		}
		for _, p := range procs {
			if p.PID <= 0 {
				t.Errorf("Processes(%s): PID %d", d.UUID, p.PID)
			}
			if !owners[p.UUID] {
				t.Errorf("Processes(%s): process %d on %q, neither the GPU nor one of its MIG instances", d.UUID, p.PID, p.UUID)
			}
		}
	}
}

func testXIDEvents(t *testing.T, s gpu.Sampler) {
	type result struct {
		events []gpu.XIDEvent
		err    error
	}
	done := make(chan result, 1)
	go func() {
		ev, err := s.XIDEvents(context.Background())
		done <- result{ev, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && !errors.Is(r.err, gpu.ErrUnsupported) {
			t.Errorf("XIDEvents: %v, want nil or ErrUnsupported", r.err)
		}
	case <-time.After(xidDeadline):
		t.Fatalf("XIDEvents did not return within %s", xidDeadline)
	}
}

func testAccounting(t *testing.T, s gpu.Sampler) {
	devs, err := s.Devices(context.Background())
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	for _, d := range devs {
		stats, err := s.Accounting(context.Background(), d.UUID)
		if err != nil {
			if !errors.Is(err, gpu.ErrUnsupported) {
				t.Errorf("Accounting(%s): %v, want data or ErrUnsupported", d.UUID, err)
			}
			continue
		}
		for _, st := range stats {
			if st.PID <= 0 {
				t.Errorf("Accounting(%s): PID %d", d.UUID, st.PID)
			}
			if st.GPUUtil > 100 || st.MemUtil > 100 {
				t.Errorf("Accounting(%s) pid %d: utilisation %d/%d, want <= 100", d.UUID, st.PID, st.GPUUtil, st.MemUtil)
			}
		}
	}
}

func testVersions(t *testing.T, s gpu.Sampler) {
	v, err := s.Versions(context.Background())
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	if v.Driver == "" {
		t.Error("Versions: empty driver version")
	}
}

func testClose(t *testing.T, s gpu.Sampler) {
	devs, err := s.Devices(context.Background())
	if err != nil || len(devs) == 0 {
		t.Fatalf("Devices: %d GPUs, %v", len(devs), err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.SampleDevice(context.Background(), devs[0].UUID); err == nil {
		t.Error("SampleDevice after Close: no error")
	}
}
