package history_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // to look at the database as another program

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/store"
)

// schedIndexCount is the number of sched_jobs' secondary indexes in the
// database at path, read by a connection of its own.
func schedIndexCount(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sched_jobs' AND sql IS NOT NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The secondary indexes of sched_jobs in the current schema (store's
// schedIndexes).
const schedIndexes = 8

// rowsFrom returns n jobs of cluster lab numbered from first.
func rowsFrom(first, n int) string {
	var rows []string
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Minute)
		rows = append(rows, row(strconv.Itoa(first+i), 1001, at, at.Add(time.Minute), "COMPLETED", "lab"))
	}
	return lines(rows...)
}

// A bulk import (the first batch four times the jobs stored, or more) stores
// the same as batch by batch, and every index is there after it.
func TestImportBulk(t *testing.T) {
	ctx := context.Background()
	bulk, batched := openDB(t), openDB(t)
	importString(t, batched, rowsFrom(1, 2), history.FormatText, history.Options{Cluster: "lab"})
	importString(t, batched, rowsFrom(1, 20), history.FormatText, history.Options{Cluster: "lab", Batch: 3})
	res := importString(t, bulk, rowsFrom(1, 20), history.FormatText, history.Options{Cluster: "lab", Batch: 3})
	if got, want := countsOf(res), (counts{read: 20, inserted: 20}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	if n := schedIndexCount(t, bulk.Path()); n != schedIndexes {
		t.Errorf("after a bulk import: %d indexes, want %d", n, schedIndexes)
	}
	for _, id := range []string{"1", "4", "20"} {
		a, err1 := bulk.GetSchedJob(ctx, "lab", id)
		b, err2 := batched.GetSchedJob(ctx, "lab", id)
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("job %s: bulk %+v (%v), batched %+v (%v)", id, a, err1, b, err2)
		}
	}
	if m1, _ := bulk.GetImportMark(ctx, "lab", history.Source); !m1.Equal(t0.Add(20 * time.Minute)) {
		t.Errorf("mark after a bulk import = %v, want %v", m1, t0.Add(20*time.Minute))
	}
}

// A bulk import cancelled after its first batch stores nothing, says so,
// and leaves every index.
func TestImportBulkCancelled(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cctx, cancel := context.WithCancel(ctx)
	res, err := history.Import(cctx, db, strings.NewReader(rowsFrom(300, 5)), history.FormatText, history.Options{
		Cluster: "lab", Batch: 2, Progress: func(int, time.Duration) { cancel() }})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing of this import was stored") {
		t.Fatalf("err = %v, want context.Canceled, saying nothing was stored", err)
	}
	if res.Inserted+res.Updated+res.Unchanged != 0 || !res.Last.IsZero() {
		t.Errorf("result counts %+v stored, last %v; want none", countsOf(res), res.Last)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "300"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job of the first batch: err = %v, want ErrNotFound", err)
	}
	if mark, _ := db.GetImportMark(ctx, "lab", history.Source); !mark.IsZero() {
		t.Errorf("mark = %v, want none", mark)
	}
	if n := schedIndexCount(t, db.Path()); n != schedIndexes {
		t.Errorf("after a cancelled bulk import: %d indexes, want %d", n, schedIndexes)
	}
}

// A database error in the middle of a bulk import (a trigger refuses one
// job of the second batch) is returned; nothing is stored and every index
// is there.
func TestImportBulkFails(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	raw, err := sql.Open("sqlite3", "file:"+db.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON sched_jobs WHEN NEW.job_id = '403'
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	res, err := history.Import(ctx, db, strings.NewReader(rowsFrom(400, 5)), history.FormatText, history.Options{Cluster: "lab", Batch: 2})
	if err == nil || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "nothing of this import was stored") {
		t.Fatalf("err = %v, want the injected failure, saying nothing was stored", err)
	}
	if res.Inserted != 0 {
		t.Errorf("inserted = %d, want 0", res.Inserted)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "400"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job of the first batch: err = %v, want ErrNotFound", err)
	}
	if n := schedIndexCount(t, db.Path()); n != schedIndexes {
		t.Errorf("after a failed bulk import: %d indexes, want %d", n, schedIndexes)
	}
}

// An import process killed after its first batch, inside its bulk load,
// leaves the jobs stored before it and every index.
func TestImportBulkKilled(t *testing.T) {
	if path := os.Getenv("GPUPROF_TEST_IMPORT_KILL"); path != "" {
		importThenDie(path)
		return
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "central.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Import(ctx, db, strings.NewReader(rowsFrom(1, 1)), history.FormatText, history.Options{Cluster: "lab"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestImportBulkKilled$")
	cmd.Env = append(os.Environ(), "GPUPROF_TEST_IMPORT_KILL="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the importing process: %v, want it killed by SIGKILL; output:\n%s", err, out)
	}
	// Killed inside the load: its first batch not visible to others, the
	// indexes there for them.
	if !strings.Contains(string(out), "first batch stored; another connection sees 1 jobs, 8 indexes") {
		t.Fatalf("the importing process died elsewhere than inside its bulk load:\n%s", out)
	}
	if n := schedIndexCount(t, path); n != schedIndexes {
		t.Errorf("after the kill: %d indexes, want %d", n, schedIndexes)
	}
	ro, err := store.Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.GetSchedJob(ctx, "lab", "1"); err != nil {
		t.Errorf("the job stored before: %v", err)
	}
	if _, err := ro.GetSchedJob(ctx, "lab", "500"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a job of the killed import: err = %v, want ErrNotFound", err)
	}
}

// importThenDie is the killed process of TestImportBulkKilled: after the
// first batch it says what another connection sees (the load's rows and
// its drop of the indexes are not committed) and kills itself.
func importThenDie(path string) {
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		os.Exit(3)
	}
	_, err = history.Import(ctx, db, strings.NewReader(rowsFrom(500, 6)), history.FormatText, history.Options{
		Cluster: "lab", Batch: 4, Progress: func(int, time.Duration) {
			raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
			if err != nil {
				os.Exit(4)
			}
			var jobs, indexes int
			if err := raw.QueryRow(`SELECT (SELECT count(*) FROM sched_jobs), (SELECT count(*) FROM sqlite_master
				WHERE type = 'index' AND tbl_name = 'sched_jobs' AND sql IS NOT NULL)`).Scan(&jobs, &indexes); err != nil {
				os.Exit(5)
			}
			os.Stdout.WriteString("first batch stored; another connection sees " + strconv.Itoa(jobs) + " jobs, " + strconv.Itoa(indexes) + " indexes\n")
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}})
	os.Stdout.WriteString("import returned: " + errString(err) + "\n")
	os.Exit(6)
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
