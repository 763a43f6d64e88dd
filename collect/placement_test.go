package collect

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// placedRecord is jobcomp's report of job id of uid on nodes.
func placedRecord(id string, uid int, nodes string) slurmext.JobRecord {
	return slurmext.JobRecord{Cluster: "lab", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		User: "user", UID: uid, State: "COMPLETED", Start: t0, End: t0.Add(time.Hour), NodeList: nodes, Source: "jobcomp"}
}

// pusher pushes profiles to s as root on each profile's own node and
// returns the answer's status and text.
func pusher(t *testing.T, s *Server, m *fakeMunge) func(j profile.Job) (int, string) {
	return func(j profile.Job) (int, string) {
		body := mustJSON(t, j)
		w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, rootOn(j.Node), "POST", "/v1/profiles", body))
		msg := strings.TrimSpace(w.Body.String())
		t.Logf("push %s/%s uid %d: %d %s", j.JobID, j.Node, j.UID, w.Code, msg)
		return w.Code, msg
	}
}

// TestPreClaimedJobIDHeld is issue 39's finding 8: root on gpu02 pushes a
// profile for job 9001 before the job exists, naming bob as its owner;
// Slurm then runs the job, alice's, on gpu01, whose node pushes its
// profile as the job ends, before jobcomp's record is in. Under
// serve.placement = "slurm" (the default) both are held; once the record
// places the job on gpu01, gpu01's is stored as alice's and gpu02's never
// is. Before (the sender's word alone, which PlacementSender still
// takes), gpu02's push was stored at once and gpu01's refused with 409:
// run with PlacementSender this test fails on exactly those checks.
func TestPreClaimedJobIDHeld(t *testing.T) {
	ctx := context.Background()
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Placement: PlacementSlurm})
	push := pusher(t, s, m)
	if got, msg := push(testJob("9001", "gpu02", bobUID, true)); got != http.StatusServiceUnavailable {
		t.Errorf("gpu02's push before the job exists: %d, want 503 (held)", got)
	} else if !strings.Contains(msg, "do not show job lab/9001 yet") {
		t.Errorf("the held answer %q does not say why", msg)
	}
	if got, _ := push(testJob("9001", "gpu01", aliceUID, true)); got != http.StatusServiceUnavailable {
		t.Errorf("gpu01's push before jobcomp's record: %d, want 503 (held)", got)
	}
	if err := db.PutSchedJob(ctx, placedRecord("9001", aliceUID, "gpu01")); err != nil {
		t.Fatal(err)
	}
	s.releaseHeld(ctx) // what serve does every 2 s
	j, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: "9001", Node: "gpu01"})
	if err != nil || j.UID != aliceUID {
		t.Errorf("gpu01's profile: uid %d, %v; want alice's (%d), stored", j.UID, err, aliceUID)
	}
	if _, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: "9001", Node: "gpu02"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("gpu02's claim was stored: %v", err)
	}
	if got, _ := push(testJob("9001", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Errorf("gpu01's retry: %d, want 204", got)
	}
	// gpu02 pushes again: still held, the answer names the real node.
	if got, msg := push(testJob("9001", "gpu02", bobUID, true)); got != http.StatusServiceUnavailable ||
		!strings.Contains(msg, "place job lab/9001 on gpu01, not on gpu02") {
		t.Errorf("gpu02's push after the record: %d %q, want 503 naming gpu01", got, msg)
	}
	// The default is "slurm".
	def := NewServer(db, m, ServerOptions{PushUIDs: []int{0}, Resolve: fakeResolve(testHosts)}, testLogger(t))
	if got, _ := pusher(t, def, m)(testJob("9002", "gpu02", bobUID, true)); got != http.StatusServiceUnavailable {
		t.Errorf("with no placement set, a push Slurm's records do not place: %d, want 503", got)
	}
}

