package sim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// Errors of Burn, worded like the CUDA runtime's so that a job's output
// reads as a real program's would.
var (
	// ErrNoDevice: CUDA_VISIBLE_DEVICES (or the device cgroup) leaves no GPU.
	ErrNoDevice = errors.New("no CUDA-capable device is detected")
	// ErrInvalidDevice: the program asked for more GPUs than it can see.
	ErrInvalidDevice = errors.New("invalid device ordinal")
	// ErrOutOfMemory: the GPU has not that much memory left.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrInvalidOptions: BurnOptions are inconsistent.
	ErrInvalidOptions = errors.New("invalid burn options")
)

// refreshInterval is how often a burn checks that its process file is still
// there (an agent may have collected it in a PID-reuse race, or someone
// cleaned procs/) and writes it again.
const refreshInterval = time.Second

// BurnOptions describe a simulated CUDA program.
type BurnOptions struct {
	// Dir is the simulated node's state directory.
	Dir string
	// Mem is the memory held on each used GPU, in bytes: one value per used
	// GPU, or one value for all; none means 0.
	Mem []uint64
	// Util is the duty cycle caused on each used GPU, percent (0..100),
	// given like Mem.
	Util []uint32
	// SM, Tensor and DRAM are the activity caused on each used GPU,
	// percent (0..100), given like Mem; none leaves the node's defaults
	// (see Usage).
	SM, Tensor, DRAM []float64
	// For is how long to run; 0 or less means until ctx is cancelled.
	For time.Duration
	// Visible is the value of CUDA_VISIBLE_DEVICES. "" means all GPUs
	// (the variable unset) unless VisibleSet is true: CUDA hides every GPU
	// when the variable is set but empty.
	Visible    string
	VisibleSet bool
	// Devices is how many of the visible GPUs to use, in CUDA order;
	// 0 means all of them.
	Devices int
	// Name is the process name registered; "" means this process's comm.
	Name string
	// Procfs is the procfs root where this process's start time is read
	// (default /proc).
	Procfs string
	// DevDir, when set (e.g. "/dev"), hides the GPUs whose DevDir/nvidiaN
	// this process may not open, as a device cgroup (Slurm's
	// ConstrainDevices=yes) hides them from the CUDA driver. A device file
	// that does not exist hides nothing, so the sim works without them.
	DevDir string
}

// Burn runs a simulated CUDA program: it picks its GPUs as a CUDA
// application does, registers this process with the node and holds the
// memory and load until o.For has elapsed or ctx is cancelled, then
// unregisters.
//
// Cancellation is a normal stop and returns nil: the program was told to
// end (SIGTERM from scancel or a time limit). The caller, which turned the
// signal into ctx, decides the exit status, e.g. 128+signal like a shell
// reports a killed program. A burn killed with SIGKILL leaves its process
// file behind; the node ignores it once the PID is gone.
func Burn(ctx context.Context, o BurnOptions) (err error) {
	if o.Procfs == "" {
		o.Procfs = "/proc"
	}
	devs, err := LoadNode(o.Dir)
	if err != nil {
		return fmt.Errorf("burn: %w", err)
	}
	used, err := selectDevices(devs, o, openDevice)
	if err != nil {
		return fmt.Errorf("burn: %w", err)
	}
	usage, err := burnUsage(used, o)
	if err != nil {
		return fmt.Errorf("burn: %w", err)
	}
	pid := os.Getpid()
	st, err := readStat(o.Procfs, pid)
	if err != nil {
		return fmt.Errorf("burn: read own start time: %w", err)
	}
	if err := checkMemory(o.Dir, o.Procfs, used, usage); err != nil {
		return fmt.Errorf("burn: %w", err)
	}
	pf := procFile{PID: pid, StartTime: st.startTime, Name: o.Name, GPUs: usage}
	if pf.Name == "" {
		pf.Name = st.comm
	}
	if err := writeProcFile(o.Dir, pf); err != nil {
		return fmt.Errorf("burn: %w", err)
	}
	path := procPath(o.Dir, pid)
	defer func() {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("burn: unregister: %w", rerr))
		}
	}()

	var done <-chan time.Time
	if o.For > 0 {
		t := time.NewTimer(o.For)
		defer t.Stop()
		done = t.C
	}
	tick := time.NewTicker(refreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		case <-tick.C:
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				if err := writeProcFile(o.Dir, pf); err != nil {
					return fmt.Errorf("burn: re-register: %w", err)
				}
			}
		}
	}
}

// selectDevices resolves the GPUs a CUDA program would use: the devices it
// may open, in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID), narrowed by
// CUDA_VISIBLE_DEVICES, then the first o.Devices of them.
func selectDevices(devs []gpu.Device, o BurnOptions, open func(path string) error) ([]gpu.Device, error) {
	candidates := make([]gpu.Device, 0, len(devs))
	for _, d := range devs {
		if o.DevDir != "" && d.Minor >= 0 {
			err := open(filepath.Join(o.DevDir, "nvidia"+strconv.Itoa(d.Minor)))
			if errors.Is(err, fs.ErrPermission) {
				continue
			}
		}
		candidates = append(candidates, d)
	}
	// Sorting by bus id keeps the order right whatever node.json lists.
	sortByBus(candidates)
	visible := candidates
	if o.Visible != "" || o.VisibleSet {
		visible = parseVisible(o.Visible, candidates)
	}
	if len(visible) == 0 {
		return nil, ErrNoDevice
	}
	switch {
	case o.Devices < 0:
		return nil, fmt.Errorf("%w: %d devices", ErrInvalidOptions, o.Devices)
	case o.Devices > len(visible):
		return nil, fmt.Errorf("%w: %d GPUs wanted, %d visible", ErrInvalidDevice, o.Devices, len(visible))
	case o.Devices > 0:
		visible = visible[:o.Devices]
	}
	return visible, nil
}

