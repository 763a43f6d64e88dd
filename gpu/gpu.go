// Package gpu defines what gpuprof reads from GPUs, in domain terms keyed by
// GPU UUID, behind one small interface (Sampler).
//
// Implementations live in sub-packages: gpu/nvml (the only importer of
// go-nvml), gpu/sim (a simulated node for tests and the demo) and
// gpu/nvproc (an Inventory only, from the driver's /proc files). This
// package must not import either of them, nor touch Slurm, SQLite or cobra.
package gpu

import (
	"context"
	"errors"
	"time"
)

// Errors returned by Sampler implementations. Callers test them with
// errors.Is; implementations wrap them with context.
var (
	// ErrUnsupported means the GPU, its mode or the driver cannot provide the
	// value (e.g. accounting off, per-process utilisation on MIG). It is an
	// answer, not a fault: callers record the value as missing.
	ErrUnsupported = errors.New("not supported by this GPU or driver")
	// ErrNotFound means no GPU with the given UUID exists on this node.
	ErrNotFound = errors.New("no such GPU")
	// ErrTimeout means the backend did not answer within its deadline (a hung
	// driver). See WithTimeout.
	ErrTimeout = errors.New("GPU backend did not answer in time")
)

// Opt is a reading that may be missing. Backends leave Valid false for
// values the hardware marks "not available" instead of storing sentinels
// such as 0xFFFFFFFF.
type Opt[T any] struct {
	Value T
	Valid bool
}

// Some returns a valid reading.
func Some[T any](v T) Opt[T] { return Opt[T]{Value: v, Valid: true} }

// Device is one physical GPU as the backend enumerates it.
type Device struct {
	// Index is the backend's enumeration index (the NVML index). It is NOT
	// Slurm's GPU index; map Slurm indices through Minor or PCIBusID.
	Index       int
	UUID        string
	Name        string // model name, e.g. "NVIDIA H100 80GB HBM3"
	Minor       int    // minor number of /dev/nvidiaN; -1 when unknown
	PCIBusID    string // e.g. "00000000:17:00.0"
	MemoryTotal uint64 // bytes
	MIGEnabled  bool
	MIG         []MIGDevice
}

// MIGDevice is one MIG instance of a parent GPU.
type MIGDevice struct {
	UUID              string
	ParentUUID        string
	GPUInstanceID     int
	ComputeInstanceID int
	Profile           string // e.g. "1g.10gb"
	MemoryTotal       uint64 // bytes
}

// Versions are the software versions a job ran on.
type Versions struct {
	Driver     string // e.g. "550.54.15"
	CUDADriver string // highest CUDA version the driver supports, e.g. "12.4"
}

// DeviceSample is one device-level reading.
//
// The driver's total-energy counter is not part of it: on real drivers it
// costs milliseconds a call (see Sampler.Energy), so the caller decides
// when to read it.
type DeviceSample struct {
	UUID       string
	Time       time.Time
	MemoryUsed Opt[uint64] // bytes
	// Util is NVML's "GPU utilisation": a duty cycle, the share of the
	// driver's sample period in which any kernel ran, however few SMs it
	// used. Activity says how much of the GPU the kernels used.
	Util    Opt[uint32]
	MemUtil Opt[uint32] // memory controller utilisation, percent
	PowerMW Opt[uint32] // milliwatts
	TempC   Opt[uint32] // degrees Celsius
	// Activity is what the GPU's performance monitor (NVML GPM, Hopper and
	// later: see GPMSupported) measured over the interval since the
	// previous SampleDevice of the same UUID. Invalid where the GPU has no
	// GPM, on the first call for a UUID, and for an interval whose start or
	// end sample failed: never estimated from Util.
	Activity Opt[Activity]
}

