package tui

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// typeSource is a fakeSource that knows each cluster's GPU types, as the
// CLI's source does (monthly.GPUTypes), and records which clusters it
// was asked about.
type typeSource struct {
	*fakeSource
	asked []string
}

func (s *typeSource) GPUTypes(_ context.Context, cluster string) []analysis.GPUType {
	s.asked = append(s.asked, cluster)
	return []analysis.GPUType{{Type: "l4", Model: "NVIDIA L4", Memory: 24 << 30}}
}

var _ TypeSource = (*typeSource)(nil)

// TestDetailAsksForGPUTypes: the detail's hints get the GPU types of the
// job's own cluster from a Source that knows them (the smaller_gpu hint
// names one of them; analysis.TestHints covers the rule).
func TestDetailAsksForGPUTypes(t *testing.T) {
	src := &typeSource{fakeSource: &fakeSource{jobs: genJobs(3), admin: true}}
	m := New(context.Background(), src, Identity{User: "root", Admin: true}, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	v := src.jobs[0]
	next, cmd := m.openDetail(row{cluster: v.Cluster, jobID: v.JobID, id: v.JobID})
	m = drive(t, next.(Model), cmd)
	if m.detail == nil || m.detail.err != "" {
		t.Fatalf("detail = %+v", m.detail)
	}
	if !slices.Equal(src.asked, []string{v.Cluster}) {
		t.Errorf("GPU types asked for %q, want the job's cluster %q", src.asked, v.Cluster)
	}
}
