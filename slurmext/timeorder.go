package slurmext

import (
	"errors"
	"fmt"
	"time"
)

// TimeOrderSkew is the clock-skew tolerance of CheckTimeOrder: times a
// record holds in an impossible order by at most this much are accepted.
// Submit, Eligible, Start and End are all stamped by slurmctld, so a real
// record holds them in order; a minute covers a controller's clock being
// stepped by NTP between two of them.
const TimeOrderSkew = 60 * time.Second

// ErrTimeOrder means a job record holds its times in an order no job can
// have (see CheckTimeOrder): the columns were misread, or the record is
// damaged. Its times cannot be trusted, so the record is refused rather
// than read as a wait or a run of 0.
var ErrTimeOrder = errors.New("impossible time order")

// TimeOrderError says which two times of a job are in an impossible order.
// It wraps ErrTimeOrder.
type TimeOrderError struct {
	JobID         string
	Later, Before string // column names: Later is before Before
	LaterT        time.Time
	BeforeT       time.Time
}

func (e *TimeOrderError) Error() string {
	return fmt.Sprintf("job %s: %s %s is %s before %s %s (more than the %s clock-skew tolerance): %v",
		QuoteShort(e.JobID), e.Later, e.LaterT.UTC().Format(time.RFC3339), e.BeforeT.Sub(e.LaterT).Round(time.Second),
		e.Before, e.BeforeT.UTC().Format(time.RFC3339), TimeOrderSkew, ErrTimeOrder)
}

func (e *TimeOrderError) Unwrap() error { return ErrTimeOrder }

// CheckTimeOrder returns a *TimeOrderError when rec holds a Start before its
// Submit, or an End before its Start (or, never started, before its Submit),
// each by more than TimeOrderSkew. Unknown (zero) times are not compared.
// Eligible before Submit is not checked here: EligibleBeforeSubmit.
func CheckTimeOrder(rec *JobRecord) error {
	bad := func(later, before string, a, b time.Time) error {
		if a.IsZero() || b.IsZero() || !a.Before(b.Add(-TimeOrderSkew)) {
			return nil
		}
		return &TimeOrderError{JobID: rec.JobID, Later: later, Before: before, LaterT: a, BeforeT: b}
	}
	if err := bad("Start", "Submit", rec.Start, rec.Submit); err != nil {
		return err
	}
	if err := bad("End", "Start", rec.End, rec.Start); err != nil {
		return err
	}
	if rec.Start.IsZero() {
		return bad("End", "Submit", rec.End, rec.Submit)
	}
	return nil
}

// EligibleBeforeSubmit reports whether rec's Eligible is before its Submit
// by more than TimeOrderSkew: no job is eligible before it exists. The
// readers note it and leave Eligible unknown (the wait is then counted from
// Submit), since the job's other times may still be right.
func EligibleBeforeSubmit(rec *JobRecord) bool {
	return !rec.Eligible.IsZero() && !rec.Submit.IsZero() && rec.Eligible.Before(rec.Submit.Add(-TimeOrderSkew))
}
