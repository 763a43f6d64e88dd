package tui

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	_ "github.com/mattn/go-sqlite3"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/tools/benchdb"
)

// storeSource is a Source over a real database with one uid forced into
// every filter, as jobsource.Source does for a non-admin reading
// the local database: whatever user the UI asks for, only uid's jobs come
// back.
type storeSource struct {
	db   *store.DB
	uid  int
	user string // the reader's login, as jobsource.Source knows it
}

var _ Source = storeSource{}

// reader is the store's reader for the caller, who is not an admin.
func (s storeSource) reader() *store.Reader {
	return s.db.ReaderFor(store.Caller{UID: s.uid, User: s.user})
}

func (s storeSource) Jobs(ctx context.Context, f store.ViewFilter) ([]store.JobView, error) {
	return s.reader().ListViews(ctx, f)
}

func (s storeSource) Count(ctx context.Context, f store.ViewFilter) (int, error) {
	return s.reader().CountViews(ctx, f)
}

func (s storeSource) Job(ctx context.Context, cluster, jobID string) (store.JobView, error) {
	vs, err := s.Jobs(ctx, store.ViewFilter{Cluster: cluster, JobID: jobID, WithSeries: true, Limit: 1})
	if err != nil {
		return store.JobView{}, err
	}
	if len(vs) == 0 {
		return store.JobView{}, fmt.Errorf("job %s: %w", jobID, store.ErrNotFound)
	}
	return vs[0], nil
}

// TestStoreSourceScoped checks the scoped adapter over a real database:
// with uid forced, the other uid's jobs never come back, whatever user,
// job id or text the filter asks for, and through the UI neither.
func TestStoreSourceScoped(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scoped.db")
	w, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for i, u := range []struct {
		user string
		uid  int
	}{{"alice", 1001}, {"mallory", 1002}, {"alice", 1001}, {"mallory", 1002}, {"mallory", 1002}} {
		id := fmt.Sprint(500 + i)
		r := slurmext.JobRecord{
			Cluster: "hpc", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1,
			Name: "train_" + u.user, User: u.user, UID: u.uid, Account: "proj", Partition: "gpu",
			State: "COMPLETED", CancelledBy: -1, Submit: start, Start: start.Add(time.Duration(i) * time.Hour),
			End: start.Add(time.Duration(i)*time.Hour + 30*time.Minute), TimeLimit: time.Hour, ReqGPUs: 1,
		}
		if err := w.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// Unscoped, the database does hold mallory's jobs: the test can fail.
	if n, err := db.ReaderFor(store.System).CountViews(ctx, store.ViewFilter{User: "mallory"}); err != nil || n != 3 {
		t.Fatalf("unscoped CountViews(mallory) = %d, %v; want 3", n, err)
	}

	src := storeSource{db: db, uid: 1001, user: "alice"}
	onlyAlice := func(what string, vs []store.JobView) {
		t.Helper()
		for _, v := range vs {
			if v.Sched == nil || v.Sched.User != "alice" || v.Sched.UID != 1001 {
				t.Errorf("%s returned %s/%s of %+v", what, v.Cluster, v.JobID, v.Sched)
			}
		}
	}
	for _, f := range []store.ViewFilter{
		{},
		{User: "mallory"},
		{User: "alice"},
		{Text: "mallory"},
		{JobID: "501"},
		{Cluster: "hpc", JobID: "501", WithSeries: true, Limit: 1},
		{Sort: store.SortUser, Asc: true},
	} {
		vs, err := src.Jobs(ctx, f)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", f, err)
		}
		onlyAlice(fmt.Sprintf("Jobs(%+v)", f), vs)
		n, err := src.Count(ctx, f)
		if err != nil {
			t.Fatalf("Count(%+v): %v", f, err)
		}
		if n != len(vs) {
			t.Errorf("Count(%+v) = %d, Jobs returned %d", f, n, len(vs))
		}
	}
	if vs, _ := src.Jobs(ctx, store.ViewFilter{}); len(vs) != 2 {
		t.Errorf("Jobs({}) returned %d jobs, want alice's 2", len(vs))
	}
	if v, err := src.Job(ctx, "hpc", "500"); err != nil || v.JobID != "500" {
		t.Errorf("Job(500) = %s, %v; want alice's job", v.JobID, err)
	}
	if v, err := src.Job(ctx, "hpc", "501"); err == nil {
		t.Errorf("Job(501) returned mallory's job %+v", v.Sched)
	} else if !strings.Contains(err.Error(), store.ErrNotFound.Error()) {
		t.Errorf("Job(501): %v, want not found", err)
	}

	// Through the UI: an "admin" identity that asks for everyone's jobs
	// still sees alice's only, since the Source decides.
	m := New(ctx, src, Identity{User: "alice", Admin: true}, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 120, Height: 30})
	m = press(t, m, "u", "ctrl+u", "enter") // user: empty, everyone
	if m.list.q.user != "" {
		t.Fatalf("user prompt left user %q", m.list.q.user)
	}
	out := m.render()
	if m.list.total != 2 || strings.Contains(out, "mallory") || !strings.Contains(out, "train_alice") {
		t.Errorf("UI over the scoped source shows %d jobs:\n%s", m.list.total, out)
	}
}

