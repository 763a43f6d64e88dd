package nvproc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
)

// fixture builds a procfs tree from testdata/name.txt: lines before the
// first "-- path --" are its description; each section is a file. (PCI bus
// ids hold colons, which a module's file names may not.)
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var f *os.File
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "-- "); ok && strings.HasSuffix(p, " --") {
			if f != nil {
				f.Close()
			}
			path := filepath.Join(root, strings.TrimSuffix(p, " --"))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if f, err = os.Create(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if f != nil {
			if _, err := f.WriteString(line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if f != nil {
		f.Close()
	}
	return root
}

// mustOpen opens the inventory under root.
func mustOpen(t *testing.T, root string) *Node {
	t.Helper()
	n, err := Open(root)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return n
}

func h100(index, minor int, bus, uuid string) gpu.Device {
	return gpu.Device{Index: index, UUID: uuid, Name: "NVIDIA H100 80GB HBM3", Minor: minor, PCIBusID: bus}
}

func TestDevices(t *testing.T) {
	a100 := func(index, minor int, bus, uuid string) gpu.Device {
		return gpu.Device{Index: index, UUID: uuid, Name: "NVIDIA A100-SXM4-40GB", Minor: minor, PCIBusID: bus}
	}
	tests := []struct {
		name    string
		fixture string
		want    []gpu.Device
	}{
		{"four H100 in PCI order, minors as the driver gives them", "h100x4", []gpu.Device{
			h100(0, 2, "00000000:19:00.0", "GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b"),
			h100(1, 0, "00000000:3B:00.0", "GPU-1f0e8a52-7d3c-4b1e-9a2f-0c5d6e7f8a91"),
			h100(2, 3, "00000000:4C:00.0", "GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"),
			h100(3, 1, "00000000:5D:00.0", "GPU-0a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d"),
		}},
		// MIG mode is not in the file: the GPU is listed whole, MIG
		// unknown; the excluded GPU is left out, as NVML leaves it out.
		{"older driver, MIG, an excluded GPU", "a100-mig-excluded", []gpu.Device{
			a100(0, 0, "00000000:07:00.0", "GPU-6e1f9b07-2d3a-4c8e-b5f6-7a8b9c0d1e2f"),
			a100(1, 2, "00000000:47:00.0", "GPU-803b1d29-4f5c-4ea0-b718-9cadbe1f2041"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustOpen(t, fixture(t, tt.fixture))
			got, err := n.Devices(context.Background())
			if err != nil {
				t.Fatalf("Devices: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Devices:\n got %+v\nwant %+v", got, tt.want)
			}
			for _, d := range got {
				if d.MemoryTotal != 0 || d.MIGEnabled || d.MIG != nil {
					t.Errorf("%s: memory %d, MIG %v %v: the files do not say; want unknown", d.UUID, d.MemoryTotal, d.MIGEnabled, d.MIG)
				}
			}
		})
	}
}

func TestDevicesRefusesOddTrees(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		want    string
	}{
		{"a GPU without its UUID", "no-uuid", "no GPU UUID line"},
		{"a minor that is not one", "bad-minor", `device minor "-1"`},
		{"a GPU directory without information", "missing-information", "0000:3b:00.0"},
		{"one UUID twice", "duplicate-uuid", "both have UUID"},
		{"an entry that is not a bus id", "stray-entry", `entry "gpu0"`},
		{"a bus location not its directory's", "wrong-bus", "bus location"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustOpen(t, fixture(t, tt.fixture))
			got, err := n.Devices(context.Background())
			if err == nil {
				t.Fatalf("Devices = %+v, want an error: one GPU left out shifts the PCI order of the rest", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Devices error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestOpenWithoutDriver(t *testing.T) {
	_, err := Open(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nvidia kernel module") {
		t.Errorf("Open of a procfs without the driver: %v, want fs.ErrNotExist naming the module", err)
	}
}

func TestNoGPUs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, gpusDir), 0o755); err != nil {
		t.Fatal(err)
	}
	n := mustOpen(t, root)
	got, err := n.Devices(context.Background())
	if err != nil || len(got) != 0 {
		t.Errorf("Devices of a driver with no GPU = %v, %v; want none, no error", got, err)
	}
}

func TestOversizeFile(t *testing.T) {
	root := fixture(t, "h100x4")
	path := filepath.Join(root, gpusDir, "0000:19:00.0", "information")
	if err := os.WriteFile(path, []byte(strings.Repeat("Video BIOS: \t 96.00.99.00.01\n", MaxInfoSize/20)), 0o644); err != nil {
		t.Fatal(err)
	}
	n := mustOpen(t, root)
	if _, err := n.Devices(context.Background()); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Devices with a %d-byte file: %v, want ErrFormat, too large", MaxInfoSize*3/2, err)
	}
}

func TestClosed(t *testing.T) {
	n := mustOpen(t, fixture(t, "h100x4"))
	_ = n.Close()
	if _, err := n.Devices(context.Background()); err == nil {
		t.Error("Devices after Close succeeded")
	}
}

// TestResolvesSlurmRefs: what a hook asks of the list (hookproto.Resolve)
// — a GPU by UUID, by the minor of its gres.conf File=, by Slurm index in
// PCI order — finds the GPU the driver says.
func TestResolvesSlurmRefs(t *testing.T) {
	n := mustOpen(t, fixture(t, "h100x4"))
	devs, err := n.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	refs := []hookproto.GPURef{
		{SlurmIndex: -1, Minor: -1, UUID: "GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"},
		{SlurmIndex: 0, Minor: 0},
		{SlurmIndex: 3, Minor: -1},
	}
	got, _, problems := hookproto.Resolve(devs, refs)
	want := []string{"GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", "GPU-1f0e8a52-7d3c-4b1e-9a2f-0c5d6e7f8a91", "GPU-0a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d"}
	if len(problems) > 0 || len(got) != len(want) {
		t.Fatalf("Resolve = %v, problems %v", got, problems)
	}
	for i, d := range got {
		if d.UUID != want[i] {
			t.Errorf("ref %+v resolved to %s, want %s", refs[i], d.UUID, want[i])
		}
	}
}

func TestNormalBusID(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"kernel form", "0000:3b:00.0", "00000000:3B:00.0", true},
		{"NVML form", "00000000:3B:00.0", "00000000:3B:00.0", true},
		{"non-zero domain", "0001:af:1f.7", "00000001:AF:1F.7", true},
		{"function 8", "0000:3b:00.8", "", false},
		{"short bus", "0000:3:00.0", "", false},
		{"not hex", "0000:3g:00.0", "", false},
		{"no domain", "3b:00.0", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := normalBusID(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("normalBusID(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestOlderDriverBlacklisted: drivers before the flag's rename write an
// excluded GPU as "Blacklisted:\t Yes" (nv-procfs.c's format strings of
// those releases, copied here line for line with a made-up UUID), and
// such a GPU is left out as one marked "GPU Excluded: Yes" is.
func TestOlderDriverBlacklisted(t *testing.T) {
	text := "Model: \t\t Tesla V100-SXM2-16GB\n" +
		"IRQ:   \t\t 48\n" +
		"GPU UUID: \t GPU-0d3c2b1a-0000-1111-2222-333344445555\n" +
		"Video BIOS: \t 88.00.4f.00.09\n" +
		"Bus Type: \t PCIe\n" +
		"DMA Size: \t 47 bits\n" +
		"DMA Mask: \t 0x7fffffffffff\n" +
		"Bus Location: \t 0000:3b:00.0\n" +
		"Device Minor: \t 1\n"
	for _, flag := range []string{"No", "Yes"} {
		d, excluded, err := parseInformation(text+"Blacklisted:\t "+flag+"\n", "00000000:3B:00.0")
		if err != nil {
			t.Fatalf("Blacklisted: %s: %v", flag, err)
		}
		if excluded != (flag == "Yes") || d.Minor != 1 || d.Name != "Tesla V100-SXM2-16GB" {
			t.Errorf("Blacklisted: %s: excluded %v, minor %d, model %q", flag, excluded, d.Minor, d.Name)
		}
	}
}
