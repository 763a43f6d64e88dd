package cliview

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/internal/present"
)

// progressAfter is how long a plan runs before its progress is shown: a
// short plan prints nothing.
const progressAfter = 2 * time.Second

// PlanProgress shows a simulated plan's progress on a terminal: once the
// plan has run progressAfter, one line on stderr — the replays done and
// planned, the time elapsed and an estimate of the time left — rewritten
// in place and cleared when the plan ends. The plan reports through
// Update (capacity.SimPlanParams.Progress); a ticker redraws the line
// between reports so that the elapsed time moves while one long replay
// runs. A nil *PlanProgress shows nothing.
type PlanProgress struct {
	w     io.Writer
	now   func() time.Time
	start time.Time

	mu    sync.Mutex
	last  capacity.PlanProgress
	width int // of the line on the terminal; 0 when none is
	stop  chan struct{}
	done  chan struct{}
}

// newPlanProgress is the progress of a plan starting now, shown on w
// when on (stderr is a terminal and --quiet is not given), else nil.
func newPlanProgress(w io.Writer, on bool, now func() time.Time) *PlanProgress {
	if !on {
		return nil
	}
	return &PlanProgress{w: w, now: now, start: now()}
}

// StartPlanProgress is the progress of a plan starting now, shown on w
// when on (stderr is a terminal and --quiet is not given), else nil, with
// its ticker running, on the wall clock.
func StartPlanProgress(w io.Writer, on bool) *PlanProgress {
	p := newPlanProgress(w, on, time.Now)
	if p == nil {
		return nil
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// Func is the function the plan reports to: nil when nothing is shown.
func (p *PlanProgress) Func() func(capacity.PlanProgress) {
	if p == nil {
		return nil
	}
	return p.Update
}

// Update takes the plan's report and redraws the line; the final report
// clears it.
func (p *PlanProgress) Update(pp capacity.PlanProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = pp
	if pp.Final {
		p.clear()
		return
	}
	p.draw()
}

// Close stops the ticker and clears the line.
func (p *PlanProgress) Close() {
	if p == nil {
		return
	}
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last.Final = true
	p.clear()
}

// draw writes the line over the last one, once the plan has run
// progressAfter and until its end.
func (p *PlanProgress) draw() {
	el := p.now().Sub(p.start)
	if p.last.Final || el < progressAfter {
		return
	}
	line := progressLine(p.last, el)
	pad := max(p.width-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	if pad > 0 {
		fmt.Fprintf(p.w, "\r%s", line)
	}
	p.width = len(line)
}

func (p *PlanProgress) clear() {
	if p.width == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	p.width = 0
}

// progressLine is "plan: 12/60 replays, 00:00:14 elapsed, about 00:00:56
// left": the time left at the pace of the replays done so far.
func progressLine(pp capacity.PlanProgress, el time.Duration) string {
	planned := max(pp.Planned, pp.Done)
	left := "estimating the time left"
	if pp.Done > 0 {
		rest := el.Seconds() * float64(planned-pp.Done) / float64(pp.Done)
		left = "about " + present.Seconds(rest) + " left"
	}
	return fmt.Sprintf("plan: %d/%d replays, %s elapsed, %s", pp.Done, planned, present.Seconds(el.Seconds()), left)
}

// PlanProgressOn starts a PlanProgress on W as a queue replay starts,
// shown when On (stderr is a terminal and --quiet is not given): the
// window pipeline's monthly.Progress.
type PlanProgressOn struct {
	W  io.Writer
	On bool
}

// Start starts the progress; the replay reports to update and calls stop
// at its end.
func (s PlanProgressOn) Start() (update func(capacity.PlanProgress), stop func()) {
	p := StartPlanProgress(s.W, s.On)
	return p.Func(), p.Close
}
