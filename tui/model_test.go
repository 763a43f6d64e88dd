package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/store"
)

var alice = Identity{User: "alice"}

func TestFirstPage(t *testing.T) {
	m, src := newTestModel(t, 250, alice, 80, 24)
	if !m.list.totalKnown || m.list.total != 200 {
		t.Fatalf("total = %d (known %v), want 200 of alice's jobs", m.list.total, m.list.totalKnown)
	}
	// The first page, and the last (for G) once the count is known.
	calls := src.calls()
	if len(calls) != 2 || calls[0].Offset != 0 || calls[1].Offset != 100 || calls[0].Limit != DefaultPageSize || calls[0].User != "alice" {
		t.Fatalf("Jobs calls = %+v, want a page at offset 0 and the last at 100, %d each, for alice", calls, DefaultPageSize)
	}
	if n := len(m.list.pages); n != 2 {
		t.Errorf("%d pages cached, want 2", n)
	}
	calls0 := len(calls)
	m = press(t, m, "G")
	if !strings.Contains(m.render(), "row 200 of 200") || len(src.calls()) != calls0 {
		t.Errorf("G after the prefetch: %d more loads, want none:\n%s", len(src.calls())-calls0, m.render())
	}
	m = press(t, m, "g")
	out := m.render()
	if !strings.Contains(out, "row 1 of 200") {
		t.Errorf("status bar lacks %q:\n%s", "row 1 of 200", out)
	}
	if !strings.Contains(out, "› 100250") {
		t.Errorf("newest job not selected first:\n%s", out)
	}
}

func TestPagingLoadsAroundCursor(t *testing.T) {
	m, src := newTestModel(t, 250, alice, 80, 24)
	for m.list.cursor < DefaultPageSize {
		m = press(t, m, "pgdown")
	}
	if !loadedOffset(src, DefaultPageSize) {
		t.Fatalf("crossing the page boundary loaded no page at offset %d: %+v", DefaultPageSize, src.calls())
	}
	r, ok := m.rowAt(m.list.cursor)
	if !ok {
		t.Fatalf("row %d under the cursor not loaded", m.list.cursor)
	}
	if !strings.Contains(m.render(), "› "+r.id) {
		t.Errorf("cursor row %s not shown:\n%s", r.id, m.render())
	}
	n := len(src.calls())
	m = press(t, m, "down", "up")
	if len(src.calls()) != n {
		t.Errorf("moving within loaded pages asked the source again: %+v", src.calls()[n:])
	}
	m = press(t, m, "G")
	if m.list.cursor != 199 || !strings.Contains(m.render(), "row 200 of 200") {
		t.Errorf("G: cursor %d, want 199:\n%s", m.list.cursor, m.render())
	}
	m = press(t, m, "g")
	if m.list.cursor != 0 || m.list.top != 0 {
		t.Errorf("g: cursor %d top %d, want 0 0", m.list.cursor, m.list.top)
	}
}

