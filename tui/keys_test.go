package tui

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/gpuprof/gpuprof/store"
)

// candidateKeys are key presses as a terminal sends them: every printable
// ASCII character, the named keys and every ctrl+letter.
func candidateKeys() []tea.KeyPressMsg {
	var ks []tea.KeyPressMsg
	for r := rune(0x21); r <= 0x7e; r++ {
		ks = append(ks, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	for _, c := range []rune{tea.KeyUp, tea.KeyDown, tea.KeyLeft, tea.KeyRight, tea.KeyPgUp, tea.KeyPgDown,
		tea.KeyHome, tea.KeyEnd, tea.KeyEnter, tea.KeyEscape, tea.KeyBackspace, tea.KeyTab, tea.KeyDelete, tea.KeyInsert} {
		ks = append(ks, tea.KeyPressMsg{Code: c})
	}
	ks = append(ks, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	for r := 'a'; r <= 'z'; r++ {
		ks = append(ks, tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl})
	}
	return ks
}

// screens opens each view from a fresh model at 80×24.
var screens = []struct {
	name string
	keys []string
	s    screen
}{
	{"list", nil, screenList},
	{"detail", []string{"enter"}, screenDetail},
	{"summary", []string{"m"}, screenSummary},
}

// TestKeyTableNamesRealKeys checks that every key name in the tables is
// one a terminal's key press produces (tea's KeyPressMsg.String()), so no
// entry is dead: "space" and not " ", "pgdown" and not "pagedown".
func TestKeyTableNamesRealKeys(t *testing.T) {
	real := map[string]bool{}
	for _, k := range candidateKeys() {
		real[k.String()] = true
	}
	for _, sc := range screens {
		for _, b := range viewKeys(sc.s) {
			for _, k := range b.keys {
				if !real[k] {
					t.Errorf("%s: key %q is not a name tea gives any key press", sc.name, k)
				}
			}
		}
	}
}

// TestHelpListsEveryHandledKey presses every candidate key in every view:
// a key that changes anything on the screen must be listed, as a word, in
// that view's help (?), and a listed key must be in the key table.
func TestHelpListsEveryHandledKey(t *testing.T) {
	for _, sc := range screens {
		t.Run(sc.name, func(t *testing.T) {
			base, _ := newTestModel(t, 250, alice, 80, 24)
			base = press(t, base, sc.keys...)
			if base.screen != sc.s {
				t.Fatalf("screen %v, want %v", base.screen, sc.s)
			}
			help := press(t, base, "?").render()
			listed := func(name string) bool {
				if n, ok := keyNames[name]; ok {
					name = n
				}
				return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(name) + `(\s|$)`).MatchString(help)
			}
			for _, k := range candidateKeys() {
				name := k.String()
				// Move somewhere first, so that keys going back up or to
				// the top change the screen too.
				from := press(t, base, "down", "down", "pgdown")
				next, cmd := from.Update(k)
				after := drive(t, next.(Model), cmd)
				quits := cmd != nil && isQuit(cmd)
				changed := quits || after.render() != from.render()
				_, bound := find(viewKeys(sc.s), name)
				if changed && !listed(name) {
					t.Errorf("key %q changes the %s view but the help does not list it:\n%s", name, sc.name, help)
				}
				if changed && !bound {
					t.Errorf("key %q changes the %s view outside the key table", name, sc.name)
				}
			}
			for _, b := range viewKeys(sc.s) {
				for _, k := range b.keys {
					if !listed(k) {
						t.Errorf("bound key %q is not in the %s help:\n%s", k, sc.name, help)
					}
				}
			}
		})
	}
}

// isQuit reports whether cmd (or a command it batches) quits.
func isQuit(cmd tea.Cmd) bool {
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && isQuit(c) {
				return true
			}
		}
	}
	return false
}

// TestListColumnsFitContent: at 80 columns a 6-digit job id takes 6
// columns (its header "JOBID" is 5), and the name gets the rest: no name
// of the fixture (20 characters at most) is cut.
func TestListColumnsFitContent(t *testing.T) {
	for _, w := range []int{80, 120} {
		m, _ := newTestModel(t, 250, alice, w, 24)
		cols := columns(w, false, []row{{id: "100250", name: "train_resnet50_seed0", state: "COMPLETED",
			start: "11-20 11:00", elapsed: "01:00:00", gpus: "1/0", vram: "0/80G", util: "0%"}})
		if cols[0].title != "JOBID" || cols[0].width != 6 {
			t.Errorf("width %d: first column %s %d wide, want JOBID 6", w, cols[0].title, cols[0].width)
		}
		if cols[1].title != "NAME" || cols[1].width < 20 {
			t.Errorf("width %d: name column %d wide, want at least 20", w, cols[1].width)
		}
		out := m.render()
		if strings.Contains(out, "train_resnet50_s…") || !strings.Contains(out, "train_resnet50_seed0") {
			t.Errorf("width %d: a 20-character name is cut:\n%s", w, out)
		}
	}
}

