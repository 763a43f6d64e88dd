// Package nvproc names a node's NVIDIA GPUs from the files the kernel
// driver keeps under /proc/driver/nvidia/gpus/<PCI bus id>/information,
// without NVML and without cgo. It is the GPU inventory of gpuprof-hook, a
// static binary: when the agent cannot be reached, a prolog or epilog names
// the job's GPUs by UUID from it (hooks.Deps.OpenInventory).
//
// What it reads of each GPU: the UUID ("GPU UUID:"), the minor number of
// /dev/nvidiaN ("Device Minor:"), the PCI bus ("Bus Location:") and the
// driver's model name for the card's PCI ids ("Model:"). What the files do
// not say, and so stays unknown: the memory size (MemoryTotal 0), MIG mode
// and MIG instances (the files list physical GPUs only; a job named by MIG
// UUIDs is not resolved from here), and every reading. It is a
// gpu.Inventory, not a gpu.Sampler: the agent samples through NVML.
//
// It must not import go-nvml or anything else that needs cgo
// (internal/archtest: gpuprof-hook builds without cgo).
package nvproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuprof/gpuprof/gpu"
)

// Limits on what the driver's files may hold. The driver writes a dozen
// short lines per GPU (about 400 bytes); anything far larger is not its
// file.
const (
	// MaxInfoSize is the most bytes read of one information file.
	MaxInfoSize = 16 << 10
	// MaxGPUs is the most GPU directories read.
	MaxGPUs = 256
	// maxModel is NVML's device name buffer (NVML_DEVICE_NAME_V2_BUFFER_SIZE).
	maxModel = 96
)

// ErrFormat is wrapped by every error about a file that is there but is not
// what the driver writes.
var ErrFormat = errors.New("not the NVIDIA driver's format")

// gpusDir is where the driver lists its GPUs, below the procfs root.
const gpusDir = "driver/nvidia/gpus"

// Node is the inventory of the GPUs the driver lists under one procfs root.
type Node struct {
	dir    string
	closed bool
}

var _ gpu.Inventory = (*Node)(nil)

// Open returns the inventory under procfs (normally /proc). A missing
// driver directory is an error wrapping fs.ErrNotExist.
func Open(procfs string) (*Node, error) {
	dir := filepath.Join(procfs, gpusDir)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("NVIDIA driver's GPU list: %w (is the nvidia kernel module loaded?)", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("NVIDIA driver's GPU list: %s is not a directory: %w", dir, ErrFormat)
	}
	return &Node{dir: dir}, nil
}

// Devices reads every GPU's information file, in PCI bus order (Index is
// the position in it, the order NVML enumerates in). The list is complete
// or an error: a GPU whose file is missing, unreadable or odd (no UUID, a
// malformed minor or bus) fails the whole list, because a list with a GPU
// left out would shift the PCI order that Slurm's indices map through. A
// GPU the driver marks excluded ("GPU Excluded: Yes") is left out, as NVML
// leaves it out.
func (n *Node) Devices(ctx context.Context) ([]gpu.Device, error) {
	if n.closed {
		return nil, errors.New("NVIDIA driver's GPU list: inventory closed")
	}
	entries, err := os.ReadDir(n.dir)
	if err != nil {
		return nil, fmt.Errorf("NVIDIA driver's GPU list: %w", err)
	}
	if len(entries) > MaxGPUs {
		return nil, fmt.Errorf("NVIDIA driver's GPU list: %d entries in %s, more than %d: %w", len(entries), n.dir, MaxGPUs, ErrFormat)
	}
	var devs []gpu.Device
	seen := map[string]string{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, excluded, err := readGPU(filepath.Join(n.dir, e.Name()), e.Name())
		if err != nil {
			return nil, err
		}
		if excluded {
			continue
		}
		if other, dup := seen[d.UUID]; dup {
			return nil, fmt.Errorf("NVIDIA driver's GPU list: GPUs %s and %s both have UUID %s: %w", other, e.Name(), d.UUID, ErrFormat)
		}
		seen[d.UUID] = e.Name()
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].PCIBusID < devs[j].PCIBusID })
	for i := range devs {
		devs[i].Index = i
	}
	return devs, nil
}

// Close ends the inventory; Devices fails after it.
func (n *Node) Close() error {
	n.closed = true
	return nil
}

