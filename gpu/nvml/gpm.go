package nvml

import (
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuprof/gpuprof/gpu"
)

// GPM (GPU Performance Monitoring) reads the GPU's performance counters
// into a sample buffer; nvmlGpmMetricsGet turns two samples into the means
// of metrics over the time between them. One GpmSampleGet per GPU per
// interval (46 µs on an H200) and one GpmMetricsGet (about 10 µs): the
// sample that ends one interval starts the next.

// gpmMetrics are the metrics read, in the order of gpmMetricsGet's array.
var gpmMetrics = []nvml.GpmMetricId{
	nvml.GPM_METRIC_SM_UTIL,
	nvml.GPM_METRIC_SM_OCCUPANCY,
	nvml.GPM_METRIC_ANY_TENSOR_UTIL,
	nvml.GPM_METRIC_DRAM_BW_UTIL,
	nvml.GPM_METRIC_FP64_UTIL,
	nvml.GPM_METRIC_FP32_UTIL,
	nvml.GPM_METRIC_FP16_UTIL,
}

// activityField is where each of gpmMetrics goes.
func activityField(a *gpu.Activity, id nvml.GpmMetricId) *gpu.Opt[float64] {
	switch id {
	case nvml.GPM_METRIC_SM_UTIL:
		return &a.SM
	case nvml.GPM_METRIC_SM_OCCUPANCY:
		return &a.SMOccupancy
	case nvml.GPM_METRIC_ANY_TENSOR_UTIL:
		return &a.Tensor
	case nvml.GPM_METRIC_DRAM_BW_UTIL:
		return &a.DRAM
	case nvml.GPM_METRIC_FP64_UTIL:
		return &a.FP64
	case nvml.GPM_METRIC_FP32_UTIL:
		return &a.FP32
	case nvml.GPM_METRIC_FP16_UTIL:
		return &a.FP16
	}
	return nil
}

// gpmState is the GPM sampling of one GPU or MIG instance: two sample
// buffers, one of which holds the previous interval's end while the other
// takes the next, and when that end was taken.
type gpmState struct {
	prev, next nvml.GpmSample
	prevAt     time.Time
	hasPrev    bool
}

// architecture converts NVML's enum; a value this table does not know
// (newer than this package) is gpu.ArchUnknown.
func architecture(a nvml.DeviceArchitecture) gpu.Architecture {
	switch a {
	case nvml.DEVICE_ARCH_KEPLER:
		return gpu.ArchKepler
	case nvml.DEVICE_ARCH_MAXWELL:
		return gpu.ArchMaxwell
	case nvml.DEVICE_ARCH_PASCAL:
		return gpu.ArchPascal
	case nvml.DEVICE_ARCH_VOLTA:
		return gpu.ArchVolta
	case nvml.DEVICE_ARCH_TURING:
		return gpu.ArchTuring
	case nvml.DEVICE_ARCH_AMPERE:
		return gpu.ArchAmpere
	case nvml.DEVICE_ARCH_ADA:
		return gpu.ArchAda
	case nvml.DEVICE_ARCH_HOPPER:
		return gpu.ArchHopper
	case nvml.DEVICE_ARCH_BLACKWELL:
		return gpu.ArchBlackwell
	case nvml.DEVICE_ARCH_RUBIN:
		return gpu.ArchRubin
	}
	return gpu.ArchUnknown
}

// gpmSupported decides whether a physical GPU gives GPM readings: the
// architecture table (gpu.Architecture.GPMSupported) rules out older
// generations without asking the driver, which then decides for the rest.
func (s *Sampler) gpmSupported(d *device) bool {
	if !s.sym.GPM {
		return false
	}
	log := s.logger.With("gpu", d.uuid)
	arch := gpu.ArchUnknown
	if s.sym.Architecture {
		a, ret := d.handle.GetArchitecture()
		if ret == nvml.SUCCESS {
			arch = architecture(a)
		} else if !unavailable(ret) {
			log.Warn("GPU architecture unreadable", "err", ret)
		}
	}
	if ok, known := arch.GPMSupported(); known && !ok {
		log.Debug("no GPM on this architecture: SM activity unknown", "architecture", arch)
		return false
	}
	sup, ret := d.handle.GpmQueryDeviceSupport()
	switch {
	case ret == nvml.SUCCESS && sup.IsSupportedDevice != 0:
		log.Debug("GPM supported", "architecture", arch)
		return true
	case ret == nvml.SUCCESS || unavailable(ret):
		log.Info("GPU has no GPM: SM and tensor activity unknown", "architecture", arch)
	default:
		log.Warn("GPM support unreadable: SM and tensor activity unknown", "architecture", arch, "err", ret)
	}
	return false
}

