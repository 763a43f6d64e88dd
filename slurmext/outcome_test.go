package slurmext

import "testing"

// TestStateClasses enumerates every state Slurm prints with each class
// this package gives it: its outcome, whether it is final, whether it is
// lost work (and where in LostStates), and whether a report shows it apart.
// A state added to jobStates without a row here fails the test.
func TestStateClasses(t *testing.T) {
	const (
		co, fa, to, ca, ru = OutcomeCompleted, OutcomeFailed, OutcomeTimeout, OutcomeCancelled, OutcomeRunning
	)
	tests := []struct {
		state   JobState
		outcome Outcome
		final   bool
		lost    int
		apart   bool
	}{
		{"PENDING", ru, false, -1, false},
		{"RUNNING", ru, false, -1, false},
		{"SUSPENDED", ru, false, -1, false},
		{"COMPLETED", co, true, -1, false},
		{"CANCELLED", ca, true, -1, false},
		{"FAILED", fa, true, 0, false},
		{"TIMEOUT", to, true, 6, true},
		{"NODE_FAIL", fa, true, 2, false},
		{"PREEMPTED", ca, true, 5, false},
		{"BOOT_FAIL", fa, true, 3, false},
		{"DEADLINE", to, true, 4, false},
		{"OUT_OF_MEMORY", fa, true, 1, false},
		{"COMPLETING", ru, false, -1, false},
		{"CONFIGURING", ru, false, -1, false},
		{"RESIZING", ru, false, -1, false},
		{"REQUEUED", ru, false, -1, false},
		{"REQUEUE_FED", ru, false, -1, false},
		{"REQUEUE_HOLD", ru, false, -1, false},
		{"SPECIAL_EXIT", ru, false, -1, false},
		{"STOPPED", ru, false, -1, false},
		{"REVOKED", ca, true, -1, false},
		{"RESV_DEL_HOLD", ru, false, -1, false},
		{"SIGNALING", ru, false, -1, false},
		{"STAGE_OUT", ru, false, -1, false},
		{"POWER_UP_NODE", ru, false, -1, false},
		{"LAUNCH_FAILED", fa, true, -1, false},
		{"UPDATE_DB", ru, false, -1, false},
		{"RECONFIG_FAIL", ru, false, -1, false},
		{"", OutcomeUnknown, false, -1, false},
		{"completed", OutcomeUnknown, false, -1, false},
		{"EXPLODED", OutcomeUnknown, false, -1, false},
	}
	listed := map[JobState]bool{}
	for _, tt := range tests {
		listed[tt.state] = true
		t.Run(string(tt.state), func(t *testing.T) {
			if got := tt.state.Outcome(); got != tt.outcome {
				t.Errorf("%q.Outcome() = %v, want %v", tt.state, got, tt.outcome)
			}
			if got := tt.state.IsFinal(); got != tt.final {
				t.Errorf("%q.IsFinal() = %v, want %v", tt.state, got, tt.final)
			}
			if got := tt.state.Outcome().Finished(); got != tt.final {
				t.Errorf("%q.Outcome().Finished() = %v, want %v (IsFinal)", tt.state, got, tt.final)
			}
			if got := tt.state.LostIndex(); got != tt.lost {
				t.Errorf("%q.LostIndex() = %d, want %d", tt.state, got, tt.lost)
			}
			if got := tt.state.LostApart(); got != tt.apart {
				t.Errorf("%q.LostApart() = %v, want %v", tt.state, got, tt.apart)
			}
		})
	}
	for _, s := range jobStates() {
		if !listed[s] {
			t.Errorf("state %s has no row: say which classes it belongs to", s)
		}
	}
	for i, s := range LostStates() {
		if s.LostIndex() != i {
			t.Errorf("%s.LostIndex() = %d, want its place in LostStates, %d", s, s.LostIndex(), i)
		}
	}
}

func TestOutcomeText(t *testing.T) {
	for o, want := range map[Outcome]string{
		OutcomeUnknown: "unknown", OutcomeCompleted: "completed", OutcomeFailed: "failed",
		OutcomeTimeout: "timeout", OutcomeCancelled: "cancelled", OutcomeRunning: "running", Outcome(99): "unknown",
	} {
		b, err := o.MarshalText()
		if o.String() != want || err != nil || string(b) != want {
			t.Errorf("Outcome(%d) = %q, %q, %v; want %q", o, o.String(), b, err, want)
		}
	}
}
