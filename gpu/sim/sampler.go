package sim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/internal/procread"
)

// ErrClosed is returned by every Node call after Close.
var ErrClosed = errors.New("simulated GPU node is closed")

// Reported versions: a plausible H100-era driver, marked as simulated so a
// profile recorded on the sim node is never mistaken for a real one.
const (
	DriverVersion     = "550.54.15-sim"
	CUDADriverVersion = "12.4"
)

// Reading formulas (see docs/sim-node.md). Power follows an H100 SXM board:
// 60 W idle, 700 W at full load, linear in utilisation; it is the same for
// every model because only its shape matters to the agent.
const (
	idlePowerMW = 60_000
	maxPowerMW  = 700_000
	idleTempC   = 30
)

var _ gpu.Sampler = (*Node)(nil)

// Node is a gpu.Sampler reading a simulated node's state directory.
//
// It provides no energy counter (Energy answers gpu.ErrUnsupported), as
// some GPUs and drivers do not: the agent then integrates PowerMW over
// time, and that path gets exercised. Accounting is reported off
// (gpu.ErrUnsupported). Activity (GPM) is given where the node's model
// is of an architecture with GPM (gpu.ArchitectureOf: Hopper and later).
type Node struct {
	dir     string
	procfs  string
	now     func() time.Time
	devices []gpu.Device
	byUUID  map[string]int
	gpm     bool // the model has GPM: SampleDevice gives Activity

	scanTTL time.Duration

	mu         sync.Mutex // guards the fields below; Register may come from another goroutine
	registered map[int]Process
	sampledAt  map[string]time.Time // per GPU, the previous SampleDevice: the start of its activity interval
	xidOffset  int64
	closed     bool
	scanAt     time.Time // time of the last scan of procs/, by now
	scanDirMod time.Time // procs/ modification time at that scan
	scanned    []Process // live processes from procs/ at that scan
	scanGen    uint64    // counts the scans of procs/
	// live is what liveProcesses last returned, merged from scan liveGen
	// and registered; nil when Register or Unregister changed the latter.
	live    []Process
	liveGen uint64

	scanMu sync.Mutex // held through a scan of procs/; guards parsed
	// parsed holds each process file as last read, by name, so a scan
	// re-reads only the files that changed (a burn writes its file once),
	// with the process's /proc/PID/stat kept open: a rescan costs a stat
	// per file and one read per process, as close as a file-backed
	// simulation gets to a driver answering from memory.
	parsed map[string]parsedProc
}

// parsedProc is a process file as read, and what identified its version.
type parsedProc struct {
	ino     uint64
	size    int64
	modTime time.Time
	pf      procFile
	// stat is the process's /proc/PID/stat, kept open once the process was
	// found alive in a real procfs (nil otherwise: it is opened each time).
	// It refers to that process only, whatever later takes its PID.
	stat *procread.File
}

// dirSettle is how long procs/ must have been unchanged for a scan of it to
// be reused: file times advance by the kernel's clock tick (up to 10 ms),
// so two changes closer than that may leave the directory's time as it was.
const dirSettle = 20 * time.Millisecond

// Option configures Open.
type Option func(*Node)

// WithProcfs sets the procfs root used to check that registered PIDs still
// run (default /proc).
func WithProcfs(root string) Option { return func(n *Node) { n.procfs = root } }

// WithScanCache lets the node reuse its scan of procs/ for up to ttl while
// the directory is unchanged (no process registered or unregistered),
// instead of scanning again for each call: an agent asks for every GPU's
// readings and processes each tick, and a real driver answers those from
// memory. A call then costs one stat of procs/. A process that registers or
// unregisters is seen at once, as a driver sees a CUDA context come and go;
// one killed without unregistering is noticed up to ttl late. The node's
// clock (WithClock) ages the scan. Default 0: scan on every call.
func WithScanCache(ttl time.Duration) Option { return func(n *Node) { n.scanTTL = ttl } }

