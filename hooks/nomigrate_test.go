package hooks

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

// ageSchema makes the database at path claim schema version v, as a
// database an older gpuprof wrote does until something migrates it.
func ageSchema(t *testing.T, path string, v int) {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`PRAGMA user_version = ` + strconv.Itoa(v)); err != nil {
		t.Fatal(err)
	}
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var v int
	if err := raw.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOldSchemaLeftAlone: beside a database at an older schema than its
// own, a hook spools its record as always and leaves the database, and its
// migration, to the agent or an admin's command.
func TestOldSchemaLeftAlone(t *testing.T) {
	d := deps(t, "83")
	old := store.SchemaVersion - 1
	ageSchema(t, d.Config.DB, old)

	for _, step := range []struct {
		name string
		hook func(context.Context, Deps) (Outcome, error)
		kind string
	}{
		{"prolog", Prolog, hookproto.KindHookStart},
		{"epilog", Epilog, hookproto.KindHookEnd},
	} {
		out, err := step.hook(withDeadline(t, 2*time.Second), d)
		if err != nil || out != ViaSpool {
			t.Fatalf("%s: %v via %q, want spool", step.name, err, out)
		}
		if got := userVersion(t, d.Config.DB); got != old {
			t.Fatalf("after the %s the schema is version %d, want %d (not migrated)", step.name, got, old)
		}
		es, err := spool.Dir{Path: d.Config.SpoolDir}.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 || es[len(es)-1].Kind != step.kind {
			t.Errorf("%s spooled %+v, want a %s record last", step.name, es, step.kind)
		}
	}
}
