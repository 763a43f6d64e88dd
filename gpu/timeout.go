package gpu

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// WithTimeout wraps s so that no call blocks its caller for longer than d.
//
// A driver call that hangs cannot be interrupted (it is a cgo call), so the
// call is left running in its own goroutine and the wrapper returns
// ErrTimeout. While that call is still stuck, every further call fails fast
// with ErrTimeout instead of piling up more stuck goroutines; once it
// returns, the wrapper works again.
func WithTimeout(s Sampler, d time.Duration) Sampler {
	return &timeoutSampler{s: s, d: d}
}

type timeoutSampler struct {
	s Sampler
	d time.Duration

	mu    sync.Mutex
	stuck bool
	// work is the queue of the one goroutine that makes the calls, started
	// with the first and ended by Close. One long-lived goroutine, not one
	// per call: a new goroutine's stack grows (and is copied) on every
	// call into the driver, which was a tenth of the agent's CPU.
	work chan func()
}

// submit hands fn to the worker. The caller holds mu and has just set
// stuck, so at most one call is in flight and the send never blocks.
func (t *timeoutSampler) submit(fn func()) {
	if t.work == nil {
		t.work = make(chan func(), 1)
		go func(work <-chan func()) {
			for f := range work {
				f()
			}
		}(t.work)
	}
	t.work <- fn
}

func call[T any](t *timeoutSampler, ctx context.Context, what string, fn func() (T, error)) (T, error) {
	var zero T
	t.mu.Lock()
	if t.stuck {
		t.mu.Unlock()
		return zero, fmt.Errorf("%s: %w (an earlier call is still hung)", what, ErrTimeout)
	}
	t.stuck = true // cleared by the worker when the call returns

	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	t.submit(func() {
		// A panic in the driver binding is the call's error, not the
		// process's end (the agent samples on; a hook exits 0 anyway).
		defer func() {
			if p := recover(); p != nil {
				t.mu.Lock()
				t.stuck = false
				t.mu.Unlock()
				done <- result{err: fmt.Errorf("%s: panicked: %v\n%s", what, p, debug.Stack())}
			}
		}()
		v, err := fn()
		t.mu.Lock()
		t.stuck = false
		t.mu.Unlock()
		done <- result{v, err}
	})
	t.mu.Unlock()
	timer := time.NewTimer(t.d)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
		return zero, fmt.Errorf("%s: %w after %s", what, ErrTimeout, t.d)
	case <-ctx.Done():
		return zero, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

func (t *timeoutSampler) Devices(ctx context.Context) ([]Device, error) {
	return call(t, ctx, "devices", func() ([]Device, error) { return t.s.Devices(ctx) })
}

func (t *timeoutSampler) Versions(ctx context.Context) (Versions, error) {
	return call(t, ctx, "versions", func() (Versions, error) { return t.s.Versions(ctx) })
}

func (t *timeoutSampler) SampleDevice(ctx context.Context, uuid string) (DeviceSample, error) {
	return call(t, ctx, "sample "+uuid, func() (DeviceSample, error) { return t.s.SampleDevice(ctx, uuid) })
}

func (t *timeoutSampler) Processes(ctx context.Context, uuid string) ([]ProcessSample, error) {
	return call(t, ctx, "processes "+uuid, func() ([]ProcessSample, error) { return t.s.Processes(ctx, uuid) })
}

func (t *timeoutSampler) XIDEvents(ctx context.Context) ([]XIDEvent, error) {
	return call(t, ctx, "xid events", func() ([]XIDEvent, error) { return t.s.XIDEvents(ctx) })
}

func (t *timeoutSampler) Accounting(ctx context.Context, uuid string) ([]AccountingStats, error) {
	return call(t, ctx, "accounting "+uuid, func() ([]AccountingStats, error) { return t.s.Accounting(ctx, uuid) })
}

func (t *timeoutSampler) Energy(ctx context.Context, uuid string) (uint64, error) {
	return call(t, ctx, "energy "+uuid, func() (uint64, error) { return t.s.Energy(ctx, uuid) })
}

// Close waits for no stuck call: closing a hung driver would hang too. The
// worker ends with a Close that returned; a later call starts another.
func (t *timeoutSampler) Close() error {
	_, err := call(t, context.Background(), "close", func() (struct{}, error) { return struct{}{}, t.s.Close() })
	t.mu.Lock()
	if !t.stuck && t.work != nil {
		close(t.work)
		t.work = nil
	}
	t.mu.Unlock()
	return err
}