// parseVisible applies CUDA_VISIBLE_DEVICES to devs (in CUDA order). Each
// comma-separated entry is a CUDA ordinal or a GPU UUID ("GPU-…", or a
// prefix of one that matches a single GPU). As in CUDA, the list ends at the
// first entry that names no device, or one already listed: "0,2,x,1" and
// "0,2,0,1" both mean GPUs 0 and 2, and "-1" or "NoDevFiles" means none.
func parseVisible(v string, devs []gpu.Device) []gpu.Device {
	var out []gpu.Device
	seen := make(map[string]bool)
	for entry := range strings.SplitSeq(v, ",") {
		d, ok := lookupVisible(strings.TrimSpace(entry), devs)
		if !ok || seen[d.UUID] {
			break
		}
		seen[d.UUID] = true
		out = append(out, d)
	}
	return out
}

func lookupVisible(entry string, devs []gpu.Device) (gpu.Device, bool) {
	if entry == "" {
		return gpu.Device{}, false
	}
	if strings.HasPrefix(entry, "GPU-") {
		var match gpu.Device
		n := 0
		for _, d := range devs {
			if strings.HasPrefix(d.UUID, entry) {
				match, n = d, n+1
			}
		}
		return match, n == 1 && len(entry) > len("GPU-")
	}
	if strings.TrimLeft(entry, "0123456789") != "" {
		return gpu.Device{}, false
	}
	i, err := strconv.Atoi(entry)
	if err != nil || i >= len(devs) {
		return gpu.Device{}, false
	}
	return devs[i], true
}

func sortByBus(devs []gpu.Device) {
	slices.SortStableFunc(devs, func(a, b gpu.Device) int { return strings.Compare(a.PCIBusID, b.PCIBusID) })
}

// openDevice opens a device file the way the CUDA driver does, so that a
// device cgroup answers with EPERM. A character device without a driver
// behind it answers ENXIO after the cgroup check, which counts as allowed.
func openDevice(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// burnUsage spreads the per-GPU values over the used GPUs.
func burnUsage(used []gpu.Device, o BurnOptions) ([]Usage, error) {
	mem, util := o.Mem, o.Util
	pick := func(what string, n int) (func(i int) int, error) {
		switch n {
		case 0:
			return func(int) int { return -1 }, nil
		case 1:
			return func(int) int { return 0 }, nil
		case len(used):
			return func(i int) int { return i }, nil
		}
		return nil, fmt.Errorf("%w: %d %s values for %d GPUs", ErrInvalidOptions, n, what, len(used))
	}
	memAt, err := pick("memory", len(mem))
	if err != nil {
		return nil, err
	}
	utilAt, err := pick("utilisation", len(util))
	if err != nil {
		return nil, err
	}
	out := make([]Usage, len(used))
	for i, d := range used {
		out[i].UUID = d.UUID
		if j := memAt(i); j >= 0 {
			out[i].Mem = mem[j]
		}
		if j := utilAt(i); j >= 0 {
			out[i].Util = util[j]
		}
		if out[i].Util > 100 {
			return nil, fmt.Errorf("%w: utilisation %d%% above 100%%", ErrInvalidOptions, out[i].Util)
		}
	}
	for _, a := range []struct {
		what string
		vs   []float64
		set  func(u *Usage, v *float64)
	}{
		{"SM activity", o.SM, func(u *Usage, v *float64) { u.SM = v }},
		{"tensor activity", o.Tensor, func(u *Usage, v *float64) { u.Tensor = v }},
		{"DRAM activity", o.DRAM, func(u *Usage, v *float64) { u.DRAM = v }},
	} {
		at, err := pick(a.what, len(a.vs))
		if err != nil {
			return nil, err
		}
		for i := range out {
			j := at(i)
			if j < 0 {
				continue
			}
			v := a.vs[j]
			if !(v >= 0 && v <= 100) {
				return nil, fmt.Errorf("%w: %s %g%% outside 0..100%%", ErrInvalidOptions, a.what, v)
			}
			a.set(&out[i], &v)
		}
	}
	return out, nil
}

// checkMemory fails like cudaMalloc when a GPU has not enough memory left
// beside what live processes hold. It is a check before registering, not a
// reservation: two burns starting at the same instant may both pass, and
// the node then reports the card full (capped at its total).
func checkMemory(dir, procfs string, used []gpu.Device, usage []Usage) error {
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		return err
	}
	defer n.Close()
	held := make(map[string]uint64)
	for _, p := range n.liveProcesses() {
		if p.PID == os.Getpid() {
			continue // a stale file of ours, about to be replaced
		}
		for _, u := range p.Usage {
			held[u.UUID] = addSat(held[u.UUID], u.Mem)
		}
	}
	for i, d := range used {
		if free := d.MemoryTotal - min(held[d.UUID], d.MemoryTotal); usage[i].Mem > free {
			return fmt.Errorf("GPU %d (%s): %w: tried to allocate %d bytes, %d free of %d",
				i, d.UUID, ErrOutOfMemory, usage[i].Mem, free, d.MemoryTotal)
		}
	}
	return nil
}