func TestPageCacheBounded(t *testing.T) {
	src := &fakeSource{jobs: genJobs(2000), admin: true}
	m := New(context.Background(), src, Identity{User: "root", Admin: true}, Options{PageSize: 10, NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	for range 40 {
		m = press(t, m, "pgdown")
	}
	if n, limit := len(m.list.pages), m.cacheLimit(); n > limit || limit > 24 {
		t.Errorf("%d pages cached, limit %d; want at most the limit, and a small one", n, limit)
	}
	// root has no jobs of its own, so the list moved to everyone's; then
	// 40 screens of 27 rows pass 108 pages, and each should load once.
	// A page is asked by offset or, after the page before it, by keyset.
	loads, distinct := 0, map[string]bool{}
	for _, f := range src.calls() {
		if f.User == "" {
			loads++
			distinct[fmt.Sprint(f.Offset, "/", f.AfterJobID)] = true
		}
	}
	if len(distinct) < 108 || loads > len(distinct)+1 {
		t.Errorf("%d loads of %d distinct pages of everyone's jobs, want at least 108 pages each loaded once: the cache churns", loads, len(distinct))
	}
	for _, f := range src.calls() {
		if f.Limit != 10 {
			t.Fatalf("a page of %d jobs asked, want 10: the list must never load everything", f.Limit)
		}
	}
}

func loadedOffset(src *fakeSource, off int) bool {
	for _, f := range src.calls() {
		if f.Offset == off {
			return true
		}
	}
	return false
}

func TestDetailAndBack(t *testing.T) {
	m, _ := newTestModel(t, 250, alice, 80, 24)
	m = press(t, m, "down", "down", "down")
	want, _ := m.rowAt(3)
	m = press(t, m, "enter")
	if m.screen != screenDetail || m.detail == nil || m.detail.loading {
		t.Fatalf("enter: screen %v, detail %+v; want a loaded detail", m.screen, m.detail)
	}
	out := m.render()
	for _, s := range []string{"job " + want.id, "GPUs (", "util ", "Task profile"} {
		if !strings.Contains(out+strings.Join(m.detailLines(), "\n"), s) {
			t.Errorf("detail lacks %q:\n%s", s, strings.Join(m.detailLines(), "\n"))
		}
	}
	if m.detail.taskLoading || m.detail.task == nil {
		t.Errorf("task profile not loaded: %+v", m.detail)
	}
	m = press(t, m, "j", "j", "G")
	if m.detail.scroll == 0 {
		t.Errorf("G did not scroll a detail taller than the screen (%d lines)", len(m.detailLines()))
	}
	m = press(t, m, "esc")
	if m.screen != screenList || m.list.cursor != 3 {
		t.Fatalf("esc: screen %v cursor %d, want the list at row 3", m.screen, m.list.cursor)
	}
	m = press(t, m, "enter", "backspace")
	if m.screen != screenList || m.list.cursor != 3 {
		t.Fatalf("backspace: screen %v cursor %d, want the list at row 3", m.screen, m.list.cursor)
	}
}

func TestTaskProfile(t *testing.T) {
	m, src := newTestModel(t, 250, alice, 120, 40)
	// Row 0 is train_resnet50_seed0; its runs share "train_resnet_seed".
	m = press(t, m, "enter")
	d := m.detail
	if d.task == nil || d.task.none != "" {
		t.Fatalf("no task profile: %+v", d.task)
	}
	if d.task.name != "train_resnet_seed" {
		t.Errorf("task %q, want train_resnet_seed", d.task.name)
	}
	want := 0
	for _, v := range src.jobs {
		if v.Sched.User == "alice" && strings.HasPrefix(v.Sched.Name, "train_resnet50_seed") {
			want++
		}
	}
	if d.task.profile.Jobs != want {
		t.Errorf("task runs = %d, want %d", d.task.profile.Jobs, want)
	}
	last := src.calls()[len(src.calls())-1]
	if last.User != "alice" || last.Text != "train" || last.Limit != taskRunsLimit {
		t.Errorf("runs asked with %+v, want user alice, text train, limit %d", last, taskRunsLimit)
	}
}

func TestTextFilter(t *testing.T) {
	m, _ := newTestModel(t, 250, alice, 80, 24)
	m = press(t, m, "/")
	m = typeText(t, m, "bashx")
	m = press(t, m, "backspace")
	if m.list.q.text != "" {
		t.Fatalf("filter applied before enter: %q", m.list.q.text)
	}
	if !strings.Contains(m.render(), "filter (name, id, user, account, partition): bash█") {
		t.Errorf("prompt not shown:\n%s", m.render())
	}
	m = press(t, m, "enter")
	if m.list.q.text != "bash" {
		t.Fatalf("text = %q, want bash", m.list.q.text)
	}
	if m.list.total != 50 {
		t.Errorf("total = %d, want alice's 50 bash jobs", m.list.total)
	}
	for i := range 10 {
		if r, _ := m.rowAt(i); r.name != "bash" {
			t.Errorf("row %d is %q, want bash", i, r.name)
		}
	}
	m = press(t, m, "/")
	m = typeText(t, m, "zzz")
	m = press(t, m, "esc")
	if m.list.q.text != "bash" || m.prompt != nil {
		t.Errorf("esc: text %q prompt %v, want bash and no prompt", m.list.q.text, m.prompt)
	}
}

func TestSortCycle(t *testing.T) {
	m, src := newTestModel(t, 250, alice, 80, 24)
	keys := store.SortKeys()
	for _, want := range append(keys[1:], keys[0]) {
		m = press(t, m, "s")
		if m.list.q.sort != want {
			t.Fatalf("sort = %q, want %q", m.list.q.sort, want)
		}
		if last := src.calls()[len(src.calls())-1]; last.Sort != want || last.Asc {
			t.Fatalf("page asked with sort %q asc %v, want %q in its default direction", last.Sort, last.Asc, want)
		}
	}
	m = press(t, m, "s") // id, ascending by default
	first, _ := m.rowAt(0)
	m = press(t, m, "S")
	if last := src.calls()[len(src.calls())-1]; !last.Asc {
		t.Fatalf("S did not reverse: %+v", last)
	}
	rev, _ := m.rowAt(0)
	if first.id == rev.id {
		t.Errorf("reversed order starts with the same job %s", rev.id)
	}
	if !strings.Contains(m.render(), "sort id↓") {
		t.Errorf("title does not show the reversed id order:\n%s", m.render())
	}
}

func TestStateFilter(t *testing.T) {
	m, _ := newTestModel(t, 250, alice, 80, 24)
	m = press(t, m, "f")
	if m.list.q.state != "RUNNING" || m.list.total != 2 {
		t.Fatalf("state %q total %d, want RUNNING 2", m.list.q.state, m.list.total)
	}
	for range len(states) - 1 {
		m = press(t, m, "f")
	}
	if m.list.q.state != "" || m.list.total != 200 {
		t.Errorf("after a full cycle: state %q total %d, want all 200", m.list.q.state, m.list.total)
	}
}

func TestWindowAndPartition(t *testing.T) {
	m, src := newTestModel(t, 250, alice, 80, 24)
	m = press(t, m, "t")
	if last := src.calls()[len(src.calls())-1]; !last.Since.Equal(testNow.Add(-24 * time.Hour)) {
		t.Errorf("24h window asked since %v", last.Since)
	}
	if m.list.total >= 200 {
		t.Errorf("24h window keeps %d jobs", m.list.total)
	}
	m = press(t, m, "p")
	m = typeText(t, m, "gpu-long")
	m = press(t, m, "enter")
	if last := src.calls()[len(src.calls())-1]; last.Partition != "gpu-long" {
		t.Errorf("partition asked %q", last.Partition)
	}
}

func TestHelp(t *testing.T) {
	m, _ := newTestModel(t, 250, alice, 80, 24)
	m = press(t, m, "?")
	if !m.help || !strings.Contains(m.render(), "time window") {
		t.Fatalf("help not shown:\n%s", m.render())
	}
	m = press(t, m, "j")
	if m.help || m.list.cursor != 0 {
		t.Errorf("a key closes the help without acting: help %v cursor %d", m.help, m.list.cursor)
	}
}

func TestQuit(t *testing.T) {
	m, _ := newTestModel(t, 250, alice, 80, 24)
	cases := []struct {
		name  string
		setup []string
		key   string
	}{
		{"q", nil, "q"},
		{"ctrl+c", nil, "ctrl+c"},
		{"ctrl+c in a prompt", []string{"/"}, "ctrl+c"},
		{"q in the detail", []string{"enter"}, "q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mm := press(t, m, c.setup...)
			_, cmd := mm.Update(keyMsg(c.key))
			if cmd == nil {
				t.Fatal("no command")
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Errorf("%s did not quit", c.key)
			}
		})
	}
	// In a prompt, q is text.
	mm := press(t, m, "/")
	if _, cmd := mm.Update(keyMsg("q")); cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Error("q in a prompt quit")
		}
	}
}

