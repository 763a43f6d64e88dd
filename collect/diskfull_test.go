package collect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// TestDiskFullRecoversByItself: a push the collector's full database
// cannot take is refused with a retryable 503 and Retry-After 60, stores
// nothing, and the same push is taken once space returns, with nothing
// restarted.
func TestDiskFullRecoversByItself(t *testing.T) {
	ctx := context.Background()
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, PushHosts: []string{nodeAddr}})
	// A profile with a long series: it needs pages of its own.
	j := testJob("7", "gpu01", aliceUID, false)
	for i := range 1000 {
		j.GPUs[0].Observe(profile.Reading{Time: t0.Add(time.Duration(i+2) * time.Second), Util: gpu.Some(uint32(i % 100)),
			MemUsed: gpu.Some(uint64(10<<30 + i<<20)), Processes: 1}, time.Second)
	}
	j.Finish(t0.Add(time.Hour))
	body := mustJSON(t, j)

	st, err := db.SpaceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The disk is full: not one page more.
	if _, err := db.LimitPages(ctx, st.Pages); err != nil {
		t.Fatal(err)
	}
	w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, rootNode, "POST", "/v1/profiles", body))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("push to a full collector: %d, Retry-After %q (%s); want 503, 60", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	if _, err := db.GetJob(ctx, j.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the refused push GetJob: %v, want ErrNotFound (nothing half-stored)", err)
	}
	// The node's client sees an error it retries (not ErrRejected, which
	// is final).
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	node := Client{URL: ts.URL, Munge: m.as(rootNode)}
	if err := node.Push(ctx, j); err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("the node's push to a full collector: %v; want a retryable error (the profile stays in its outbox)", err)
	}

	// Space returns; the node's next try is taken.
	if _, err := db.LimitPages(ctx, 1<<30); err != nil {
		t.Fatal(err)
	}
	if err := node.Push(ctx, j); err != nil {
		t.Fatalf("the node's push after space returned: %v", err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.GPUs[0].Series.Points); n != len(j.GPUs[0].Series.Points) || got.Status != profile.StatusFinished {
		t.Errorf("stored %s with %d points, want finished with %d", got.Status, n, len(j.GPUs[0].Series.Points))
	}
}
