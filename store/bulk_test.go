package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	Query(string, ...any) (*sql.Rows, error)
}

// schedIndexSQL returns sched_jobs' secondary indexes as SQLite holds them:
// name → its CREATE INDEX statement.
func schedIndexSQL(t testing.TB, q querier) map[string]string {
	t.Helper()
	rows, err := q.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sched_jobs' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			t.Fatal(err)
		}
		got[name] = text
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// wantSchedIndexes fails t unless q sees exactly schedIndexes.
func wantSchedIndexes(t testing.TB, q querier, when string) {
	t.Helper()
	got := schedIndexSQL(t, q)
	var missing []string
	for _, ix := range schedIndexes {
		if _, ok := got[ix.name]; !ok {
			missing = append(missing, ix.name)
		}
	}
	if len(missing) > 0 || len(got) != len(schedIndexes) {
		t.Errorf("%s: sched_jobs has %d secondary indexes, missing %v; want the %d of schedIndexes", when, len(got), missing, len(schedIndexes))
	}
}

// The list is the schema: a database migrated from nothing has exactly
// these indexes on sched_jobs, with these definitions.
func TestSchedIndexesAreTheMigrations(t *testing.T) {
	db := openTest(t, Options{})
	got := schedIndexSQL(t, db.r)
	want := map[string]string{}
	for _, ix := range schedIndexes {
		want[ix.name] = "CREATE INDEX " + ix.name + " ON " + ix.on
	}
	for name, text := range got {
		if want[name] != strings.Join(strings.Fields(text), " ") {
			t.Errorf("index %s: migrations made %q, schedIndexes says %q", name, text, want[name])
		}
	}
	if len(got) != len(want) {
		t.Errorf("migrations made %d indexes on sched_jobs, schedIndexes lists %d", len(got), len(want))
	}
}

// planOf returns EXPLAIN QUERY PLAN's details of query, joined by "; ".
func planOf(t testing.TB, q querier, query string, args ...any) string {
	t.Helper()
	rows, err := q.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var details []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		details = append(details, detail)
	}
	return strings.Join(details, "; ")
}

// A user's newest jobs, as the views read them: by the user's index, in
// its order, without sorting or scanning the table.
const userPageSQL = `SELECT job_id FROM sched_jobs WHERE "user" = ?
	ORDER BY coalesce("start", submit) DESC, cluster DESC, job_id DESC LIMIT 50`

func wantUserIndexUsed(t testing.TB, q querier, when string) {
	t.Helper()
	plan := planOf(t, q, userPageSQL, "alice")
	if !strings.Contains(plan, "INDEX sched_jobs_user") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("%s: plan of a user's page %q, want sched_jobs_user and no sort", when, plan)
	}
}

