package store

import (
	"context"
	"testing"
)

// openAtVersion opens (creating) the database at path with the schema of
// version, as a release of that schema wrote it, so tests can fill it and
// then let Open migrate it.
func openAtVersion(t testing.TB, path string, version int) *DB {
	t.Helper()
	db, err := openAt(context.Background(), path, Options{}, version)
	if err != nil {
		t.Fatalf("open at schema version %d: %v", version, err)
	}
	return db
}
