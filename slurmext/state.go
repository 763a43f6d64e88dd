package slurmext

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// ErrBadState means a job state is not one Slurm prints.
var ErrBadState = errors.New("unknown job state")

// JobState is a job's state as Slurm names it, in capitals, as ParseState
// returns it: a base state (PENDING, RUNNING, COMPLETED, …) or a state flag
// Slurm prints in place of one (COMPLETING, REQUEUED, REVOKED, …). "" is
// unknown (no scheduler record). Its methods are the one home of each rule
// on a state: whether it is known (Known), final (IsFinal), its outcome
// class (Outcome) and lost work (LostIndex, LostApart). It is a string so
// that it reads from and writes to JSON and the store's TEXT column as the
// name itself.
type JobState string

// The states Slurm's job_state_string prints: the base states first, then
// the flags it prints in place of the base state.
const (
	StatePending     JobState = "PENDING"
	StateRunning     JobState = "RUNNING"
	StateSuspended   JobState = "SUSPENDED"
	StateCompleted   JobState = "COMPLETED"
	StateCancelled   JobState = "CANCELLED"
	StateFailed      JobState = "FAILED"
	StateTimeout     JobState = "TIMEOUT"
	StateNodeFail    JobState = "NODE_FAIL"
	StatePreempted   JobState = "PREEMPTED"
	StateBootFail    JobState = "BOOT_FAIL"
	StateDeadline    JobState = "DEADLINE"
	StateOutOfMemory JobState = "OUT_OF_MEMORY"

	StateCompleting   JobState = "COMPLETING"
	StateConfiguring  JobState = "CONFIGURING"
	StateResizing     JobState = "RESIZING"
	StateRequeued     JobState = "REQUEUED"
	StateRequeueFed   JobState = "REQUEUE_FED"
	StateRequeueHold  JobState = "REQUEUE_HOLD"
	StateSpecialExit  JobState = "SPECIAL_EXIT"
	StateStopped      JobState = "STOPPED"
	StateRevoked      JobState = "REVOKED"
	StateResvDelHold  JobState = "RESV_DEL_HOLD"
	StateSignaling    JobState = "SIGNALING"
	StateStageOut     JobState = "STAGE_OUT"
	StatePowerUpNode  JobState = "POWER_UP_NODE"
	StateLaunchFailed JobState = "LAUNCH_FAILED"
	StateUpdateDB     JobState = "UPDATE_DB"
	StateReconfigFail JobState = "RECONFIG_FAIL"
)

// jobStates are the names Slurm's job_state_string gives: the base states
// first, then the state flags it prints in place of the base state
// (COMPLETING, REQUEUED, …). A function, not a package variable, so that no
// caller can change the table.
func jobStates() []JobState {
	return []JobState{
		StatePending, StateRunning, StateSuspended, StateCompleted, StateCancelled, StateFailed,
		StateTimeout, StateNodeFail, StatePreempted, StateBootFail, StateDeadline, StateOutOfMemory,
		StateCompleting, StateConfiguring, StateResizing, StateRequeued, StateRequeueFed,
		StateRequeueHold, StateSpecialExit, StateStopped, StateRevoked, StateResvDelHold,
		StateSignaling, StateStageOut, StatePowerUpNode, StateLaunchFailed, StateUpdateDB,
		StateReconfigFail,
	}
}

// Known reports whether s is a name Slurm prints (one of jobStates, in
// capitals, no "+" or "by <uid>"), without allocating: history import asks
// it once per job.
func (s JobState) Known() bool {
	switch s {
	case StatePending, StateRunning, StateSuspended, StateCompleted, StateCancelled, StateFailed,
		StateTimeout, StateNodeFail, StatePreempted, StateBootFail, StateDeadline, StateOutOfMemory,
		StateCompleting, StateConfiguring, StateResizing, StateRequeued, StateRequeueFed,
		StateRequeueHold, StateSpecialExit, StateStopped, StateRevoked, StateResvDelHold,
		StateSignaling, StateStageOut, StatePowerUpNode, StateLaunchFailed, StateUpdateDB,
		StateReconfigFail:
		return true
	}
	return false
}

