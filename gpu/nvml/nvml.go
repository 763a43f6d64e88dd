// Package nvml implements gpu.Sampler on NVIDIA's NVML through go-nvml.
//
// It is the only package of gpuprof that imports go-nvml: it turns
// nvml.Return codes into wrapped errors and NVML's "not available" sentinels
// into invalid gpu.Opt readings, and speaks in GPU UUIDs. It must not know
// about Slurm, jobs, SQLite or the command line.
//
// Two properties of NVML shape this package. Calling any NVML function after
// a failed Init, or one that the installed driver does not export, kills the
// process with a symbol-lookup error that recover cannot catch; so New stops
// at a failed Init, and every function newer than the oldest drivers still in
// service is looked up once at New and skipped when absent. And a driver call
// can hang; wrap the Sampler in gpu.WithTimeout.
package nvml

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuprof/gpuprof/gpu"
)

var (
	// ErrLibrary means NVML could not be initialised: no libnvidia-ml, no
	// driver loaded, a driver/library version mismatch, or no permission.
	// Callers fall back to recording what they can without GPU readings.
	ErrLibrary = errors.New("NVML unavailable")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("NVML sampler closed")
)

// Compile-time check that Sampler keeps the gpu.Sampler contract.
var _ gpu.Sampler = (*Sampler)(nil)

// Sampler reads the GPUs of this node through NVML.
//
// The GPU inventory (including MIG instances) is read once at New, as the
// gpu.Sampler contract says it is stable; a MIG reconfiguration therefore
// needs a new Sampler.
type Sampler struct {
	lib    nvml.Interface
	logger *slog.Logger
	now    func() time.Time
	sym    symbols

	inventory []gpu.Device
	byUUID    map[string]*device
	events    nvml.EventSet // nil when the driver cannot deliver XID events

	// gpmOnce sets GPM up at the first SampleDevice: the hooks, which
	// open a Sampler for its inventory alone, never pay for it.
	gpmOnce sync.Once

	mu       sync.Mutex // guards the fields below
	closed   bool
	lastSeen map[string]uint64 // per GPU: newest process-utilisation timestamp read (µs)
	warned   map[string]bool   // reading failures already logged at warn level
}

// device is one NVML handle the Sampler answers for: a physical GPU or one
// of its MIG instances.
type device struct {
	uuid       string
	handle     nvml.Device
	parent     *device // set for a MIG instance
	migEnabled bool    // physical GPU in MIG mode
	instances  []*device
	gi, ci     int       // GPU and compute instance ids of a MIG instance
	gpm        *gpmState // nil without GPM
}

func (d *device) isMIG() bool { return d.parent != nil }

// Option configures New.
type Option func(*config)

type config struct {
	symbolChecker func(string) bool
	now           func() time.Time
}

// WithSymbolChecker replaces the lookup of optional NVML functions: check
// reports whether the library exports the named C symbol (e.g.
// "nvmlDeviceGetTotalEnergyConsumption"). Without it New asks
// lib.Extensions().LookupSymbol, and treats every optional function as
// absent when Extensions returns nil. It exists for fakes of nvml.Interface
// that implement no extensions (go-nvml's bare mock.Interface panics when
// Extensions is called on it) and for tests that simulate an old driver.
func WithSymbolChecker(check func(symbol string) bool) Option {
	return func(c *config) { c.symbolChecker = check }
}

// WithClock sets the clock that stamps samples and events (tests).
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// Open loads libnvidia-ml from libraryPath (empty: the default
// libnvidia-ml.so.1 on the loader's search path) and calls New. Without the
// library or a driver it fails with an error wrapping ErrLibrary.
func Open(libraryPath string, logger *slog.Logger, opts ...Option) (*Sampler, error) {
	var libOpts []nvml.LibraryOption
	if libraryPath != "" {
		libOpts = append(libOpts, nvml.WithLibraryPath(libraryPath))
	}
	return New(nvml.New(libOpts...), logger, opts...)
}

// New initialises lib and reads the GPU inventory. A failed Init returns an
// error wrapping ErrLibrary and the nvml.Return, and no other function of
// lib is called. logger may be nil.
func New(lib nvml.Interface, logger *slog.Logger, opts ...Option) (*Sampler, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := config{now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		// Nothing else may be called now, not even Shutdown.
		return nil, fmt.Errorf("initialise NVML: %w: %w", ErrLibrary, ret)
	}

	s := &Sampler{
		lib:      lib,
		logger:   logger,
		now:      cfg.now,
		byUUID:   make(map[string]*device),
		lastSeen: make(map[string]uint64),
		warned:   make(map[string]bool),
	}
	check := cfg.symbolChecker
	if check == nil {
		check = extensionChecker(lib, logger)
	}
	s.sym = lookupSymbols(check)
	logger.Debug("NVML optional functions", "symbols", s.sym)

	if err := s.enumerate(); err != nil {
		if ret := lib.Shutdown(); ret != nvml.SUCCESS {
			logger.Warn("NVML shutdown after failed inventory", "err", ret)
		}
		return nil, err
	}
	s.events = s.openEvents()
	return s, nil
}

// Close frees the XID event set and the GPM sample buffers and shuts NVML
// down. Calls after Close fail
// with ErrClosed; a second Close does nothing.
func (s *Sampler) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()

	errs := s.freeGPM()
	if s.events != nil {
		if ret := s.events.Free(); ret != nvml.SUCCESS {
			errs = append(errs, returnError("free XID event set", ret))
		}
	}
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		errs = append(errs, returnError("shut down NVML", ret))
	}
	return errors.Join(errs...)
}

// Devices returns the inventory read at New.
func (s *Sampler) Devices(ctx context.Context) ([]gpu.Device, error) {
	if err := s.usable(ctx); err != nil {
		return nil, fmt.Errorf("devices: %w", err)
	}
	out := make([]gpu.Device, len(s.inventory))
	for i, d := range s.inventory {
		d.MIG = append([]gpu.MIGDevice(nil), d.MIG...)
		out[i] = d
	}
	return out, nil
}

// usable fails when the context is done or the Sampler closed: NVML calls
// cannot be cancelled once started, so the check comes first.
func (s *Sampler) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// lookup returns the device for uuid, or an error wrapping gpu.ErrNotFound.
func (s *Sampler) lookup(ctx context.Context, what, uuid string) (*device, error) {
	if err := s.usable(ctx); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, uuid, err)
	}
	d, ok := s.byUUID[uuid]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", what, uuid, gpu.ErrNotFound)
	}
	return d, nil
}
