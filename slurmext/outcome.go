package slurmext

// Outcome is the class of how a job ended, as its Slurm state tells: the
// one rule every front end (analysis, TUI, report) applies to a state.
type Outcome uint8

// Outcomes. Failed covers FAILED, OUT_OF_MEMORY, NODE_FAIL, BOOT_FAIL and
// LAUNCH_FAILED; Timeout covers TIMEOUT and DEADLINE (the job was stopped
// at a time it set itself); Cancelled covers CANCELLED, PREEMPTED and
// REVOKED (someone or something else ended it). Running covers every state
// that is not final (JobState.IsFinal); Unknown is "" or a name Slurm does not
// print.
//
// Lost work (LostStates, JobState.LostIndex) is a different question that cuts across these
// classes: DEADLINE, PREEMPTED and TIMEOUT are lost work, CANCELLED and
// REVOKED are not.
const (
	OutcomeUnknown Outcome = iota
	OutcomeCompleted
	OutcomeFailed
	OutcomeTimeout
	OutcomeCancelled
	OutcomeRunning // not finished: pending, running, suspended, requeued, …
)

var outcomeNames = [...]string{"unknown", "completed", "failed", "timeout", "cancelled", "running"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Finished reports whether the outcome is a final one.
func (o Outcome) Finished() bool {
	return o == OutcomeCompleted || o == OutcomeFailed || o == OutcomeTimeout || o == OutcomeCancelled
}

// Outcome returns the outcome class of a job in state s. Every final
// state that is not completed, timed out or cancelled is a failure; every
// other state Slurm prints is running.
func (s JobState) Outcome() Outcome {
	switch s {
	case StateCompleted:
		return OutcomeCompleted
	case StateTimeout, StateDeadline:
		return OutcomeTimeout
	case StateCancelled, StatePreempted, StateRevoked:
		return OutcomeCancelled
	}
	switch {
	case s.IsFinal():
		return OutcomeFailed
	case s.Known():
		return OutcomeRunning
	}
	return OutcomeUnknown
}
