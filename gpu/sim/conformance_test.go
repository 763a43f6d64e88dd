package sim

import (
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/gputest"
)

func TestConformance(t *testing.T) {
	gputest.RunConformance(t, func(t *testing.T) gpu.Sampler {
		dir, procfs, _ := newTestNode(t)
		n, err := Open(dir, WithProcfs(procfs))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = n.Close() })
		return n
	})
}
