package analysis

import "testing"

// Every state Slurm prints has the outcome it had before the final/lost
// rule moved to slurmext.
func TestOutcomeOfEveryState(t *testing.T) {
	tests := []struct {
		state string
		want  Outcome
	}{
		{"COMPLETED", OutcomeCompleted},
		{"FAILED", OutcomeFailed}, {"OUT_OF_MEMORY", OutcomeFailed}, {"NODE_FAIL", OutcomeFailed},
		{"BOOT_FAIL", OutcomeFailed}, {"LAUNCH_FAILED", OutcomeFailed},
		{"TIMEOUT", OutcomeTimeout}, {"DEADLINE", OutcomeTimeout},
		{"CANCELLED", OutcomeCancelled}, {"PREEMPTED", OutcomeCancelled}, {"REVOKED", OutcomeCancelled},
		{"PENDING", OutcomeRunning}, {"RUNNING", OutcomeRunning}, {"SUSPENDED", OutcomeRunning},
		{"COMPLETING", OutcomeRunning}, {"CONFIGURING", OutcomeRunning}, {"RESIZING", OutcomeRunning},
		{"REQUEUED", OutcomeRunning}, {"REQUEUE_FED", OutcomeRunning}, {"REQUEUE_HOLD", OutcomeRunning},
		{"SPECIAL_EXIT", OutcomeRunning}, {"STOPPED", OutcomeRunning}, {"RESV_DEL_HOLD", OutcomeRunning},
		{"SIGNALING", OutcomeRunning}, {"STAGE_OUT", OutcomeRunning}, {"POWER_UP_NODE", OutcomeRunning},
		{"UPDATE_DB", OutcomeRunning}, {"RECONFIG_FAIL", OutcomeRunning},
		{"EXPLODED", OutcomeUnknown}, {"completed", OutcomeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			j := Job{State: tt.state}
			if got := outcomeOf(&j); got != tt.want {
				t.Errorf("outcomeOf(%s) = %v, want %v", tt.state, got, tt.want)
			}
		})
	}
}