// compactState maps squeue's two-letter codes (job_state_string_compact) to
// the full names, so that state filters written either way work.
func compactState(code string) (JobState, bool) {
	switch code {
	case "PD":
		return StatePending, true
	case "R":
		return StateRunning, true
	case "S":
		return StateSuspended, true
	case "CD":
		return StateCompleted, true
	case "CA":
		return StateCancelled, true
	case "F":
		return StateFailed, true
	case "TO":
		return StateTimeout, true
	case "NF":
		return StateNodeFail, true
	case "PR":
		return StatePreempted, true
	case "BF":
		return StateBootFail, true
	case "DL":
		return StateDeadline, true
	case "OOM":
		return StateOutOfMemory, true
	case "CG":
		return StateCompleting, true
	case "CF":
		return StateConfiguring, true
	case "RS":
		return StateResizing, true
	case "RQ":
		return StateRequeued, true
	case "RF":
		return StateRequeueFed, true
	case "RH":
		return StateRequeueHold, true
	case "SE":
		return StateSpecialExit, true
	case "ST":
		return StateStopped, true
	case "RV":
		return StateRevoked, true
	case "RD":
		return StateResvDelHold, true
	case "SI":
		return StateSignaling, true
	case "SO":
		return StateStageOut, true
	}
	return "", false
}

// ParseState parses a job state as sacct, squeue, scontrol or jobcomp print
// it and returns the state name in capitals:
//
//	"COMPLETED", "completed", "CD"   → COMPLETED, -1
//	"CANCELLED by 1000"              → CANCELLED, 1000
//	"CANCELLED+", "OUT_OF_ME+"       → CANCELLED, OUT_OF_MEMORY, -1: sacct cuts a
//	                                   value to its column width and marks the
//	                                   cut with '+'; the prefix must name one
//	                                   state only ("RE+" is an error)
//	"CANCELLED by 10+"               → CANCELLED, -1 (the uid was cut)
//
// cancelledBy is the uid from "CANCELLED by <uid>" and -1 otherwise. Errors
// wrap ErrBadState.
func ParseState(s string) (state JobState, cancelledBy int, err error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	truncated := strings.HasSuffix(t, "+")
	t = strings.TrimSuffix(t, "+")
	base, uid, hasBy := strings.Cut(t, " BY ")
	base = strings.TrimSpace(base)
	cancelledBy = -1
	if hasBy {
		if JobState(base) != StateCancelled {
			return "", -1, fmt.Errorf("job state %s: only CANCELLED has \"by <uid>\": %w", QuoteShort(s), ErrBadState)
		}
		u, ok := ParseDigits(strings.TrimSpace(uid), math.MaxUint32-1)
		switch {
		case ok && !truncated:
			cancelledBy = int(u)
		case !truncated:
			return "", -1, fmt.Errorf("job state %s: not a uid after \"by\": %w", QuoteShort(s), ErrBadState)
		}
		return StateCancelled, cancelledBy, nil
	}
	if full, ok := compactState(t); ok && !truncated {
		return full, -1, nil
	}
	if st := JobState(t); st.Known() {
		return st, -1, nil
	}
	if !truncated || t == "" {
		return "", -1, fmt.Errorf("job state %s: %w", QuoteShort(s), ErrBadState)
	}
	if strings.HasPrefix(t, "CANCELLED ") {
		return StateCancelled, -1, nil // "CANCELLED b+"
	}
	var match JobState
	for _, name := range jobStates() {
		if !strings.HasPrefix(string(name), t) {
			continue
		}
		if match != "" {
			return "", -1, fmt.Errorf("job state %s: cut short, could be %s or %s: %w",
				QuoteShort(s), match, name, ErrBadState)
		}
		match = name
	}
	if match == "" {
		return "", -1, fmt.Errorf("job state %s: %w", QuoteShort(s), ErrBadState)
	}
	return match, -1, nil
}

// LostStates are the final states whose GPU time bought nothing the user
// asked for, in the order reports list them: the job failed, ran out of
// memory, lost its node, never booted, missed its deadline, was preempted,
// or hit its time limit. TIMEOUT comes last because it is shown apart: a
// job that checkpoints may have saved its work. CANCELLED is not lost work:
// services and interactive sessions end with scancel as a matter of course.
func LostStates() []JobState {
	return []JobState{StateFailed, StateOutOfMemory, StateNodeFail, StateBootFail, StateDeadline, StatePreempted, StateTimeout}
}

// LostIndex returns the position of s in LostStates, −1 for a state that
// is not lost work (COMPLETED, CANCELLED, running, unknown).
func (s JobState) LostIndex() int {
	switch s {
	case StateFailed:
		return 0
	case StateOutOfMemory:
		return 1
	case StateNodeFail:
		return 2
	case StateBootFail:
		return 3
	case StateDeadline:
		return 4
	case StatePreempted:
		return 5
	case StateTimeout:
		return 6
	}
	return -1
}

// LostApart reports whether s is the lost state that reports show apart
// from the rest of the lost work: TIMEOUT, the last of LostStates, since a
// job that checkpoints may have saved its work.
func (s JobState) LostApart() bool { return s == StateTimeout }

