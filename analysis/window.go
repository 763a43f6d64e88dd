package analysis

import (
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// WindowRule says how the window analysed was chosen: by the caller
// (--month, --since, --until) or, with none given, by the one default
// rule of every command that analyses a period (monthly.DefaultWindow).
type WindowRule string

const (
	// WindowGiven: the caller gave the window (or the zero rule of an
	// input made without one).
	WindowGiven WindowRule = ""
	// WindowLastMonth: no window given; the last complete calendar month
	// with jobs, the month gpuprof report reports by default.
	WindowLastMonth WindowRule = "last_complete_month"
	// WindowDataSpan: no window given and no complete month with jobs;
	// the data's span, from the earliest start to the latest time in the
	// data (not after now).
	WindowDataSpan WindowRule = "data_span"
)

// Period is the data window the figures rest on: the window counted, up
// to when jobs without an end stop counting (End) when that is earlier.
// Its length is the "of data" every output prints (the plan's period,
// plan.min_window's check, the report's), so that one database and one
// window give one figure everywhere.
func (c Counting) Period() Window {
	p := c.Window
	if !c.End.IsZero() && c.End.Before(p.To) {
		p.To = c.End
	}
	return p
}

// PeriodWords says the data window in one line, the same in every output:
// "2026-11-01T00:00:00 to 2026-12-01T00:00:00, 30-00:00:00 of data (the
// last complete month with jobs; no window given)". Times are in loc (nil:
// the local zone). An empty window says so.
func (c Counting) PeriodWords(loc *time.Location) string {
	p := c.Period()
	if p.From.IsZero() && p.To.IsZero() {
		return "no data"
	}
	s := fmt.Sprintf("%s to %s, %s of data", present.Instant(p.From, loc), present.Instant(p.To, loc), present.Duration(time.Duration(p.Hours()*float64(time.Hour))))
	if r := c.Rule.Words(); r != "" {
		s += " (" + r + ")"
	}
	return s
}

// Words says how the window was chosen when the caller gave none; ""
// for a window given.
func (r WindowRule) Words() string {
	switch r {
	case WindowLastMonth:
		return "no window given: the last complete month with jobs, as gpuprof report reads it"
	case WindowDataSpan:
		return "no window given and no complete month with jobs: the data's span, from its first start to its last record"
	}
	return ""
}
