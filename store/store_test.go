package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/groupdir"
	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
	"github.com/gpuprof/gpuprof/profile"
)

func TestMigrationsNumbered(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != SchemaVersion || ms[len(ms)-1].version != SchemaVersion {
		t.Errorf("got %d migrations ending at %d, want %d", len(ms), ms[len(ms)-1].version, SchemaVersion)
	}
}

// In a set-group-ID directory (the packaged /var/lib/gpuprof, root:gpuprof
// 2770) the database and the WAL and shm files SQLite makes beside it are
// group-writable, so serve, import and jobcomp, each under its own user of
// the group, write it; umask does not narrow that.
func TestOpenInGroupDirectory(t *testing.T) {
	ctx := context.Background()
	dir := groupdirtest.Dir(t, "shared")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	path := filepath.Join(dir, "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.PutJob(ctx, richJob("1", t0, 10, true)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		if st.Mode().Perm() != groupdir.Shared {
			t.Errorf("%s: mode %v, want %v", filepath.Base(f), st.Mode().Perm(), groupdir.Shared)
		}
	}
}

func TestOpenCreatesAndReopens(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "var", "lib", "gpuprof")
	path := filepath.Join(dir, "node.db")
	j := richJob("1", t0, 10, true)

	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != groupdir.Private {
		t.Errorf("file mode = %v, want %v", st.Mode().Perm(), groupdir.Private)
	}
	if dst, err := os.Stat(dir); err != nil || dst.Mode().Perm() != 0o755 {
		t.Errorf("parent dir: %v, %v; want mode 0755", dst, err)
	}

	for i := range 2 { // reopening must find the migrations applied
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		var version, appID int64
		if err := db.r.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
			t.Fatal(err)
		}
		if err := db.r.QueryRow("PRAGMA application_id").Scan(&appID); err != nil {
			t.Fatal(err)
		}
		if version != SchemaVersion || appID != ApplicationID {
			t.Errorf("reopen %d: user_version %d, application_id %#x; want %d, %#x", i, version, appID, SchemaVersion, ApplicationID)
		}
		got, err := db.GetJob(ctx, j.Key)
		if err != nil || got.JobID != "1" {
			t.Errorf("reopen %d: GetJob = %v, %v", i, got.Key, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a?b#c%20d", "node.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.PutJob(ctx, richJob("1", t0, 1, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the given path: %v", err)
	}
}

