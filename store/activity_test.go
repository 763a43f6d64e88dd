package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// activityJob is richJob with GPM activity on its busy GPU: a loop of tiny
// kernels, 16 % duty cycle and 0.02 % of the SMs.
func activityJob(id string) profile.Job {
	j := richJob(id, t0, 0, false)
	g := &j.GPUs[0]
	for i := range 20 {
		g.Observe(profile.Reading{Time: t0.Add(time.Duration(i) * time.Second), Util: gpu.Some[uint32](16),
			Activity: gpu.Some(gpu.Activity{Interval: time.Second, SM: gpu.Some(0.02), Tensor: gpu.Some(0.0), DRAM: gpu.Some(0.01)})}, time.Second)
	}
	j.Finish(t0.Add(20 * time.Second))
	return j
}

type activityRow struct {
	scope                   string
	seconds, smMean, smP95  sql.NullFloat64
	tcMean, tcP95, dramMean sql.NullFloat64
}

func readActivityRow(t *testing.T, db *DB, k profile.Key, uuid string) activityRow {
	t.Helper()
	var r activityRow
	var dramP95 sql.NullFloat64
	err := db.r.QueryRow(`SELECT activity_scope, activity_seconds, sm_mean, sm_p95, tensor_mean, tensor_p95, dram_mean, dram_p95
		FROM job_gpus WHERE cluster = ? AND job_id = ? AND node = ? AND uuid = ?`, k.Cluster, k.JobID, k.Node, uuid).
		Scan(&r.scope, &r.seconds, &r.smMean, &r.smP95, &r.tcMean, &r.tcP95, &r.dramMean, &dramP95)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestActivityStored(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := activityJob("70")
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	a := got.GPUs[0].Activity
	if a == nil || a.Scope != profile.ActivityScopeGPU || a.SM.N != 20 {
		t.Fatalf("activity read back: %+v; want 20 readings in scope gpu", a)
	}
	if p, ok := a.SM.Percentile(95); !ok || p != 0.02 {
		t.Errorf("SM p95 read back %v, %v; want 0.02", p, ok)
	}
	if got.GPUs[1].Activity != nil {
		t.Errorf("GPU without readings read back with activity %+v", got.GPUs[1].Activity)
	}
	r := readActivityRow(t, db, j.Key, j.GPUs[0].UUID)
	if r.scope != "gpu" || r.seconds.Float64 != 20 || !near(r.smMean, 0.02) || !near(r.smP95, 0.02) || !near(r.tcMean, 0) || !near(r.dramMean, 0.01) {
		t.Errorf("columns of the busy GPU: %+v", r)
	}
	// Not measured is NULL, not 0.
	if r := readActivityRow(t, db, j.Key, j.GPUs[1].UUID); r.scope != "" || r.seconds.Valid || r.smMean.Valid || r.smP95.Valid {
		t.Errorf("columns of a GPU without activity: %+v; want NULL", r)
	}
}

func near(v sql.NullFloat64, want float64) bool {
	return v.Valid && v.Float64 > want-1e-9 && v.Float64 < want+1e-9
}

// TestMigrateToActivityKeepsJobs: a database of an older gpuprof migrates;
// its profiles read back with their activity unknown.
func TestMigrateToActivityKeepsJobs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old := openAtVersion(t, path, 5)
	j := richJob("71", t0, 4, true)
	putLegacyJob(t, old, j)
	old.Close()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("migrate to %d: %v", SchemaVersion, err)
	}
	defer db.Close()
	got, err := db.GetJob(ctx, j.Key)
	if err != nil || got.GPUs[0].Samples != 4 {
		t.Fatalf("after migration: %+v, %v", got, err)
	}
	if a := got.GPUs[0].Activity; a != nil {
		t.Errorf("an old profile reads back with activity %+v; want unknown", a)
	}
	if r := readActivityRow(t, db, j.Key, j.GPUs[0].UUID); r.scope != "" || r.smMean.Valid {
		t.Errorf("migrated columns %+v; want NULL", r)
	}
	// The migrated database takes profiles with activity.
	if err := db.PutJob(ctx, activityJob("72")); err != nil {
		t.Fatal(err)
	}
}