func TestSwitchUser(t *testing.T) {
	t.Run("admin", func(t *testing.T) {
		m, _ := newTestModel(t, 250, Identity{User: "root", Admin: true}, 120, 40)
		m = press(t, m, "u", "ctrl+u") // the prompt starts with "root"
		m = typeText(t, m, "bob")
		m = press(t, m, "enter")
		if m.list.q.user != "bob" || m.list.total != 50 {
			t.Fatalf("user %q total %d, want bob's 50", m.list.q.user, m.list.total)
		}
		m = press(t, m, "u", "ctrl+d") // ctrl+d is not text: ignored
		m = press(t, m, "backspace", "backspace", "backspace", "enter")
		if m.list.q.user != "" || m.list.total != 250 {
			t.Fatalf("empty user: %q total %d, want everyone's 250", m.list.q.user, m.list.total)
		}
		if !strings.Contains(m.render(), "USER") {
			t.Errorf("everyone's list has no user column:\n%s", m.render())
		}
		m = press(t, m, "a")
		m = typeText(t, m, "proj1")
		m = press(t, m, "enter")
		if m.list.q.account != "proj1" || m.list.total == 0 || m.list.total >= 250 {
			t.Errorf("account %q total %d, want proj1's share of 250", m.list.q.account, m.list.total)
		}
	})
	t.Run("not admin", func(t *testing.T) {
		m, _ := newTestModel(t, 250, alice, 80, 24)
		for _, k := range []string{"u", "a"} {
			m = press(t, m, k)
			if m.prompt != nil {
				t.Fatalf("%s opened a prompt for a non-admin", k)
			}
			if !strings.Contains(m.render(), "only admins can switch") {
				t.Errorf("%s: no refusal shown:\n%s", k, m.render())
			}
		}
		m = press(t, m, "j")
		if strings.Contains(m.render(), "only admins") {
			t.Error("the refusal outlives the next key")
		}
	})
}