// Activity is a GPU's (or MIG instance's) activity over one interval, each
// value the interval's mean in percent (0–100) of the hardware's peak. A
// value the monitor did not give is invalid, never 0.
type Activity struct {
	// Interval is the length of the interval the values are means over.
	Interval time.Duration
	// SM is the share of time the SMs were busy, averaged over the SMs
	// (GPM_METRIC_SM_UTIL): a kernel on one SM of 132 all the time is
	// 0.76 %, not the 100 % the duty cycle says.
	SM Opt[float64]
	// SMOccupancy is the warps resident on the SMs against their maximum.
	SMOccupancy Opt[float64]
	// Tensor is the share of time any tensor-core pipe was busy.
	Tensor Opt[float64]
	// DRAM is the memory bandwidth used against the peak.
	DRAM Opt[float64]
	// FP64, FP32 and FP16 are the shares of time those pipes were busy.
	FP64, FP32, FP16 Opt[float64]
}

// ProcessSample is one process's use of one GPU.
type ProcessSample struct {
	PID        int
	UUID       string      // GPU (or MIG instance) the process runs on
	MemoryUsed Opt[uint64] // bytes
	SMUtil     Opt[uint32] // percent of the GPU, over the last sample period
}

// Any reports whether any value of a is valid.
func (a Activity) Any() bool {
	for _, v := range []Opt[float64]{a.SM, a.SMOccupancy, a.Tensor, a.DRAM, a.FP64, a.FP32, a.FP16} {
		if v.Valid {
			return true
		}
	}
	return false
}

// XIDEvent is an XID error reported by the driver.
type XIDEvent struct {
	UUID string
	XID  uint64
	Time time.Time
}

// AccountingStats are the driver's per-process accounting records, kept
// after the process exits (NVML accounting mode).
type AccountingStats struct {
	PID       int
	GPUUtil   uint32 // percent, averaged over the process lifetime
	MemUtil   uint32
	MaxMemory uint64 // bytes
	Time      time.Duration
	Start     time.Time
	Running   bool
}

// Inventory is what a Slurm hook reads of a node's GPUs: which there are,
// by UUID, minor number and PCI bus. Every Sampler is one; gpu/nvproc is one
// that only reads the driver's /proc files (no NVML, no cgo), for
// gpuprof-hook-full.
//
// Contract: Devices lists the physical GPUs the backend can name by UUID,
// each once. A field the backend cannot read keeps its unknown value
// (Minor -1, MemoryTotal 0, Name "", MIG nil), never a guess. Close
// releases the backend.
type Inventory interface {
	Devices(ctx context.Context) ([]Device, error)
	Close() error
}

// Sampler is what gpuprof reads from the GPUs of one node.
//
// Contract:
//   - Devices and Versions are stable for the lifetime of the Sampler.
//   - SampleDevice and Processes return ErrNotFound (wrapped) for an unknown
//     UUID. A reading the hardware cannot provide is left invalid in the
//     result, not reported as an error.
//   - Processes returns every compute process on the GPU; an empty slice
//     means no process, not an error.
//   - XIDEvents never blocks: it drains events seen since the previous call.
//   - Accounting returns ErrUnsupported when accounting mode is off.
//   - Energy returns ErrUnsupported for a GPU without an energy counter and
//     for a MIG instance (energy belongs to the physical GPU); it may cost
//     milliseconds (about 4 ms on an H200), so callers read it sparsely.
//   - SampleDevice's Activity covers the interval since the previous
//     SampleDevice of the same UUID: the first call for a UUID, and the
//     call after a failed one, give none.
//   - Implementations are safe for use by one goroutine at a time; the agent
//     serialises calls. Close releases the backend; calls after Close fail.
type Sampler interface {
	Inventory
	Versions(ctx context.Context) (Versions, error)
	SampleDevice(ctx context.Context, uuid string) (DeviceSample, error)
	Processes(ctx context.Context, uuid string) ([]ProcessSample, error)
	XIDEvents(ctx context.Context) ([]XIDEvent, error)
	Accounting(ctx context.Context, uuid string) ([]AccountingStats, error)
	// Energy reads the GPU's total-energy counter: millijoules since the
	// driver loaded, monotonic while it stays loaded.
	Energy(ctx context.Context, uuid string) (uint64, error)
}
