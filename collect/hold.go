package collect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// A push names a job its node really ran (issue 39, finding 8): under
// PlacementSlurm a profile is stored only once Slurm's records (jobcomp's
// reports, sacct imports, in the collector's own database) place its job
// on its node. Until then it is held: kept in memory, bounded per node
// and in age, and answered 503, so the node keeps it in its outbox and
// pushes it again; the collector stores a held profile as soon as the
// records arrive, and the node's next push finds it stored. A node that
// pushes a job id before the job exists (to have the real node's profile
// refused as another owner's) is held until the records name the real
// node, and never stored.

// Placement is how the collector decides that a pushed profile's job ran
// on the profile's node.
type Placement string

const (
	// PlacementSlurm: Slurm's records must place the job on the node
	// (the default).
	PlacementSlurm Placement = "slurm"
	// PlacementSender: the authenticated sender's word suffices (it is
	// still bound to its node): for sites whose collector gets no
	// jobcomp records nor sacct imports.
	PlacementSender Placement = "sender"
)

// Hold bounds: HeldPerNode profiles of one node at once, each for at
// most HoldFor; heldBytesPerNode and heldBytesTotal bound the memory.
const (
	DefaultHeldPerNode = 1000
	DefaultHoldFor     = time.Hour
	heldBytesPerNode   = 64 << 20
	heldBytesTotal     = 512 << 20
	// releaseEvery is how often held profiles are looked at again.
	releaseEvery = 2 * time.Second
)

// held is one profile waiting for Slurm's records.
type held struct {
	j     profile.Job
	size  int
	since time.Time // first held (a repeated push keeps it)
}

// holdings are the profiles held, by key.
type holdings struct {
	perNode  int
	holdFor  time.Duration
	now      func() time.Time
	mu       sync.Mutex
	byKey    map[profile.Key]*held
	count    map[NodeRef]int
	bytes    map[NodeRef]int
	allBytes int
}

func newHoldings(perNode int, holdFor time.Duration, now func() time.Time) *holdings {
	if perNode <= 0 {
		perNode = DefaultHeldPerNode
	}
	if holdFor <= 0 {
		holdFor = DefaultHoldFor
	}
	if now == nil {
		now = time.Now
	}
	return &holdings{perNode: perNode, holdFor: holdFor, now: now, byKey: map[profile.Key]*held{},
		count: map[NodeRef]int{}, bytes: map[NodeRef]int{}}
}

// hold keeps j (size bytes as pushed) until its job is placed. ok false:
// its node's share is full, and j is not kept (the node still has it).
func (h *holdings) hold(j profile.Job, size int) (ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ref := NodeRef{Cluster: j.Cluster, Node: j.Node}
	since := h.now()
	if old := h.byKey[j.Key]; old != nil {
		since = old.since
		h.dropLocked(j.Key)
	}
	if h.count[ref] >= h.perNode || h.bytes[ref]+size > heldBytesPerNode || h.allBytes+size > heldBytesTotal {
		return false
	}
	h.byKey[j.Key] = &held{j: j, size: size, since: since}
	h.count[ref]++
	h.bytes[ref] += size
	h.allBytes += size
	return true
}

func (h *holdings) dropLocked(k profile.Key) {
	e := h.byKey[k]
	if e == nil {
		return
	}
	ref := NodeRef{Cluster: k.Cluster, Node: k.Node}
	delete(h.byKey, k)
	if h.count[ref]--; h.count[ref] <= 0 {
		delete(h.count, ref)
		delete(h.bytes, ref)
	} else {
		h.bytes[ref] -= e.size
	}
	h.allBytes -= e.size
}

// drop forgets k's profile if it is still e (a newer push replaced it
// otherwise).
func (h *holdings) drop(k profile.Key, e *held) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKey[k] == e {
		h.dropLocked(k)
	}
}

// forget forgets k's profile, whichever it is.
func (h *holdings) forget(k profile.Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(k)
}

