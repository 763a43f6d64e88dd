package jobcomp_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/jobcomp"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// TestOldSchemaSpools: jobcomp does not migrate a database of an older
// schema (slurmctld waits for it); the record goes to the spool.
func TestOldSchemaSpools(t *testing.T) {
	d := deps(t)
	db, err := store.Open(context.Background(), d.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite3", d.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	old := store.SchemaVersion - 1
	if _, err := raw.Exec(`PRAGMA user_version = ` + strconv.Itoa(old)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := jobcomp.Record(ctx, d, record())
	if err != nil || out != jobcomp.ViaSpool {
		t.Fatalf("Record: %v via %q, want spool", err, out)
	}
	var v int
	if err := raw.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != old {
		t.Errorf("schema version %d (%v) after Record, want %d: not migrated", v, err, old)
	}
	es, err := spool.Dir{Path: d.SpoolDir}.List()
	if err != nil || len(es) != 1 || es[0].Kind != hookproto.KindSchedJob {
		t.Errorf("spool = %+v (%v), want one %s record", es, err, hookproto.KindSchedJob)
	}
}