// TestTitleNotCut: with every filter set, the title at 80 columns keeps
// what differs from the defaults and ends inside the screen, not in "…".
func TestTitleNotCut(t *testing.T) {
	m, _ := newTestModel(t, 250, Identity{User: "root", Admin: true}, 80, 24)
	m = press(t, m, "a")
	m = typeText(t, m, "physics-lab")
	m = press(t, m, "enter", "p")
	m = typeText(t, m, "gpu-a100")
	m = press(t, m, "enter", "/")
	m = typeText(t, m, "train")
	m = press(t, m, "enter", "f", "f")
	title := strings.TrimRight(strings.Split(m.render(), "\n")[0], " ")
	if strings.HasSuffix(title, "…") || width(title) > 80 {
		t.Errorf("title cut: %q", title)
	}
	for _, want := range []string{"physics-lab", "gpu-a100", "/train/", "COMPLETED"} {
		if !strings.Contains(title, want) {
			t.Errorf("title %q lacks %q", title, want)
		}
	}
}

// TestWrapWords: options and values stay whole; lines break at spaces.
func TestWrapWords(t *testing.T) {
	cases := []struct {
		name string
		s    string
		w    int
		want []string
	}{
		{"option kept whole", "better, checkpoint (--requeue, --signal=B:USR1@300)", 30,
			[]string{"better, checkpoint (--requeue,", "--signal=B:USR1@300)"}},
		{"value kept whole", "start 2026-11-20T11:00:00 · limit 1-00:00:00", 36,
			[]string{"start 2026-11-20T11:00:00 · limit", "1-00:00:00"}},
		{"long token alone", "a --gres=gpu:<type>:1234567890 b", 10,
			[]string{"a", "--gres=gpu:<type>:1234567890", "b"}},
		{"fits", "short line", 80, []string{"short line"}},
		{"label with its value", "wait 00:05:00 · limit" + nbsp + "12:00:00", 18,
			[]string{"wait 00:05:00 ·", "limit 12:00:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := wrapWords(c.s, c.w)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("wrapWords(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
			}
		})
	}
}

// uidSource is a Source as the local database serves a reader who is not
// an admin: jobs selected by uid, a User filter naming the reader's own
// login dropped (store.ViewFilter.ScopedTo), here for a uid without a
// passwd entry whose jobs the database records as alice's.
type uidSource struct {
	*fakeSource
	login string
}

func (s uidSource) scope(f store.ViewFilter) store.ViewFilter {
	if f.User == s.login || f.User == "" {
		f.User = "alice"
	}
	return f
}

func (s uidSource) Jobs(ctx context.Context, f store.ViewFilter) ([]store.JobView, error) {
	return s.fakeSource.Jobs(ctx, s.scope(f))
}

func (s uidSource) Count(ctx context.Context, f store.ViewFilter) (int, error) {
	return s.fakeSource.Count(ctx, s.scope(f))
}

// TestUIDWithoutPasswdShowsDBName: a login that is a bare uid shows, in
// the title, the user name the database has for the jobs.
func TestUIDWithoutPasswdShowsDBName(t *testing.T) {
	src := uidSource{&fakeSource{jobs: genJobs(20), admin: true}, "50001"}
	id := Identity{User: "50001"}
	m := New(context.Background(), src, id, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	title := strings.Split(m.render(), "\n")[0]
	if !strings.Contains(title, "jobs of alice (uid 50001)") {
		t.Errorf("title %q, want the database's name alice with the uid", title)
	}
}

// TestProgramHelp drives the real tea.Program at 80×24 and 120×40: ? shows
// the keys that were missing from the help before the key table (ctrl+b,
// ctrl+f, space, home, end).
func TestProgramHelp(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			src := &fakeSource{jobs: genJobs(50), user: "alice"}
			m := New(context.Background(), src, alice, Options{NoColor: true, Now: func() time.Time { return testNow }})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
			wait := func(what string) {
				t.Helper()
				teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
					teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
			}
			wait("row 1 of ")
			tm.Send(tea.KeyPressMsg{Code: '?', Text: "?"})
			wait("pgdown ctrl+d ctrl+f space")
			tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
			final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
			help := strings.Join(final.helpLines(), "\n")
			for _, k := range []string{"pgup ctrl+u ctrl+b", "g home", "G end"} {
				if !strings.Contains(help, k) {
					t.Errorf("help lacks %q:\n%s", k, help)
				}
			}
		})
	}
}