// A database of this version without some of its indexes (dropped by hand,
// another tool) gets them back when a writer opens it: reads are never
// left silently slow.
func TestOpenRecreatesMissingIndexes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := db.PutSchedJobs(ctx, sacctRecords(t, 50)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw := rawDB(t, path)
	for _, name := range []string{"sched_jobs_user", "sched_jobs_het"} {
		if _, err := raw.Exec("DROP INDEX " + name); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(schedIndexSQL(t, ro.r)); n != len(schedIndexes)-2 {
		t.Fatalf("read-only open: %d indexes, want the 2 dropped still missing (it cannot write)", n)
	}
	ro.Close()
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wantSchedIndexes(t, db.r, "after Open")
	wantUserIndexUsed(t, db.r, "after Open")
}

// A bulk load drops the indexes and builds them again inside its one
// transaction: other connections see the old rows with every index until
// it commits, then the new rows with every index, stored as a put of the
// same records one transaction at a time stores them.
func TestBulkLoadCommit(t *testing.T) {
	ctx := context.Background()
	recs := sacctRecords(t, 3000)
	db := openTest(t, Options{})
	other := openTest(t, Options{})
	if _, _, _, err := db.PutSchedJobs(ctx, recs[:100]); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := other.PutSchedJobs(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if worth, err := db.BulkLoadWorth(ctx, 2900); err != nil || !worth {
		t.Errorf("BulkLoadWorth(2900) over 100 jobs = %v, %v; want true", worth, err)
	}
	if worth, err := db.BulkLoadWorth(ctx, 199); err != nil || worth {
		t.Errorf("BulkLoadWorth(199) over 100 jobs = %v, %v; want false", worth, err)
	}

	bl, err := db.BeginBulkLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Rollback()
	err = bl.Do(func(tx *Tx) error {
		ins, upd, same, err := tx.PutSchedJobs(ctx, recs[100:])
		if err == nil && (ins != 2900 || upd+same != 0) {
			t.Errorf("PutSchedJobs in the load = %d, %d, %d; want 2900 new", ins, upd, same)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another connection, mid-load: the old rows, every index.
	reader := rawDB(t, db.Path())
	var n int
	if err := reader.QueryRow(`SELECT count(*) FROM sched_jobs`).Scan(&n); err != nil || n != 100 {
		t.Errorf("a reader during the load sees %d jobs (%v), want the 100 before it", n, err)
	}
	wantSchedIndexes(t, reader, "a reader during the load")
	wantUserIndexUsed(t, reader, "a reader during the load")
	if err := bl.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bl.Commit(ctx); !errors.Is(err, errBulkDone) {
		t.Errorf("second Commit: %v, want errBulkDone", err)
	}
	wantSchedIndexes(t, db.r, "after the commit")
	wantUserIndexUsed(t, db.r, "after the commit")
	if n := countRows(t, db, "sched_jobs"); n != 3000 {
		t.Errorf("after the commit: %d jobs, want 3000", n)
	}
	for _, r := range []int{0, 99, 100, 1500, 2999} {
		got, err1 := db.GetSchedJob(ctx, recs[r].Cluster, recs[r].JobID)
		want, err2 := other.GetSchedJob(ctx, recs[r].Cluster, recs[r].JobID)
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("job %s: bulk load stored\n%+v (%v)\nwant as a plain put\n%+v (%v)", recs[r].JobID, got, err1, want, err2)
		}
	}
}

// A load that fails is rolled back whole: old rows and every index, as
// if it never began.
func TestBulkLoadRollback(t *testing.T) {
	ctx := context.Background()
	recs := sacctRecords(t, 500)
	db := openTest(t, Options{})
	if _, _, _, err := db.PutSchedJobs(ctx, recs[:10]); err != nil {
		t.Fatal(err)
	}
	bl, err := db.BeginBulkLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected")
	err = bl.Do(func(tx *Tx) error {
		if _, _, _, err := tx.PutSchedJobs(ctx, recs[10:]); err != nil {
			return err
		}
		return injected // after the drop and the rows: as an import's failing batch
	})
	if !errors.Is(err, injected) {
		t.Fatalf("Do = %v, want the injected error", err)
	}
	if err := bl.Rollback(); err != nil {
		t.Fatal(err)
	}
	wantSchedIndexes(t, db.r, "after the rollback")
	wantUserIndexUsed(t, db.r, "after the rollback")
	if n := countRows(t, db, "sched_jobs"); n != 10 {
		t.Errorf("after the rollback: %d jobs, want the 10 before", n)
	}
	if err := bl.Do(func(*Tx) error { return nil }); !errors.Is(err, errBulkDone) {
		t.Errorf("Do after Rollback: %v, want errBulkDone", err)
	}
}

// While a load holds the write lock, a second load and any other writer
// wait their busy timeout and are refused with ErrLocked: nothing
// interleaves with it.
func TestBulkLoadRefusesSecondWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	second, err := Open(ctx, path, Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	bl, err := db.BeginBulkLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Rollback()
	if _, err := second.BeginBulkLoad(ctx); !errors.Is(err, ErrLocked) {
		t.Errorf("second BeginBulkLoad: %v, want ErrLocked", err)
	}
	if _, _, _, err := second.PutSchedJobs(ctx, sacctRecords(t, 1)); !errors.Is(err, ErrLocked) {
		t.Errorf("another writer: %v, want ErrLocked", err)
	}
}

// A process killed in the middle of a bulk load (after the drop and some
// rows) leaves the database as it was: every index is there for the next
// reader, even a read-only one that could not re-create them.
func TestBulkLoadKilled(t *testing.T) {
	if path := os.Getenv("GPUPROF_TEST_BULK_KILL"); path != "" {
		bulkLoadThenDie(path)
		return
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := db.PutSchedJobs(ctx, sacctRecords(t, 10)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestBulkLoadKilled$")
	cmd.Env = append(os.Environ(), "GPUPROF_TEST_BULK_KILL="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the loading process: %v, want it killed by SIGKILL; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "dropped and loaded") {
		t.Fatalf("the loading process died before its load:\n%s", out)
	}

	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	wantSchedIndexes(t, ro.r, "read-only, after the kill")
	wantUserIndexUsed(t, ro.r, "read-only, after the kill")
	if n := countRows(t, ro, "sched_jobs"); n != 10 {
		t.Errorf("after the kill: %d jobs, want the 10 before the load", n)
	}
}

// bulkLoadThenDie is the killed process of TestBulkLoadKilled: it drops
// the indexes and stores 1,990 more jobs in a bulk load, says so, and
// kills itself before the commit.
func bulkLoadThenDie(path string) {
	ctx := context.Background()
	fail := func(err error) {
		os.Stdout.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		fail(err)
	}
	bl, err := db.BeginBulkLoad(ctx)
	if err != nil {
		fail(err)
	}
	recs := sacctRecords(&testing.T{}, 2000)
	if err := bl.Do(func(tx *Tx) error { _, _, _, err := tx.PutSchedJobs(ctx, recs[10:]); return err }); err != nil {
		fail(err)
	}
	var jobs, indexes int
	if err := bl.stx.QueryRow(`SELECT (SELECT count(*) FROM sched_jobs), (`+schedIndexesPresentSQL+`)`).Scan(&jobs, &indexes); err != nil {
		fail(err)
	}
	if jobs != 2000 || indexes != 0 {
		fail(fmt.Errorf("in the load: %d jobs and %d indexes, want 2000 and 0", jobs, indexes))
	}
	os.Stdout.WriteString("dropped and loaded\n")
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// The rows of a bulk insert go to the driver on the transaction's
// connection (insertFresh): once the transaction is gone — database/sql
// rolls it back when the context it began with ends — they are refused,
// not committed one by one outside it. (database/sql discards the
// connection then, as go-sqlite3 cannot reset a session; insertFresh's
// own check refuses where a driver keeps it.)
func TestInsertFreshOutsideTransaction(t *testing.T) {
	recs := sacctRecords(t, 300)
	db := openTest(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	bl, err := db.BeginBulkLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Rollback()
	cancel()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := bl.stx.Exec(`SELECT 1`); errors.Is(err, sql.ErrTxDone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the transaction was not rolled back after its context ended")
		}
	}
	w := bl.tx.newSchedWriter()
	defer w.close()
	if err := w.insertFresh(context.Background(), recs); err == nil {
		t.Error("insertFresh after the rollback succeeded, want an error")
	}
	if n := countRows(t, db, "sched_jobs"); n != 0 {
		t.Errorf("after the rollback: %d jobs stored, want 0", n)
	}
	wantSchedIndexes(t, db.r, "after the rollback")
}

// TestInsertFreshChecksTransaction: where the connection has left its
// transaction while database/sql still holds it open (here by a COMMIT
// behind its back), insertFresh refuses with sql.ErrTxDone rather than
// store each row in a transaction of its own. Fails without the check:
// the 300 jobs are stored.
func TestInsertFreshChecksTransaction(t *testing.T) {
	recs := sacctRecords(t, 300)
	db := openTest(t, Options{})
	ctx := context.Background()
	bl, err := db.BeginBulkLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Rollback()
	if _, err := bl.stx.Exec(`COMMIT`); err != nil {
		t.Fatal(err)
	}
	w := bl.tx.newSchedWriter()
	defer w.close()
	if err := w.insertFresh(ctx, recs); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("insertFresh outside a transaction: %v, want sql.ErrTxDone", err)
	}
	if n := countRows(t, db, "sched_jobs"); n != 0 {
		t.Errorf("%d jobs stored outside the transaction, want 0", n)
	}
}
