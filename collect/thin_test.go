package collect

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// ThinOnce thins, batch after batch, every profile that ended before the
// age, and no other; with age zero, none.
func TestThinOnce(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "central.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	put := func(id string, start time.Time) {
		j := profile.Job{Key: profile.Key{Cluster: "c", JobID: id, Node: "n1"}, User: "u", UID: 1000, Start: start,
			Status: profile.StatusRunning, Source: profile.SourceAgent, SampleInterval: time.Second}
		g := profile.NewGPU(gpu.Device{UUID: "GPU-" + id}, 0, start, time.Second, 1024)
		for i := range 1000 {
			g.Observe(profile.Reading{Time: start.Add(time.Duration(i) * time.Second), Util: gpu.Some(uint32(i % 100))}, time.Second)
		}
		j.GPUs = []profile.GPU{g}
		j.Finish(start.Add(1000 * time.Second))
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	old := thinBatch + 3 // more than one batch
	for i := range old {
		put("old"+string(rune('a'+i/26))+string(rune('a'+i%26)), now.Add(-40*24*time.Hour))
	}
	put("new", now.Add(-2*24*time.Hour))

	if n, err := ThinOnce(ctx, db, Thinning{Age: 0, Points: 128}, now); n != 0 || err != nil {
		t.Fatalf("age 0: thinned %d (%v), want none", n, err)
	}
	n, err := ThinOnce(ctx, db, Thinning{Age: 30 * 24 * time.Hour, Points: 128}, now)
	if err != nil || n != old {
		t.Fatalf("thinned %d (%v), want %d", n, err, old)
	}
	if n, err := ThinOnce(ctx, db, Thinning{Age: 30 * 24 * time.Hour, Points: 128}, now); n != 0 || err != nil {
		t.Errorf("a second round thinned %d (%v), want none", n, err)
	}
	js, err := db.ListJobs(ctx, store.Filter{WithSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		pts := len(j.GPUs[0].Series.Points)
		if thin := j.JobID != "new"; thin != (pts <= 128) {
			t.Errorf("job %s: %d points", j.JobID, pts)
		}
	}
}
