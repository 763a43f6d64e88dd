package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// lockDB holds the database's write lock from another connection, as a
// disk that takes no write does to every writer, until the returned
// function is called.
func (f *fixture) lockDB() (release func()) {
	f.t.Helper()
	other, err := store.Open(context.Background(), filepath.Join(f.dir, "gpuprof.db"), store.Options{BusyTimeout: time.Second})
	if err != nil {
		f.t.Fatal(err)
	}
	locked, done := make(chan struct{}), make(chan struct{})
	go func() {
		_ = other.WithTx(context.Background(), func(*store.Tx) error {
			close(locked)
			<-done
			return nil
		})
	}()
	<-locked
	return func() {
		close(done)
		other.Close()
	}
}

// breakSpool makes the spool unwritable (its path runs through a file)
// and returns the function that mends it.
func (f *fixture) breakSpool() (mend func()) {
	f.t.Helper()
	file := filepath.Join(f.dir, "full")
	writeFile(f.t, file, "")
	good := f.a.spool
	f.a.spool = spool.Dir{Path: filepath.Join(file, "spool")}
	return func() { f.a.spool = good }
}

// Issue 25, item 8: the epilog's end record cannot be written (the spool
// and the database both refuse). The job stays finished: it is not sampled
// again, not put back as running, and the next job on its GPU is not
// shared; its record is written once the disk takes writes again.
func TestEndRecordNotWrittenKeepsJobFinished(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.startAs("120", "bob", fixtureUID, "gpu", minorRef(0))
	f.proc(1200, "120", "train", sim.Usage{UUID: f.devs[0].UUID, Mem: 30 * gib, Util: 80})
	f.tick(3)
	f.a.flush(ctx) // the job's running row is in the database
	f.node.Unregister(1200)

	release := f.lockDB()
	mend := f.breakSpool()
	var resp hookproto.Response
	err := f.a.Handle(ctx, hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{JobID: "120"}, End: f.now, ExitKnown: true}}, &resp)
	if err == nil || !resp.Held {
		t.Fatalf("end of job 120 with neither spool nor database writable: err %v, held %v; want an error and held (the epilog records what it can)", err, resp.Held)
	}
	if ids := heldJobs(f.a); slices.Contains(ids, "120") {
		t.Fatalf("job 120 is running again after its epilog: %v", ids)
	}

	// The next job on GPU 0, while the disk is still full and for longer
	// than the agent remembers ended jobs: rounds of the persister come
	// and go.
	f.startAs("121", "bob", fixtureUID, "gpu", minorRef(0))
	f.proc(1210, "121", "next", sim.Usage{UUID: f.devs[0].UUID, Mem: 10 * gib, Util: 40})
	for range 3 {
		f.tick(2)
		f.a.drain(ctx)
		f.now = f.now.Add(5 * time.Minute)
	}
	if ids := heldJobs(f.a); !slices.Equal(ids, []string{"121"}) {
		t.Fatalf("held jobs %v while the disk is full, want only 121", ids)
	}

	release()
	mend()
	f.a.drain(ctx) // the persister's next round writes what waited
	f.a.flush(ctx)
	if _, err := ingest.DrainSpool(ctx, f.db, f.spool, ingest.Options{}, f.a.log); err != nil {
		t.Fatal(err)
	}
	j, err := f.db.GetJob(ctx, profile.Key{Cluster: "c", JobID: "120", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != profile.StatusFinished || len(j.GPUs) != 1 || j.GPUs[0].MemPeak != 30*gib || j.GPUs[0].Shared {
		t.Errorf("job 120: %s, GPUs %+v; want finished with its 30 GiB peak, not shared", j.Status, j.GPUs)
	}
	if !j.ExitKnown {
		t.Error("job 120: the epilog's exit was lost")
	}
	next := f.end("121", 0)
	if g := next.GPUs[0]; g.Shared || g.MemPeak != 10*gib {
		t.Errorf("job 121 on GPU 0: shared %v, peak %d GiB; want not shared, its own 10 GiB", g.Shared, g.MemPeak/gib)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "full", "spool")); err == nil {
		t.Error("test premise: the broken spool was written")
	}
}
