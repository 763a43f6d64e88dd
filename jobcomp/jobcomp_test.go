package jobcomp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/jobcomp"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

var t0 = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

// record is what jobcomp/script reports for a finished two-GPU job.
func record() slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: "lab", JobID: "4242", DisplayID: "4242", ArrayTaskID: -1, HetOffset: -1,
		Name: "train", User: "alice", UID: 1001, Account: "vision", Partition: "gpu", QOS: "normal",
		State: "COMPLETED", CancelledBy: -1, Reason: "Priority",
		Submit: t0, Eligible: t0, Start: t0.Add(10 * time.Minute), End: t0.Add(70 * time.Minute),
		TimeLimit: 2 * time.Hour, NodeList: "gpu[01-02]", NodeCount: 2, CPUs: 16,
		ReqGPUs: 2, ReqTRES: "cpu=16,gres/gpu=2,mem=64G,node=2", Source: "jobcomp",
	}
}

func deps(t *testing.T) jobcomp.Deps {
	dir := t.TempDir()
	return jobcomp.Deps{
		DB:       filepath.Join(dir, "central.db"),
		SpoolDir: filepath.Join(dir, "spool"),
		Log:      slog.New(slog.NewTextHandler(t.Output(), nil)),
	}
}

func openDB(t *testing.T, path string, busy time.Duration) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRecordToDatabase(t *testing.T) {
	d := deps(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := jobcomp.Record(ctx, d, record())
	if err != nil || out != jobcomp.ViaDB {
		t.Fatalf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaDB)
	}
	got, err := openDB(t, d.DB, 0).GetSchedJob(ctx, "lab", "4242")
	if err != nil {
		t.Fatal(err)
	}
	if want := store.NormalizeRecord(record()); !reflect.DeepEqual(got, want) {
		t.Errorf("stored record:\n got %+v\nwant %+v", got, want)
	}
	if es, _ := (spool.Dir{Path: d.SpoolDir}).List(); len(es) != 0 {
		t.Errorf("spool holds %d records after a database write, want 0", len(es))
	}
}

// TestRecordLockedDatabase: slurmctld waits for the jobcomp script with no
// timeout, so a database held by another writer must send the record to
// the spool within the deadline, and draining the spool later stores it.
func TestRecordLockedDatabase(t *testing.T) {
	d := deps(t)
	holder := openDB(t, d.DB, 0)
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- holder.WithTx(context.Background(), func(*store.Tx) error {
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
			<-done
		}
	})

	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	began := time.Now()
	out, err := jobcomp.Record(ctx, d, record())
	took := time.Since(began)
	if err != nil || out != jobcomp.ViaSpool {
		t.Fatalf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaSpool)
	}
	if took >= deadline {
		t.Errorf("Record took %v, want less than the %v deadline", took, deadline)
	}

	dir := spool.Dir{Path: d.SpoolDir}
	es, err := dir.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Kind != hookproto.KindSchedJob {
		t.Fatalf("spool = %+v, want one %s record", es, hookproto.KindSchedJob)
	}
	var spooled slurmext.JobRecord
	if err := json.Unmarshal(es[0].Data, &spooled); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spooled, record()) {
		t.Errorf("spooled record:\n got %+v\nwant %+v", spooled, record())
	}

	close(release)
	released = true
	if err := <-done; err != nil {
		t.Fatalf("holder: %v", err)
	}
	n, err := ingest.DrainSpool(context.Background(), holder, dir, ingest.Options{}, d.Log)
	if err != nil || n != 1 {
		t.Fatalf("DrainSpool = %d, %v; want 1, nil", n, err)
	}
	got, err := holder.GetSchedJob(context.Background(), "lab", "4242")
	if err != nil {
		t.Fatal(err)
	}
	if want := store.NormalizeRecord(record()); !reflect.DeepEqual(got, want) {
		t.Errorf("drained record:\n got %+v\nwant %+v", got, want)
	}
}

// TestRecordNoDeadline: without a deadline the database gets a second.
func TestRecordNoDeadline(t *testing.T) {
	d := deps(t)
	out, err := jobcomp.Record(context.Background(), d, record())
	if err != nil || out != jobcomp.ViaDB {
		t.Fatalf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaDB)
	}
}