// WithClock sets the clock that stamps samples and ages the scan cache
// (default time.Now); the demo generator and the agent's benchmarks drive a
// virtual one.
func WithClock(now func() time.Time) Option { return func(n *Node) { n.now = now } }

// Open opens the node in dir, which Init must have created. XID events
// recorded before Open are not replayed. Process files of dead processes are
// removed on the way (best effort).
func Open(dir string, opts ...Option) (*Node, error) {
	devs, err := LoadNode(dir)
	if err != nil {
		return nil, err
	}
	n := &Node{
		dir:        dir,
		procfs:     "/proc",
		now:        time.Now,
		devices:    devs,
		byUUID:     make(map[string]int, len(devs)),
		registered: make(map[int]Process),
		sampledAt:  make(map[string]time.Time, len(devs)),
	}
	if len(devs) > 0 {
		n.gpm, _ = gpu.ArchitectureOf(devs[0].Name).GPMSupported()
	}
	for _, o := range opts {
		o(n)
	}
	for i, d := range devs {
		n.byUUID[d.UUID] = i
	}
	fi, err := os.Stat(filepath.Join(dir, xidFileName))
	switch {
	case err == nil:
		n.xidOffset = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open sim xid log: %w", err)
	}
	n.liveProcesses() // collects garbage
	return n, nil
}

// Register adds an in-memory process that counts as live without a /proc
// check (the demo's virtual processes). It replaces an earlier registration
// or process file with the same PID.
func (n *Node) Register(p Process) {
	p.Usage = slices.Clone(p.Usage)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.registered[p.PID] = p
	n.live = nil
}

// Unregister removes a process added by Register.
func (n *Node) Unregister(pid int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.registered, pid)
	n.live = nil
}

func (n *Node) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	return nil
}

func (n *Node) device(uuid string) (gpu.Device, error) {
	i, ok := n.byUUID[uuid]
	if !ok {
		return gpu.Device{}, fmt.Errorf("sim: %s: %w", uuid, gpu.ErrNotFound)
	}
	return n.devices[i], nil
}

// Devices returns the node's GPUs in index (PCI bus) order.
func (n *Node) Devices(ctx context.Context) ([]gpu.Device, error) {
	if err := n.check(ctx); err != nil {
		return nil, err
	}
	return slices.Clone(n.devices), nil
}

// Versions returns DriverVersion and CUDADriverVersion.
func (n *Node) Versions(ctx context.Context) (gpu.Versions, error) {
	if err := n.check(ctx); err != nil {
		return gpu.Versions{}, err
	}
	return gpu.Versions{Driver: DriverVersion, CUDADriver: CUDADriverVersion}, nil
}

// SampleDevice sums the live processes on the GPU: memory (capped at the
// card's total, as the driver can hand out no more), utilisation (capped at
// 100 %), and power, temperature and memory-controller load derived from
// utilisation. On a model with GPM, Activity is the sum of the processes'
// SM, tensor and DRAM activity (each capped at 100 %) as they stand now,
// over the interval since the previous call for the GPU (none at the
// first, nor in the same instant); SM occupancy and the FP pipes are not simulated (invalid).
func (n *Node) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	if err := n.check(ctx); err != nil {
		return gpu.DeviceSample{}, err
	}
	d, err := n.device(uuid)
	if err != nil {
		return gpu.DeviceSample{}, err
	}
	var mem uint64
	var util uint32
	var sm, tensor, dram float64
	for _, p := range n.liveProcesses() {
		for _, u := range p.Usage {
			if u.UUID == uuid {
				mem = addSat(mem, u.Mem)
				util = uint32(min(uint64(util)+uint64(u.Util), 100))
				uSM, uTensor, uDRAM := u.activity()
				sm, tensor, dram = sm+uSM, tensor+uTensor, dram+uDRAM
			}
		}
	}
	now := n.now()
	out := gpu.DeviceSample{
		UUID:       uuid,
		Time:       now,
		MemoryUsed: gpu.Some(min(mem, d.MemoryTotal)),
		Util:       gpu.Some(util),
		MemUtil:    gpu.Some(util / 2),
		PowerMW:    gpu.Some(uint32(idlePowerMW + (maxPowerMW-idlePowerMW)*util/100)),
		TempC:      gpu.Some(idleTempC + util/2),
	}
	if !n.gpm {
		return out, nil
	}
	n.mu.Lock()
	prev, started := n.sampledAt[uuid]
	if !started || now.After(prev) {
		// An instant measures nothing: the interval goes on.
		n.sampledAt[uuid] = now
	}
	n.mu.Unlock()
	if started && now.After(prev) {
		// Values are as the processes state them (absurd ones included,
		// for gpu.Sanitize), capped like Util where they add up.
		capped := func(v float64) gpu.Opt[float64] { return gpu.Some(min(v, 100)) }
		out.Activity = gpu.Some(gpu.Activity{Interval: max(now.Sub(prev), 0),
			SM: capped(sm), Tensor: capped(tensor), DRAM: capped(dram)})
	}
	return out, nil
}

