package store

import (
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// TestRunningRecord: a job no scheduler report has reached while it runs
// shows what Slurm's prolog gave its nodes — RUNNING, owner, account,
// partition, start, nodes and GPUs — and nothing once a scheduler record
// exists or no node runs it.
func TestRunningRecord(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 13, 0, 0, 0, time.UTC)
	prof := func(node string, status string, start time.Time, gpus int) profile.Job {
		p := profile.Job{Key: profile.Key{Cluster: "lab", JobID: "42", Node: node}, User: "alice", UID: 1001,
			Account: "vision", Partition: "gpu", Start: start, Status: status}
		for k := range gpus {
			p.GPUs = append(p.GPUs, profile.NewGPU(gpu.Device{UUID: node + string(rune('a'+k))}, k, start, time.Minute, 0))
		}
		return p
	}
	tests := []struct {
		name      string
		v         JobView
		want      bool
		gpus      int
		nodes     string
		start     time.Time
		schedView string // SchedView's source
	}{
		{name: "one node, one GPU", v: JobView{Cluster: "lab", JobID: "42", Profiles: []profile.Job{prof("gpu01", profile.StatusRunning, t0, 1)}},
			want: true, gpus: 1, nodes: "gpu01", start: t0, schedView: SourceProfiles},
		{name: "two nodes, the earliest start", v: JobView{Cluster: "lab", JobID: "42", Profiles: []profile.Job{
			prof("gpu02", profile.StatusRunning, t0.Add(time.Second), 2), prof("gpu01", profile.StatusRunning, t0, 2)}},
			want: true, gpus: 4, nodes: "gpu01,gpu02", start: t0, schedView: SourceProfiles},
		{name: "finished, no scheduler record", v: JobView{Cluster: "lab", JobID: "42", Profiles: []profile.Job{prof("gpu01", profile.StatusFinished, t0, 1)}}},
		{name: "a scheduler record", v: JobView{Cluster: "lab", JobID: "42", Sched: &slurmext.JobRecord{State: "RUNNING", Source: "sacct"},
			Profiles: []profile.Job{prof("gpu01", profile.StatusRunning, t0, 1)}}, schedView: "sacct"},
		{name: "nothing", v: JobView{Cluster: "lab", JobID: "42"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.v.RunningRecord()
			if (r != nil) != tt.want {
				t.Fatalf("RunningRecord = %+v, want one: %v", r, tt.want)
			}
			if sv := tt.v.SchedView(); (sv == nil) != (tt.schedView == "") || sv != nil && sv.Source != tt.schedView {
				t.Errorf("SchedView = %+v, want source %q", sv, tt.schedView)
			}
			if r == nil {
				return
			}
			if r.State != "RUNNING" || r.User != "alice" || r.UID != 1001 || r.Account != "vision" || r.Partition != "gpu" || r.Name != "" {
				t.Errorf("state %q user %q uid %d account %q partition %q name %q; want RUNNING alice 1001 vision gpu and no name",
					r.State, r.User, r.UID, r.Account, r.Partition, r.Name)
			}
			if r.ReqGPUs != tt.gpus || r.GPUsFrom != GPUsFromProlog || r.NodeList != tt.nodes || !r.Start.Equal(tt.start) {
				t.Errorf("GPUs %d (from %q) nodes %q start %v; want %d from %s, %q, %v", r.ReqGPUs, r.GPUsFrom, r.NodeList, r.Start,
					tt.gpus, GPUsFromProlog, tt.nodes, tt.start)
			}
			if r.SlurmID() != "42" || r.State.IsFinal() {
				t.Errorf("SlurmID %q, final %v; want 42, not final", r.SlurmID(), r.State.IsFinal())
			}
		})
	}
}

func TestElapsedAt(t *testing.T) {
	start := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	now := start.Add(25*time.Second + 600*time.Millisecond)
	running := profile.Job{Key: profile.Key{Cluster: "lab", JobID: "9", Node: "gpu01"}, Start: start, Status: profile.StatusRunning,
		LastSample: start.Add(20 * time.Second)}
	finished := running
	finished.Status, finished.End = profile.StatusFinished, start.Add(7*time.Minute)
	rec := &slurmext.JobRecord{Cluster: "lab", JobID: "9", State: slurmext.StateCompleted, Start: start, End: start.Add(8 * time.Minute)}
	for _, tc := range []struct {
		name string
		v    JobView
		want time.Duration
		ok   bool
	}{
		{"running: start to now, to the second", JobView{Cluster: "lab", JobID: "9", Profiles: []profile.Job{running}}, 25 * time.Second, true},
		{"ended: the scheduler's", JobView{Cluster: "lab", JobID: "9", Sched: rec, Profiles: []profile.Job{finished}}, 8 * time.Minute, true},
		{"a finished profile alone: to its end", JobView{Cluster: "lab", JobID: "9", Profiles: []profile.Job{finished}}, 7 * time.Minute, true},
		{"nothing known", JobView{Cluster: "lab", JobID: "9"}, 0, false},
	} {
		if got, ok := tc.v.ElapsedAt(now); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