// storeFixture is the million-job database the store benchmarks share,
// built once per test binary (building it takes tens of seconds).
type storeFixture struct {
	once sync.Once
	dir  string
	path string
	err  error
}

var million storeFixture

// millionDB opens the fixture read-only, building it on first use.
func millionDB(b *testing.B) *store.DB {
	b.Helper()
	if testing.Short() {
		b.Skip("builds a database of 1,000,000 jobs")
	}
	ctx := context.Background()
	million.once.Do(func() {
		start := time.Now()
		million.dir, million.err = os.MkdirTemp("", "gpuprof-tui-bench-")
		if million.err != nil {
			return
		}
		million.path = filepath.Join(million.dir, "million.db")
		million.err = buildMillion(ctx, million.path)
		b.Logf("fixture built in %v", time.Since(start).Round(time.Millisecond))
	})
	if million.err != nil {
		b.Fatal(million.err)
	}
	db, err := store.Open(ctx, million.path, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// buildMillion creates the schema with the store, then fills it with
// benchdb through a plain database/sql connection.
func buildMillion(ctx context.Context, path string) error {
	w, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	sdb, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		return err
	}
	sdb.SetMaxOpenConns(1) // the cache_size pragma must hold for the fill
	if err := benchdb.Fill(ctx, sdb, benchBase); err != nil {
		sdb.Close()
		return fmt.Errorf("fill: %w", err)
	}
	return sdb.Close()
}

// benchBase is the fixture's first job start; benchNow is after its last.
var (
	benchBase = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	benchNow  = benchBase.Add(benchdb.Jobs * 30 * time.Second).Add(48 * time.Hour)
)

// TestMain removes the million-job fixture, if a benchmark built one.
func TestMain(m *testing.M) {
	code := m.Run()
	if million.dir != "" {
		os.RemoveAll(million.dir)
	}
	os.Exit(code)
}

// newStoreModel opens the TUI for user target over db at 120×40, first
// page and count loaded.
func newStoreModel(b *testing.B, db *store.DB) Model {
	b.Helper()
	src := storeSource{db: db, uid: benchdb.TargetUID, user: benchdb.Target}
	m := New(context.Background(), src, Identity{User: benchdb.Target},
		Options{NoColor: true, PageSize: 100, Now: func() time.Time { return benchNow }})
	m = drive(b, m, m.Init())
	return send(b, m, tea.WindowSizeMsg{Width: 120, Height: 40})
}

// onSchedJob moves the cursor past the user's newest jobs, which in the
// fixture are profile-only (no name, so no task to look up), to row 400: a
// job with a scheduler record.
func onSchedJob(b *testing.B, m Model) Model {
	b.Helper()
	next, cmd := m.move(400)
	m = drive(b, next.(Model), cmd)
	if r, ok := m.rowAt(m.list.cursor); !ok || !strings.HasPrefix(r.name, "train-") {
		b.Fatalf("row %d is %+v, want a train- job with a scheduler record", m.list.cursor, r)
	}
	return m
}

// BenchmarkStoreFirstFrame1M is the time to the first frame with 1,000,000
// jobs in the database, 10,310 of them the user's: the count and the
// first pages read from the store and analysed, then the list rendered at
// 120×40, with every command run one after the other — including the
// prefetch of the last screen, which the real program runs in the
// background after the frame is shown (BenchmarkStoreShown1M measures
// that). Target: 200 ms. Run with
//
//	go test ./tui -run '^$' -bench Store -benchtime 20x
//
// (the fixture takes a while to build; -short skips it).
func BenchmarkStoreFirstFrame1M(b *testing.B) {
	db := millionDB(b)
	src := storeSource{db: db, uid: benchdb.TargetUID, user: benchdb.Target}
	var m Model
	for b.Loop() {
		m = New(context.Background(), src, Identity{User: benchdb.Target},
			Options{NoColor: true, PageSize: 100, Now: func() time.Time { return benchNow }})
		m = drive(b, m, m.Init())
		m = send(b, m, tea.WindowSizeMsg{Width: 120, Height: 40})
		_ = m.View()
	}
	if m.list.total != benchdb.TargetJobs {
		b.Fatalf("total = %d, want %d", m.list.total, benchdb.TargetJobs)
	}
	if out := m.render(); strings.Contains(out, "loading") || !strings.Contains(out, "row 1 of 10,310") {
		b.Fatalf("first frame is not loaded:\n%s", out)
	}
}

// BenchmarkStoreKeypress1M is one key and the frame after it, including
// the store reads the key leads to, over the million-job database.
// Target: 16 ms for scrolling and opening a job.
func BenchmarkStoreKeypress1M(b *testing.B) {
	db := millionDB(b)

	// down: one row; the pages ahead are cached except every so often.
	b.Run("down", func(b *testing.B) {
		m := newStoreModel(b, db)
		for b.Loop() {
			m = send(b, m, keyMsg("down"))
			_ = m.View()
			if m.list.cursor >= m.list.total-1 {
				m = send(b, m, keyMsg("g"))
			}
		}
	})

	// pgdown: a screen down through the whole list, with the loads it
	// leads to (a page of 100 every few presses).
	b.Run("pgdown", func(b *testing.B) {
		m := newStoreModel(b, db)
		for b.Loop() {
			m = send(b, m, keyMsg("pgdown"))
			_ = m.View()
			if m.list.cursor >= m.list.total-1 {
				m = send(b, m, keyMsg("g"))
			}
		}
	})

	// pgdown-load: every press crosses into pages that are not cached, so
	// each op includes reading them from the store: the time from the key
	// until the frame shows the new rows.
	pgdownLoad := func(b *testing.B, from int) {
		m := newStoreModel(b, db)
		restart := func() {
			next, cmd := m.move(from)
			m = drive(b, next.(Model), cmd)
		}
		restart()
		for b.Loop() {
			l := m.list
			cur := l.cursor / m.opts.PageSize
			for p := range l.pages {
				if p > cur {
					delete(l.pages, p)
				}
			}
			m = send(b, m, keyMsg("pgdown"))
			out := m.render()
			if strings.Contains(out, "loading") {
				b.Fatalf("frame after pgdown still loading:\n%s", out)
			}
			if m.list.cursor >= m.list.total-1-m.listRows() {
				b.StopTimer()
				restart()
				b.StartTimer()
			}
		}
	}
	b.Run("pgdown-load", func(b *testing.B) { pgdownLoad(b, 0) })
	// pgdown-load-mid: the same from the middle of the user's 10,310 jobs,
	// where each page is read at an offset of 5,000 or more.
	b.Run("pgdown-load-mid", func(b *testing.B) { pgdownLoad(b, benchdb.TargetJobs/2) })

	// end: G from the top with the last pages not cached (evicted, as
	// after scrolling elsewhere), loaded, the frame: the cold worst case.
	b.Run("end", func(b *testing.B) {
		m := newStoreModel(b, db)
		for b.Loop() {
			m = send(b, m, keyMsg("G"))
			_ = m.View()
			b.StopTimer()
			if m.list.cursor != m.list.total-1 {
				b.Fatalf("G: cursor %d of %d", m.list.cursor, m.list.total)
			}
			m = send(b, m, keyMsg("g"))
			for p := range m.list.pages {
				if p > 1 {
					delete(m.list.pages, p) // so that G must load again
				}
			}
			b.StartTimer()
		}
	})

	// end-after-open: G on a list just opened, whose last pages were
	// prefetched once the count came (what a user gets who jumps to their
	// oldest jobs first).
	b.Run("end-after-open", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			m := newStoreModel(b, db)
			b.StartTimer()
			m = send(b, m, keyMsg("G"))
			_ = m.View()
			b.StopTimer()
			if m.list.cursor != m.list.total-1 || strings.Contains(m.render(), "loading") {
				b.Fatalf("G: cursor %d of %d:\n%s", m.list.cursor, m.list.total, m.render())
			}
			b.StartTimer()
		}
	})

	// detail: enter, the job with its series read and analysed, the
	// frame; the task's other runs load after and are not counted.
	b.Run("detail", func(b *testing.B) {
		m := onSchedJob(b, newStoreModel(b, db))
		for b.Loop() {
			next, cmd := m.Update(keyMsg("enter"))
			mm := next.(Model)
			next, _ = mm.Update(cmd())
			mm = next.(Model)
			_ = mm.View()
			b.StopTimer()
			if mm.detail == nil || mm.detail.loading || mm.detail.err != "" {
				b.Fatalf("detail not loaded: %+v", mm.detail)
			}
			m = send(b, mm, keyMsg("esc"))
			b.StartTimer()
		}
	})

	// detail+task: as detail, and the other runs of the job's task
	// (ListViews by user and name prefix, up to taskRunsLimit) too.
	b.Run("detail+task", func(b *testing.B) {
		m := onSchedJob(b, newStoreModel(b, db))
		for b.Loop() {
			mm := send(b, m, keyMsg("enter"))
			_ = mm.View()
			b.StopTimer()
			if d := mm.detail; d == nil || d.taskLoading || d.taskErr != "" || d.task == nil || d.task.none != "" {
				b.Fatalf("task not loaded: %+v", mm.detail)
			}
			m = send(b, mm, keyMsg("esc"))
			b.StartTimer()
		}
	})

	// sort: s from the key before, the count and first pages in the new
	// order, the frame; one sub-benchmark per key.
	keys := store.SortKeys()
	for i, key := range keys {
		prev := keys[(i+len(keys)-1)%len(keys)]
		b.Run("sort-"+key, func(b *testing.B) {
			m := newStoreModel(b, db)
			for b.Loop() {
				m.list.q.sort = prev
				m = send(b, m, keyMsg("s"))
				_ = m.View()
			}
			if m.list.q.sort != key || !m.list.totalKnown || len(m.list.pages[0]) == 0 {
				b.Fatalf("after s: sort %q, %d pages", m.list.q.sort, len(m.list.pages))
			}
		})
	}
}

