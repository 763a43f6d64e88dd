package agent

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// fullCollector is a collector whose disk is full until space returns.
type fullCollector struct {
	mu   sync.Mutex
	full bool
	got  []profile.Key
}

func (c *fullCollector) Push(_ context.Context, j profile.Job) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full {
		return errors.New("503 Service Unavailable: the collector's disk is full")
	}
	c.got = append(c.got, j.Key)
	return nil
}

// TestDiskFullRecoversByItself: a job that ends while the node's disk is
// full (the spool cannot take its end record, nor the database) is kept
// and written, then delivered past a full collector, each as soon as
// space returns, by the agent's own rounds: nothing is lost.
func TestDiskFullRecoversByItself(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	col := &fullCollector{full: true}
	f.a.opts.Collector, f.a.opts.Outbox = col, true
	f.start("42", minorRef(0))
	f.proc(4200, "42", "train", sim.Usage{UUID: f.devs[0].UUID, Util: 80, Mem: 10 * gib})
	f.tick(30)
	f.a.flush(ctx)

	// The disk fills: the spool directory cannot be written (a file holds
	// its name) and the database has not one page more.
	if err := os.RemoveAll(f.spool.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.spool.Path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := f.db.SpaceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.LimitPages(ctx, st.Pages); err != nil {
		t.Fatal(err)
	}
	f.tick(30) // readings the end record must carry: the series needs new pages
	var resp hookproto.Response
	if err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{JobID: "42"}, End: f.now, ExitKnown: true}}, &resp); err != nil {
		t.Logf("epilog told: %v", err)
	}
	key := profile.Key{Cluster: "c", JobID: "42", Node: "n1"}
	if j, err := f.db.GetJob(ctx, key); err == nil && j.Status == profile.StatusFinished {
		t.Fatal("setup: the finished profile was written to a full disk")
	}
	// Rounds while the disk is full change nothing and lose nothing.
	f.a.drain(ctx)
	f.a.deliver(ctx)
	if len(col.got) != 0 {
		t.Fatal("delivered while the node could not record it")
	}

	// Space returns on the node: the next round writes the profile and
	// queues it; the collector is still full, so it stays queued.
	if err := os.Remove(f.spool.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.LimitPages(ctx, 1<<30); err != nil {
		t.Fatal(err)
	}
	f.a.drain(ctx)
	j, err := f.db.GetJob(ctx, key)
	if err != nil || j.Status != profile.StatusFinished {
		t.Fatalf("after space returned: %v, %v; want the finished profile", j.Status, err)
	}
	if n := len(j.GPUs[0].Series.Points); n < 60 {
		t.Errorf("finished profile has %d points, want the 60 readings", n)
	}
	if n, err := f.db.OutboxLen(ctx); n != 1 || err != nil {
		t.Fatalf("outbox holds %d, %v; want the finished job", n, err)
	}
	f.a.deliver(ctx)
	if n, _ := f.db.OutboxLen(ctx); n != 1 {
		t.Fatalf("a push the full collector refused left the outbox: %d queued", n)
	}
	// A full collector's answer does not let retention prune the job.
	if _, err := f.db.Prune(ctx, f.now.AddDate(1, 0, 0), store.Retention{Delivered: true, SeriesAge: 1, JobAge: 1, MaxSize: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.GetJob(ctx, key); err != nil {
		t.Fatalf("undelivered job pruned: %v", err)
	}

	// Space returns on the collector: the next due try delivers it.
	col.mu.Lock()
	col.full = false
	col.mu.Unlock()
	f.now = f.now.AddDate(0, 0, 1) // past any backoff
	f.a.deliver(ctx)
	if len(col.got) != 1 || col.got[0] != key {
		t.Errorf("collector got %v, want job 42", col.got)
	}
	if n, _ := f.db.OutboxLen(ctx); n != 0 {
		t.Errorf("outbox holds %d after delivery, want 0", n)
	}
}
