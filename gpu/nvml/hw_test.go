//go:build nvmlhw

package nvml

import (
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/gputest"
)

// TestConformanceHardware runs the conformance suite on the machine's own
// driver: go test -tags nvmlhw ./gpu/nvml/ on a GPU node. It fails, rather
// than skips, where NVML is missing: the tag says a GPU is expected.
func TestConformanceHardware(t *testing.T) {
	gputest.RunConformance(t, func(t *testing.T) gpu.Sampler {
		s, err := Open("", testLogger(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}
