package nvml

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuprof/gpuprof/gpu"
)

// maxDrain bounds one XIDEvents call, so that a GPU flooding the event set
// cannot keep the caller's sampling loop inside NVML; the rest waits for the
// next call.
const maxDrain = 1024

// openEvents creates the event set that collects XID errors of every GPU.
// It returns nil when the driver cannot deliver them on any GPU; XIDEvents
// then reports gpu.ErrUnsupported.
func (s *Sampler) openEvents() nvml.EventSet {
	if !s.sym.Events || len(s.inventory) == 0 {
		return nil
	}
	set, ret := s.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		s.logger.Warn("XID events unavailable: cannot create event set", "err", ret)
		return nil
	}
	registered := 0
	for _, info := range s.inventory {
		ret := s.byUUID[info.UUID].handle.RegisterEvents(nvml.EventTypeXidCriticalError, set)
		switch {
		case ret == nvml.SUCCESS:
			registered++
		case unavailable(ret):
			s.logger.Debug("GPU cannot report XID events", "gpu", info.UUID, "err", ret)
		default:
			s.logger.Warn("XID events of GPU not watched", "gpu", info.UUID, "err", ret)
		}
	}
	if registered == 0 {
		if ret := set.Free(); ret != nvml.SUCCESS {
			s.logger.Warn("free unused event set", "err", ret)
		}
		return nil
	}
	return set
}

// XIDEvents drains the XID errors reported since the previous call without
// waiting for new ones. If the event set fails midway, the events drained
// before the failure are returned along with the error, as they cannot be
// read again.
func (s *Sampler) XIDEvents(ctx context.Context) ([]gpu.XIDEvent, error) {
	if err := s.usable(ctx); err != nil {
		return nil, fmt.Errorf("xid events: %w", err)
	}
	if s.events == nil {
		return nil, fmt.Errorf("xid events: %w", gpu.ErrUnsupported)
	}
	var out []gpu.XIDEvent
	for range maxDrain {
		ev, ret := s.events.Wait(0)
		if ret == nvml.ERROR_TIMEOUT {
			break
		}
		if ret != nvml.SUCCESS {
			return out, returnError("wait for xid events", ret)
		}
		if ev.EventType&nvml.EventTypeXidCriticalError == 0 {
			continue
		}
		out = append(out, gpu.XIDEvent{UUID: s.eventUUID(ev), XID: ev.EventData, Time: s.now()})
	}
	return out, nil
}

// eventUUID names the GPU of an event. An XID is worth keeping even when
// its GPU cannot be named, so a failure leaves the UUID empty.
func (s *Sampler) eventUUID(ev nvml.EventData) string {
	if ev.Device == nil {
		return ""
	}
	uuid, ret := ev.Device.GetUUID()
	if ret != nvml.SUCCESS {
		s.logger.Warn("GPU of XID event unknown", "xid", ev.EventData, "err", ret)
		return ""
	}
	return uuid
}