// BenchmarkStoreQueries1M is what the keypresses above spend in the
// store: the count, the first page, the last page by offset (what G
// asks), and the same rows asked from the other end (the order reversed,
// a small offset), over the million-job database with user target's uid
// forced.
func BenchmarkStoreQueries1M(b *testing.B) {
	db := millionDB(b)
	ctx := context.Background()
	src := storeSource{db: db, uid: benchdb.TargetUID, user: benchdb.Target}
	const size = 100
	lastOff := (benchdb.TargetJobs - 1) / size * size
	base := store.ViewFilter{User: benchdb.Target, Now: benchNow}
	page := func(off int, asc bool) store.ViewFilter {
		f := base
		f.Offset, f.Limit, f.Asc = off, size, asc
		return f
	}
	for _, c := range []struct {
		name string
		run  func() (int, error)
	}{
		{"count", func() (int, error) { return src.Count(ctx, base) }},
		{"page-first", func() (int, error) { vs, err := src.Jobs(ctx, page(0, false)); return len(vs), err }},
		{"page-last-offset", func() (int, error) { vs, err := src.Jobs(ctx, page(lastOff, false)); return len(vs), err }},
		{"page-last-reversed", func() (int, error) {
			vs, err := src.Jobs(ctx, page(0, true))
			return len(vs), err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if n, err := c.run(); err != nil || n == 0 {
					b.Fatalf("%d, %v", n, err)
				}
			}
		})
	}
}

