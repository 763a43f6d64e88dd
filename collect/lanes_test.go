package collect

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// gatedMunge is fakeMunge whose decodes of one kind of request (pushes,
// or queries) wait until the gate opens, counting how many are being
// decoded at once: a burst that holds every slot of its lane.
type gatedMunge struct {
	*fakeMunge
	gated string // the binding's method that waits: "POST" or "GET"
	gate  chan struct{}
	once  sync.Once

	mu            sync.Mutex
	inFlight, top int
}

func newGatedMunge(method string) *gatedMunge {
	return &gatedMunge{fakeMunge: newFakeMunge(), gated: method, gate: make(chan struct{})}
}

func (g *gatedMunge) Decode(ctx context.Context, cred string) (Identity, []byte, error) {
	id, payload, err := g.fakeMunge.Decode(ctx, cred)
	if err != nil || !strings.HasPrefix(string(payload), g.gated+" ") {
		return id, payload, err
	}
	g.mu.Lock()
	g.inFlight++
	g.top = max(g.top, g.inFlight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.gate:
		return id, payload, nil
	case <-ctx.Done():
		return Identity{}, nil, ctx.Err()
	}
}

// open lets every gated decode through (once).
func (g *gatedMunge) open() { g.once.Do(func() { close(g.gate) }) }

func (g *gatedMunge) counts() (inFlight, top int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight, g.top
}

// lanePeople counts the holders and waiters of a lane's slots.
func lanePeople(l decodeLane) int {
	l.slots.mu.Lock()
	defer l.slots.mu.Unlock()
	n := 0
	for _, ks := range l.slots.byKey {
		n += ks.refs
	}
	return n
}

// waitFor polls cond until it holds; the wait is a guard against a hung
// test, not a timing figure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never came: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// burstNodes are n nodes on n hosts of their own, each bound to its node
// (serve.node_hosts), as a burst of nodes ending their jobs at once.
func burstNodes(n int) map[string][]NodeRef {
	hosts := map[string][]NodeRef{}
	for i := range n {
		hosts[fmt.Sprintf("10.1.0.%d", i+1)] = []NodeRef{{Cluster: "lab", Node: fmt.Sprintf("b%03d", i)}}
	}
	return hosts
}

// TestPushBurstLeavesQueryLane (issue 42): a job-end burst of pushes from
// 16 nodes, more than the push lane's decodes, holds every push slot with
// the rest waiting; a user's query is decoded and answered meanwhile, and
// the pushes never took more than their lane's slots. Before, pushes and
// queries shared one pool of decodes: the burst held every one and the
// query waited out the queue wait behind it and was answered 503.
func TestPushBurstLeavesQueryLane(t *testing.T) {
	const pushDecodes, nodes = 4, 16
	g := newGatedMunge(http.MethodPost)
	db := openStore(t)
	seedViews(t, db)
	s := NewServer(db, g, ServerOptions{PushUIDs: []int{0}, Resolve: fakeResolve(testHosts), Placement: PlacementSender,
		NodeHosts: burstNodes(nodes), Limits: Limits{PushDecodes: pushDecodes, QueryDecodes: 4, QueueWait: 30 * time.Second}}, testLogger(t))
	h := s.Handler()
	codes := make(chan int, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		host := fmt.Sprintf("10.1.0.%d", i+1)
		j := testJob(fmt.Sprint(500+i), fmt.Sprintf("b%03d", i), aliceUID, true)
		body := mustJSON(t, j)
		r := httptest.NewRequest("POST", "/v1/profiles", strings.NewReader(string(body)))
		r.RemoteAddr = host + ":4000"
		r.Header.Set("Authorization", signed(g.fakeMunge, Identity{UID: 0, Host: host}, "POST", "/v1/profiles", body))
		wg.Go(func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			codes <- w.Code
		})
	}
	t.Cleanup(func() { g.open(); wg.Wait() })
	waitFor(t, "every push decode held and the rest of the burst waiting", func() bool {
		in, _ := g.counts()
		return in == pushDecodes && lanePeople(s.pushDecodes) == nodes
	})

	for i := range 3 {
		target := "/v1/jobs"
		r := httptest.NewRequest("GET", target, nil)
		r.RemoteAddr = "10.0.0.2:5555"
		r.Header.Set("Authorization", signed(g.fakeMunge, alice, "GET", target, nil))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("query %d during the burst: %d %s, want 200", i, w.Code, strings.TrimSpace(w.Body.String()))
		}
		if ids := viewIDs(t, w.Body.Bytes()); len(ids) == 0 {
			t.Errorf("query %d during the burst: no jobs of alice's", i)
		}
	}
	if in, top := g.counts(); in != pushDecodes || top != pushDecodes {
		t.Errorf("push decodes: %d held, at most %d, want %d: pushes took slots of another lane", in, top, pushDecodes)
	}
	if waiting := lanePeople(s.pushDecodes) - pushDecodes; waiting != nodes-pushDecodes {
		t.Errorf("%d pushes waiting after the queries, want %d", waiting, nodes-pushDecodes)
	}
	// The burst then drains: every push stored.
	g.open()
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusNoContent {
			t.Errorf("a push of the burst: %d, want 204", c)
		}
	}
}

// TestQueriesLeavePushLane (issue 42): users' queries holding every query
// decode, more waiting, take no push slot: a node's push is decoded and
// stored meanwhile.
func TestQueriesLeavePushLane(t *testing.T) {
	const queryDecodes, users = 4, 12
	g := newGatedMunge(http.MethodGet)
	db := openStore(t)
	s := NewServer(db, g, ServerOptions{PushUIDs: []int{0}, Resolve: fakeResolve(testHosts), Placement: PlacementSender,
		Limits: Limits{PushDecodes: 4, QueryDecodes: queryDecodes, QueueWait: 30 * time.Second}}, testLogger(t))
	h := s.Handler()
	var wg sync.WaitGroup
	for i := range users {
		host := fmt.Sprintf("10.2.0.%d", i+1) // login nodes of their own: each lane's host share is a quarter
		r := httptest.NewRequest("GET", "/v1/jobs", nil)
		r.RemoteAddr = host + ":5555"
		r.Header.Set("Authorization", signed(g.fakeMunge, Identity{UID: 2000 + i, GID: 100, Host: host}, "GET", "/v1/jobs", nil))
		wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), r) })
	}
	t.Cleanup(func() { g.open(); wg.Wait() })
	waitFor(t, "every query decode held and the rest waiting", func() bool {
		in, _ := g.counts()
		return in == queryDecodes && lanePeople(s.queryDecodes) == users
	})
	j := testJob("77", "gpu01", aliceUID, true)
	body := mustJSON(t, j)
	r := httptest.NewRequest("POST", "/v1/profiles", strings.NewReader(string(body)))
	r.RemoteAddr = nodeAddr + ":4000"
	r.Header.Set("Authorization", signed(g.fakeMunge, rootNode, "POST", "/v1/profiles", body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNoContent {
		t.Fatalf("a push while queries hold their lane: %d %s, want 204", w.Code, strings.TrimSpace(w.Body.String()))
	}
	if _, err := db.GetJob(context.Background(), j.Key); err != nil {
		t.Errorf("the push was not stored: %v", err)
	}
	if _, top := g.counts(); top != queryDecodes {
		t.Errorf("query decodes at most %d, want %d", top, queryDecodes)
	}
}