// snapshot returns the profiles held now, and forgets (and returns) those
// held longer than holdFor.
func (h *holdings) snapshot() (live map[profile.Key]*held, expired []profile.Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	live = make(map[profile.Key]*held, len(h.byKey))
	for k, e := range h.byKey {
		if now.Sub(e.since) > h.holdFor {
			h.dropLocked(k)
			expired = append(expired, k)
			continue
		}
		live[k] = e
	}
	return live, expired
}

// len is how many profiles are held.
func (h *holdings) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byKey)
}

// placed says whether Slurm's records place j's job on j's node; where
// they do not, why is the answer's text.
func (s *Server) placed(ctx context.Context, j profile.Job) (ok bool, why string, err error) {
	if s.opts.Placement == PlacementSender {
		return true, "", nil
	}
	p, err := s.db.PlacedOn(ctx, j.Cluster, j.JobID, j.Node)
	if err != nil {
		return false, "", err
	}
	switch {
	case p.OnNode:
		return true, "", nil
	case len(p.Nodes) == 0:
		return false, fmt.Sprintf("Slurm's records do not show job %s/%s yet", j.Cluster, j.JobID), nil
	}
	return false, fmt.Sprintf("Slurm's records place job %s/%s on %s, not on %s", j.Cluster, j.JobID,
		strings.Join(p.Nodes, ", "), j.Node), nil
}

// holdPush answers a push whose job Slurm's records do not place on its
// node yet: held (or, with its node's share full, not even that), 503,
// and the node retries.
func (s *Server) holdPush(w http.ResponseWriter, r *http.Request, j profile.Job, size int, why string) {
	if sw, ok := w.(*statusWriter); ok {
		sw.reason = RejectHeld
	}
	w.Header().Set("Retry-After", "5")
	kept := s.held.hold(j, size)
	msg := why + "; the profile is held until they do (serve.placement)"
	if !kept {
		msg = why + fmt.Sprintf("; node %s/%s already has %d profiles held (serve.held_per_node), or %d MiB; push it again later",
			j.Cluster, j.Node, s.held.perNode, heldBytesPerNode>>20)
	}
	s.refusals.Refuse(RefuseHeld, "push held: its job is not yet on its node in Slurm's records",
		"cluster", j.Cluster, "job", j.JobID, "node", j.Node, "kept", kept, "why", why)
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	http.Error(w, msg, http.StatusServiceUnavailable)
}

// releaseHeld stores every held profile whose job Slurm's records now
// place on its node, and forgets those held longer than HoldFor (their
// nodes still have them).
func (s *Server) releaseHeld(ctx context.Context) {
	live, expired := s.held.snapshot()
	for _, k := range expired {
		s.log.Warn("held profile forgotten: Slurm's records did not place its job on its node in time; the node pushes it again",
			"cluster", k.Cluster, "job", k.JobID, "node", k.Node, "hold_for", s.held.holdFor)
	}
	for k, e := range live {
		if ctx.Err() != nil {
			return
		}
		ok, _, err := s.placed(ctx, e.j)
		if err != nil || !ok {
			continue // locked: next round; not placed: still held
		}
		err = s.opts.Metrics.store(ctx, s.db, e.j)
		switch {
		case err == nil, errors.Is(err, store.ErrFinished):
			s.log.Info("held profile stored: Slurm's records place its job on its node", "cluster", k.Cluster, "job", k.JobID, "node", k.Node)
		case errors.Is(err, store.ErrLocked):
			continue
		default:
			s.log.Warn("held profile refused", "cluster", k.Cluster, "job", k.JobID, "node", k.Node, "err", err)
		}
		s.held.drop(k, e)
	}
}

// releaseLoop runs releaseHeld every releaseEvery until ctx ends.
func (s *Server) releaseLoop(ctx context.Context) {
	t := time.NewTicker(releaseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.held.len() > 0 {
			s.releaseHeld(ctx)
		}
	}
}
