package slurmext

import (
	"errors"
	"strings"
	"testing"
)

func TestIsFinal(t *testing.T) {
	tests := []struct {
		state string
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
		t.Run(tt.state, func(t *testing.T) {
			if got := IsFinal(tt.state); got != tt.want {
				t.Errorf("IsFinal(%q) = %v, want %v", tt.state, got, tt.want)
			}
		})
	}
	// Every lost state is final, and every base state after SUSPENDED is.
	for _, s := range LostStates() {
		if !IsFinal(s) {
			t.Errorf("lost state %s is not final", s)
		}
	}
	for _, s := range jobStates() {
		if isBaseState(s) && IsFinal(s) == (s == "PENDING" || s == "RUNNING" || s == "SUSPENDED") {
			t.Errorf("base state %s: IsFinal = %v", s, IsFinal(s))
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
			if err != nil || got != tt.want {
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
			if got, err := ParseStateName(in); err != nil || got != long {
				t.Errorf("ParseStateName(%q) = %q, %v, want %s", in, got, err, long)
			}
		}
	}
}
