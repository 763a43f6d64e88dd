package nvml

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuprof/gpuprof/gpu"
)

// Versions reads the driver version and the highest CUDA version it
// supports. Only a missing driver version is an error; CUDADriver is left
// empty when the driver cannot tell.
func (s *Sampler) Versions(ctx context.Context) (gpu.Versions, error) {
	if err := s.usable(ctx); err != nil {
		return gpu.Versions{}, fmt.Errorf("versions: %w", err)
	}
	driver, ret := s.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return gpu.Versions{}, returnError("read driver version", ret)
	}
	v := gpu.Versions{Driver: driver}
	if !s.sym.CUDAVersion {
		return v, nil
	}
	if cv, ret := s.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		v.CUDADriver = cudaVersion(cv)
	} else {
		s.logger.Warn("CUDA driver version unreadable", "err", ret)
	}
	return v, nil
}

// cudaVersion formats NVML's 1000*major + 10*minor (12040 → "12.4").
func cudaVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// SampleDevice reads one GPU. A reading the GPU cannot give is left invalid;
// only a GPU that has fallen off the bus is an error. The energy counter is
// not read here (see Energy).
//
// For a MIG instance only MemoryUsed and, through GPM on the parent GPU,
// Activity are read: NVML has no utilisation per instance, and power and
// temperature belong to the physical GPU (reading them per instance would
// count them several times). GPM measures a GPU instance: the compute
// instances of one GPU instance read the same activity.
func (s *Sampler) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	d, err := s.lookup(ctx, "sample", uuid)
	if err != nil {
		return gpu.DeviceSample{}, err
	}
	out := gpu.DeviceSample{UUID: uuid, Time: s.now()}
	var lost error
	ok := func(what string, ret nvml.Return) bool {
		if ret == nvml.SUCCESS {
			return true
		}
		if err := s.readingFailed(uuid, what, ret); err != nil && lost == nil {
			lost = err
		}
		return false
	}
	h := d.handle

	if used, ret := s.memoryUsed(h); ok("memory", ret) {
		out.MemoryUsed = opt64(used)
	}
	if !d.isMIG() {
		if u, ret := h.GetUtilizationRates(); ok("utilisation", ret) {
			out.Util = opt32(u.Gpu)
			out.MemUtil = opt32(u.Memory)
		}
		if p, ret := h.GetPowerUsage(); ok("power", ret) {
			out.PowerMW = opt32(p)
		}
		if s.sym.Temperature {
			if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); ok("temperature", ret) {
				out.TempC = opt32(t)
			}
		}
	}
	if lost != nil {
		if d.gpm != nil {
			d.gpm.hasPrev = false
		}
		return gpu.DeviceSample{}, lost
	}
	s.gpmOnce.Do(s.setupGPM)
	out.Activity = s.activity(d, out.Time)
	return out, nil
}

// Energy reads a GPU's total-energy counter. It costs about 4 ms on an
// H200 (against ≤ 6 µs for every other reading): callers read it sparsely
// and integrate PowerMW in between. A MIG instance, a GPU without the
// counter and a driver without the function answer gpu.ErrUnsupported.
func (s *Sampler) Energy(ctx context.Context, uuid string) (uint64, error) {
	d, err := s.lookup(ctx, "energy", uuid)
	if err != nil {
		return 0, err
	}
	switch {
	case d.isMIG():
		return 0, fmt.Errorf("energy of %s: %w (energy belongs to the physical GPU)", uuid, gpu.ErrUnsupported)
	case !s.sym.Energy:
		return 0, fmt.Errorf("energy of %s: %w (driver has no energy counter)", uuid, gpu.ErrUnsupported)
	}
	e, ret := d.handle.GetTotalEnergyConsumption()
	if ret != nvml.SUCCESS {
		return 0, returnError("read energy of "+uuid, ret)
	}
	if e == math.MaxUint64 {
		return 0, fmt.Errorf("read energy of %s: counter not available now", uuid)
	}
	return e, nil
}

// memoryUsed prefers GetMemoryInfo_v2, whose Used leaves out the memory the
// driver reserves for itself; v1 counts that reserve as used by the job.
func (s *Sampler) memoryUsed(h nvml.Device) (uint64, nvml.Return) {
	if s.sym.MemoryV2 {
		m, ret := h.GetMemoryInfo_v2()
		if ret == nvml.SUCCESS || ret == nvml.ERROR_GPU_IS_LOST {
			return m.Used, ret
		}
		// Some drivers export v2 yet refuse it for some GPUs; v1 answers.
	}
	m, ret := h.GetMemoryInfo()
	return m.Used, ret
}

// readingFailed decides what a failed reading means: an error when the GPU
// is lost, otherwise nothing (the reading stays invalid). Unexpected codes
// are logged once per GPU, reading and code, not at every sample.
func (s *Sampler) readingFailed(uuid, what string, ret nvml.Return) error {
	if ret == nvml.ERROR_GPU_IS_LOST {
		return returnError(fmt.Sprintf("read %s of %s", what, uuid), ret)
	}
	if unavailable(ret) {
		return nil
	}
	key := fmt.Sprintf("%s/%s/%d", uuid, what, int32(ret))
	s.mu.Lock()
	first := !s.warned[key]
	s.warned[key] = true
	s.mu.Unlock()
	if first {
		s.logger.Warn("GPU reading failed; recorded as missing", "gpu", uuid, "reading", what, "err", ret)
	}
	return nil
}

