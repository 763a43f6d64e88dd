package store

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// chunkRows returns the gpu_series rows of k: chunk number → points JSON,
// per GPU.
func chunkRows(t *testing.T, db *DB, k profile.Key) map[string]map[int]string {
	t.Helper()
	rows, err := db.r.Query(`SELECT uuid, chunk, points FROM gpu_series WHERE cluster = ? AND job_id = ? AND node = ?`,
		k.Cluster, k.JobID, k.Node)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[int]string{}
	for rows.Next() {
		var uuid, points string
		var c int
		if err := rows.Scan(&uuid, &c, &points); err != nil {
			t.Fatal(err)
		}
		if out[uuid] == nil {
			out[uuid] = map[int]string{}
		}
		out[uuid][c] = points
	}
	return out
}

// A growing put rewrites only the chunks from the one holding the last
// stored point: an earlier chunk altered behind the store's back stays
// altered (so it was not written), while PutJob writes every chunk anew.
func TestPutGrowingJobWritesOnlyTheTail(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 100, false) // 100 points: chunks 0–3
	if err := db.WithTx(ctx, func(tx *Tx) error { return tx.PutGrowingJob(ctx, j) }); err != nil {
		t.Fatal(err)
	}
	busy := j.GPUs[0].UUID
	if got := len(chunkRows(t, db, j.Key)[busy]); got != 4 {
		t.Fatalf("%d chunks for 100 points, want 4", got)
	}
	const marker = `[{"t":1,"n":0,"u_sum":0,"u_max":0,"mem_max":0}]`
	if _, err := db.w.Exec(`UPDATE gpu_series SET points = ? WHERE uuid = ? AND chunk = 1`, marker, busy); err != nil {
		t.Fatal(err)
	}
	// 40 more points: the last stored one (index 99) is in chunk 3.
	for i := 100; i < 140; i++ {
		j.GPUs[0].Observe(profile.Reading{Time: t0.Add(time.Duration(i) * time.Second), Util: gpu.Some(uint32(i % 100)), MemUsed: gpu.Some(uint64(i) << 20)}, time.Second)
	}
	if err := db.WithTx(ctx, func(tx *Tx) error { return tx.PutGrowingJob(ctx, j) }); err != nil {
		t.Fatal(err)
	}
	rows := chunkRows(t, db, j.Key)[busy]
	if len(rows) != 5 || rows[1] != marker {
		t.Errorf("after a growing put: %d chunks, chunk 1 %.60q; want 5 chunks and chunk 1 untouched", len(rows), rows[1])
	}
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil || !reflect.DeepEqual(got, Normalize(j)) {
		t.Errorf("after PutJob: %v; want the profile as put (%d vs %d points)", err, len(got.GPUs[0].Series.Points), len(j.GPUs[0].Series.Points))
	}
}

