package sim

import (
	"context"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/gputest"
)

// The charged node is a gpu.Sampler like any other, with an energy counter.
func TestChargedConformance(t *testing.T) {
	gputest.RunConformance(t, func(t *testing.T) gpu.Sampler { return Charge(openConformanceNode(t), H200Cost) })
}

// TestChargedCost: each call takes at least what the cost table charges
// it (the energy counter 4 ms, a sample with GPM 64 µs), and the counter
// is the GPUs' sampled power integrated over the node's clock.
func TestChargedCost(t *testing.T) {
	ctx := context.Background()
	dir, procfs, devs := newTestNode(t)
	clock := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	n, err := Open(dir, WithProcfs(procfs), WithClock(func() time.Time { return clock }))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	c := Charge(n, H200Cost)
	uuid := devs[0].UUID

	tests := []struct {
		name string
		call func() error
		min  time.Duration
	}{
		{"SampleDevice with GPM (H100)", func() error { _, err := c.SampleDevice(ctx, uuid); return err }, 64400 * time.Nanosecond},
		{"Processes", func() error { _, err := c.Processes(ctx, uuid); return err }, 12200 * time.Nanosecond},
		{"XIDEvents", func() error { _, err := c.XIDEvents(ctx); return err }, 2200 * time.Nanosecond},
		{"Energy", func() error { _, err := c.Energy(ctx, uuid); return err }, 4 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			if err := tt.call(); err != nil {
				t.Fatal(err)
			}
			if got := time.Since(start); got < tt.min {
				t.Errorf("took %v, want at least %v", got, tt.min)
			}
		})
	}

	// An idle GPU draws 60 W: 10 s of it is 600 J = 600,000 mJ.
	e0, err := c.Energy(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SampleDevice(ctx, uuid); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Second)
	e1, err := c.Energy(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e1-e0, uint64(10*idlePowerMW); got != want {
		t.Errorf("energy over 10 s idle = %d mJ, want %d", got, want)
	}
}