// Started reports whether a job ever ran: whether Slurm allocated it its
// nodes. A job cancelled while pending (or that reached its deadline, or
// failed, before it started) has no start in sacct ("None", "Unknown": a
// zero start) or a start equal to its end and no nodes (sacct's NodeList
// "None assigned", jobcomp's empty NODES; records hold ""): Slurm sets its
// start to the time it left the queue. A job that ran for less than a
// second has start = end too, but its nodes. Every count of started jobs,
// GPU time, waits and the queue replay's calibration asks this, so a job
// cancelled while pending is never counted as one that started.
//
// A record without a node list at all (a sacct layout without NodeList)
// makes a job that ran under a second look never started; it held no
// measurable GPU time either way.
func Started(start, end time.Time, nodeList string) bool {
	if start.IsZero() {
		return false
	}
	if !end.Equal(start) {
		return true
	}
	nl := strings.TrimSpace(nodeList)
	return nl != "" && nl != "None assigned"
}

// EndedPending reports whether a job in state s that never started
// (started as Started answers it) and ended at end left the queue for good
// while it waited: its state is final and it has an end. Whatever ended it
// — scancel (CANCELLED), its deadline (DEADLINE), a federated sibling
// (REVOKED), a failed boot (BOOT_FAIL) — it left the queue at its end; a
// job that never started without a final state or an end is still pending.
func (s JobState) EndedPending(started bool, end time.Time) bool {
	return !started && !end.IsZero() && s.IsFinal()
}

// IsBase reports the base states (JOB_STATE_BASE) among jobStates.
func (s JobState) IsBase() bool {
	switch s {
	case StatePending, StateRunning, StateSuspended, StateCompleted, StateCancelled, StateFailed,
		StateTimeout, StateNodeFail, StatePreempted, StateBootFail, StateDeadline, StateOutOfMemory:
		return true
	}
	return false
}

// EndsRunByRequeue reports the states of a run that Slurm ended by
// requeueing the job (REQUEUED, REQUEUE_HOLD, REQUEUE_FED): what sacct -D
// and sacct --json show for each run of a requeued job but the last.
func (s JobState) EndsRunByRequeue() bool {
	switch s {
	case StateRequeued, StateRequeueHold, StateRequeueFed:
		return true
	}
	return false
}

// IsFinal reports whether a job in state s has ended for good: its outcome
// is decided and it will not run again. These are the base states from
// COMPLETED on (Slurm's IS_JOB_FINISHED) and the two flags that end a job
// in place of one: REVOKED (a federated sibling removed here) and
// LAUNCH_FAILED. Every other state — pending, running, suspended, requeued
// or held, and the transient ones such as COMPLETING and STAGE_OUT, after
// which sacct reports the final state — is not final, nor is "" or a name
// Slurm does not print.
func (s JobState) IsFinal() bool {
	switch s {
	case StateCompleted, StateCancelled, StateFailed, StateTimeout, StateNodeFail, StatePreempted,
		StateBootFail, StateDeadline, StateOutOfMemory, StateRevoked, StateLaunchFailed:
		return true
	}
	return false
}

// SacctStateCodes are the states sacct --state documents, each with its
// short form ("CD COMPLETED"), in sacct's order: what gpuprof lists when a
// state filter is not one it knows.
func SacctStateCodes() []string {
	return []string{
		"BF BOOT_FAIL", "CA CANCELLED", "CD COMPLETED", "DL DEADLINE", "F FAILED",
		"NF NODE_FAIL", "OOM OUT_OF_MEMORY", "PD PENDING", "PR PREEMPTED", "R RUNNING",
		"RQ REQUEUED", "RS RESIZING", "RV REVOKED", "S SUSPENDED", "TO TIMEOUT",
	}
}

// ParseStateName parses a state as a user names one to select jobs, as
// sacct --state takes it: a state name or its short form, in any case
// ("completed", "CD", "oom"). Unlike ParseState it refuses what only
// appears in Slurm's output: a name cut short ("CANCELLED+") or with "by
// <uid>". Errors wrap ErrBadState and list sacct's states with their short
// forms.
func ParseStateName(s string) (JobState, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if full, ok := compactState(t); ok {
		return full, nil
	}
	if st := JobState(t); st.Known() {
		return st, nil
	}
	return "", fmt.Errorf("job state %s: %w: want one of %s, or another name Slurm prints (COMPLETING, REQUEUE_HOLD, …)",
		QuoteShort(s), ErrBadState, strings.Join(SacctStateCodes(), ", "))
}
