package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// seriesLen returns how many series points the stored job k has, summed
// over its GPUs, and whether the job is there at all.
func seriesLen(t *testing.T, db *DB, k profile.Key) (int, bool) {
	t.Helper()
	j, err := db.GetJob(context.Background(), k)
	if errors.Is(err, ErrNotFound) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("GetJob %v: %v", k, err)
	}
	n := 0
	for _, g := range j.GPUs {
		n += len(g.Series.Points)
	}
	return n, true
}

// TestPruneNeverUndeliveredOrRunning: on a node with a collector only
// jobs the collector acknowledged are pruned: not a running one, one
// still queued, one never pushed (recorded before a collector was
// configured: before, being out of the outbox counted as delivered), nor
// one acknowledged and then queued again changed whose new profile never
// arrived.
func TestPruneNeverUndeliveredOrRunning(t *testing.T) {
	ctx := context.Background()
	now := t0.Add(400 * 24 * time.Hour)
	old := t0 // a year and more before now: past every age
	tests := []struct {
		name string
		r    Retention
		// want per job: kept whole (series), summary only, or removed.
		delivered, queued, running, recent, neverPushed, changed string
	}{
		{"delivered node, ages", Retention{Delivered: true, SeriesAge: 14 * 24 * time.Hour, JobAge: 90 * 24 * time.Hour},
			"removed", "whole", "whole", "whole", "whole", "whole"},
		{"delivered node, series only", Retention{Delivered: true, SeriesAge: 14 * 24 * time.Hour},
			"summary", "whole", "whole", "whole", "whole", "whole"},
		{"delivered node, size bound", Retention{Delivered: true, MaxSize: 1},
			"removed", "whole", "whole", "removed", "whole", "whole"},
		{"single host, local age off", Retention{SeriesAge: time.Hour, JobAge: time.Hour, MaxSize: 1},
			"whole", "whole", "whole", "whole", "whole", "whole"},
		{"single host, local age", Retention{LocalAge: 30 * 24 * time.Hour, SeriesAge: time.Hour, JobAge: 200 * 24 * time.Hour},
			"removed", "whole", "whole", "whole", "removed", "removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, Options{})
			jobs := map[string]profile.Job{
				"delivered":   richJob("1", old, 300, true),
				"queued":      richJob("2", old, 300, true),
				"running":     richJob("3", old, 300, false),
				"recent":      richJob("4", now.Add(-time.Hour), 300, true),
				"neverPushed": richJob("5", old, 300, true),
				"changed":     richJob("6", old, 300, true),
			}
			for name, j := range jobs {
				if err := db.PutJob(ctx, j); err != nil {
					t.Fatalf("PutJob %s: %v", name, err)
				}
			}
			deliver(t, db, jobs["delivered"])
			deliver(t, db, jobs["recent"])
			deliver(t, db, jobs["changed"])
			if err := db.EnqueueOutbox(ctx, jobs["queued"]); err != nil {
				t.Fatal(err)
			}
			// The changed job's new profile queued, then dropped unsent
			// (undecodable): out of the outbox, not delivered.
			changed := jobs["changed"]
			changed.MarkPartial("changed after delivery")
			if err := db.PutJob(ctx, changed); err != nil {
				t.Fatal(err)
			}
			if err := db.EnqueueOutbox(ctx, changed); err != nil {
				t.Fatal(err)
			}
			if ok, err := db.DropOutbox(ctx, changed.Key, 1); err != nil || !ok { // queued afresh: version 1
				t.Fatalf("DropOutbox: %v, %v", ok, err)
			}
			full, _ := seriesLen(t, db, jobs["delivered"].Key)
			if full == 0 {
				t.Fatal("test job has no series")
			}
			if _, err := db.Prune(ctx, now, tt.r); err != nil {
				t.Fatalf("Prune: %v", err)
			}
			for name, want := range map[string]string{"delivered": tt.delivered, "queued": tt.queued, "running": tt.running,
				"recent": tt.recent, "neverPushed": tt.neverPushed, "changed": tt.changed} {
				n, ok := seriesLen(t, db, jobs[name].Key)
				got := "whole"
				switch {
				case !ok:
					got = "removed"
				case n == 0:
					got = "summary"
				}
				if got != want {
					t.Errorf("%s job: %s, want %s", name, got, want)
				}
			}
		})
	}
}

func TestPruneKeepsSummary(t *testing.T) {
	// A job pruned to its summary reads back as before, its series' points
	// aside: every figure show prints is in the GPU's state.
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("7", t0, 500, true)
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	deliver(t, db, j)
	before, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Prune(ctx, t0.Add(30*24*time.Hour), Retention{Delivered: true, SeriesAge: 14 * 24 * time.Hour})
	if err != nil || res.SeriesPruned != 1 {
		t.Fatalf("Prune = %+v, %v; want 1 series pruned", res, err)
	}
	after, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	for i := range before.GPUs {
		if after.GPUs[i].Series.Points != nil {
			t.Errorf("gpu %d: %d points left", i, len(after.GPUs[i].Series.Points))
		}
		before.GPUs[i].Series.Points = nil
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("pruned job =\n%+v\nwant the stored one less its points\n%+v", after, before)
	}
	// A second run finds nothing more to do.
	res, err = db.Prune(ctx, t0.Add(30*24*time.Hour), Retention{Delivered: true, SeriesAge: 14 * 24 * time.Hour})
	if err != nil || res.SeriesPruned != 0 || res.JobsRemoved != 0 {
		t.Errorf("second Prune = %+v, %v; want nothing done", res, err)
	}
}

