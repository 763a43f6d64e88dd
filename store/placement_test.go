package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestPlacedOn: Slurm's records place a job on the nodes any of its
// reports lists (a requeued job's earlier run too), on no node before a
// report or where no report names one, and on none by a name only like a
// listed one.
func TestPlacedOn(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	rec := func(id, state, nodes string, start time.Time) slurmext.JobRecord {
		return slurmext.JobRecord{Cluster: "lab", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
			UID: 1001, State: slurmext.JobState(state), Start: start, End: start.Add(time.Minute), NodeList: nodes, Source: "jobcomp"}
	}
	for _, r := range []slurmext.JobRecord{
		rec("1", "COMPLETED", "gpu[01-03]", t0),
		rec("2", "REQUEUED", "gpu07", t0), rec("2", "COMPLETED", "gpu08", t0.Add(time.Hour)),
		rec("3", "CANCELLED", "", time.Time{}),
	} {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, job, node string
		on              bool
		nodes           []string
	}{
		{name: "in-range", job: "1", node: "gpu02", on: true, nodes: []string{"gpu[01-03]"}},
		{name: "outside-range", job: "1", node: "gpu04", nodes: []string{"gpu[01-03]"}},
		{name: "prefix-only", job: "1", node: "gpu0", nodes: []string{"gpu[01-03]"}},
		{name: "requeued-first-run", job: "2", node: "gpu07", on: true, nodes: []string{"gpu07", "gpu08"}},
		{name: "requeued-last-run", job: "2", node: "gpu08", on: true, nodes: []string{"gpu07", "gpu08"}},
		{name: "never-started", job: "3", node: "gpu01"},
		{name: "no-record", job: "4", node: "gpu01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := db.PlacedOn(ctx, "lab", tt.job, tt.node)
			if err != nil {
				t.Fatal(err)
			}
			if p.OnNode != tt.on || !slices.Equal(p.Nodes, tt.nodes) {
				t.Errorf("PlacedOn(%s, %s) = %+v, want on %v, nodes %v", tt.job, tt.node, p, tt.on, tt.nodes)
			}
		})
	}
}