// setupGPM allocates the sample buffers of every GPU with GPM and of its
// MIG instances (once, at the first SampleDevice). A GPU whose buffers
// cannot be allocated goes without.
func (s *Sampler) setupGPM() {
	for _, info := range s.inventory {
		d := s.byUUID[info.UUID]
		if !s.gpmSupported(d) {
			continue
		}
		targets := []*device{d}
		if d.migEnabled {
			if !s.sym.GPMMIG {
				s.logger.Info("driver has no GPM per MIG instance: their activity unknown", "gpu", d.uuid)
			} else {
				for _, m := range d.instances {
					if m.gi >= 0 {
						targets = append(targets, m)
					}
				}
			}
		}
		for _, t := range targets {
			st, err := s.allocGPM()
			if err != nil {
				s.logger.Warn("GPM sample buffers not allocated: activity unknown", "gpu", t.uuid, "err", err)
				continue
			}
			t.gpm = st
		}
	}
}

func (s *Sampler) allocGPM() (*gpmState, error) {
	a, ret := s.lib.GpmSampleAlloc()
	if ret != nvml.SUCCESS {
		return nil, returnError("allocate GPM sample", ret)
	}
	b, ret := s.lib.GpmSampleAlloc()
	if ret != nvml.SUCCESS {
		if r := a.Free(); r != nvml.SUCCESS {
			s.logger.Warn("free GPM sample", "err", r)
		}
		return nil, returnError("allocate GPM sample", ret)
	}
	return &gpmState{prev: a, next: b}, nil
}

// freeGPM releases every sample buffer (Close).
func (s *Sampler) freeGPM() []error {
	var errs []error
	seen := map[*device]bool{}
	for _, d := range s.byUUID {
		if d.gpm == nil || seen[d] {
			continue
		}
		seen[d] = true
		for _, smp := range []nvml.GpmSample{d.gpm.prev, d.gpm.next} {
			if ret := smp.Free(); ret != nvml.SUCCESS {
				errs = append(errs, returnError("free GPM sample of "+d.uuid, ret))
			}
		}
		d.gpm = nil
	}
	return errs
}

// activity takes the GPM sample that ends the interval begun by the
// previous call for d and returns the interval's means. The first call,
// and the call after a failed sample, only start an interval. A failed
// metrics computation loses that interval only: its end still starts the
// next. A metric the driver could not compute is left invalid.
func (s *Sampler) activity(d *device, at time.Time) gpu.Opt[gpu.Activity] {
	st := d.gpm
	if st == nil {
		return gpu.Opt[gpu.Activity]{}
	}
	var ret nvml.Return
	if d.isMIG() {
		ret = d.parent.handle.GpmMigSampleGet(d.gi, st.next)
	} else {
		ret = d.handle.GpmSampleGet(st.next)
	}
	if ret != nvml.SUCCESS {
		st.hasPrev = false
		// A lost GPU is reported by the other readings.
		_ = s.readingFailed(d.uuid, "GPM sample", ret)
		return gpu.Opt[gpu.Activity]{}
	}
	start, started := st.prevAt, st.hasPrev
	st.prev, st.next = st.next, st.prev
	st.prevAt, st.hasPrev = at, true
	if !started {
		return gpu.Opt[gpu.Activity]{}
	}

	m := nvml.GpmMetricsGetType{NumMetrics: uint32(len(gpmMetrics)), Sample1: st.next, Sample2: st.prev}
	for i, id := range gpmMetrics {
		m.Metrics[i].MetricId = uint32(id)
	}
	if ret := s.lib.GpmMetricsGet(&m); ret != nvml.SUCCESS {
		_ = s.readingFailed(d.uuid, "GPM metrics", ret)
		return gpu.Opt[gpu.Activity]{}
	}
	a := gpu.Activity{Interval: max(at.Sub(start), 0)}
	for i, id := range gpmMetrics {
		got := m.Metrics[i]
		if got.NvmlReturn != uint32(nvml.SUCCESS) || got.MetricId != uint32(id) || math.IsNaN(got.Value) || math.IsInf(got.Value, 0) {
			continue
		}
		*activityField(&a, id) = gpu.Some(got.Value)
	}
	if !a.Any() {
		return gpu.Opt[gpu.Activity]{}
	}
	return gpu.Some(a)
}
