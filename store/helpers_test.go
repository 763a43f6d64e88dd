package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// t0 has nanoseconds and a non-UTC zone on purpose: the store keeps whole
// seconds in UTC, and the tests show that loss instead of hiding it.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.FixedZone("CET", 3600))

// openTest opens a fresh database in t.TempDir().
func openTest(t testing.TB, opts Options) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "gpuprof.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// rawDB opens path with no store settings, for tests that play another
// program or another writer.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+escapePath(path)+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// richJob builds a profile through profile's own API, with every field the
// store persists set: two GPUs, one busy (readings, XIDs, process names,
// energy, temperature) and one allocated but never touched. A finished job
// runs samples seconds from start.
func richJob(id string, start time.Time, samples int, finished bool) profile.Job {
	interval := time.Second
	j := profile.Job{
		Key:            profile.Key{Cluster: "lab", JobID: id, Node: "gpu01"},
		User:           "alice",
		UID:            1001,
		GID:            100,
		Account:        "vision",
		Partition:      "gpu",
		Comment:        "resnet sweep, lr=3e-4",
		Start:          start,
		Status:         profile.StatusRunning,
		Source:         profile.SourceAgent,
		SampleInterval: interval + 250*time.Microsecond, // sub-ms part is dropped
		Driver:         "550.54.15",
		CUDADriver:     "12.4",
	}
	busy := profile.NewGPU(gpu.Device{UUID: "GPU-11111111-aaaa", Name: "NVIDIA H100 80GB HBM3", Minor: 3, MemoryTotal: 80 << 30}, 1, start, interval, profile.DefaultMaxPoints)
	idle := profile.NewGPU(gpu.Device{UUID: "GPU-22222222-bbbb", Name: "NVIDIA H100 80GB HBM3", Minor: 4, MemoryTotal: 80 << 30}, 0, start, interval, profile.DefaultMaxPoints)
	var last time.Time
	for i := range samples {
		ts := start.Add(time.Duration(i)*interval + 123*time.Millisecond)
		busy.Observe(profile.Reading{
			Time:      ts,
			Util:      gpu.Some(uint32((i * 7) % 101)),
			MemUsed:   gpu.Some(uint64(20<<30 + (i%50)<<20)),
			PowerMW:   gpu.Some(uint32(300_000 + i%1000)),
			EnergyMJ:  gpu.Some(uint64(1_000_000 + i*300_000)),
			TempC:     gpu.Some(uint32(60 + i%20)),
			Processes: 1,
		}, interval)
		last = ts
	}
	if samples > 0 {
		busy.AddXID(79, start.Add(2*time.Second+5*time.Nanosecond))
		busy.AddXID(13, start.Add(3*time.Second))
	}
	busy.AddProcessName("python")
	busy.AddProcessName("torchrun")
	j.GPUs = []profile.GPU{busy, idle}
	j.LastSample = last
	j.IO.Observe(profile.IOScopeCgroup, 1.5, 10)
	j.IO.Observe(profile.IOScopeNode, 0.25, 5)
	j.MarkPartial("agent restarted")
	j.MarkPartial("no process data")
	if finished {
		j.ExitKnown, j.ExitStatus, j.ExitSignal = true, 1, 9
		j.Finish(start.Add(time.Duration(samples) * interval))
	}
	return j
}

// simpleJob is a profile with one GPU and no readings, for filter tests.
func simpleJob(cluster, id, node, user string, uid int, start, end time.Time) profile.Job {
	j := profile.Job{
		Key:    profile.Key{Cluster: cluster, JobID: id, Node: node},
		User:   user,
		UID:    uid,
		Start:  start,
		Status: profile.StatusRunning,
		Source: profile.SourceHook,
		GPUs: []profile.GPU{profile.NewGPU(gpu.Device{UUID: "GPU-" + id, MemoryTotal: 1 << 30},
			0, start, time.Second, profile.DefaultMaxPoints)},
	}
	if !end.IsZero() {
		j.Finish(end)
	}
	return j
}

func jobIDs(js []profile.Job) []string {
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.JobID
	}
	return ids
}

func countRows(t testing.TB, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.r.QueryRow(fmt.Sprintf("SELECT count(*) FROM %s", table)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// deliver stores nothing new: it queues j for the collector and records
// the collector's acknowledgement, as the agent's delivery does.
func deliver(t testing.TB, db *DB, j profile.Job) {
	t.Helper()
	ctx := context.Background()
	if err := db.EnqueueOutbox(ctx, j); err != nil {
		t.Fatal(err)
	}
	items, err := db.DueOutbox(ctx, time.Now().Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Key == j.Key {
			if ok, err := db.AckOutbox(ctx, it.Key, it.Version); err != nil || !ok {
				t.Fatalf("ack %v: %v, %v", it.Key, ok, err)
			}
			return
		}
	}
	t.Fatalf("%v not queued", j.Key)
}
