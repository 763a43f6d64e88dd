package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgram drives the real tea.Program: the list appears, enter opens
// the detail, esc goes back, q quits.
func TestProgram(t *testing.T) {
	src := &fakeSource{jobs: genJobs(250), user: "alice"}
	m := New(context.Background(), src, alice, Options{NoColor: true, Now: func() time.Time { return testNow }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("row 1 of 200")
	// The renderer writes only the cells that change, so later waits look
	// for whole new lines.
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("GPUs (2)")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if final.screen != screenList || final.list.cursor != 1 {
		t.Errorf("final screen %v cursor %d, want the list at row 2", final.screen, final.list.cursor)
	}
}

// TestRun checks that Run starts and stops with its context.
func TestRun(t *testing.T) {
	src := &fakeSource{jobs: genJobs(20), user: "alice"}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	err := Run(ctx, src, alice, Options{NoColor: true}, strings.NewReader(""), &out)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("Run = %v before its context ended", err)
	}
}