// TestHeldProfileStoredWhenRecordsArrive: a profile pushed before
// jobcomp's record is held and stored by the collector itself once the
// record places it, before the node pushes it again; a requeued job is
// placed on the nodes of any of its runs.
func TestHeldProfileStoredWhenRecordsArrive(t *testing.T) {
	ctx := context.Background()
	metrics := NewMetrics(nil)
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Placement: PlacementSlurm, Metrics: metrics})
	push := pusher(t, s, m)
	for _, j := range []profile.Job{testJob("10", "gpu01", aliceUID, true), testJob("11", "gpu03", aliceUID, true)} {
		if got, _ := push(j); got != http.StatusServiceUnavailable {
			t.Fatalf("push of %s before its record: %d, want 503", j.JobID, got)
		}
	}
	fams := scrapeMetrics(t, metrics.Handler(), false)
	if got, _ := sample(fams, "gpuprof_serve_pushes_rejected", map[string]string{"reason": RejectHeld}); got != 2 {
		t.Errorf("held pushes counted %v, want 2", got)
	}
	// Job 10's record; job 11 ran first on gpu02, then, requeued, on gpu03.
	first := placedRecord("11", aliceUID, "gpu02")
	first.State, first.End = "REQUEUED", t0.Add(time.Minute)
	second := placedRecord("11", aliceUID, "gpu[03-04]")
	second.Start = t0.Add(2 * time.Minute)
	for _, r := range []slurmext.JobRecord{placedRecord("10", aliceUID, "gpu01"), first, second} {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	s.releaseHeld(ctx)
	for _, id := range []string{"10", "11"} {
		node := map[string]string{"10": "gpu01", "11": "gpu03"}[id]
		if _, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: id, Node: node}); err != nil {
			t.Errorf("held profile of job %s on %s not stored once placed: %v", id, node, err)
		}
	}
	if n := s.held.len(); n != 0 {
		t.Errorf("%d profiles still held after their records", n)
	}
	// The node's retry finds it stored and is acknowledged.
	if got, _ := push(testJob("10", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Errorf("the node's retry: %d, want 204", got)
	}
}

// TestHoldBounded: a node holds at most HeldPerNode profiles, each for at
// most HoldFor; beyond, its pushes are answered 503 and not kept (the
// node still has them), and other nodes' holds are untouched.
func TestHoldBounded(t *testing.T) {
	ctx := context.Background()
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Placement: PlacementSlurm, HeldPerNode: 3, HoldFor: time.Hour})
	now := t0
	s.held.now = func() time.Time { return now }
	push := pusher(t, s, m)
	for i := range 10 {
		if got, _ := push(testJob(strconv.Itoa(100+i), "gpu02", bobUID, true)); got != http.StatusServiceUnavailable {
			t.Fatalf("flood push %d: %d, want 503", i, got)
		}
	}
	if got, msg := push(testJob("999", "gpu02", bobUID, true)); got != http.StatusServiceUnavailable ||
		!strings.Contains(msg, "serve.held_per_node") {
		t.Errorf("push over gpu02's share: %d %q, want 503 naming serve.held_per_node", got, msg)
	}
	if got, _ := push(testJob("20", "gpu01", aliceUID, true)); got != http.StatusServiceUnavailable {
		t.Fatalf("gpu01's push: %d, want 503", got)
	}
	if n := s.held.len(); n != 4 {
		t.Errorf("held %d profiles, want 3 of gpu02 and 1 of gpu01", n)
	}
	// An hour and a second later, all are forgotten; gpu01's, placed then,
	// is stored from its node's next push.
	now = now.Add(time.Hour + time.Second)
	s.releaseHeld(ctx)
	if n := s.held.len(); n != 0 {
		t.Errorf("%d profiles held past hold_for", n)
	}
	if err := db.PutSchedJob(ctx, placedRecord("20", aliceUID, "gpu01")); err != nil {
		t.Fatal(err)
	}
	if got, _ := push(testJob("20", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Errorf("gpu01's push once placed: %d, want 204", got)
	}
}

// TestSenderPlacementTrustsTheNode is serve.placement = "sender"'s
// residual, as docs/security.md states it: the authenticated node's word
// places the job, so a node may claim a job id before the job exists, and
// the real node's profile is then refused as another owner's.
func TestSenderPlacementTrustsTheNode(t *testing.T) {
	ctx := context.Background()
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Placement: PlacementSender})
	push := pusher(t, s, m)
	if got, _ := push(testJob("9001", "gpu02", bobUID, true)); got != http.StatusNoContent {
		t.Errorf("gpu02's pre-claim under placement sender: %d, want 204 (stored)", got)
	}
	if got, _ := push(testJob("9001", "gpu01", aliceUID, true)); got != http.StatusConflict {
		t.Errorf("the real node's profile after the pre-claim: %d, want 409", got)
	}
	if _, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: "9001", Node: "gpu02"}); err != nil {
		t.Errorf("gpu02's claim: %v, want stored", err)
	}
}
