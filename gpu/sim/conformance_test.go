package sim

import (
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/gputest"
)

func TestConformance(t *testing.T) {
	gputest.RunConformance(t, func(t *testing.T) gpu.Sampler { return openConformanceNode(t) })
}

// openConformanceNode opens a fresh simulated node for one conformance
// test, closed when it ends.
func openConformanceNode(t *testing.T) *Node {
	dir, procfs, _ := newTestNode(t)
	n, err := Open(dir, WithProcfs(procfs))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}
