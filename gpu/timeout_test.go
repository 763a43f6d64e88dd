package gpu

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedSampler answers every call with canned values, but only once its
// gate is open: a stand-in for a driver call that hangs.
type gatedSampler struct {
	gate     chan struct{}
	openOnce sync.Once
	calls    atomic.Int32
	closeErr error
}

func newGatedSampler() *gatedSampler { return &gatedSampler{gate: make(chan struct{})} }

func (g *gatedSampler) open() { g.openOnce.Do(func() { close(g.gate) }) }

func (g *gatedSampler) enter() {
	g.calls.Add(1)
	<-g.gate
}

var (
	cannedDevices  = []Device{{Index: 0, UUID: "GPU-1", Minor: 0, MemoryTotal: 80 << 30}}
	cannedVersions = Versions{Driver: "550.54.15", CUDADriver: "12.4"}
	cannedSample   = DeviceSample{UUID: "GPU-1", Util: Some[uint32](42)}
	cannedProcs    = []ProcessSample{{PID: 7, UUID: "GPU-1", MemoryUsed: Some[uint64](1 << 30)}}
	cannedXIDs     = []XIDEvent{{UUID: "GPU-1", XID: 79}}
)

func (g *gatedSampler) Devices(context.Context) ([]Device, error) {
	g.enter()
	return cannedDevices, nil
}

func (g *gatedSampler) Versions(context.Context) (Versions, error) {
	g.enter()
	return cannedVersions, nil
}

func (g *gatedSampler) SampleDevice(_ context.Context, uuid string) (DeviceSample, error) {
	g.enter()
	if uuid != "GPU-1" {
		return DeviceSample{}, fmt.Errorf("sample %s: %w", uuid, ErrNotFound)
	}
	return cannedSample, nil
}

func (g *gatedSampler) Processes(_ context.Context, uuid string) ([]ProcessSample, error) {
	g.enter()
	if uuid != "GPU-1" {
		return nil, fmt.Errorf("processes %s: %w", uuid, ErrNotFound)
	}
	return cannedProcs, nil
}

func (g *gatedSampler) XIDEvents(context.Context) ([]XIDEvent, error) {
	g.enter()
	return cannedXIDs, nil
}

func (g *gatedSampler) Accounting(_ context.Context, uuid string) ([]AccountingStats, error) {
	g.enter()
	return nil, fmt.Errorf("accounting %s: %w", uuid, ErrUnsupported)
}

func (g *gatedSampler) Energy(_ context.Context, uuid string) (uint64, error) {
	g.enter()
	if uuid != "GPU-1" {
		return 0, fmt.Errorf("energy %s: %w", uuid, ErrNotFound)
	}
	return 123_456, nil
}

func (g *gatedSampler) Close() error {
	g.enter()
	return g.closeErr
}

func TestWithTimeoutPassesThrough(t *testing.T) {
	ctx := context.Background()
	fake := newGatedSampler()
	fake.open()
	fake.closeErr = errors.New("close failed")
	s := WithTimeout(fake, time.Minute)

	tests := []struct {
		name    string
		call    func() (any, error)
		want    any
		wantErr error
	}{
		{"Devices", func() (any, error) { return s.Devices(ctx) }, cannedDevices, nil},
		{"Versions", func() (any, error) { return s.Versions(ctx) }, cannedVersions, nil},
		{"SampleDevice", func() (any, error) { return s.SampleDevice(ctx, "GPU-1") }, cannedSample, nil},
		{"SampleDevice unknown", func() (any, error) { return s.SampleDevice(ctx, "GPU-2") }, DeviceSample{}, ErrNotFound},
		{"Processes", func() (any, error) { return s.Processes(ctx, "GPU-1") }, cannedProcs, nil},
		{"Processes unknown", func() (any, error) { return s.Processes(ctx, "GPU-2") }, []ProcessSample(nil), ErrNotFound},
		{"XIDEvents", func() (any, error) { return s.XIDEvents(ctx) }, cannedXIDs, nil},
		{"Accounting", func() (any, error) { return s.Accounting(ctx, "GPU-1") }, []AccountingStats(nil), ErrUnsupported},
		{"Energy", func() (any, error) { return s.Energy(ctx, "GPU-1") }, uint64(123_456), nil},
		{"Energy unknown", func() (any, error) { return s.Energy(ctx, "GPU-2") }, uint64(0), ErrNotFound},
		{"Close", func() (any, error) { return nil, s.Close() }, nil, fake.closeErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if !errors.Is(err, tt.wantErr) { // errors.Is(nil, nil) holds
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got, want := int(fake.calls.Load()), len(tests); got != want {
		t.Errorf("backend called %d times, want %d", got, want)
	}
}

func TestWithTimeoutHungBackend(t *testing.T) {
	const d = 100 * time.Millisecond
	ctx := context.Background()
	fake := newGatedSampler()
	t.Cleanup(fake.open) // never leave the stuck goroutine behind
	s := WithTimeout(fake, d)

	start := time.Now()
	_, err := s.Devices(ctx)
	if took := time.Since(start); took < d || took > d+2*time.Second {
		t.Errorf("hung call returned after %s, want about %s", took, d)
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("hung call: err = %v, want ErrTimeout", err)
	}

	// While the first call is stuck, others fail at once and do not reach
	// the backend.
	start = time.Now()
	_, err = s.SampleDevice(ctx, "GPU-1")
	if took := time.Since(start); took >= d {
		t.Errorf("call behind a hung one took %s, want well under %s", took, d)
	}
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("call behind a hung one: err = %v, want ErrTimeout", err)
	}
	if got := fake.calls.Load(); got != 1 {
		t.Errorf("backend called %d times, want 1 (only the hung call)", got)
	}

	// Once the hung call returns, the wrapper works again.
	fake.open()
	deadline := time.Now().Add(2 * time.Second)
	for {
		v, err := s.Versions(ctx)
		if err == nil {
			if v != cannedVersions {
				t.Errorf("Versions = %+v, want %+v", v, cannedVersions)
			}
			break
		}
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("after release: err = %v, want ErrTimeout until the hung call returns", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("wrapper still failing 2s after the hung call was released")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := fake.calls.Load(); got != 2 {
		t.Errorf("backend called %d times, want 2", got)
	}
}

func TestWithTimeoutContextCancelled(t *testing.T) {
	fake := newGatedSampler()
	t.Cleanup(fake.open)
	s := WithTimeout(fake, time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.XIDEvents(ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancelled call returned after %s", took)
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// panickySampler panics in SampleDevice, as a driver binding might.
type panickySampler struct{ gatedSampler }

func (p *panickySampler) SampleDevice(context.Context, string) (DeviceSample, error) {
	panic("nvml: invalid handle")
}

// A panic inside a driver call is that call's error: the caller (the
// agent's sampling loop, a hook) goes on, and later calls work.
func TestWithTimeoutRecoversPanic(t *testing.T) {
	p := &panickySampler{gatedSampler: *newGatedSampler()}
	p.open()
	s := WithTimeout(p, time.Second)
	_, err := s.SampleDevice(context.Background(), "GPU-1")
	if err == nil || !strings.Contains(err.Error(), "panicked: nvml: invalid handle") {
		t.Fatalf("err = %v, want the panic as the call's error", err)
	}
	if _, err := s.Devices(context.Background()); err != nil {
		t.Errorf("the call after a panic: %v, want it to work (not stuck)", err)
	}
}
