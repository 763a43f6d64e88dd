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

// jobStates are the names Slurm's job_state_string gives: the base states
// first, then the state flags it prints in place of the base state
// (COMPLETING, REQUEUED, …). A function, not a package variable, so that no
// caller can change the table.
func jobStates() []string {
	return []string{
		"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
		"TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
		"COMPLETING", "CONFIGURING", "RESIZING", "REQUEUED", "REQUEUE_FED",
		"REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD",
		"SIGNALING", "STAGE_OUT", "POWER_UP_NODE", "LAUNCH_FAILED", "UPDATE_DB",
		"RECONFIG_FAIL",
	}
}

// isJobState reports whether s is one of jobStates, without allocating:
// history import calls it once per job.
func isJobState(s string) bool {
	switch s {
	case "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
		"TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
		"COMPLETING", "CONFIGURING", "RESIZING", "REQUEUED", "REQUEUE_FED",
		"REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD",
		"SIGNALING", "STAGE_OUT", "POWER_UP_NODE", "LAUNCH_FAILED", "UPDATE_DB",
		"RECONFIG_FAIL":
		return true
	}
	return false
}

// compactState maps squeue's two-letter codes (job_state_string_compact) to
// the full names, so that state filters written either way work.
func compactState(code string) (string, bool) {
	switch code {
	case "PD":
		return "PENDING", true
	case "R":
		return "RUNNING", true
	case "S":
		return "SUSPENDED", true
	case "CD":
		return "COMPLETED", true
	case "CA":
		return "CANCELLED", true
	case "F":
		return "FAILED", true
	case "TO":
		return "TIMEOUT", true
	case "NF":
		return "NODE_FAIL", true
	case "PR":
		return "PREEMPTED", true
	case "BF":
		return "BOOT_FAIL", true
	case "DL":
		return "DEADLINE", true
	case "OOM":
		return "OUT_OF_MEMORY", true
	case "CG":
		return "COMPLETING", true
	case "CF":
		return "CONFIGURING", true
	case "RS":
		return "RESIZING", true
	case "RQ":
		return "REQUEUED", true
	case "RF":
		return "REQUEUE_FED", true
	case "RH":
		return "REQUEUE_HOLD", true
	case "SE":
		return "SPECIAL_EXIT", true
	case "ST":
		return "STOPPED", true
	case "RV":
		return "REVOKED", true
	case "RD":
		return "RESV_DEL_HOLD", true
	case "SI":
		return "SIGNALING", true
	case "SO":
		return "STAGE_OUT", true
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
func ParseState(s string) (state string, cancelledBy int, err error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	truncated := strings.HasSuffix(t, "+")
	t = strings.TrimSuffix(t, "+")
	base, uid, hasBy := strings.Cut(t, " BY ")
	base = strings.TrimSpace(base)
	cancelledBy = -1
	if hasBy {
		if base != "CANCELLED" {
			return "", -1, fmt.Errorf("job state %s: only CANCELLED has \"by <uid>\": %w", quoteShort(s), ErrBadState)
		}
		u, ok := parseDigits(strings.TrimSpace(uid), math.MaxUint32-1)
		switch {
		case ok && !truncated:
			cancelledBy = int(u)
		case !truncated:
			return "", -1, fmt.Errorf("job state %s: not a uid after \"by\": %w", quoteShort(s), ErrBadState)
		}
		return base, cancelledBy, nil
	}
	if full, ok := compactState(t); ok && !truncated {
		return full, -1, nil
	}
	if isJobState(t) {
		return t, -1, nil
	}
	if !truncated || t == "" {
		return "", -1, fmt.Errorf("job state %s: %w", quoteShort(s), ErrBadState)
	}
	if strings.HasPrefix(t, "CANCELLED ") {
		return "CANCELLED", -1, nil // "CANCELLED b+"
	}
	match := ""
	for _, name := range jobStates() {
		if !strings.HasPrefix(name, t) {
			continue
		}
		if match != "" {
			return "", -1, fmt.Errorf("job state %s: cut short, could be %s or %s: %w",
				quoteShort(s), match, name, ErrBadState)
		}
		match = name
	}
	if match == "" {
		return "", -1, fmt.Errorf("job state %s: %w", quoteShort(s), ErrBadState)
	}
	return match, -1, nil
}

// LostStates are the final states whose GPU time bought nothing the user
// asked for, in the order reports list them: the job failed, ran out of
// memory, lost its node, never booted, missed its deadline, was preempted,
// or hit its time limit. TIMEOUT comes last because it is shown apart: a
// job that checkpoints may have saved its work. CANCELLED is not lost work:
// services and interactive sessions end with scancel as a matter of course.
func LostStates() []string {
	return []string{"FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED", "TIMEOUT"}
}

// LostIndex returns the position of state in LostStates, −1 for a state
// that is not lost work (COMPLETED, CANCELLED, running, unknown).
func LostIndex(state string) int {
	switch state {
	case "FAILED":
		return 0
	case "OUT_OF_MEMORY":
		return 1
	case "NODE_FAIL":
		return 2
	case "BOOT_FAIL":
		return 3
	case "DEADLINE":
		return 4
	case "PREEMPTED":
		return 5
	case "TIMEOUT":
		return 6
	}
	return -1
}

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

// isBaseState reports the base states (JOB_STATE_BASE) among jobStates.
func isBaseState(s string) bool {
	switch s {
	case "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
		"TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY":
		return true
	}
	return false
}

// IsFinal reports whether a job in state (a name as ParseState returns it)
// has ended for good: its outcome is decided and it will not run again.
// These are the base states from COMPLETED on (Slurm's IS_JOB_FINISHED)
// and the two flags that end a job in place of one: REVOKED (a federated
// sibling removed here) and LAUNCH_FAILED. Every other state — pending,
// running, suspended, requeued or held, and the transient ones such as
// COMPLETING and STAGE_OUT, after which sacct reports the final state —
// is not final, nor is "" or a name Slurm does not print.
func IsFinal(state string) bool {
	switch state {
	case "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
		"BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED", "LAUNCH_FAILED":
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
// <uid>". It returns the name in capitals; errors wrap ErrBadState and list
// sacct's states with their short forms.
func ParseStateName(s string) (string, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if full, ok := compactState(t); ok {
		return full, nil
	}
	if isJobState(t) {
		return t, nil
	}
	return "", fmt.Errorf("job state %s: %w: want one of %s, or another name Slurm prints (COMPLETING, REQUEUE_HOLD, …)",
		quoteShort(s), ErrBadState, strings.Join(SacctStateCodes(), ", "))
}

// IsState reports whether s is a job state name as ParseState returns it
// (capitals, no "+" or "by <uid>").
func IsState(s string) bool { return isJobState(s) }