// Energy answers gpu.ErrUnsupported: the simulated GPUs have no energy
// counter (see Node).
func (n *Node) Energy(ctx context.Context, uuid string) (uint64, error) {
	if err := n.check(ctx); err != nil {
		return 0, err
	}
	if _, err := n.device(uuid); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("sim: energy of %s: %w (no energy counter)", uuid, gpu.ErrUnsupported)
}

// Processes lists the live processes using the GPU, by PID. Values are as
// the processes registered them, absurd ones included: judging them is
// gpu.SanitizeProcess's job.
func (n *Node) Processes(ctx context.Context, uuid string) ([]gpu.ProcessSample, error) {
	if err := n.check(ctx); err != nil {
		return nil, err
	}
	if _, err := n.device(uuid); err != nil {
		return nil, err
	}
	out := []gpu.ProcessSample{}
	for _, p := range n.liveProcesses() {
		for _, u := range p.Usage {
			if u.UUID == uuid {
				out = append(out, gpu.ProcessSample{PID: p.PID, UUID: uuid, MemoryUsed: gpu.Some(u.Mem), SMUtil: gpu.Some(u.Util)})
			}
		}
	}
	return out, nil
}

// XIDEvents returns the events appended to xid.log since the previous call
// (or since Open).
func (n *Node) XIDEvents(ctx context.Context) ([]gpu.XIDEvent, error) {
	if err := n.check(ctx); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	events, off, err := readXIDs(filepath.Join(n.dir, xidFileName), n.xidOffset)
	if err != nil {
		return nil, err
	}
	n.xidOffset = off
	out := events[:0]
	for _, e := range events {
		// NVML reports events of this node's GPUs only.
		if _, ok := n.byUUID[e.UUID]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Accounting reports accounting mode off, after checking the UUID.
func (n *Node) Accounting(ctx context.Context, uuid string) ([]gpu.AccountingStats, error) {
	if err := n.check(ctx); err != nil {
		return nil, err
	}
	if _, err := n.device(uuid); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("sim: accounting on %s: %w", uuid, gpu.ErrUnsupported)
}

// Close makes every later call fail with ErrClosed and closes the /proc
// files it kept open.
func (n *Node) Close() error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.scanMu.Lock()
	defer n.scanMu.Unlock()
	for _, pp := range n.parsed {
		if pp.stat != nil {
			pp.stat.Close()
		}
	}
	n.parsed = nil
	return nil
}

// liveProcesses returns the registered processes and those of the process
// files whose PIDs still run, in PID order. It removes the files of dead
// processes when it may; a permission error (the agent not running as root)
// only leaves them there, ignored.
//
// The result is shared between calls until something changes: callers must
// not modify it.
func (n *Node) liveProcesses() []Process {
	files, gen := n.scanProcFiles()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.live != nil && gen == n.liveGen {
		return n.live // the same scan (cached) and no registration since
	}
	byPID := make(map[int]Process, len(n.registered)+len(files))
	for pid, p := range n.registered {
		byPID[pid] = p
	}
	for _, p := range files {
		if _, ok := byPID[p.PID]; !ok {
			byPID[p.PID] = p
		}
	}
	out := make([]Process, 0, len(byPID))
	for _, p := range byPID {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Process) int { return a.PID - b.PID })
	n.live, n.liveGen = out, gen
	return out
}

