package slurmext

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestIsFinal(t *testing.T) {
	tests := []struct {
		state JobState
		want  bool
	}{
		{"COMPLETED", true}, {"CANCELLED", true}, {"FAILED", true}, {"TIMEOUT", true},
		{"NODE_FAIL", true}, {"PREEMPTED", true}, {"BOOT_FAIL", true}, {"DEADLINE", true},
		{"OUT_OF_MEMORY", true}, {"REVOKED", true}, {"LAUNCH_FAILED", true},
		{"PENDING", false}, {"RUNNING", false}, {"SUSPENDED", false}, {"REQUEUED", false},
		{"REQUEUE_HOLD", false}, {"REQUEUE_FED", false}, {"RESIZING", false},
		{"COMPLETING", false}, {"STAGE_OUT", false}, {"SPECIAL_EXIT", false},
		{"", false}, {"completed", false}, {"EXPLODED", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			if got := tt.state.IsFinal(); got != tt.want {
				t.Errorf("%q.IsFinal() = %v, want %v", tt.state, got, tt.want)
			}
		})
	}
	// Every lost state is final, and every base state after SUSPENDED is.
	for _, s := range LostStates() {
		if !s.IsFinal() {
			t.Errorf("lost state %s is not final", s)
		}
	}
	for _, s := range jobStates() {
		if s.IsBase() && s.IsFinal() == (s == "PENDING" || s == "RUNNING" || s == "SUSPENDED") {
			t.Errorf("base state %s: IsFinal = %v", s, s.IsFinal())
		}
	}
}

func TestParseStateName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"COMPLETED", "COMPLETED"}, {"completed", "COMPLETED"}, {"CD", "COMPLETED"}, {"cd", "COMPLETED"},
		{"ca", "CANCELLED"}, {"F", "FAILED"}, {"to", "TIMEOUT"}, {"oom", "OUT_OF_MEMORY"},
		{"Out_Of_Memory", "OUT_OF_MEMORY"}, {"R", "RUNNING"}, {"running", "RUNNING"},
		{"PD", "PENDING"}, {"nf", "NODE_FAIL"}, {"bf", "BOOT_FAIL"}, {"DL", "DEADLINE"},
		{"PR", "PREEMPTED"}, {"RQ", "REQUEUED"}, {"RS", "RESIZING"}, {"RV", "REVOKED"},
		{"S", "SUSPENDED"}, {" CG ", "COMPLETING"}, {"requeue_hold", "REQUEUE_HOLD"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseStateName(tt.in)
			if err != nil || string(got) != tt.want {
				t.Errorf("ParseStateName(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
			}
		})
	}
	for _, in := range []string{"bogus", "", "CANCELLED+", "CANCELLED by 1000", "COMP", "done", "finished", "CD,F"} {
		t.Run("bad "+in, func(t *testing.T) {
			got, err := ParseStateName(in)
			if !errors.Is(err, ErrBadState) {
				t.Fatalf("ParseStateName(%q) = %q, %v, want ErrBadState", in, got, err)
			}
			if !strings.Contains(err.Error(), "CD COMPLETED") || !strings.Contains(err.Error(), "TO TIMEOUT") {
				t.Errorf("error %q does not list the states with their short forms", err)
			}
		})
	}
	// Every state sacct documents parses in both forms.
	for _, pair := range SacctStateCodes() {
		short, long, _ := strings.Cut(pair, " ")
		for _, in := range []string{short, long, strings.ToLower(short)} {
			if got, err := ParseStateName(in); err != nil || string(got) != long {
				t.Errorf("ParseStateName(%q) = %q, %v, want %s", in, got, err, long)
			}
		}
	}
}

// TestStarted: the one rule for whether a job ever ran. The rows marked
// "real" are jobs of the 22.05 captures (testdata/sacct, testdata/jobcomp).
func TestStarted(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, "2026-12-02T"+s+"Z")
		if err != nil {
			panic(err)
		}
		return tm
	}
	tests := []struct {
		name       string
		start, end time.Time
		nodeList   string
		want       bool
	}{
		{name: "real: job 1, ran 2 s", start: at("11:26:29"), end: at("11:26:31"), nodeList: "localhost", want: true},
		{name: "real: job 2, failed in its first second (Start = End, a node)", start: at("11:26:29"), end: at("11:26:29"), nodeList: "localhost", want: true},
		{name: "real: job 9, cancelled while pending (Start = End, None assigned)", start: at("11:26:30"), end: at("11:26:30"), want: false},
		{name: "real: job 25, --begin=now+1hour then scancel (Start = End before Eligible)", start: at("11:28:18"), end: at("11:28:18"), want: false},
		{name: "real: het job 12+1, Start None", end: at("11:28:13"), want: false},
		{name: "real: job 27, running (End Unknown)", start: at("11:33:13"), nodeList: "localhost", want: true},
		{name: "None assigned kept as text", start: at("11:26:30"), end: at("11:26:30"), nodeList: "None assigned", want: false},
		{name: "pending: neither time", want: false},
		{name: "Start known, End not yet, no nodes recorded: running", start: at("11:26:30"), want: true},
		{name: "Start after End, no nodes: a broken record, not never-started", start: at("11:26:31"), end: at("11:26:30"), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Started(tt.start, tt.end, tt.nodeList); got != tt.want {
				t.Errorf("Started(%v, %v, %q) = %v, want %v", tt.start, tt.end, tt.nodeList, got, tt.want)
			}
		})
	}
}

// TestRecordWaitNeverStarted: a job cancelled while pending (the real job
// 9: Start = End, no nodes) neither waited for a start nor ran; a job that
// ran under a second did both.
func TestRecordWaitNeverStarted(t *testing.T) {
	at := time.Date(2026, 12, 2, 11, 26, 28, 0, time.UTC)
	cancelled := JobRecord{Submit: at, Eligible: at, Start: at.Add(2 * time.Second), End: at.Add(2 * time.Second)}
	if d, ok := cancelled.Wait(); ok {
		t.Errorf("cancelled while pending: waited %v for a start", d)
	}
	if d, ok := cancelled.Elapsed(); ok {
		t.Errorf("cancelled while pending: ran %v", d)
	}
	ran := cancelled
	ran.NodeList = "localhost"
	if d, ok := ran.Wait(); !ok || d != 2*time.Second {
		t.Errorf("ran under a second: waited %v, %v; want 2s", d, ok)
	}
	if d, ok := ran.Elapsed(); !ok || d != 0 {
		t.Errorf("ran under a second: ran %v, %v; want 0s", d, ok)
	}
}

func TestEndedPending(t *testing.T) {
	end := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		state   JobState
		started bool
		end     time.Time
		want    bool
	}{
		{"cancelled while pending", StateCancelled, false, end, true},
		{"past its deadline while pending", StateDeadline, false, end, true},
		{"revoked sibling", StateRevoked, false, end, true},
		{"never booted", StateBootFail, false, end, true},
		{"launch failed", StateLaunchFailed, false, end, true},
		{"cancelled after it started", StateCancelled, true, end, false},
		{"final without an end", StateDeadline, false, time.Time{}, false},
		{"still pending", StatePending, false, time.Time{}, false},
		{"pending with an end", StatePending, false, end, false},
		{"requeued", StateRequeued, false, end, false},
		{"unknown", "", false, end, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.state.EndedPending(tt.started, tt.end); got != tt.want {
				t.Errorf("%q.EndedPending(%v, %v) = %v, want %v", tt.state, tt.started, tt.end, got, tt.want)
			}
		})
	}
}
