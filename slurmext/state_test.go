package slurmext

import (
	"errors"
	"testing"
)

func TestParseState(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		want        string
		cancelledBy int
	}{
		{name: "completed", in: "COMPLETED", want: "COMPLETED", cancelledBy: -1},
		{name: "every base state: BOOT_FAIL", in: "BOOT_FAIL", want: "BOOT_FAIL", cancelledBy: -1},
		{name: "DEADLINE", in: "DEADLINE", want: "DEADLINE", cancelledBy: -1},
		{name: "FAILED", in: "FAILED", want: "FAILED", cancelledBy: -1},
		{name: "NODE_FAIL", in: "NODE_FAIL", want: "NODE_FAIL", cancelledBy: -1},
		{name: "OUT_OF_MEMORY", in: "OUT_OF_MEMORY", want: "OUT_OF_MEMORY", cancelledBy: -1},
		{name: "PENDING", in: "PENDING", want: "PENDING", cancelledBy: -1},
		{name: "PREEMPTED", in: "PREEMPTED", want: "PREEMPTED", cancelledBy: -1},
		{name: "RUNNING", in: "RUNNING", want: "RUNNING", cancelledBy: -1},
		{name: "REQUEUED", in: "REQUEUED", want: "REQUEUED", cancelledBy: -1},
		{name: "RESIZING", in: "RESIZING", want: "RESIZING", cancelledBy: -1},
		{name: "REVOKED", in: "REVOKED", want: "REVOKED", cancelledBy: -1},
		{name: "SUSPENDED", in: "SUSPENDED", want: "SUSPENDED", cancelledBy: -1},
		{name: "TIMEOUT", in: "TIMEOUT", want: "TIMEOUT", cancelledBy: -1},
		{name: "REQUEUE_FED", in: "REQUEUE_FED", want: "REQUEUE_FED", cancelledBy: -1},
		{name: "REQUEUE_HOLD", in: "REQUEUE_HOLD", want: "REQUEUE_HOLD", cancelledBy: -1},
		{name: "SPECIAL_EXIT", in: "SPECIAL_EXIT", want: "SPECIAL_EXIT", cancelledBy: -1},
		{name: "STOPPED", in: "STOPPED", want: "STOPPED", cancelledBy: -1},
		{name: "lower case", in: "completed", want: "COMPLETED", cancelledBy: -1},
		{name: "spaces", in: "  TIMEOUT ", want: "TIMEOUT", cancelledBy: -1},
		{name: "cancelled by uid", in: "CANCELLED by 1000", want: "CANCELLED", cancelledBy: 1000},
		{name: "cancelled by root", in: "CANCELLED by 0", want: "CANCELLED", cancelledBy: 0},
		{name: "cancelled without uid", in: "CANCELLED", want: "CANCELLED", cancelledBy: -1},
		{name: "cut: CANCELLED+", in: "CANCELLED+", want: "CANCELLED", cancelledBy: -1},
		{name: "cut uid", in: "CANCELLED by 10+", want: "CANCELLED", cancelledBy: -1},
		{name: "cut after by", in: "CANCELLED by+", want: "CANCELLED", cancelledBy: -1},
		{name: "cut: OUT_OF_ME+", in: "OUT_OF_ME+", want: "OUT_OF_MEMORY", cancelledBy: -1},
		{name: "cut: REQUEUE_H+", in: "REQUEUE_H+", want: "REQUEUE_HOLD", cancelledBy: -1},
		{name: "cut: exact name with +", in: "REQUEUED+", want: "REQUEUED", cancelledBy: -1},
		{name: "compact CD", in: "CD", want: "COMPLETED", cancelledBy: -1},
		{name: "compact OOM", in: "OOM", want: "OUT_OF_MEMORY", cancelledBy: -1},
		{name: "compact lower case", in: "pd", want: "PENDING", cancelledBy: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, by, err := ParseState(tt.in)
			if err != nil || string(got) != tt.want || by != tt.cancelledBy {
				t.Fatalf("ParseState(%q) = %q, %d, %v; want %q, %d, nil", tt.in, got, by, err, tt.want, tt.cancelledBy)
			}
		})
	}
}

func TestParseStateErrors(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{name: "empty", in: ""},
		{name: "unknown", in: "EXPLODED"},
		{name: "ambiguous cut", in: "REQUEUE+"},
		{name: "ambiguous short cut", in: "RE+"},
		{name: "only a plus", in: "+"},
		{name: "by on another state", in: "FAILED by 1000"},
		{name: "by without uid", in: "CANCELLED by"},
		{name: "by a name", in: "CANCELLED by alice"},
		{name: "by uid -1", in: "CANCELLED by 4294967295"},
		{name: "compact with plus", in: "CD+"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, by, err := ParseState(tt.in)
			if !errors.Is(err, ErrBadState) || got != "" || by != -1 {
				t.Fatalf("ParseState(%q) = %q, %d, %v; want \"\", -1, ErrBadState", tt.in, got, by, err)
			}
			checkErrorMessage(t, err)
		})
	}
}

// TestStateTables keeps the allocation-free lookups in step with the list.
func TestStateTables(t *testing.T) {
	base := 0
	for _, s := range jobStates() {
		if !s.Known() {
			t.Errorf("%q.Known() = false for a name in jobStates", s)
		}
		if s.IsBase() {
			base++
		}
		if got, _, err := ParseState(string(s)); err != nil || got != s {
			t.Errorf("ParseState(%q) = %q, %v", s, got, err)
		}
	}
	if base != 12 {
		t.Errorf("%d base states in jobStates, want 12", base)
	}
	if JobState("EXPLODED").Known() || StateRequeued.IsBase() {
		t.Error("Known or IsBase accepts what it must not")
	}
}

func TestLostStates(t *testing.T) {
	for i, s := range LostStates() {
		if got := s.LostIndex(); got != i {
			t.Errorf("%s.LostIndex() = %d, want %d", s, got, i)
		}
		if !s.Known() {
			t.Errorf("%s is not a Slurm job state", s)
		}
	}
	for _, s := range []JobState{"COMPLETED", "CANCELLED", "RUNNING", "PENDING", "REQUEUED", "", "failed"} {
		if got := s.LostIndex(); got != -1 {
			t.Errorf("%q.LostIndex() = %d, want -1 (not lost work)", s, got)
		}
	}
}
