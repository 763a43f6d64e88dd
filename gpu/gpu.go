// Package gpu defines what gpuprof reads from GPUs, in domain terms keyed by
// GPU UUID, behind one small interface (Sampler).
//
// Implementations live in sub-packages: gpu/nvml (the only importer of
// go-nvml) and gpu/sim (a simulated node for tests and the demo). This
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
type DeviceSample struct {
	UUID       string
	Time       time.Time
	MemoryUsed Opt[uint64] // bytes
	Util       Opt[uint32] // SM (GPU) utilisation, percent
	MemUtil    Opt[uint32] // memory controller utilisation, percent
	PowerMW    Opt[uint32] // milliwatts
	EnergyMJ   Opt[uint64] // millijoules since driver load (monotonic)
	TempC      Opt[uint32] // degrees Celsius
}

// ProcessSample is one process's use of one GPU.
type ProcessSample struct {
	PID        int
	UUID       string      // GPU (or MIG instance) the process runs on
	MemoryUsed Opt[uint64] // bytes
	SMUtil     Opt[uint32] // percent of the GPU, over the last sample period
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
//   - Implementations are safe for use by one goroutine at a time; the agent
//     serialises calls. Close releases the backend; calls after Close fail.
type Sampler interface {
	Devices(ctx context.Context) ([]Device, error)
	Versions(ctx context.Context) (Versions, error)
	SampleDevice(ctx context.Context, uuid string) (DeviceSample, error)
	Processes(ctx context.Context, uuid string) ([]ProcessSample, error)
	XIDEvents(ctx context.Context) ([]XIDEvent, error)
	Accounting(ctx context.Context, uuid string) ([]AccountingStats, error)
	Close() error
}