// readGPU reads the information file of the GPU directory dir, named bus.
func readGPU(dir, bus string) (gpu.Device, bool, error) {
	busID, ok := normalBusID(bus)
	if !ok {
		return gpu.Device{}, false, fmt.Errorf("NVIDIA driver's GPU list: entry %q of %s is not a PCI bus id: %w", bus, filepath.Dir(dir), ErrFormat)
	}
	path := filepath.Join(dir, "information")
	text, err := readBounded(path)
	if err != nil {
		return gpu.Device{}, false, fmt.Errorf("GPU %s: %w", bus, err)
	}
	d, excluded, err := parseInformation(text, busID)
	if err != nil {
		return gpu.Device{}, false, fmt.Errorf("GPU %s: %s: %w", bus, path, err)
	}
	return d, excluded, nil
}

// readBounded reads a file of at most MaxInfoSize bytes.
func readBounded(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxInfoSize+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxInfoSize {
		return "", fmt.Errorf("%s is larger than %d bytes: %w", path, MaxInfoSize, ErrFormat)
	}
	return string(b), nil
}

// parseInformation reads one information file ("Key: \t value" lines, as
// nv-procfs.c writes them) of the GPU at busID. Lines it does not need are
// ignored; a line without a colon is an error.
func parseInformation(text, busID string) (gpu.Device, bool, error) {
	d := gpu.Device{Minor: -1, PCIBusID: busID}
	excluded := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return d, false, fmt.Errorf("line %q has no key: %w", clip(line), ErrFormat)
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "Model":
			if len(value) > maxModel || !printable(value) {
				return d, false, fmt.Errorf("model %q is not a model name: %w", clip(value), ErrFormat)
			}
			d.Name = value
		case "GPU UUID":
			if !validUUID(value) {
				return d, false, fmt.Errorf("GPU UUID %q is not a GPU- UUID (the driver could not read it?): %w", clip(value), ErrFormat)
			}
			d.UUID = value
		case "Device Minor":
			m, err := strconv.ParseUint(value, 10, 20)
			if err != nil {
				return d, false, fmt.Errorf("device minor %q: %w", clip(value), ErrFormat)
			}
			d.Minor = int(m)
		case "Bus Location":
			b, ok := normalBusID(value)
			if !ok || b != busID {
				return d, false, fmt.Errorf("bus location %q is not its directory's PCI bus id: %w", clip(value), ErrFormat)
			}
		case "GPU Excluded", "Blacklisted":
			// Drivers before the rename (the 450 series and older) write
			// the same flag as "Blacklisted:\t Yes".
			excluded = value == "Yes"
		}
	}
	if d.UUID == "" && !excluded {
		// The driver writes no UUID line when it cannot read the UUID.
		return d, false, fmt.Errorf("no GPU UUID line (the driver could not read the GPU's UUID): %w", ErrFormat)
	}
	return d, excluded, nil
}

// normalBusID writes a PCI address (domain:bus:device.function, the
// domain of 4 hex digits as the kernel writes it, or 8 as NVML does) the
// way NVML does: an 8-digit domain and upper-case hex ("00000000:17:00.0"),
// so that the PCI order is the same whichever backend named the GPUs.
func normalBusID(s string) (string, bool) {
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || len(dom) != 4 && len(dom) != 8 || !isHex(dom) {
		return "", false
	}
	// rest is bus:device.function: "17:00.0".
	if len(rest) != 7 || rest[2] != ':' || rest[5] != '.' || !isHex(rest[:2]) || !isHex(rest[3:5]) || rest[6] < '0' || rest[6] > '7' {
		return "", false
	}
	return strings.ToUpper(strings.Repeat("0", 8-len(dom)) + dom + ":" + rest), true
}

// validUUID accepts a physical GPU's UUID: "GPU-" and the 8-4-4-4-12 hex
// form.
func validUUID(s string) bool {
	u, ok := strings.CutPrefix(s, "GPU-")
	if !ok || len(u) != 36 {
		return false
	}
	for i, part := range strings.Split(u, "-") {
		if i > 4 || len(part) != []int{8, 4, 4, 4, 12}[i] || !isHex(part) {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\ufffd' {
			return false
		}
	}
	return true
}

// clip shortens a value quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
