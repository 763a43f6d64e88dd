package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpuprof/gpuprof/gpu"
)

// Errors about the node's shape.
var (
	// ErrInvalidSpec means a NodeSpec, or the node.json on disk, does not
	// describe a usable node.
	ErrInvalidSpec = errors.New("invalid simulated node")
	// ErrNodeMismatch means node.json already describes a different node.
	// Init refuses to reshape a node under running jobs; remove the state
	// directory to start over.
	ErrNodeMismatch = errors.New("simulated node already exists with a different shape")
)

// Defaults of the simulated node; they match config.Default's [sim] section.
const (
	DefaultGPUs   = 4
	DefaultModel  = "NVIDIA H100 80GB HBM3"
	DefaultMemory = 80 << 30 // bytes
	// MaxGPUs bounds a node, as sim.gpus does in the configuration; it also
	// keeps the made-up PCI bus numbers within one byte.
	MaxGPUs = 64
)

const (
	nodeFileName = "node.json"
	procsDirName = "procs"
	xidFileName  = "xid.log"
	// firstBus and busStride spread the made-up PCI buses the way a real
	// board does (one GPU per root port), in increasing order.
	firstBus  = 0x18
	busStride = 3
)

// NodeSpec shapes a simulated node.
type NodeSpec struct {
	GPUs        int
	Model       string
	MemoryTotal uint64 // bytes per GPU
	// Minors are the /dev/nvidiaN minor numbers in device (PCI bus) order;
	// empty means 0..GPUs-1.
	Minors []int
}

// DefaultSpec is the node gpuprof simulates when nothing is configured:
// 4 × NVIDIA H100 80GB HBM3, 80 GiB each, minors 0..3.
func DefaultSpec() NodeSpec {
	return NodeSpec{GPUs: DefaultGPUs, Model: DefaultModel, MemoryTotal: DefaultMemory}
}

func (s NodeSpec) validate() error {
	switch {
	case s.GPUs < 1 || s.GPUs > MaxGPUs:
		return fmt.Errorf("%w: %d GPUs (want 1..%d)", ErrInvalidSpec, s.GPUs, MaxGPUs)
	case s.Model == "":
		return fmt.Errorf("%w: empty model name", ErrInvalidSpec)
	case s.MemoryTotal == 0:
		return fmt.Errorf("%w: zero memory per GPU", ErrInvalidSpec)
	case len(s.Minors) != 0 && len(s.Minors) != s.GPUs:
		return fmt.Errorf("%w: %d minors for %d GPUs", ErrInvalidSpec, len(s.Minors), s.GPUs)
	}
	seen := make(map[int]bool, len(s.Minors))
	for _, m := range s.Minors {
		if m < 0 || seen[m] {
			return fmt.Errorf("%w: minors %v must be distinct and non-negative", ErrInvalidSpec, s.Minors)
		}
		seen[m] = true
	}
	return nil
}

// devices enumerates the spec's GPUs in NVML order, which for this node is
// also PCI bus order (what CUDA_DEVICE_ORDER=PCI_BUS_ID sorts by).
func (s NodeSpec) devices() []gpu.Device {
	devs := make([]gpu.Device, s.GPUs)
	for i := range devs {
		minor := i
		if len(s.Minors) > 0 {
			minor = s.Minors[i]
		}
		devs[i] = gpu.Device{
			Index:       i,
			UUID:        deviceUUID(s.Model, i),
			Name:        s.Model,
			Minor:       minor,
			PCIBusID:    fmt.Sprintf("00000000:%02X:00.0", firstBus+busStride*i),
			MemoryTotal: s.MemoryTotal,
		}
	}
	return devs
}

