package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// TestRunningJobRow: a job that runs with no scheduler record yet shows,
// in the list and the detail, what Slurm's prolog gave its node (state
// RUNNING, partition, the GPU it holds as requested), not "-" and
// "GPUs 0 requested".
func TestRunningJobRow(t *testing.T) {
	start := testNow.Add(-time.Hour)
	p := profile.Job{
		Key:  profile.Key{Cluster: "hpc", JobID: "9001", Node: "gpu01"},
		User: "alice", UID: 1001, Account: "vision", Partition: "gpu-long",
		Start: start, Status: profile.StatusRunning, Source: profile.SourceAgent, SampleInterval: time.Minute,
	}
	g := profile.NewGPU(gpu.Device{UUID: "GPU-9001", Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}, 0, start, time.Minute, 0)
	for i := range 60 {
		g.Observe(profile.Reading{Time: start.Add(time.Duration(i) * time.Minute), Util: gpu.Some(uint32(70)),
			MemUsed: gpu.Some(uint64(20) << 30), Processes: 1}, time.Minute)
	}
	p.GPUs = []profile.GPU{g}
	src := &fakeSource{jobs: []store.JobView{{Cluster: "hpc", JobID: "9001", Profiles: []profile.Job{p}}}, user: "alice"}
	m := New(context.Background(), src, Identity{User: "alice"}, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 160, Height: 30})
	r, ok := m.rowAt(0)
	if !ok {
		t.Fatal("no row")
	}
	if r.state != "RUNNING" || r.gpus != "1/1" {
		t.Errorf("row state %q gpus %q, want RUNNING and 1/1", r.state, r.gpus)
	}
	m = press(t, m, "enter")
	if m.detail == nil || m.detail.loading {
		t.Fatal("no detail")
	}
	detail := strings.Join(m.detailLines(), "\n")
	for _, want := range []string{"partition gpu-long", "state RUNNING", "GPUs 1 requested"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
}