func TestPruneGivesSpaceBack(t *testing.T) {
	// A new database is in incremental auto-vacuum mode: pruning shrinks
	// the file, not only its pages in use.
	ctx := context.Background()
	db := openTest(t, Options{})
	for i := range 60 {
		j := richJob(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Hour), 1000, true)
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		deliver(t, db, j)
	}
	st, err := db.SpaceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.AutoVacuum != 2 {
		t.Fatalf("auto_vacuum = %d, want 2 (incremental) on a new database", st.AutoVacuum)
	}
	bound := st.Used() / 3
	res, err := db.Prune(ctx, t0.Add(100*time.Hour), Retention{Delivered: true, MaxSize: bound})
	if err != nil {
		t.Fatal(err)
	}
	after, err := db.SpaceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.OverSize || after.Used() > bound || res.SeriesPruned == 0 {
		t.Errorf("Prune to %d bytes = %+v; %d bytes used after", bound, res, after.Used())
	}
	if after.File() >= st.File() || res.Freed == 0 || after.FreePages > 0 {
		t.Errorf("file %d → %d bytes, %d freed, %d free pages left; want it shrunk", st.File(), after.File(), res.Freed, after.FreePages)
	}
	// Oldest first: the jobs whose series went are a prefix of the jobs
	// by end, whatever share of the file the series are (the compact
	// encoding makes them small beside the summaries).
	kept := false
	for i := range 60 {
		n, _ := seriesLen(t, db, profile.Key{Cluster: "lab", JobID: fmt.Sprint(i), Node: "gpu01"})
		if n > 0 {
			kept = true
		} else if kept {
			t.Fatalf("job %d's series was pruned while an older job's was kept", i)
		}
	}
}

func TestConvertIncremental(t *testing.T) {
	// A database made before incremental auto-vacuum is converted by a
	// VACUUM only under the size bound.
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(ctx, richJob("1", t0, 100, true)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw := rawDB(t, path)
	for _, q := range []string{"PRAGMA auto_vacuum = NONE", "VACUUM"} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st, _ := db.SpaceStats(ctx); st.AutoVacuum != 0 {
		t.Fatalf("setup: auto_vacuum = %d, want 0", st.AutoVacuum)
	}
	if ok, err := db.ConvertIncremental(ctx, 1024); ok || !errors.Is(err, ErrTooLargeToConvert) {
		t.Errorf("ConvertIncremental below 1 KiB = %v, %v; want ErrTooLargeToConvert", ok, err)
	}
	if ok, err := db.ConvertIncremental(ctx, 1<<30); !ok || err != nil {
		t.Errorf("ConvertIncremental = %v, %v; want converted", ok, err)
	}
	if st, _ := db.SpaceStats(ctx); st.AutoVacuum != 2 {
		t.Errorf("after: auto_vacuum = %d, want 2", st.AutoVacuum)
	}
	if n, ok := seriesLen(t, db, profile.Key{Cluster: "lab", JobID: "1", Node: "gpu01"}); !ok || n == 0 {
		t.Errorf("job after conversion: %d points, present %v", n, ok)
	}
}

// TestMigratedJobsNotKnownDelivered: a node's database from before
// schema 11 had no record of delivery: its jobs migrate as not known
// delivered, so retention keeps them (never prune what may be the only
// copy) until the collector acknowledges them again.
func TestMigratedJobsNotKnownDelivered(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.db")
	old := openAtVersion(t, path, SchemaVersion-1)
	j := richJob("81", t0, 300, true)
	if err := old.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("migrate to %d: %v", SchemaVersion, err)
	}
	defer db.Close()
	r := Retention{Delivered: true, SeriesAge: 14 * 24 * time.Hour, JobAge: 90 * 24 * time.Hour, MaxSize: 1}
	now := t0.Add(400 * 24 * time.Hour)
	if res, err := db.Prune(ctx, now, r); err != nil || res.SeriesPruned+res.JobsRemoved != 0 {
		t.Errorf("Prune of a migrated job = %+v, %v; want nothing pruned", res, err)
	}
	if n, ok := seriesLen(t, db, j.Key); !ok || n == 0 {
		t.Fatalf("migrated job: %d points, present %v; want kept whole", n, ok)
	}
	deliver(t, db, j)
	if res, err := db.Prune(ctx, now, r); err != nil || res.JobsRemoved != 1 {
		t.Errorf("Prune once acknowledged = %+v, %v; want the job removed", res, err)
	}
}
