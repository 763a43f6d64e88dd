package nvml

import (
	"fmt"
	"math"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuprof/gpuprof/gpu"
)

// enumerate reads every GPU and MIG instance once. A GPU whose handle or
// UUID cannot be read is skipped with a warning rather than failing the
// node: inside a job's device cgroup NVML answers NO_PERMISSION for the GPUs
// the job was not given, and the rest must still be profiled.
func (s *Sampler) enumerate() error {
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return returnError("count GPUs", ret)
	}
	for i := range n {
		h, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			s.logger.Warn("skipping GPU: no handle", "index", i, "err", ret)
			continue
		}
		uuid, ret := h.GetUUID()
		if ret != nvml.SUCCESS || uuid == "" {
			s.logger.Warn("skipping GPU: no UUID", "index", i, "err", ret)
			continue
		}
		d := &device{uuid: uuid, handle: h}
		info := s.describe(i, d)
		s.byUUID[uuid] = d
		for _, m := range d.instances {
			s.byUUID[m.uuid] = m
		}
		s.inventory = append(s.inventory, info)
	}
	return nil
}

// describe reads the identity of one GPU. Missing fields are left at their
// zero value (Minor at -1) and logged; they are not worth losing the GPU.
func (s *Sampler) describe(index int, d *device) gpu.Device {
	log := s.logger.With("gpu", d.uuid)
	info := gpu.Device{Index: index, UUID: d.uuid, Minor: -1}
	h := d.handle

	if name, ret := h.GetName(); ret == nvml.SUCCESS {
		info.Name = name
	} else {
		log.Warn("GPU name unreadable", "err", ret)
	}
	if minor, ret := h.GetMinorNumber(); ret == nvml.SUCCESS {
		info.Minor = minor
	} else {
		log.Warn("GPU minor number unreadable", "err", ret)
	}
	if pci, ret := h.GetPciInfo(); ret == nvml.SUCCESS {
		info.PCIBusID = pciBusID(pci)
	} else {
		log.Warn("GPU PCI info unreadable", "err", ret)
	}
	if mem, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS && mem.Total != math.MaxUint64 {
		info.MemoryTotal = mem.Total
	} else {
		log.Warn("GPU memory size unreadable", "err", ret)
	}

	if !s.sym.MIG {
		return info
	}
	current, _, ret := h.GetMigMode()
	switch {
	case ret == nvml.SUCCESS:
		info.MIGEnabled = current == nvml.DEVICE_MIG_ENABLE
	case unavailable(ret): // a GPU without MIG
	default:
		log.Warn("MIG mode unreadable", "err", ret)
	}
	if !info.MIGEnabled {
		return info
	}
	d.migEnabled = true
	for _, m := range s.migInstances(d) {
		d.instances = append(d.instances, m.dev)
		info.MIG = append(info.MIG, m.info)
	}
	return info
}

type migInstance struct {
	dev  *device
	info gpu.MIGDevice
}

// migInstances lists the MIG instances of a GPU in MIG mode. NVML's
// instance slots are sparse: an empty slot answers ERROR_NOT_FOUND.
func (s *Sampler) migInstances(parent *device) []migInstance {
	log := s.logger.With("gpu", parent.uuid)
	slots, ret := parent.handle.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		log.Warn("MIG instance count unreadable", "err", ret)
		return nil
	}
	var out []migInstance
	for slot := range slots {
		h, ret := parent.handle.GetMigDeviceHandleByIndex(slot)
		if ret == nvml.ERROR_NOT_FOUND {
			continue
		}
		if ret != nvml.SUCCESS {
			log.Warn("skipping MIG slot: no handle", "slot", slot, "err", ret)
			continue
		}
		uuid, ret := h.GetUUID()
		if ret != nvml.SUCCESS || uuid == "" {
			log.Warn("skipping MIG slot: no UUID", "slot", slot, "err", ret)
			continue
		}
		m := migInstance{
			dev:  &device{uuid: uuid, handle: h, parent: parent, gi: -1, ci: -1},
			info: gpu.MIGDevice{UUID: uuid, ParentUUID: parent.uuid, GPUInstanceID: -1, ComputeInstanceID: -1},
		}
		if gi, ret := h.GetGpuInstanceId(); ret == nvml.SUCCESS {
			m.dev.gi, m.info.GPUInstanceID = gi, gi
		} else {
			log.Warn("MIG GPU instance id unreadable", "mig", uuid, "err", ret)
		}
		if ci, ret := h.GetComputeInstanceId(); ret == nvml.SUCCESS {
			m.dev.ci, m.info.ComputeInstanceID = ci, ci
		} else {
			log.Warn("MIG compute instance id unreadable", "mig", uuid, "err", ret)
		}
		if mem, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS && mem.Total != math.MaxUint64 {
			m.info.MemoryTotal = mem.Total
		} else {
			log.Warn("MIG memory size unreadable", "mig", uuid, "err", ret)
		}
		name, ret := h.GetName()
		if ret != nvml.SUCCESS {
			log.Warn("MIG name unreadable", "mig", uuid, "err", ret)
		}
		m.info.Profile = migProfile(name, m.info.MemoryTotal)
		out = append(out, m)
	}
	return out
}

// instanceFor finds the MIG instance a process reported on the parent GPU
// runs in.
func (d *device) instanceFor(gi, ci uint32) *device {
	for _, m := range d.instances {
		if m.gi >= 0 && m.ci >= 0 && uint32(m.gi) == gi && uint32(m.ci) == ci {
			return m
		}
	}
	return nil
}

// migProfile names a MIG instance's profile. NVML names a MIG device after
// its parent and profile ("NVIDIA A100-SXM4-40GB MIG 1g.5gb"); when the name
// carries no profile, the memory size rounded up to whole GiB ("5gb") is the
// best the instance itself tells: NVIDIA's profile names round the same way,
// but the slice count is then unknown.
func migProfile(name string, memoryTotal uint64) string {
	if i := strings.LastIndex(name, "MIG "); i >= 0 {
		if f := strings.Fields(name[i+len("MIG "):]); len(f) > 0 {
			return f[0]
		}
	}
	if memoryTotal == 0 {
		return ""
	}
	const gib = 1 << 30
	return fmt.Sprintf("%dgb", (memoryTotal+gib-1)/gib)
}

// pciBusID returns the bus id as NVML formats it ("00000000:17:00.0"),
// falling back to the legacy field that older drivers fill.
func pciBusID(p nvml.PciInfo) string {
	if id := cString(p.BusId[:]); id != "" {
		return id
	}
	return cString(p.BusIdLegacy[:])
}

// cString converts a NUL-terminated C char array; C's char is signed on
// some platforms and unsigned on others.
func cString[C int8 | uint8](b []C) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}