// deviceUUID makes a UUID that looks like NVML's and stays the same for the
// same model and index, so profiles of a re-created node still match.
func deviceUUID(model string, index int) string {
	sum := sha256.Sum256([]byte(model + "\x00" + strconv.Itoa(index)))
	h := hex.EncodeToString(sum[:16])
	return "GPU-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// nodeFile is node.json.
type nodeFile struct {
	Devices []deviceJSON `json:"devices"`
}

type deviceJSON struct {
	Index       int    `json:"index"`
	UUID        string `json:"uuid"`
	Name        string `json:"name"`
	Minor       int    `json:"minor"`
	PCIBusID    string `json:"pci_bus_id"`
	MemoryTotal uint64 `json:"memory_total"`
}

// Init creates the state directory and node.json for spec, or checks that an
// existing node.json describes the same node. It returns the node's devices.
// It is safe to run concurrently (the agent and a burn may both call it).
func Init(dir string, spec NodeSpec) ([]gpu.Device, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create sim node dir: %w", err)
	}
	if err := makeSharedDir(filepath.Join(dir, procsDirName)); err != nil {
		return nil, err
	}
	if err := makeSharedFile(filepath.Join(dir, xidFileName)); err != nil {
		return nil, err
	}
	want := spec.devices()
	err := publishNode(dir, want)
	if err == nil {
		return want, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	got, err := LoadNode(dir)
	if err != nil {
		return nil, err
	}
	if !sameDevices(got, want) {
		return nil, fmt.Errorf("%w: %s has %d × %q (%d bytes), asked for %d × %q (%d bytes) minors %v",
			ErrNodeMismatch, filepath.Join(dir, nodeFileName), len(got), got[0].Name, got[0].MemoryTotal,
			spec.GPUs, spec.Model, spec.MemoryTotal, spec.Minors)
	}
	return got, nil
}

// makeSharedDir creates procs/ sticky and world-writable like /tmp:
// simulated CUDA programs run as the job's user, and the sticky bit stops
// one user from removing another's registration.
func makeSharedDir(path string) error {
	err := os.Mkdir(path, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create sim procs dir: %w", err)
	}
	// Chmod after Mkdir because the umask would strip the bits.
	if err := os.Chmod(path, 0o777|fs.ModeSticky); err != nil {
		return fmt.Errorf("create sim procs dir: %w", err)
	}
	return nil
}

// makeSharedFile creates xid.log writable by everyone, so test scripts that
// inject XIDs need not run as the agent's user.
func makeSharedFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create sim xid log: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create sim xid log: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		return fmt.Errorf("create sim xid log: %w", err)
	}
	return nil
}

// publishNode writes node.json unless it exists (then fs.ErrExist). It
// links a complete temporary file into place, so no reader ever sees half a
// node and two concurrent Inits cannot overwrite each other.
func publishNode(dir string, devs []gpu.Device) error {
	nf := nodeFile{Devices: make([]deviceJSON, len(devs))}
	for i, d := range devs {
		nf.Devices[i] = deviceJSON{Index: d.Index, UUID: d.UUID, Name: d.Name, Minor: d.Minor, PCIBusID: d.PCIBusID, MemoryTotal: d.MemoryTotal}
	}
	data, err := json.MarshalIndent(nf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode node.json: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".node-*.json")
	if err != nil {
		return fmt.Errorf("write node.json: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write node.json: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write node.json: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write node.json: %w", err)
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, nodeFileName)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("write node.json: %w", err)
	}
	return nil
}

// LoadNode reads the devices of the node in dir.
func LoadNode(dir string) ([]gpu.Device, error) {
	path := filepath.Join(dir, nodeFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sim node: %w", err)
	}
	var nf nodeFile
	if err := json.Unmarshal(data, &nf); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidSpec, path, err)
	}
	if len(nf.Devices) == 0 {
		return nil, fmt.Errorf("%w: %s lists no devices", ErrInvalidSpec, path)
	}
	devs := make([]gpu.Device, len(nf.Devices))
	seen := make(map[string]bool, len(devs))
	for i, d := range nf.Devices {
		if d.Index != i || d.UUID == "" || seen[d.UUID] || d.MemoryTotal == 0 {
			return nil, fmt.Errorf("%w: %s: device %d (index %d, uuid %q) is malformed or repeated",
				ErrInvalidSpec, path, i, d.Index, d.UUID)
		}
		seen[d.UUID] = true
		devs[i] = gpu.Device{Index: d.Index, UUID: d.UUID, Name: d.Name, Minor: d.Minor, PCIBusID: d.PCIBusID, MemoryTotal: d.MemoryTotal}
	}
	return devs, nil
}

func sameDevices(a, b []gpu.Device) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Index != y.Index || x.UUID != y.UUID || x.Name != y.Name || x.Minor != y.Minor ||
			x.PCIBusID != y.PCIBusID || x.MemoryTotal != y.MemoryTotal {
			return false
		}
	}
	return true
}