// Processes lists the compute processes on a GPU or MIG instance with their
// memory and, on a GPU not in MIG mode, their SM utilisation since the
// previous call (mean of the driver's samples; invalid for a process with no
// sample in that period). On a GPU in MIG mode each process is reported
// under the UUID of the MIG instance it runs in.
func (s *Sampler) Processes(ctx context.Context, uuid string) ([]gpu.ProcessSample, error) {
	d, err := s.lookup(ctx, "processes", uuid)
	if err != nil {
		return nil, err
	}
	procs, ret := d.handle.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		return nil, returnError("list processes on "+uuid, ret)
	}
	out := make([]gpu.ProcessSample, 0, len(procs))
	for _, p := range procs {
		owner := uuid
		if d.migEnabled {
			if m := d.instanceFor(p.GpuInstanceId, p.ComputeInstanceId); m != nil {
				owner = m.uuid
			}
		}
		out = append(out, gpu.ProcessSample{PID: int(p.Pid), UUID: owner, MemoryUsed: opt64(p.UsedGpuMemory)})
	}
	// NVML keeps no per-process utilisation in MIG mode.
	if d.isMIG() || d.migEnabled || !s.sym.ProcessUtil {
		return out, nil
	}
	util, err := s.processUtil(d)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if u, ok := util[out[i].PID]; ok {
			out[i].SMUtil = gpu.Some(u)
		}
	}
	return out, nil
}

// processUtil returns the mean SM utilisation per PID over the driver's
// samples newer than the previous call's newest, and remembers the newest.
// The timestamp is advanced even when no process is listed, so that the
// first call after an idle period does not average in stale samples.
func (s *Sampler) processUtil(d *device) (map[int]uint32, error) {
	s.mu.Lock()
	since := s.lastSeen[d.uuid]
	s.mu.Unlock()
	samples, ret := d.handle.GetProcessUtilization(since)
	switch {
	case ret == nvml.ERROR_NOT_FOUND: // no sample newer than since
		return nil, nil
	case ret != nvml.SUCCESS:
		return nil, s.readingFailed(d.uuid, "process utilisation", ret)
	}
	type acc struct{ sum, n uint64 }
	accs := make(map[int]*acc)
	newest := since
	for _, smp := range samples {
		newest = max(newest, smp.TimeStamp)
		// Dropped here rather than by gpu.SanitizeProcess: once averaged,
		// a sentinel would be indistinguishable from a real value.
		if smp.SmUtil > 100 {
			continue
		}
		a := accs[int(smp.Pid)]
		if a == nil {
			a = &acc{}
			accs[int(smp.Pid)] = a
		}
		a.sum += uint64(smp.SmUtil)
		a.n++
	}
	s.mu.Lock()
	s.lastSeen[d.uuid] = newest
	s.mu.Unlock()
	out := make(map[int]uint32, len(accs))
	for pid, a := range accs {
		out[pid] = uint32((a.sum + a.n/2) / a.n)
	}
	return out, nil
}

// Accounting returns the driver's accounting records of a GPU, including
// processes that have exited. It returns an error wrapping
// gpu.ErrUnsupported when accounting mode is off, for MIG instances, and
// when the driver lacks accounting.
func (s *Sampler) Accounting(ctx context.Context, uuid string) ([]gpu.AccountingStats, error) {
	d, err := s.lookup(ctx, "accounting", uuid)
	if err != nil {
		return nil, err
	}
	what := "accounting of " + uuid
	switch {
	case d.isMIG():
		return nil, fmt.Errorf("%s: %w (no accounting per MIG instance)", what, gpu.ErrUnsupported)
	case !s.sym.Accounting:
		return nil, fmt.Errorf("%s: %w (driver has no accounting functions)", what, gpu.ErrUnsupported)
	}
	h := d.handle
	mode, ret := h.GetAccountingMode()
	if ret != nvml.SUCCESS {
		return nil, returnError(what+": read mode", ret)
	}
	if mode != nvml.FEATURE_ENABLED {
		return nil, fmt.Errorf("%s: %w (accounting mode is off)", what, gpu.ErrUnsupported)
	}
	pids, ret := h.GetAccountingPids()
	if ret != nvml.SUCCESS {
		return nil, returnError(what+": list processes", ret)
	}
	out := make([]gpu.AccountingStats, 0, len(pids))
	for _, pid := range pids {
		st, ret := h.GetAccountingStats(uint32(pid))
		if ret == nvml.ERROR_NOT_FOUND {
			// Overwritten in the driver's circular buffer since it was listed.
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, returnError(fmt.Sprintf("%s: process %d", what, pid), ret)
		}
		out = append(out, accountingStats(pid, st))
	}
	return out, nil
}

// accountingStats converts one record. gpu.AccountingStats has no room for
// "not available", so NVML's sentinel becomes 0 there instead of a huge
// number that would poison maxima.
func accountingStats(pid int, st nvml.AccountingStats) gpu.AccountingStats {
	out := gpu.AccountingStats{
		PID:       pid,
		GPUUtil:   opt32(st.GpuUtilization).Value,
		MemUtil:   opt32(st.MemoryUtilization).Value,
		MaxMemory: opt64(st.MaxMemoryUsage).Value,
		Time:      time.Duration(min(st.Time, math.MaxInt64/uint64(time.Millisecond))) * time.Millisecond,
		Running:   st.IsRunning != 0,
	}
	if st.StartTime != 0 && st.StartTime != math.MaxUint64 {
		out.Start = time.UnixMicro(int64(min(st.StartTime, math.MaxInt64)))
	}
	return out
}
