package tui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkFirstFrame measures the UI side of opening the TUI: the first
// page analysed (from the in-memory fake Source) and rendered at 120×40.
func BenchmarkFirstFrame(b *testing.B) {
	src := &fakeSource{jobs: genJobs(250), user: "alice"}
	b.ReportAllocs()
	for b.Loop() {
		m := New(context.Background(), src, alice, Options{NoColor: true, Now: func() time.Time { return testNow }})
		m = drive(b, m, m.Init())
		m = send(b, m, tea.WindowSizeMsg{Width: 120, Height: 40})
		_ = m.View()
	}
}

// BenchmarkKeypress measures one key and the frame after it.
func BenchmarkKeypress(b *testing.B) {
	for _, c := range []struct {
		name string
		keys []string // pressed once before timing, then key repeatedly
		key  string
	}{
		{"down", nil, "down"},
		{"pgdown", nil, "pgdown"},
		{"detail", nil, "enter"},
	} {
		b.Run(c.name, func(b *testing.B) {
			m, _ := newTestModel(b, 250, alice, 120, 40)
			b.ReportAllocs()
			for b.Loop() {
				mm := send(b, m, keyMsg(c.key))
				_ = mm.View()
				if c.key == "enter" {
					mm = send(b, mm, keyMsg("esc")) // back for the next round
				} else if mm.list.cursor >= mm.list.total-1 {
					mm = send(b, mm, keyMsg("g"))
				}
				m = mm
			}
		})
	}
}