// scanProcFiles returns the live processes registered through procs/,
// reusing the previous scan within scanTTL while procs/ is unchanged, and
// the number of the scan they come from.
func (n *Node) scanProcFiles() ([]Process, uint64) {
	dir := filepath.Join(n.dir, procsDirName)
	var mod time.Time
	if n.scanTTL > 0 {
		var st syscall.Stat_t // not os.Stat: this runs on every call
		if syscall.Stat(dir, &st) == nil {
			mod = time.Unix(st.Mtim.Unix())
		}
		n.mu.Lock()
		fresh := !n.scanAt.IsZero() && n.now().Sub(n.scanAt) < n.scanTTL && mod.Equal(n.scanDirMod)
		cached, gen := n.scanned, n.scanGen
		n.mu.Unlock()
		if fresh {
			return cached, gen
		}
	}
	n.scanMu.Lock()
	defer n.scanMu.Unlock()
	var found []Process
	prev := n.parsed
	parsed := make(map[string]parsedProc, len(prev))
	entries, _ := os.ReadDir(dir) // a missing procs/ means no process
	for _, e := range entries {
		pid, ok := pidOfProcFile(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue // removed since ReadDir
		}
		var ino uint64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		pp, seen := prev[e.Name()]
		if !seen || pp.ino != ino || pp.size != info.Size() || !pp.modTime.Equal(info.ModTime()) {
			pf, err := readProcFile(path, pid)
			if err != nil {
				continue // malformed, or removed since ReadDir
			}
			pp = parsedProc{ino: ino, size: info.Size(), modTime: info.ModTime(), pf: pf}
		}
		if !n.alive(&pp) {
			_ = os.Remove(path) // best effort, see above
			continue
		}
		parsed[e.Name()] = pp
		found = append(found, Process{PID: pid, Name: pp.pf.Name, Usage: pp.pf.GPUs})
	}
	for name, old := range prev {
		if old.stat != nil && parsed[name].stat != old.stat {
			old.stat.Close()
		}
	}
	n.parsed = parsed
	n.mu.Lock()
	defer n.mu.Unlock()
	n.scanGen++
	// A change within the kernel's timestamp granularity of the last one
	// would leave procs/ with the same time: keep only a settled scan.
	if n.scanTTL > 0 && !mod.IsZero() && time.Since(mod) >= dirSettle {
		n.scanAt, n.scanDirMod, n.scanned = n.now(), mod, found
	} else {
		n.scanAt = time.Time{}
	}
	return found, n.scanGen
}

// alive reports whether the process pp's file registered still runs,
// through its kept /proc/PID/stat if it has one; it keeps the file open
// for the next scan when the process is alive and the file in a real
// procfs. See procAlive for the rules.
func (n *Node) alive(pp *parsedProc) bool {
	var buf [1024]byte // a stat line is far shorter (comm is at most 64 bytes)
	if pp.stat != nil {
		data, err := pp.stat.Head(buf[:])
		if err != nil {
			return procAlive(procStat{}, err, 0)
		}
		st, err := parseStat(string(data))
		return procAlive(st, err, 0) // the open file is that process: no start time to compare
	}
	f, err := procread.Open(filepath.Join(n.procfs, strconv.Itoa(pp.pf.PID), "stat"))
	if err != nil {
		return procAlive(procStat{}, err, pp.pf.StartTime)
	}
	var st procStat
	data, err := f.Head(buf[:])
	if err == nil {
		st, err = parseStat(string(data))
	}
	live := procAlive(st, err, pp.pf.StartTime)
	if live && err == nil && f.InProcfs() {
		pp.stat = f
	} else {
		f.Close()
	}
	return live
}

func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
