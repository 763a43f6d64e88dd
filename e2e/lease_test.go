package e2e

import (
	"testing"
)

// leaseState is what nodeLease holds, read under its lock.
type leaseState struct {
	alone                           bool
	scoped, opened, waiting, queued int
}

func (l *nodeLease) state() leaseState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return leaseState{l.alone, l.scoped, l.opened, l.waiting, l.queued}
}

// until waits until the lease's state is want; it waits on the lease's
// own condition, so it wakes at each change.
func (l *nodeLease) until(t *testing.T, what string, want leaseState) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for (leaseState{l.alone, l.scoped, l.opened, l.waiting, l.queued}) != want {
		l.wait()
	}
	t.Logf("%s: %+v", what, want)
}

// TestNodeLeaseOrder: the node's lease (doc.go, "The node's lease") lets
// scoped tests in while no whole-node test holds the node or waits for
// it, at most scopedAtOnce; once a whole-node test waits, scoped tests
// wait behind it, but for a whole-node test that shared the node; a
// waiting whole-node test gets the node after every holder, scoped tests
// let in by a share among them; waiting whole-node tests go by rank.
func TestNodeLeaseOrder(t *testing.T) {
	var l nodeLease
	done := func(f func()) chan struct{} {
		c := make(chan struct{})
		go func() { f(); close(c) }()
		return c
	}
	// A scoped test, then a whole-node test waiting behind it, then a
	// scoped test that must wait behind that one.
	l.lockScoped()
	w1 := done(func() { l.lockAlone(1) })
	l.until(t, "whole-node test waiting", leaseState{scoped: 1, waiting: 1})
	r2 := done(l.lockScoped)
	l.until(t, "scoped test behind it", leaseState{scoped: 1, waiting: 1, queued: 1})
	l.unlockScoped()
	<-w1
	l.until(t, "the whole-node test alone", leaseState{alone: true, queued: 1})

	// A second whole-node test waits; the first shares the node: the
	// scoped test comes in, the second whole-node test still waits.
	w2 := done(func() { l.lockAlone(1) })
	l.until(t, "second whole-node test waiting", leaseState{alone: true, waiting: 1, queued: 1})
	l.share()
	<-r2
	l.until(t, "shared", leaseState{scoped: 1, opened: 1, waiting: 1})
	// At most scopedAtOnce scoped tests beside it.
	more := make([]chan struct{}, scopedAtOnce)
	for i := range more {
		more[i] = done(l.lockScoped)
	}
	l.until(t, "scopedAtOnce in, one queued", leaseState{scoped: scopedAtOnce, opened: 1, waiting: 1, queued: 1})
	// The sharer ends: the queued scoped test stays out, the second
	// whole-node test waits for the scoped tests already in.
	l.unlockWhole(true)
	l.until(t, "sharer gone", leaseState{scoped: scopedAtOnce, waiting: 1, queued: 1})
	for range scopedAtOnce {
		l.unlockScoped()
	}
	<-w2
	l.until(t, "second whole-node test alone", leaseState{alone: true, queued: 1})
	l.unlockWhole(false)
	for _, c := range more {
		<-c
	}
	l.until(t, "the last scoped test in", leaseState{scoped: 1})

	// Whole-node tests waiting go by rank, whatever their arrival.
	late := done(func() { l.lockAlone(5) })
	l.until(t, "rank 5 waiting", leaseState{scoped: 1, waiting: 1})
	early := done(func() { l.lockAlone(0) })
	l.until(t, "rank 0 waiting", leaseState{scoped: 1, waiting: 2})
	l.unlockScoped()
	<-early
	l.until(t, "rank 0 alone, rank 5 waiting", leaseState{alone: true, waiting: 1})
	l.unlockWhole(false)
	<-late
	l.until(t, "rank 5 alone", leaseState{alone: true})
	l.unlockWhole(false)
}
