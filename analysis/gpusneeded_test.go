package analysis

import "testing"

// TestGPUsNeeded: the cross-check's subject agrees in number (issue #38:
// "1 GPUs" on the real test Slurm's 4-GPU month).
func TestGPUsNeeded(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want string
	}{
		{"none", 0, "0 GPUs are"},
		{"one", 1, "1 GPU is"},
		{"many", 1200, "1,200 GPUs are"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gpusNeeded(tc.n); got != tc.want {
				t.Errorf("gpusNeeded(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}