// Whatever the sequence of readings (gaps, a bound small enough that the
// step doubles several times) and of growing puts between them, the
// profile read back is the profile put; and so after a new run under the
// same key, with a later start, and after a PutJob in between.
func TestPutGrowingJobRandom(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		db := openTest(t, Options{})
		j := richJob("5", t0, 0, false)
		for i := range j.GPUs {
			j.GPUs[i].Series = profile.NewSeries(t0, time.Second, 2+r.IntN(90))
		}
		now := t0
		for step := range 60 {
			for range r.IntN(40) {
				now = now.Add(time.Duration(1+r.IntN(3)) * time.Second)
				if r.IntN(10) == 0 {
					now = now.Add(time.Duration(r.IntN(300)) * time.Second)
				}
				g := &j.GPUs[r.IntN(len(j.GPUs))]
				g.Observe(profile.Reading{Time: now, Util: gpu.Some(uint32(r.IntN(101))), MemUsed: gpu.Some(uint64(r.IntN(80)) << 30)}, time.Second)
			}
			switch {
			case step == 30: // the job runs again, under the same key
				now = now.Add(time.Hour)
				j.Start = now
				for i := range j.GPUs {
					j.GPUs[i].Series = profile.NewSeries(now, time.Second, 2+r.IntN(90))
				}
			case step%17 == 0:
				if err := db.PutJob(ctx, j); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := db.WithTx(ctx, func(tx *Tx) error { return tx.PutGrowingJob(ctx, j) }); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			got, err := db.GetJob(ctx, j.Key)
			if err != nil {
				t.Fatal(err)
			}
			want := Normalize(j)
			for i := range want.GPUs {
				if !reflect.DeepEqual(got.GPUs[i].Series, want.GPUs[i].Series) {
					t.Fatalf("seed %d step %d gpu %d: series read back (step %d, %d points) differs from the one put (step %d, %d points)",
						seed, step, i, got.GPUs[i].Series.Step, len(got.GPUs[i].Series.Points), want.GPUs[i].Series.Step, len(want.GPUs[i].Series.Points))
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d: profile read back differs from the one put", seed, step)
			}
		}
	}
}

// A GPU that leaves the profile takes its series with it; a finished
// profile is never replaced by a growing put.
func TestPutGrowingJobDropsGoneGPUs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("2", t0, 70, false)
	if err := db.WithTx(ctx, func(tx *Tx) error { return tx.PutGrowingJob(ctx, j) }); err != nil {
		t.Fatal(err)
	}
	gone := j.GPUs[0].UUID
	j.GPUs = j.GPUs[1:]
	if err := db.WithTx(ctx, func(tx *Tx) error { return tx.PutGrowingJob(ctx, j) }); err != nil {
		t.Fatal(err)
	}
	if rows := chunkRows(t, db, j.Key); len(rows[gone]) != 0 {
		t.Errorf("%d chunks left of the GPU that left the profile", len(rows[gone]))
	}
	f := richJob("3", t0, 70, true)
	if err := db.PutJob(ctx, f); err != nil {
		t.Fatal(err)
	}
	r := f
	r.Status, r.End = profile.StatusRunning, time.Time{}
	err := db.WithTx(ctx, func(tx *Tx) error { return tx.PutGrowingJob(ctx, r) })
	if err == nil {
		t.Errorf("growing put over a finished profile: nil error, want ErrFinished")
	}
	if got, err := db.GetJob(ctx, f.Key); err != nil || !reflect.DeepEqual(got, Normalize(f)) {
		t.Errorf("finished profile after the refused put changed: %v", err)
	}
}

// A schema 5 database, its series inside job_gpus.state, migrates to the
// chunks with every profile read back as it was, and its state JSON
// without the points.
func TestMigrateSeriesToChunks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	old := openAtVersion(t, path, 5)
	jobs := []profile.Job{richJob("1", t0, 0, false), richJob("2", t0, 31, true), richJob("3", t0, 32, false), richJob("4", t0, 1500, true)}
	for _, j := range jobs {
		putLegacyJob(t, old, j)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, j := range jobs {
		got, err := db.GetJob(ctx, j.Key)
		if err != nil || !reflect.DeepEqual(got, Normalize(j)) {
			t.Errorf("job %s after migration: %v; want it unchanged", j.JobID, err)
		}
		n := len(j.GPUs[0].Series.Points)
		if rows := chunkRows(t, db, j.Key)[j.GPUs[0].UUID]; len(rows) != (n+seriesChunk-1)/seriesChunk {
			t.Errorf("job %s: %d points in %d chunks, want %d", j.JobID, n, len(rows), (n+seriesChunk-1)/seriesChunk)
		}
	}
	var inState, counted int
	if err := db.r.QueryRow(`SELECT count(*) FILTER (WHERE state ->> '$.series.points' IS NOT NULL), sum(series_points)
		FROM job_gpus`).Scan(&inState, &counted); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, j := range jobs {
		want += len(j.GPUs[0].Series.Points) + len(j.GPUs[1].Series.Points)
	}
	if inState != 0 || counted != want {
		t.Errorf("after migration: %d states still hold points, series_points sum %d; want 0 and %d", inState, counted, want)
	}
}
