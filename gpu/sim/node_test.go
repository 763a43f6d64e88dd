package sim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestInitCreatesNode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "sim")
	devs, err := Init(dir, NodeSpec{GPUs: 3, Model: "NVIDIA A100-SXM4-40GB", MemoryTotal: 40 * gib, Minors: []int{2, 0, 1}})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if len(devs) != 3 {
		t.Fatalf("got %d devices, want 3", len(devs))
	}
	uuidRE := regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	wantMinors := []int{2, 0, 1}
	for i, d := range devs {
		if d.Index != i || d.Minor != wantMinors[i] || d.Name != "NVIDIA A100-SXM4-40GB" || d.MemoryTotal != 40*gib {
			t.Errorf("device %d = %+v", i, d)
		}
		if !uuidRE.MatchString(d.UUID) {
			t.Errorf("device %d UUID %q does not look like NVML's", i, d.UUID)
		}
		if i > 0 && devs[i-1].PCIBusID >= d.PCIBusID {
			t.Errorf("PCI bus ids not increasing: %q then %q", devs[i-1].PCIBusID, d.PCIBusID)
		}
	}
	if got, want := devs[0].PCIBusID, "00000000:18:00.0"; got != want {
		t.Errorf("first PCI bus id = %q, want %q", got, want)
	}

	fi, err := os.Stat(filepath.Join(dir, procsDirName))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode()&(fs.ModePerm|fs.ModeSticky), fs.ModePerm|fs.ModeSticky; got != want {
		t.Errorf("procs mode = %v, want %v (job users must register)", got, want)
	}

	loaded, err := LoadNode(dir)
	if err != nil {
		t.Fatalf("LoadNode: %v", err)
	}
	if !slices.EqualFunc(loaded, devs, func(a, b gpu.Device) bool { return sameDevices([]gpu.Device{a}, []gpu.Device{b}) }) {
		t.Errorf("LoadNode = %+v, want %+v", loaded, devs)
	}
}

func TestUUIDsAreStable(t *testing.T) {
	a, err := Init(filepath.Join(t.TempDir(), "a"), DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Init(filepath.Join(t.TempDir(), "b"), NodeSpec{GPUs: 2, Model: DefaultModel, MemoryTotal: 1 * gib})
	if err != nil {
		t.Fatal(err)
	}
	if a[0].UUID != b[0].UUID || a[1].UUID != b[1].UUID {
		t.Errorf("same model and index gave different UUIDs: %q/%q, %q/%q", a[0].UUID, b[0].UUID, a[1].UUID, b[1].UUID)
	}
	if a[0].UUID == a[1].UUID {
		t.Errorf("two GPUs share UUID %q", a[0].UUID)
	}
}

func TestInitExistingNode(t *testing.T) {
	tests := []struct {
		name    string
		second  NodeSpec
		wantErr error
	}{
		{name: "same spec", second: DefaultSpec()},
		{name: "same spec, explicit default minors", second: NodeSpec{GPUs: 4, Model: DefaultModel, MemoryTotal: DefaultMemory, Minors: []int{0, 1, 2, 3}}},
		{name: "more GPUs", second: NodeSpec{GPUs: 8, Model: DefaultModel, MemoryTotal: DefaultMemory}, wantErr: ErrNodeMismatch},
		{name: "other model", second: NodeSpec{GPUs: 4, Model: "NVIDIA A100", MemoryTotal: DefaultMemory}, wantErr: ErrNodeMismatch},
		{name: "other memory", second: NodeSpec{GPUs: 4, Model: DefaultModel, MemoryTotal: 40 * gib}, wantErr: ErrNodeMismatch},
		{name: "other minors", second: NodeSpec{GPUs: 4, Model: DefaultModel, MemoryTotal: DefaultMemory, Minors: []int{3, 2, 1, 0}}, wantErr: ErrNodeMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			first, err := Init(dir, DefaultSpec())
			if err != nil {
				t.Fatal(err)
			}
			got, err := Init(dir, tt.second)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("second Init error = %v, want %v", err, tt.wantErr)
			}
			if err == nil && !sameDevices(got, first) {
				t.Errorf("second Init = %+v, want %+v", got, first)
			}
			again, err := LoadNode(dir)
			if err != nil || !sameDevices(again, first) {
				t.Errorf("node.json changed under the node: %+v, %v", again, err)
			}
		})
	}
}

func TestInitRejectsBadSpec(t *testing.T) {
	tests := []struct {
		name string
		spec NodeSpec
	}{
		{name: "no GPUs", spec: NodeSpec{Model: "m", MemoryTotal: 1}},
		{name: "too many GPUs", spec: NodeSpec{GPUs: MaxGPUs + 1, Model: "m", MemoryTotal: 1}},
		{name: "no model", spec: NodeSpec{GPUs: 1, MemoryTotal: 1}},
		{name: "no memory", spec: NodeSpec{GPUs: 1, Model: "m"}},
		{name: "minor count", spec: NodeSpec{GPUs: 2, Model: "m", MemoryTotal: 1, Minors: []int{0}}},
		{name: "repeated minor", spec: NodeSpec{GPUs: 2, Model: "m", MemoryTotal: 1, Minors: []int{1, 1}}},
		{name: "negative minor", spec: NodeSpec{GPUs: 1, Model: "m", MemoryTotal: 1, Minors: []int{-1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sim")
			if _, err := Init(dir, tt.spec); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("Init error = %v, want %v", err, ErrInvalidSpec)
			}
			if exists(dir) {
				t.Errorf("Init created %s for an invalid spec", dir)
			}
		})
	}
}

func TestLoadNodeRejectsBadFile(t *testing.T) {
	tests := []struct {
		name, content string
	}{
		{name: "not json", content: "{"},
		{name: "no devices", content: `{"devices":[]}`},
		{name: "index gap", content: `{"devices":[{"index":1,"uuid":"GPU-a","memory_total":1}]}`},
		{name: "repeated uuid", content: `{"devices":[{"index":0,"uuid":"GPU-a","memory_total":1},{"index":1,"uuid":"GPU-a","memory_total":1}]}`},
		{name: "no memory", content: `{"devices":[{"index":0,"uuid":"GPU-a"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, nodeFileName), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadNode(dir); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("LoadNode error = %v, want %v", err, ErrInvalidSpec)
			}
		})
	}
	if _, err := LoadNode(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadNode of an empty dir: error = %v, want %v", err, fs.ErrNotExist)
	}
}
