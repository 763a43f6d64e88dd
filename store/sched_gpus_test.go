package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// allocOnly is sacctRec as an export without ReqTRES reports it: the GPUs
// read from AllocTRES.
func allocOnly(id, state string, start, end time.Time) slurmext.JobRecord {
	r := sacctRec(id, state, start, end)
	r.ReqTRES = ""
	r.ReqGPUs, r.ReqGPUType, r.ReqShards, r.GPUsFrom = slurmext.RequestedGPUs(r.ReqTRES, r.AllocTRES)
	return r
}

// TestSchedGPUsFrom: where a job's GPU counts were read from is kept with
// them, and a request read from ReqTRES is preferred over one read from
// AllocTRES whichever report wins.
func TestSchedGPUsFrom(t *testing.T) {
	s, e := t0, t0.Add(time.Hour)
	withReq := sacctRec("7", "COMPLETED", s, e)
	alloc := allocOnly("7", "COMPLETED", s, e)
	if alloc.ReqGPUs != 4 || alloc.GPUsFrom != slurmext.GPUsFromAllocTRES {
		t.Fatalf("fixture: %d GPUs from %q", alloc.ReqGPUs, alloc.GPUsFrom)
	}
	later := alloc
	later.End = e.Add(time.Minute) // wins as the later end
	tests := []struct {
		name      string
		puts      []slurmext.JobRecord
		from, tre string
		gpus      int
		gpuType   string
	}{
		{name: "from AllocTRES alone", puts: []slurmext.JobRecord{alloc}, from: slurmext.GPUsFromAllocTRES, gpus: 4},
		{name: "jobcomp, then AllocTRES", puts: []slurmext.JobRecord{jobcompRec("7", "COMPLETED", s, e), alloc},
			from: slurmext.GPUsFromAllocTRES, gpus: 4},
		{name: "AllocTRES wins, ReqTRES fills the request", puts: []slurmext.JobRecord{withReq, later},
			from: slurmext.GPUsFromReqTRES, tre: withReq.ReqTRES, gpus: 4, gpuType: "h100"},
		{name: "AllocTRES wins, ReqTRES comes second", puts: []slurmext.JobRecord{later, withReq},
			from: slurmext.GPUsFromReqTRES, tre: withReq.ReqTRES, gpus: 4, gpuType: "h100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			for _, r := range tt.puts {
				if err := db.PutSchedJob(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.GetSchedJob(ctx, "lab", "7")
			if err != nil {
				t.Fatal(err)
			}
			if got.GPUsFrom != tt.from || got.ReqTRES != tt.tre || got.ReqGPUs != tt.gpus || got.ReqGPUType != tt.gpuType {
				t.Errorf("GPUs %d (%q) from %q, ReqTRES %q; want %d (%q) from %q, %q",
					got.ReqGPUs, got.ReqGPUType, got.GPUsFrom, got.ReqTRES, tt.gpus, tt.gpuType, tt.from, tt.tre)
			}
		})
	}
}

// TestMigrateGPUsFrom: a database of schema 6 learns where its jobs' GPUs
// came from: ReqTRES where it holds one (the only column read before), ""
// where it holds none (jobcomp).
func TestMigrateGPUsFrom(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	old := openAtVersion(t, path, 6)
	for _, row := range []struct{ id, tres string }{{"1", "cpu=1,gres/gpu=2"}, {"2", ""}} {
		if _, err := old.w.ExecContext(ctx, `INSERT INTO sched_jobs (cluster, job_id, state, req_gpus, req_tres, event_seq, updated_at)
			VALUES ('lab', ?, 'COMPLETED', 2, ?, 1, 0)`, row.id, row.tres); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for id, want := range map[string]string{"1": slurmext.GPUsFromReqTRES, "2": ""} {
		got, err := db.GetSchedJob(ctx, "lab", id)
		if err != nil || got.GPUsFrom != want {
			t.Errorf("job %s after the migration: GPUsFrom %q, %v; want %q", id, got.GPUsFrom, err, want)
		}
	}
}

// TestLeanViewStarted: a lean read (the analysis's) keeps what
// slurmext.Started needs, the node list of a job whose start is its end,
// so a job cancelled while pending reads as never started and one that
// ran under a second as started.
func TestLeanViewStarted(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	ran := sacctRec("1", "FAILED", t0, t0) // failed in its first second, on its nodes
	cancelled := sacctRec("2", "CANCELLED", t0, t0)
	cancelled.NodeList = "" // sacct's "None assigned"
	long := sacctRec("3", "COMPLETED", t0, t0.Add(time.Hour))
	for _, r := range []slurmext.JobRecord{ran, cancelled, long} {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{"1": true, "2": false, "3": true}
	for _, f := range []ViewFilter{{}, {Lean: true}} {
		n := 0
		err := db.eachView(ctx, f, func(v JobView) error {
			n++
			r := v.Sched
			if got := slurmext.Started(r.Start, r.End, r.NodeList); got != want[v.JobID] {
				t.Errorf("lean %v: job %s Started = %v, want %v", f.Lean, v.JobID, got, want[v.JobID])
			}
			return nil
		})
		if err != nil || n != len(want) {
			t.Errorf("lean %v: %d views, %v", f.Lean, n, err)
		}
	}
}