func TestRecordFallbacks(t *testing.T) {
	// Paths below a regular file cannot be created, even by root.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		badDB    bool
		badSpool bool
		want     jobcomp.Outcome
		wantLost bool
	}{
		{name: "both fine", want: jobcomp.ViaDB},
		{name: "database unwritable", badDB: true, want: jobcomp.ViaSpool},
		{name: "spool unwritable, database fine", badSpool: true, want: jobcomp.ViaDB},
		{name: "both unwritable", badDB: true, badSpool: true, wantLost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deps(t)
			if tt.badDB {
				d.DB = filepath.Join(blocker, "central.db")
			}
			if tt.badSpool {
				d.SpoolDir = filepath.Join(blocker, "spool")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			out, err := jobcomp.Record(ctx, d, record())
			if tt.wantLost {
				if err == nil || !strings.Contains(err.Error(), "record lost") || out != "" {
					t.Fatalf("Record = %q, %v; want an error saying the record is lost", out, err)
				}
				return
			}
			if err != nil || out != tt.want {
				t.Fatalf("Record = %q, %v; want %q, nil", out, err, tt.want)
			}
		})
	}
}

// TestRecordInvalid: a record the store refuses for good (no job id) goes
// to the spool, where draining quarantines it instead of retrying forever.
func TestRecordInvalid(t *testing.T) {
	d := deps(t)
	r := record()
	r.JobID = ""
	out, err := jobcomp.Record(context.Background(), d, r)
	if err != nil || out != jobcomp.ViaSpool {
		t.Fatalf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaSpool)
	}
	dir := spool.Dir{Path: d.SpoolDir}
	n, err := ingest.DrainSpool(context.Background(), openDB(t, d.DB, 0), dir, ingest.Options{}, d.Log)
	if err != nil || n != 0 {
		t.Fatalf("DrainSpool = %d, %v; want 0, nil", n, err)
	}
	if es, _ := dir.List(); len(es) != 0 {
		t.Errorf("spool still holds %d records, want the invalid one quarantined", len(es))
	}
	bad, _ := filepath.Glob(filepath.Join(d.SpoolDir, spool.BadDir, "*."+hookproto.KindSchedJob+".json"))
	if len(bad) != 1 {
		t.Errorf("quarantine holds %v, want the record", bad)
	}
}

// TestSpooledBeforeDatabaseWait: the record is in the spool while Record
// still waits for a locked database, so a watchdog that ends the hook at
// its deadline during that wait loses nothing (two records of twenty were
// lost that way under CI's load, when the spool was written only after the
// database had failed). Counted, not timed: the spool is looked at while
// the database is still locked, and Record is still waiting for it
// half a second after the record appeared.
func TestSpooledBeforeDatabaseWait(t *testing.T) {
	d := deps(t)
	defer holdWriteLock(t, d.DB)()

	// A third of 6 s: Record waits 2 s for the lock.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		if out, err := jobcomp.Record(ctx, d, record()); err != nil || out != jobcomp.ViaSpool {
			t.Errorf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaSpool)
		}
	}()
	dir := spool.Dir{Path: d.SpoolDir}
	for {
		es, _ := dir.List()
		if len(es) == 1 {
			break
		}
		select {
		case <-returned:
			t.Fatalf("Record returned before its record was seen in the spool (%d records): it waited for the database first", len(es))
		case <-time.After(5 * time.Millisecond):
		}
	}
	// Record waits 2 s for the lock after spooling; spooled only after
	// that wait, it would return within moments of the file's appearance.
	select {
	case <-returned:
		t.Fatal("Record returned within moments of spooling: the spool was written after the database wait, not before")
	case <-time.After(500 * time.Millisecond):
	}
	<-returned
}

// holdWriteLock opens the database at path and holds its write lock (an
// open write transaction, as a stuck backup or an sqlite3 shell holds it)
// until the returned function is called.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	holder := openDB(t, path, 0)
	locked, stop, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- holder.WithTx(context.Background(), func(*store.Tx) error {
			close(locked)
			<-stop
			return nil
		})
	}()
	<-locked
	return func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("lock holder: %v", err)
		}
	}
}
