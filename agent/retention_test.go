package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// TestRetentionPassKeepsUndelivered: the agent's pass removes a job the
// collector acknowledged past the ages and keeps one of the same age
// still in the outbox, and one never pushed (recorded before a collector
// was configured: before, being out of the outbox counted as delivered).
func TestRetentionPassKeepsUndelivered(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	f.a.opts.Outbox = true
	f.a.opts.Retention = store.Retention{SeriesAge: 14 * 24 * time.Hour, JobAge: 90 * 24 * time.Hour}
	f.a.opts.RetentionEvery = time.Hour
	for _, id := range []string{"1", "2", "3"} {
		f.start(id, minorRef(0))
		f.tick(5)
		f.end(id, 0)
	}
	key := func(id string) profile.Key { return profile.Key{Cluster: "c", JobID: id, Node: "n1"} }
	delivered, err := f.db.GetJob(ctx, key("1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.EnqueueOutbox(ctx, delivered); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.db.AckOutbox(ctx, delivered.Key, 1); err != nil || !ok {
		t.Fatalf("AckOutbox: %v, %v", ok, err)
	}
	queued, err := f.db.GetJob(ctx, key("2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.EnqueueOutbox(ctx, queued); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.AddDate(0, 0, 100)
	f.a.prune(ctx)
	if _, err := f.db.GetJob(ctx, delivered.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delivered job 100 days old: %v, want removed", err)
	}
	if _, err := f.db.GetJob(ctx, queued.Key); err != nil {
		t.Errorf("job still in the outbox: %v, want kept", err)
	}
	if _, err := f.db.GetJob(ctx, key("3")); err != nil {
		t.Errorf("job never pushed: %v, want kept", err)
	}
	// Without a collector nothing is pruned (local_job_age off).
	f.a.opts.Outbox = false
	if err := f.db.PutJob(ctx, queued); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AckOutbox(ctx, queued.Key, 1); err != nil {
		t.Fatal(err)
	}
	f.a.prune(ctx)
	if _, err := f.db.GetJob(ctx, queued.Key); err != nil {
		t.Errorf("single host, local_job_age off: %v, want kept", err)
	}
}
