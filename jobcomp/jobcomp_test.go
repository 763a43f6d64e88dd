package jobcomp_test

import (
	"context"
	"encoding/json"
	"errors"
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
	return jobcomp.Deps{
		SpoolDir: filepath.Join(t.TempDir(), "spool"),
		Log:      slog.New(slog.NewTextHandler(t.Output(), nil)),
	}
}

func openDB(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRecordSpoolsForTheWriter: jobcomp puts the record in the spool and
// writes no database, even one it could, and the spool's reader (ingest, under the agent or
// serve) stores it whole.
func TestRecordSpoolsForTheWriter(t *testing.T) {
	d := deps(t)
	// The database the spool's reader writes, beside the spool.
	db := openDB(t, filepath.Join(filepath.Dir(d.SpoolDir), "central.db"))
	out, err := jobcomp.Record(d, record())
	if err != nil || out != jobcomp.ViaSpool {
		t.Fatalf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaSpool)
	}
	if _, err := db.GetSchedJob(context.Background(), "lab", "4242"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the database has the job before ingest (%v): jobcomp wrote SQLite", err)
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
	n, err := ingest.DrainSpool(context.Background(), db, dir, ingest.Options{}, d.Log)
	if err != nil || n != 1 {
		t.Fatalf("DrainSpool = %d, %v; want 1, nil", n, err)
	}
	got, err := db.GetSchedJob(context.Background(), "lab", "4242")
	if err != nil {
		t.Fatal(err)
	}
	if want := store.NormalizeRecord(record()); !reflect.DeepEqual(got, want) {
		t.Errorf("drained record:\n got %+v\nwant %+v", got, want)
	}
}

// TestRecordSpoolUnwritable: a spool that cannot be written (a file in
// its place, as on a full or read-only disk) is a lost record, said so.
func TestRecordSpoolUnwritable(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d := deps(t)
	d.SpoolDir = filepath.Join(blocker, "spool")
	out, err := jobcomp.Record(d, record())
	if err == nil || !strings.Contains(err.Error(), "record lost") || !strings.Contains(err.Error(), "not a directory") || out != "" {
		t.Fatalf("Record = %q, %v; want an error saying the record is lost, and why", out, err)
	}
}

// TestRecordInvalid: a record the store refuses for good (no job id) goes
// to the spool, where draining quarantines it instead of retrying forever.
func TestRecordInvalid(t *testing.T) {
	d := deps(t)
	r := record()
	r.JobID = ""
	out, err := jobcomp.Record(d, r)
	if err != nil || out != jobcomp.ViaSpool {
		t.Fatalf("Record = %q, %v; want %q, nil", out, err, jobcomp.ViaSpool)
	}
	dir := spool.Dir{Path: d.SpoolDir}
	n, err := ingest.DrainSpool(context.Background(), openDB(t, filepath.Join(t.TempDir(), "central.db")), dir, ingest.Options{}, d.Log)
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
