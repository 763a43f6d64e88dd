package sacct

import (
	"slices"
	"testing"
)

// TestEndedPendingOnRealSacct: on the real test cluster's sacct of jobs
// cancelled while pending (22.05, testdata/real/README.md), the jobs it
// shows never started (Start None, no node) and final are the ones that
// ended pending; those that ran, or were cancelled after they started
// (job 11), did not.
func TestEndedPendingOnRealSacct(t *testing.T) {
	recs, lineErrs, _ := readAllSacct(t, NewReader(openFixture(t, "real", "22.05-cancelled-pending-P-epoch-steps.txt"), nil, Options{}))
	if len(lineErrs) > 0 {
		t.Fatalf("line errors: %v", lineErrs)
	}
	var got []string
	for _, r := range recs {
		if r.State.EndedPending(r.Started(), r.End) {
			got = append(got, r.JobID)
		}
	}
	if want := []string{"1", "2", "3", "4", "6", "7"}; !slices.Equal(got, want) {
		t.Errorf("ended pending: %v, want %v (of %d jobs)", got, want, len(recs))
	}
}
