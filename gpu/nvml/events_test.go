package nvml

import (
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestXIDEvents(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	s := n.open(t)
	for i, g := range n.gpus {
		if g.registered != nvml.EventTypeXidCriticalError {
			t.Errorf("GPU %d: registered event types %#x, want XID only", i, g.registered)
		}
	}
	n.queue(
		nvml.EventData{Device: n.gpus[2].dev, EventType: nvml.EventTypeXidCriticalError, EventData: 79},
		nvml.EventData{Device: n.gpus[0].dev, EventType: nvml.EventTypeSingleBitEccError, EventData: 1},
		nvml.EventData{Device: n.gpus[5].dev, EventType: nvml.EventTypeXidCriticalError, EventData: 48},
	)
	got, err := s.XIDEvents(ctx)
	if err != nil {
		t.Fatalf("XIDEvents: %v", err)
	}
	want := []gpu.XIDEvent{
		{UUID: n.gpus[2].dev.UUID, XID: 79, Time: fixedTime},
		{UUID: n.gpus[5].dev.UUID, XID: 48, Time: fixedTime},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	for i, c := range n.set.WaitCalls() {
		if c.V != 0 {
			t.Errorf("Wait call %d: timeout %d ms, want 0 (never block)", i, c.V)
		}
	}
	if got, err := s.XIDEvents(ctx); err != nil || len(got) != 0 {
		t.Errorf("second XIDEvents = %+v, %v; want none", got, err)
	}
}

func TestXIDEventsFailure(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	s := n.open(t)
	n.queue(nvml.EventData{Device: n.gpus[1].dev, EventType: nvml.EventTypeXidCriticalError, EventData: 13})
	n.waitRet = nvml.ERROR_UNKNOWN
	got, err := s.XIDEvents(ctx)
	if !errors.Is(err, nvml.ERROR_UNKNOWN) {
		t.Errorf("err = %v, want ERROR_UNKNOWN", err)
	}
	if len(got) != 1 || got[0].XID != 13 {
		t.Errorf("got %+v, want the event drained before the failure", got)
	}
}

func TestXIDEventsBounded(t *testing.T) {
	n := newFakeNode(dgxh100.New())
	s := n.open(t)
	flood := make([]nvml.EventData, maxDrain+10)
	for i := range flood {
		flood[i] = nvml.EventData{Device: n.gpus[0].dev, EventType: nvml.EventTypeXidCriticalError, EventData: 31}
	}
	n.queue(flood...)
	for _, want := range []int{maxDrain, 10} {
		got, err := s.XIDEvents(ctx)
		if err != nil || len(got) != want {
			t.Errorf("XIDEvents: %d events, %v; want %d", len(got), err, want)
		}
	}
}