// shown runs cmd the way the bubbletea program does, each command on its
// own goroutine with the messages fed to m one by one, and returns m as
// soon as ready(m) holds: the moment the user sees the frame. Commands
// still running then (prefetches) finish before shown returns, outside
// the benchmark's timer, so they do not spill into the next round.
func shown(b *testing.B, m Model, cmd tea.Cmd, ready func(Model) bool) Model {
	b.Helper()
	msgs := make(chan tea.Msg)
	pending := 0
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		pending++
		go func() { msgs <- c() }()
	}
	run(cmd)
	done := false
	for pending > 0 {
		msg := <-msgs
		pending--
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		default:
			if done {
				continue // after the frame: let it finish, drop it
			}
			next, c := m.Update(msg)
			m = next.(Model)
			run(c)
			if ready(m) {
				_ = m.View()
				done = true
				b.StopTimer()
			}
		}
	}
	if !done {
		b.Fatalf("the frame never became ready:\n%s", m.render())
	}
	b.StartTimer()
	return m
}

// firstScreen is ready when the count is known and the rows of the
// first screen are loaded.
func firstScreen(m Model) bool {
	if !m.list.totalKnown {
		return false
	}
	_, ok := m.rowAt(min(m.list.top+m.listRows(), m.list.total) - 1)
	return ok || m.list.total == 0
}

// BenchmarkStoreShown1M is the time until the user sees the frame, with
// the commands run concurrently as in the real program (the prefetch of
// the last screen goes on in the background): opening the TUI, and
// switching the sort.
func BenchmarkStoreShown1M(b *testing.B) {
	db := millionDB(b)
	src := storeSource{db: db, uid: benchdb.TargetUID, user: benchdb.Target}
	b.Run("first-frame", func(b *testing.B) {
		for b.Loop() {
			m := New(context.Background(), src, Identity{User: benchdb.Target},
				Options{NoColor: true, PageSize: 100, Now: func() time.Time { return benchNow }})
			next, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			m = shown(b, next.(Model), m.Init(), firstScreen)
		}
	})
	keys := store.SortKeys()
	for i, key := range keys {
		prev := keys[(i+len(keys)-1)%len(keys)]
		b.Run("sort-"+key, func(b *testing.B) {
			m := newStoreModel(b, db)
			for b.Loop() {
				m.list.q.sort = prev
				next, cmd := m.Update(keyMsg("s"))
				m = shown(b, next.(Model), cmd, firstScreen)
			}
			if m.list.q.sort != key {
				b.Fatalf("after s: sort %q", m.list.q.sort)
			}
		})
	}
}