// writeFixture creates path as another program would and returns its bytes.
func writeFixture(t *testing.T, path string, mk func(t *testing.T, path string)) []byte {
	t.Helper()
	mk(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name    string
		mk      func(t *testing.T, path string)
		wantErr error
		// sidecars: only SQLite itself can tell, and looking at a WAL
		// database leaves (empty) -wal and -shm files next to it.
		sidecars bool
	}{
		{
			name: "foreign sqlite database",
			mk: func(t *testing.T, path string) {
				db := rawDB(t, path)
				if _, err := db.Exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts VALUES (1, 'x')"); err != nil {
					t.Fatal(err)
				}
				db.Close()
			},
			wantErr: ErrForeign,
		},
		{
			name: "foreign sqlite database with only a user_version",
			mk: func(t *testing.T, path string) {
				db := rawDB(t, path)
				if _, err := db.Exec("PRAGMA user_version = 7"); err != nil {
					t.Fatal(err)
				}
				db.Close()
			},
			wantErr: ErrForeign,
		},
		{
			name: "newer gpuprof schema",
			mk: func(t *testing.T, path string) {
				db, err := Open(context.Background(), path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.PutJob(context.Background(), richJob("1", t0, 3, false)); err != nil {
					t.Fatal(err)
				}
				db.Close()
				raw := rawDB(t, path)
				if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
					t.Fatal(err)
				}
				raw.Close()
			},
			wantErr: ErrSchemaTooNew,
		},
		{
			name: "gpuprof database with a damaged schema page",
			mk: func(t *testing.T, path string) {
				db, err := Open(context.Background(), path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.PutJob(context.Background(), richJob("1", t0, 3, false)); err != nil {
					t.Fatal(err)
				}
				db.Close()
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// Keep the headers, wreck the cell pointers and cells.
				for i := 108; i < 4096; i++ {
					b[i] = 0xff
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr:  ErrCorrupt,
			sidecars: true,
		},
		{
			name: "random bytes",
			mk: func(t *testing.T, path string) {
				b := make([]byte, 8192)
				r := rand.New(rand.NewPCG(1, 2))
				for i := range b {
					b[i] = byte(r.UintN(256))
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: ErrCorrupt,
		},
		{
			name: "short text file",
			mk: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte("hello\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: ErrCorrupt,
		},
		{
			name: "sqlite header, garbage after",
			mk: func(t *testing.T, path string) {
				b := bytes.Repeat([]byte{0xa5}, 4096)
				copy(b, "SQLite format 3\x00")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: ErrCorrupt,
		},
	}
	for _, tt := range tests {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", tt.name, ro), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "x.db")
				before := writeFixture(t, path, tt.mk)
				filesBefore := listDir(t, dir)

				db, err := Open(context.Background(), path, Options{ReadOnly: ro, BusyTimeout: time.Second})
				if err == nil {
					db.Close()
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Open: got %v, want %v", err, tt.wantErr)
				}
				after, rerr := os.ReadFile(path)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if !bytes.Equal(before, after) {
					t.Errorf("Open modified the refused file")
				}
				if tt.sidecars {
					if st, err := os.Stat(path + "-wal"); err == nil && st.Size() != 0 {
						t.Errorf("Open wrote %d bytes of WAL", st.Size())
					}
					os.Remove(path + "-wal")
					os.Remove(path + "-shm")
				}
				if got := listDir(t, dir); !slices.Equal(got, filesBefore) {
					t.Errorf("files after Open = %v, want %v", got, filesBefore)
				}
			})
		}
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestOpenAdoptsEmptyFile(t *testing.T) {
	// An empty file (a touched path, or a creator that crashed before
	// writing) is an empty database, not a foreign one.
	path := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.PutJob(context.Background(), richJob("1", t0, 1, false)); err != nil {
		t.Fatal(err)
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	w, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	j := richJob("1", t0, 5, true)
	if err := w.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}

	r, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != profile.StatusFinished || len(got.GPUs) != 2 {
		t.Errorf("read-only GetJob = %+v", got)
	}
	if err := r.PutJob(ctx, richJob("2", t0, 1, false)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("PutJob on a read-only DB: got %v, want ErrReadOnly", err)
	}

	missing := filepath.Join(t.TempDir(), "missing", "x.db")
	if _, err := Open(ctx, missing, Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open of a missing file: got %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open created the directory")
	}
}

func TestLocked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(ctx, path, Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	other := rawDB(t, path)
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	err = db.PutJob(ctx, richJob("1", t0, 5, false))
	took := time.Since(start)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("PutJob while locked: got %v, want ErrLocked", err)
	}
	if took < 150*time.Millisecond || took > time.Second {
		t.Errorf("PutJob gave up after %v, want about the 200ms busy timeout", took)
	}
	// Cancellation is honoured while waiting for the lock, even with a
	// long busy timeout (SQLite does not see the context while it waits).
	patient, err := Open(ctx, path, Options{BusyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer patient.Close()
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = patient.PutJob(cctx, richJob("1", t0, 5, false))
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Errorf("PutJob with a 300ms context while locked: got %v after %v, want DeadlineExceeded soon", err, took)
	}
	// Readers are not blocked by a writer (WAL).
	if _, err := db.ListJobs(ctx, Filter{}); err != nil {
		t.Errorf("ListJobs while locked: %v", err)
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(ctx, richJob("1", t0, 5, false)); err != nil {
		t.Errorf("PutJob after the lock was released: %v", err)
	}
}

func TestConcurrentWriters(t *testing.T) {
	const writers, perWriter = 8, 50
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Go(func() {
			// Each opens its own DB on the same new file, so the migrations
			// race too.
			db, err := Open(ctx, path, Options{BusyTimeout: 30 * time.Second})
			if err != nil {
				errs <- fmt.Errorf("writer %d: open: %w", w, err)
				return
			}
			defer db.Close()
			for i := range perWriter {
				j := richJob(fmt.Sprintf("%d-%d", w, i), t0.Add(time.Duration(i)*time.Second), 20, i%2 == 0)
				if err := db.PutJob(ctx, j); err != nil {
					errs <- fmt.Errorf("writer %d job %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	js, err := db.ListJobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != writers*perWriter {
		t.Errorf("stored %d jobs, want %d", len(js), writers*perWriter)
	}
	if n := countRows(t, db, "job_gpus"); n != 2*writers*perWriter {
		t.Errorf("stored %d GPU rows, want %d", n, 2*writers*perWriter)
	}
}

// TestNoMigrate: the hooks' and jobcomp's open (Options.NoMigrate) refuses
// a database of an older schema and leaves it as it was; it creates a
// missing one and opens a current one for writing.
func TestNoMigrate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	db := openAtVersion(t, old, 5)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, old, Options{NoMigrate: true}); !errors.Is(err, ErrSchemaTooOld) {
		t.Errorf("NoMigrate open of a version 5 database: got %v, want ErrSchemaTooOld", err)
	}
	after, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("NoMigrate open changed the old database's file")
	}
	if _, err := Open(ctx, old, Options{ReadOnly: true}); !errors.Is(err, ErrSchemaTooOld) {
		t.Errorf("after the refusal, a read-only open got %v, want ErrSchemaTooOld (still version 5)", err)
	}

	fresh := filepath.Join(dir, "fresh.db")
	db, err = Open(ctx, fresh, Options{NoMigrate: true})
	if err != nil {
		t.Fatalf("NoMigrate open of a missing database: %v", err)
	}
	if err := db.PutJob(ctx, richJob("1", t0, 1, true)); err != nil {
		t.Errorf("PutJob on a NoMigrate database: %v", err)
	}
	db.Close()
	db, err = Open(ctx, fresh, Options{NoMigrate: true})
	if err != nil {
		t.Fatalf("NoMigrate open of a current database: %v", err)
	}
	db.Close()

	// Under the write lock too: migrateTo alone refuses to upgrade.
	w := openAtVersion(t, filepath.Join(dir, "old2.db"), 5)
	defer w.Close()
	if err := migrateTo(ctx, w.w, time.Second, SchemaVersion, false); !errors.Is(err, ErrSchemaTooOld) {
		t.Errorf("migrateTo without upgrade: got %v, want ErrSchemaTooOld", err)
	}
}

func TestIsSchemaMismatch(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"too old", fmt.Errorf("open: %w", ErrSchemaTooOld), true},
		{"too new", ErrSchemaTooNew, true},
		{"locked", ErrLocked, false},
		{"nil", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsSchemaMismatch(tt.err); got != tt.want {
				t.Errorf("IsSchemaMismatch(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
