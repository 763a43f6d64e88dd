package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// TestGolden compares the rendered views with testdata/TestGolden/*.golden;
// go test ./tui -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	views := []struct {
		name string
		id   Identity
		keys []string
	}{
		{"list", alice, nil},
		{"list_scrolled", alice, []string{"pgdown", "pgdown", "down"}},
		{"list_everyone", Identity{User: "root", Admin: true}, []string{"u", "ctrl+u", "enter"}},
		{"detail", alice, []string{"down", "enter"}},
		{"detail_scrolled", alice, []string{"down", "enter", "pgdown"}},
		{"help", alice, []string{"?"}},
		{"summary", alice, []string{"m"}},
		{"prompt", alice, []string{"/", "r", "e", "s"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				m, _ := newTestModel(t, 250, v.id, size[0], size[1])
				m = press(t, m, v.keys...)
				out := m.View().Content
				checkFrame(t, out, size[0], size[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

func TestViewSettings(t *testing.T) {
	m, _ := newTestModel(t, 10, alice, 80, 24)
	v := m.View()
	if !v.AltScreen {
		t.Error("the view does not ask for the alternate screen")
	}
	if strings.ContainsRune(v.Content, 0x1b) {
		t.Errorf("escape sequence in a NoColor view: %q", v.Content)
	}
}

func TestColourHasStyles(t *testing.T) {
	src := &fakeSource{jobs: genJobs(20), user: "alice"}
	m := New(context.Background(), src, alice, Options{Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	out := m.View().Content
	if !strings.ContainsRune(out, 0x1b) {
		t.Error("the colour view has no style at all")
	}
	checkFrame(t, out, 100, 30)
}

// hostileJobs are jobs whose user-controlled fields attack the terminal.
func hostileJobs() []store.JobView {
	hostile := []string{
		"\x1b[31mred\x1b[0m name",
		"\x1b]0;pwned title\x07job",
		"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",
		strings.Repeat("A", 2000),
		"作业名称很长作业名称很长作业名称很长作业名称很长",
		"🚀🔥 launch 🚀🔥🚀🔥🚀🔥🚀🔥🚀🔥🚀🔥",
		"tab\there\nnewline\rcr",
		"c1\u009b31mcontrol\u0085",
		"rtl\u202eevil\u202c override",
		"bad utf8 \xff\xfe end",
		"<script>alert(1)</script>",
		"\x1b[2J\x1b[H clear",
		"unterminated \x1b[",
		"e\u0301 combining and zero\u200bwidth",
	}
	vs := genJobs(len(hostile))
	for i, h := range hostile {
		r := vs[i].Sched
		r.Name = h
		r.Account = h
		r.Partition = h
		r.User = "alice"
		vs[i].Profiles[0].Node = h
		vs[i].Profiles[0].User = "alice"
		vs[i].Profiles[0].PartialReasons = []string{h}
		vs[i].Profiles[0].Partial = true
		vs[i].Profiles[0].GPUs[0].Processes = []string{h}
		vs[i].Profiles[0].GPUs[0].Model = h
		vs[i].Profiles[0].Notices = []profile.Notice{{Rule: profile.RuleIdleGPU, Status: profile.NoticeFailed,
			Time: testNow.Add(-time.Hour), Evidence: h, Fix: h, Detail: h}}
	}
	return vs
}

func TestHostileStrings(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {43, 12}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			src := &fakeSource{jobs: hostileJobs(), admin: true}
			m := New(context.Background(), src, Identity{User: "alice", Admin: true},
				Options{NoColor: true, Now: func() time.Time { return testNow }})
			m = drive(t, m, m.Init())
			m = send(t, m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			check := func(what string) {
				t.Helper()
				out := m.View().Content
				for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u0085", "\u202e", "\t", "\r"} {
					if strings.Contains(out, bad) {
						t.Errorf("%s: %q reaches the terminal:\n%q", what, bad, out)
					}
				}
				checkFrame(t, out, size[0], size[1])
			}
			check("list")
			for i := range len(src.jobs) {
				m = press(t, m, "enter")
				check(fmt.Sprintf("detail of job %d", i))
				m = press(t, m, "G")
				check(fmt.Sprintf("detail of job %d, end", i))
				m = press(t, m, "esc", "down")
			}
			m = press(t, m, "/")
			m = send(t, m, tea.KeyPressMsg{Text: "\x1b[31m作业🚀"})
			check("prompt")
		})
	}
}

func TestSanitise(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "train_resnet", "train_resnet"},
		{"csi", "\x1b[31mred\x1b[0m", "red"},
		{"osc bel", "\x1b]0;title\x07job", "job"},
		// termtext.Clean's rule, as the CLI and the report apply it: a
		// replaced character is marked, never silently merged away.
		{"c1", "a\u009bb\u0085c", "a\uFFFDc"},
		{"tabs", "a\tb\nc", "a b c"},
		{"bidi", "a\u202eb", "a\uFFFDb"},
		{"bad utf8", "a\xffb", "a\uFFFDb"},
		{"cjk", "作业", "作业"},
		{"del", "a\x7fb", "a\uFFFDb"},
		{"zero-width space", "ad\u200bmin", "ad\uFFFDmin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sanitise(c.in); got != c.want {
				t.Errorf("sanitise(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestFit(t *testing.T) {
	cases := []struct {
		in   string
		w    int
		want string
	}{
		{"abc", 5, "abc  "},
		{"abcdef", 4, "abc…"},
		{"作业名称", 5, "作业…"},
		{"作业名称", 4, "作… "},
		{"🚀🔥x", 6, "🚀🔥x "},
		{"\x1b[31mred", 4, "red "},
	}
	for _, c := range cases {
		if got := fitClean(sanitise(c.in), c.w); got != c.want || width(got) != c.w {
			t.Errorf("fitClean(sanitise(%q), %d) = %q (%d columns), want %q", c.in, c.w, got, width(got), c.want)
		}
	}
}

func TestColumnsShrink(t *testing.T) {
	cases := []struct {
		w       int
		has     []string
		missing []string
	}{
		{120, []string{"NAME", "CLASS", "BOTTLENECK", "START"}, nil},
		{100, []string{"NAME", "CLASS"}, []string{"BOTTLENECK"}},
		{99, []string{"NAME", "START", "VRAM"}, []string{"CLASS", "BOTTLENECK"}},
		{80, []string{"NAME", "START", "UTIL"}, []string{"CLASS"}},
		{50, []string{"NAME", "STATE"}, []string{"START"}},
	}
	// A wide row: every column but the name near its widest.
	rows := []row{{id: "1234567_12", name: "x", state: "COMPLETED", start: "12-03 10:00", elapsed: "1-02:03:04",
		gpus: "4/4", vram: "61/80G", util: "100%", class: "inference_service", badges: "VRAM,IO"}}
	for _, c := range cases {
		cols := columns(c.w, false, rows)
		names := map[string]int{}
		for _, col := range cols {
			names[col.title] = col.width
		}
		for _, h := range c.has {
			if _, ok := names[h]; !ok {
				t.Errorf("width %d: no %s column", c.w, h)
			}
		}
		for _, h := range c.missing {
			if _, ok := names[h]; ok {
				t.Errorf("width %d: %s column kept", c.w, h)
			}
		}
		if names["NAME"] < minNameWidth || fixedWidth(cols)+2 > c.w {
			t.Errorf("width %d: name %d columns, total %d", c.w, names["NAME"], fixedWidth(cols)+2)
		}
	}
}

// TestHostileStringsColour checks that with colour on, only the styles'
// own escape sequences (SGR) reach the terminal.
func TestHostileStringsColour(t *testing.T) {
	src := &fakeSource{jobs: hostileJobs(), admin: true}
	m := New(context.Background(), src, Identity{User: "alice", Admin: true}, Options{Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	for i := range len(src.jobs) {
		for _, out := range []string{m.View().Content, press(t, m, "enter").View().Content} {
			for _, bad := range []string{"\x07", "\x1b]", "\x1b[2J", "\x1b[H", "\u009b", "\u202e"} {
				if strings.Contains(out, bad) {
					t.Errorf("job %d: %q reaches the terminal", i, bad)
				}
			}
			checkFrame(t, out, 100, 30)
		}
		m = press(t, m, "down")
	}
}
