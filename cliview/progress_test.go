package cliview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/capacity"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestPlanProgressLine: nothing is shown before 2 s; then one line, the
// replays done and planned, the time elapsed and left, rewritten in
// place (a shorter line overwrites a longer one); the final report
// clears it; off when stderr is not a terminal or with --quiet.
func TestPlanProgressLine(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	p := newPlanProgress(&out, true, clock.now)
	clock.t = clock.t.Add(time.Second)
	p.Update(capacity.PlanProgress{Done: 1, Planned: 40})
	if out.Len() != 0 {
		t.Fatalf("after 1 s: %q, want nothing", out.String())
	}
	clock.t = clock.t.Add(9 * time.Second)
	p.Update(capacity.PlanProgress{Done: 10, Planned: 40})
	want := "\rplan: 10/40 replays, 00:00:10 elapsed, about 00:00:30 left"
	if out.String() != want {
		t.Fatalf("after 10 s:\n got %q\nwant %q", out.String(), want)
	}
	out.Reset()
	clock.t = clock.t.Add(90 * time.Second)
	p.Update(capacity.PlanProgress{Done: 40, Planned: 40})
	if want := "\rplan: 40/40 replays, 00:01:40 elapsed, about 00:00:00 left"; out.String() != want {
		t.Errorf("at the end:\n got %q\nwant %q", out.String(), want)
	}
	width := len("plan: 40/40 replays, 00:01:40 elapsed, about 00:00:00 left")
	out.Reset()
	p.Update(capacity.PlanProgress{Done: 40, Planned: 40, Final: true})
	if want := "\r" + strings.Repeat(" ", width) + "\r"; out.String() != want {
		t.Errorf("final report:\n got %q\nwant %q (the line cleared)", out.String(), want)
	}
	out.Reset()
	p.Close()
	if out.Len() != 0 {
		t.Errorf("close after the final report: %q", out.String())
	}

	// A shorter line overwrites a longer one; none done yet says so.
	out.Reset()
	p = newPlanProgress(&out, true, clock.now)
	clock.t = clock.t.Add(3 * time.Second)
	p.Update(capacity.PlanProgress{Done: 100, Planned: 1000})
	long := len(strings.TrimPrefix(out.String(), "\r"))
	out.Reset()
	p.Update(capacity.PlanProgress{Done: 0, Planned: 5})
	short := "plan: 0/5 replays, 00:00:03 elapsed, estimating the time left"
	if want := "\r" + short + strings.Repeat(" ", max(long-len(short), 0)); !strings.HasPrefix(out.String(), want) {
		t.Errorf("shorter line:\n got %q\nwant %q…", out.String(), want)
	}
	out.Reset()
	p.Close()
	if !strings.HasPrefix(out.String(), "\r ") || !strings.HasSuffix(out.String(), "\r") {
		t.Errorf("close: %q, want the line cleared", out.String())
	}

	// Off: no terminal, or --quiet.
	if p := newPlanProgress(&out, false, clock.now); p != nil || p.Func() != nil {
		t.Error("progress made when off")
	}
	var nilP *PlanProgress
	nilP.Close()
}