func TestLoadErrors(t *testing.T) {
	src := &fakeSource{jobs: genJobs(10), user: "alice", fail: errors.New("collector unreachable")}
	m := New(context.Background(), src, alice, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	out := m.render()
	if !strings.Contains(out, "error:") || !strings.Contains(out, "collector unreachable") {
		t.Errorf("error not in the status bar:\n%s", out)
	}
	src.fail = nil
	m = press(t, m, "f", "f", "f", "f", "f", "f", "f")
	if strings.Contains(m.render(), "error:") {
		t.Errorf("error outlives a successful load:\n%s", m.render())
	}
	m = press(t, m, "enter")
	src.fail = errors.New("gone")
	m = press(t, m, "esc", "enter")
	if !strings.Contains(m.render(), "could not load job") {
		t.Errorf("detail error not shown:\n%s", m.render())
	}
}

func TestSummary(t *testing.T) {
	m, src := newTestModel(t, 250, alice, 80, 24)
	m = press(t, m, "m")
	if m.screen != screenSummary || m.summary.loading || m.summary.res == nil {
		t.Fatalf("summary not loaded: %+v", m.summary)
	}
	r := m.summary.res
	inMonth := 0
	for _, v := range src.jobs {
		if v.Sched.User == "alice" && (v.Sched.End.IsZero() || !v.Sched.End.Before(monthOf(testNow).From)) {
			inMonth++
		}
	}
	if r.loaded != inMonth || r.truncated {
		t.Errorf("summary read %d jobs (truncated %v), want %d", r.loaded, r.truncated, inMonth)
	}
	if r.head.AllocatedGPUHours <= 0 || r.head.Utilisation <= 0 {
		t.Errorf("headline empty: %+v", r.head)
	}
	out := m.render()
	for _, s := range []string{"November 2026", "GPU-hours", "efficiency", "idle GPU-hours", "Jobs by class"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	m = press(t, m, "esc")
	if m.screen != screenList {
		t.Error("esc did not leave the summary")
	}
}

func TestSummaryTruncated(t *testing.T) {
	src := &fakeSource{jobs: genJobs(10), admin: true}
	// Repeat the jobs past the bound.
	for len(src.jobs) < maxSummaryJobs+300 {
		v := src.jobs[len(src.jobs)%10]
		v.JobID += "x"
		src.jobs = append(src.jobs, v)
	}
	res, err := loadSummary(context.Background(), src, "", testNow, New(nil, src, Identity{}, Options{}).cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.truncated || res.loaded != maxSummaryJobs || res.total != len(src.jobs) {
		t.Errorf("loaded %d of %d (truncated %v), want %d of %d", res.loaded, res.total, res.truncated, maxSummaryJobs, len(src.jobs))
	}
}

func TestResize(t *testing.T) {
	m, _ := newTestModel(t, 250, alice, 80, 24)
	for _, size := range [][2]int{{120, 40}, {60, 15}, {200, 10}, {20, 3}, {1, 1}, {2, 2}, {80, 24}} {
		m = send(t, m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkFrame(t, m.render(), size[0], size[1])
	}
}

// checkFrame checks that out is h lines of exactly w columns.
func checkFrame(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := width(l); got != w {
			t.Errorf("line %d is %d columns wide, want %d: %q", i, got, w, l)
		}
	}
}

// TestSparseJobs opens jobs that lack a part: no scheduler record, no
// profile, a GPU without readings or card size.
func TestSparseJobs(t *testing.T) {
	vs := genJobs(4)
	vs[0].Sched = nil
	vs[1].Profiles = nil
	g := &vs[2].Profiles[0].GPUs[0]
	g.Samples, g.MemSamples, g.MemoryTotal, g.Series.Points, g.UtilHist = 0, 0, 0, nil, nil
	vs[3].Profiles[0].GPUs[0].Series.Step = 0
	src := &fakeSource{jobs: vs[1:], user: "alice"}
	m := New(context.Background(), src, alice, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	for i := range 3 {
		m = press(t, m, "enter")
		if m.detail == nil || m.detail.err != "" {
			t.Fatalf("job %d: detail %+v", i, m.detail)
		}
		checkFrame(t, m.render(), 80, 24)
		m = press(t, m, "esc", "down")
	}
	// A profile-only job (no scheduler record) still makes a row.
	r := rowOf(vs[0], m.cfg, testNow)
	if r.id != vs[0].JobID || r.user != "alice" {
		t.Errorf("profile-only row = %+v", r)
	}
}

// An admin without jobs of their own starts on everyone's; Options pick
// another start for an admin and are ignored for anyone else.
func TestStartScope(t *testing.T) {
	now := func() time.Time { return testNow }
	tests := []struct {
		name     string
		id       Identity
		opts     Options
		wantUser string
		wantAcct string
		wantMsg  string
	}{
		{name: "user", id: Identity{User: "alice"}, wantUser: "alice"},
		{name: "user-options-ignored", id: Identity{User: "alice"}, opts: Options{User: "bob", Everyone: true}, wantUser: "alice"},
		{name: "admin-with-jobs", id: Identity{User: "alice", Admin: true}, wantUser: "alice"},
		{name: "admin-without-jobs", id: Identity{User: "root", Admin: true}, wantUser: "", wantMsg: "showing everyone's"},
		{name: "admin-user", id: Identity{User: "root", Admin: true}, opts: Options{User: "bob"}, wantUser: "bob"},
		{name: "admin-account", id: Identity{User: "root", Admin: true}, opts: Options{Account: "proj1"}, wantAcct: "proj1"},
		{name: "admin-everyone", id: Identity{User: "alice", Admin: true}, opts: Options{Everyone: true}, wantUser: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{jobs: genJobs(50), user: tt.id.User, admin: tt.id.Admin}
			tt.opts.NoColor, tt.opts.Now = true, now
			m := New(context.Background(), src, tt.id, tt.opts)
			m = drive(t, m, m.Init())
			if m.list.q.user != tt.wantUser || m.list.q.account != tt.wantAcct {
				t.Errorf("list of user %q account %q, want %q %q", m.list.q.user, m.list.q.account, tt.wantUser, tt.wantAcct)
			}
			if m.list.total == 0 {
				t.Errorf("the list is empty:\n%s", m.render())
			}
			if tt.wantMsg != "" && !strings.Contains(m.render(), tt.wantMsg) {
				t.Errorf("no %q on the screen:\n%s", tt.wantMsg, m.render())
			}
		})
	}
}

// [ and ] move the summary to the month before and after.
func TestSummaryMonths(t *testing.T) {
	m, _ := newTestModel(t, 250, Identity{User: "alice"}, 120, 40)
	m = press(t, m, "m")
	this := testNow.Format("January 2006")
	if !strings.Contains(m.render(), this) {
		t.Fatalf("the summary does not show %s:\n%s", this, m.render())
	}
	before := monthOf(testNow).From.AddDate(0, -1, 0).Format("January 2006")
	m = press(t, m, "[")
	if !strings.Contains(m.render(), before) {
		t.Errorf("[ does not show %s:\n%s", before, m.render())
	}
	m = press(t, m, "]")
	if !strings.Contains(m.render(), this) {
		t.Errorf("] does not come back to %s:\n%s", this, m.render())
	}
	m = press(t, m, "esc")
	if m.screen != screenList {
		t.Errorf("esc from the summary: screen %v, want the list", m.screen)
	}
}

// Paging down asks for each page after the last job of the page before
// (keyset) and shows the same rows an offset would.
func TestKeysetPages(t *testing.T) {
	src := &fakeSource{jobs: genJobs(250), user: "alice"}
	m := New(context.Background(), src, alice, Options{PageSize: 10, NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	want, err := src.Jobs(context.Background(), store.ViewFilter{User: "alice", Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	keyset := 0
	for range 12 {
		m = press(t, m, "pgdown")
		for p, rows := range m.list.pages {
			for i, r := range rows {
				if w := want[p*10+i]; r.jobID != w.JobID {
					t.Fatalf("page %d row %d: job %s, want %s", p, i, r.jobID, w.JobID)
				}
			}
		}
	}
	for _, f := range src.calls() {
		if f.AfterJobID != "" {
			keyset++
			if f.Offset != 0 {
				t.Errorf("a keyset page with offset %d", f.Offset)
			}
		}
	}
	if keyset == 0 {
		t.Error("no page was asked by keyset")
	}
}
