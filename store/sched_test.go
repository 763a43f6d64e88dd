package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

// rec is a scheduler record with the sentinels of "not an array, not
// heterogeneous, uid unknown, not cancelled" that parsers set.
func rec(id, state string, start, end time.Time, source string) slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: "lab", JobID: id, DisplayID: id,
		ArrayTaskID: -1, HetOffset: -1, UID: -1, CancelledBy: -1,
		State: slurmext.JobState(state), Start: start, End: end, Source: source,
	}
}

// jobcompRec is what jobcomp/script reports: no TRES, no eligible time
// before 24.05, no QOS without accounting.
func jobcompRec(id, state string, start, end time.Time) slurmext.JobRecord {
	r := rec(id, state, start, end, "jobcomp")
	r.Name, r.User, r.UID = "train", "alice", 1001
	r.Account, r.Partition = "vision", "gpu"
	r.Submit = start.Add(-5 * time.Minute)
	r.TimeLimit = 4 * time.Hour
	r.NodeList, r.NodeCount, r.CPUs = "gpu[01-02]", 2, 16
	return r
}

// sacctRec is what sacct reports for the same run: TRES and QOS, but
// (here) no job name, to show filling works both ways.
func sacctRec(id, state string, start, end time.Time) slurmext.JobRecord {
	r := rec(id, state, start, end, "sacct")
	r.User, r.UID = "alice", 1001
	r.Account, r.Partition, r.QOS = "vision", "gpu", "normal"
	r.Submit, r.Eligible = start.Add(-5*time.Minute), start.Add(-4*time.Minute)
	r.TimeLimit = 4 * time.Hour
	r.NodeList, r.NodeCount, r.CPUs = "gpu[01-02]", 2, 16
	r.ReqGPUs, r.ReqGPUType, r.ReqTRES = 4, "h100", "billing=16,cpu=16,gres/gpu:h100=4,node=2"
	r.AllocTRES, r.GPUsFrom = "billing=16,cpu=16,gres/gpu=4,node=2", slurmext.GPUsFromReqTRES
	return r
}

// fullRec has every field set, none to its zero value.
func fullRec() slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: "lab", JobID: "4711", DisplayID: "4700_11",
		ArrayJobID: "4700", ArrayTaskID: 11, ArrayTaskSpec: "1-20%4",
		HetJobID: "4690", HetOffset: 1,
		Name: "sweep", User: "bob", UID: 1002, Account: "nlp", Partition: "gpu-long", QOS: "high",
		State: "CANCELLED", CancelledBy: 0, Reason: "QOSMaxGRESPerUser",
		Submit: t0, Eligible: t0.Add(time.Minute), Start: t0.Add(2 * time.Minute), End: t0.Add(3 * time.Hour),
		TimeLimit:  2*time.Hour + 500*time.Millisecond,
		ExitStatus: 2, ExitSignal: 15, DerivedStatus: 1, DerivedSignal: 9,
		NodeList: "gpu[03,05]", NodeCount: 2, CPUs: 32,
		ReqGPUs: 8, ReqGPUType: "a100", ReqShards: 3, ReqTRES: "cpu=32,gres/gpu:a100=8", AllocTRES: "cpu=32,gres/gpu=8",
		GPUsFrom: slurmext.GPUsFromReqTRES, Restarts: 2, Source: "sacct",
	}
}

func TestPutSchedJobRoundTrip(t *testing.T) {
	unlimited := fullRec()
	unlimited.JobID, unlimited.Unlimited, unlimited.TimeLimit = "1", true, 0
	unknownLimit := fullRec()
	unknownLimit.JobID, unknownLimit.TimeLimit = "2", 0
	pending := rec("3", "PENDING", time.Time{}, time.Time{}, "jobcomp")
	tests := []struct {
		name string
		r    slurmext.JobRecord
	}{
		{name: "every field", r: fullRec()},
		{name: "unlimited", r: unlimited},
		{name: "unknown time limit", r: unknownLimit},
		{name: "pending, no times", r: pending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			if err := db.PutSchedJob(ctx, tt.r); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetSchedJob(ctx, tt.r.Cluster, tt.r.JobID)
			if err != nil {
				t.Fatal(err)
			}
			if want := NormalizeRecord(tt.r); got != want {
				t.Errorf("GetSchedJob:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestSchedColumns(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	unlimited := fullRec()
	unlimited.JobID, unlimited.Unlimited = "1", true
	pending := rec("2", "PENDING", time.Time{}, time.Time{}, "jobcomp")
	for _, r := range []slurmext.JobRecord{fullRec(), unlimited, pending} {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		submit, start, end, limit sql.NullInt64
		unlimited                 bool
	}
	tests := []struct {
		name, id string
		want     row
	}{
		{name: "times as unix seconds, limit in whole seconds", id: "4711", want: row{
			submit: sql.NullInt64{Int64: t0.Unix(), Valid: true},
			start:  sql.NullInt64{Int64: t0.Unix() + 120, Valid: true},
			end:    sql.NullInt64{Int64: t0.Unix() + 3*3600, Valid: true},
			limit:  sql.NullInt64{Int64: 7200, Valid: true},
		}},
		{name: "unlimited: flag, no limit", id: "1", want: row{
			submit: sql.NullInt64{Int64: t0.Unix(), Valid: true},
			start:  sql.NullInt64{Int64: t0.Unix() + 120, Valid: true},
			end:    sql.NullInt64{Int64: t0.Unix() + 3*3600, Valid: true},
			// limit NULL
			unlimited: true,
		}},
		{name: "unknown: NULL", id: "2", want: row{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got row
			err := db.r.QueryRow(`SELECT submit, "start", "end", time_limit, unlimited FROM sched_jobs WHERE job_id = ?`, tt.id).
				Scan(&got.submit, &got.start, &got.end, &got.limit, &got.unlimited)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("columns = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPutSchedJobInvalid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *slurmext.JobRecord)
	}{
		{name: "no cluster", mutate: func(r *slurmext.JobRecord) { r.Cluster = "" }},
		{name: "no job id", mutate: func(r *slurmext.JobRecord) { r.JobID = "" }},
		{name: "job id not one", mutate: func(r *slurmext.JobRecord) { r.JobID = "../1" }},
		{name: "job id with shell syntax", mutate: func(r *slurmext.JobRecord) { r.JobID = "1;rm" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			r := fullRec()
			tt.mutate(&r)
			if err := db.PutSchedJob(ctx, r); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutSchedJob: got %v, want ErrInvalid", err)
			}
			if _, _, _, err := db.PutSchedJobs(ctx, []slurmext.JobRecord{fullRec(), r}); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutSchedJobs: got %v, want ErrInvalid", err)
			}
			for _, table := range []string{"sched_jobs", "sched_events"} {
				if n := countRows(t, db, table); n != 0 {
					t.Errorf("%s rows = %d, want 0 (the batch rolls back)", table, n)
				}
			}
		})
	}
}

func TestGetSchedJobNotFound(t *testing.T) {
	db := openTest(t, Options{})
	if _, err := db.GetSchedJob(context.Background(), "lab", "404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetSchedJob: got %v, want ErrNotFound", err)
	}
}

func TestSchedMerge(t *testing.T) {
	h := time.Hour
	s1, e1 := t0, t0.Add(10*time.Minute)          // first run, ended by a prolog failure
	s2, e2 := t0.Add(h), t0.Add(3*h)              // second run after the requeue
	pending := jobcompRec("7", "PENDING", s1, e1) // jobcomp reports the requeue as PENDING
	completed := jobcompRec("7", "COMPLETED", s2, e2)
	preempted := sacctRec("7", "PREEMPTED", s1, e1)
	running := sacctRec("7", "RUNNING", s2, time.Time{})
	withName := func(r slurmext.JobRecord, name string) slurmext.JobRecord { r.Name = name; return r }
	restarts := func(r slurmext.JobRecord, n int) slurmext.JobRecord { r.Restarts = n; return r }

	tests := []struct {
		name string
		puts []slurmext.JobRecord
		// check inspects the merged record.
		check func(t *testing.T, got slurmext.JobRecord)
	}{
		{
			name: "requeue: PENDING then COMPLETED",
			puts: []slurmext.JobRecord{pending, completed},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "COMPLETED", s2, e2)
				wantRestarts(t, got, 1)
			},
		},
		{
			name: "requeue: COMPLETED then a late PENDING",
			puts: []slurmext.JobRecord{completed, pending},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "COMPLETED", s2, e2)
				wantRestarts(t, got, 1)
			},
		},
		{
			name: "a final state beats a non-final one of the same run, either order",
			puts: []slurmext.JobRecord{sacctRec("7", "COMPLETED", s2, e2), running},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "COMPLETED", s2, e2)
				wantRestarts(t, got, 0)
			},
		},
		{
			name: "running again after a requeue beats the earlier final state",
			puts: []slurmext.JobRecord{preempted, running},
			check: func(t *testing.T, got slurmext.JobRecord) {
				// The new run must not inherit the old run's end.
				wantRun(t, got, "RUNNING", s2, time.Time{})
				wantRestarts(t, got, 1)
			},
		},
		{
			name: "running again after a requeue, reports reversed",
			puts: []slurmext.JobRecord{running, preempted},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "RUNNING", s2, time.Time{})
				wantRestarts(t, got, 1)
			},
		},
		{
			name: "the whole requeue story out of order",
			puts: []slurmext.JobRecord{completed, running, preempted, pending},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "COMPLETED", s2, e2)
				wantRestarts(t, got, 1)
			},
		},
		{
			name: "between final states the later end wins",
			puts: []slurmext.JobRecord{sacctRec("7", "TIMEOUT", s1, e2), sacctRec("7", "CANCELLED", s1, e1)},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "TIMEOUT", s1, e2)
			},
		},
		{
			name: "between final states the later end wins, reversed",
			puts: []slurmext.JobRecord{sacctRec("7", "CANCELLED", s1, e1), sacctRec("7", "TIMEOUT", s1, e2)},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "TIMEOUT", s1, e2)
			},
		},
		{
			name: "same end: the later report wins",
			puts: []slurmext.JobRecord{withName(jobcompRec("7", "FAILED", s1, e1), "first"), withName(sacctRec("7", "FAILED", s1, e1), "second")},
			check: func(t *testing.T, got slurmext.JobRecord) {
				if got.Name != "second" || got.Source != "sacct" {
					t.Errorf("Name, Source = %q, %q; want the later report's: second, sacct", got.Name, got.Source)
				}
			},
		},
		{
			name: "same end: re-sending the first report does not make it later",
			puts: []slurmext.JobRecord{
				withName(jobcompRec("7", "FAILED", s1, e1), "first"),
				withName(sacctRec("7", "FAILED", s1, e1), "second"),
				withName(jobcompRec("7", "FAILED", s1, e1), "first"),
			},
			check: func(t *testing.T, got slurmext.JobRecord) {
				if got.Name != "second" || got.Source != "sacct" {
					t.Errorf("Name, Source = %q, %q; want second, sacct", got.Name, got.Source)
				}
			},
		},
		{
			name: "jobcomp then sacct: TRES, QOS and eligible filled from sacct",
			puts: []slurmext.JobRecord{jobcompRec("7", "COMPLETED", s2, e2), sacctRec("7", "COMPLETED", s2, e2)},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantFilled(t, got, s2)
			},
		},
		{
			name: "sacct then jobcomp: the same fields",
			puts: []slurmext.JobRecord{sacctRec("7", "COMPLETED", s2, e2), jobcompRec("7", "COMPLETED", s2, e2)},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantFilled(t, got, s2)
			},
		},
		{
			name: "final jobcomp beats running sacct and takes its TRES",
			puts: []slurmext.JobRecord{sacctRec("7", "RUNNING", s2, time.Time{}), jobcompRec("7", "COMPLETED", s2, e2)},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "COMPLETED", s2, e2)
				wantFilled(t, got, s2)
			},
		},
		{
			name: "a record of another run lends no run fields",
			puts: []slurmext.JobRecord{
				func() slurmext.JobRecord {
					r := rec("7", "COMPLETED", s2, e2, "jobcomp")
					return r
				}(),
				preempted,
			},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "COMPLETED", s2, e2)
				if got.NodeList != "" || got.AllocTRES != "" || got.CPUs != 0 {
					t.Errorf("run fields = %q, %q, %d; want none from the earlier run", got.NodeList, got.AllocTRES, got.CPUs)
				}
				// The request is the job's, whichever run.
				if got.ReqTRES == "" || got.User != "alice" || got.QOS != "normal" {
					t.Errorf("job fields = %q, %q, %q; want them from the earlier run's record", got.ReqTRES, got.User, got.QOS)
				}
			},
		},
		{
			name: "reported restarts above the count of starts are kept",
			puts: []slurmext.JobRecord{restarts(sacctRec("7", "COMPLETED", s2, e2), 3), jobcompRec("7", "COMPLETED", s2, e2)},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRestarts(t, got, 3)
			},
		},
		{
			name: "pending without times, then running",
			puts: []slurmext.JobRecord{rec("7", "PENDING", time.Time{}, time.Time{}, "sacct"), running},
			check: func(t *testing.T, got slurmext.JobRecord) {
				wantRun(t, got, "RUNNING", s2, time.Time{})
				wantRestarts(t, got, 0)
			},
		},
	}
	for _, tt := range tests {
		for _, bulk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bulk=%v", tt.name, bulk), func(t *testing.T) {
				ctx := context.Background()
				db := openTest(t, Options{})
				if bulk {
					// All in one call: the first is inserted as a new job,
					// the rest merged in order.
					if _, _, _, err := db.PutSchedJobs(ctx, tt.puts); err != nil {
						t.Fatal(err)
					}
				} else {
					for _, r := range tt.puts {
						if err := db.PutSchedJob(ctx, r); err != nil {
							t.Fatal(err)
						}
					}
				}
				got, err := db.GetSchedJob(ctx, "lab", "7")
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, got)
				if n := countRows(t, db, "sched_jobs"); n != 1 {
					t.Errorf("sched_jobs rows = %d, want 1", n)
				}
			})
		}
	}
}

func wantRun(t *testing.T, got slurmext.JobRecord, state string, start, end time.Time) {
	t.Helper()
	start, end = normTime(start), normTime(end)
	if string(got.State) != state || !got.Start.Equal(start) || !got.End.Equal(end) {
		t.Errorf("state, start, end = %s, %v, %v; want %s, %v, %v", got.State, got.Start, got.End, state, start, end)
	}
}

func wantRestarts(t *testing.T, got slurmext.JobRecord, n int) {
	t.Helper()
	if got.Restarts != n {
		t.Errorf("Restarts = %d, want %d", got.Restarts, n)
	}
}

// wantFilled checks the merge of jobcompRec and sacctRec of the same run.
func wantFilled(t *testing.T, got slurmext.JobRecord, start time.Time) {
	t.Helper()
	want := sacctRec("7", string(got.State), start, got.End)
	want = NormalizeRecord(want)
	if got.ReqTRES != want.ReqTRES || got.AllocTRES != want.AllocTRES || got.ReqGPUs != 4 || got.ReqGPUType != "h100" {
		t.Errorf("TRES = %q, %q, %d %q; want sacct's %q, %q, 4 h100", got.ReqTRES, got.AllocTRES, got.ReqGPUs, got.ReqGPUType, want.ReqTRES, want.AllocTRES)
	}
	if got.QOS != "normal" || !got.Eligible.Equal(want.Eligible) {
		t.Errorf("QOS, Eligible = %q, %v; want normal, %v", got.QOS, got.Eligible, want.Eligible)
	}
	if got.Name != "train" {
		t.Errorf("Name = %q, want jobcomp's train", got.Name)
	}
	if got.User != "alice" || got.UID != 1001 || got.NodeCount != 2 || got.TimeLimit != 4*time.Hour {
		t.Errorf("common fields = %q %d %d %v", got.User, got.UID, got.NodeCount, got.TimeLimit)
	}
}

// rowValues returns every column of the sched_jobs row of id.
func rowValues(t *testing.T, db *DB, id string) []any {
	t.Helper()
	rows, err := db.r.Query(`SELECT * FROM sched_jobs WHERE job_id = ?`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no sched_jobs row for %s", id)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	return vals
}

func totalChanges(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	if err := db.w.QueryRow(`SELECT total_changes()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPutSchedJobIdempotent(t *testing.T) {
	s, e := t0, t0.Add(time.Hour)
	tests := []struct {
		name  string
		first []slurmext.JobRecord // stored before
		again slurmext.JobRecord   // put again: must change nothing
	}{
		{name: "one record", first: []slurmext.JobRecord{fullRec()}, again: fullRec()},
		{name: "the winner of a merge", first: []slurmext.JobRecord{jobcompRec("7", "COMPLETED", s, e), sacctRec("7", "COMPLETED", s, e)}, again: sacctRec("7", "COMPLETED", s, e)},
		{name: "the loser of a merge", first: []slurmext.JobRecord{jobcompRec("7", "COMPLETED", s, e), sacctRec("7", "COMPLETED", s, e)}, again: jobcompRec("7", "COMPLETED", s, e)},
		{name: "a late pending", first: []slurmext.JobRecord{jobcompRec("7", "PENDING", s, s), jobcompRec("7", "COMPLETED", e, e.Add(time.Hour))}, again: jobcompRec("7", "PENDING", s, s)},
		{name: "no times", first: []slurmext.JobRecord{rec("7", "PENDING", time.Time{}, time.Time{}, "sacct")}, again: rec("7", "PENDING", time.Time{}, time.Time{}, "sacct")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			for _, r := range tt.first {
				if err := db.PutSchedJob(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			// Backdate the row so that any rewrite shows in updated_at.
			if _, err := db.w.Exec(`UPDATE sched_jobs SET updated_at = 1`); err != nil {
				t.Fatal(err)
			}
			before := rowValues(t, db, tt.again.JobID)
			events := countRows(t, db, "sched_events")
			changes := totalChanges(t, db)

			if err := db.PutSchedJob(ctx, tt.again); err != nil {
				t.Fatal(err)
			}
			ins, upd, same, err := db.PutSchedJobs(ctx, []slurmext.JobRecord{tt.again, tt.again})
			if err != nil {
				t.Fatal(err)
			}
			if ins != 0 || upd != 0 || same != 2 {
				t.Errorf("PutSchedJobs = %d inserted, %d updated, %d unchanged; want 0, 0, 2", ins, upd, same)
			}
			if got := rowValues(t, db, tt.again.JobID); !reflect.DeepEqual(got, before) {
				t.Errorf("row changed:\n got %v\nwant %v", got, before)
			}
			if n := countRows(t, db, "sched_events"); n != events {
				t.Errorf("sched_events rows = %d, want %d", n, events)
			}
			if n := totalChanges(t, db); n != changes {
				t.Errorf("the puts changed %d rows, want 0", n-changes)
			}
		})
	}
}

func TestPutSchedJobsCounts(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	s, e := t0, t0.Add(time.Hour)
	// More records than one chunk, with a job's reports in different chunks
	// and twice within one.
	var first []slurmext.JobRecord
	for i := range 1300 {
		first = append(first, jobcompRec(fmt.Sprint(i), "COMPLETED", s, e))
	}
	first = append(first, jobcompRec("5", "PENDING", s, s)) // a late report of job 5: loses
	first = append(first, jobcompRec("1200", "COMPLETED", s, e.Add(time.Minute)))
	ins, upd, same, err := db.PutSchedJobs(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if ins != 1300 || upd != 1 || same != 1 {
		t.Errorf("first import = %d, %d, %d; want 1300 inserted, 1 updated, 1 unchanged", ins, upd, same)
	}
	// sacct adds TRES to every job; a report for job 1300 is new.
	var second []slurmext.JobRecord
	for i := range 1301 {
		second = append(second, sacctRec(fmt.Sprint(i), "COMPLETED", s, e))
	}
	ins, upd, same, err = db.PutSchedJobs(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if ins != 1 || upd != 1300 || same != 0 {
		t.Errorf("second import = %d, %d, %d; want 1 inserted, 1300 updated, 0 unchanged", ins, upd, same)
	}
	ins, upd, same, err = db.PutSchedJobs(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if ins != 0 || upd != 0 || same != 1301 {
		t.Errorf("repeated import = %d, %d, %d; want 0, 0, 1301", ins, upd, same)
	}
	if n := countRows(t, db, "sched_jobs"); n != 1301 {
		t.Errorf("sched_jobs rows = %d, want 1301", n)
	}
	if n, want := countReports(t, db), 1300+2+1301; n != want {
		t.Errorf("reports kept = %d, want %d", n, want)
	}
	got, err := db.GetSchedJob(ctx, "lab", "1200")
	if err != nil {
		t.Fatal(err)
	}
	if !got.End.Equal(normTime(e.Add(time.Minute))) || got.ReqTRES == "" {
		t.Errorf("job 1200 = end %v, TRES %q; want the later end and sacct's TRES", got.End, got.ReqTRES)
	}
}

// TestPutSchedJobsFreshMatchesMerge checks that the bulk insert of new jobs
// (no lookup, no report copy) writes exactly what the one-by-one path
// writes.
func TestPutSchedJobsFreshMatchesMerge(t *testing.T) {
	ctx := context.Background()
	unlimited := fullRec()
	unlimited.JobID, unlimited.Unlimited = "2", true
	noTimes := rec("3", "PENDING", time.Time{}, time.Time{}, "sacct")
	noTimes.TimeLimit = -time.Second // nonsense stays unknown
	var rs []slurmext.JobRecord
	rs = append(rs, fullRec(), unlimited, noTimes)
	for i := range 40 {
		rs = append(rs, sacctRec(fmt.Sprint(100+i), "COMPLETED", t0, t0.Add(time.Duration(i)*time.Minute)))
	}
	one := openTest(t, Options{})
	for _, r := range rs {
		if err := one.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	bulk := openTest(t, Options{})
	if ins, _, _, err := bulk.PutSchedJobs(ctx, rs); err != nil || ins != len(rs) {
		t.Fatalf("PutSchedJobs = %d inserted, %v; want %d", ins, err, len(rs))
	}
	for _, q := range []struct {
		sql  string
		rows int
	}{
		{sql: `SELECT * FROM sched_jobs ORDER BY cluster, job_id`, rows: len(rs)},
		// Each row is its job's one report: nothing to copy.
		{sql: `SELECT * FROM sched_events ORDER BY cluster, job_id, seq`, rows: 0},
	} {
		a, b := dumpRows(t, one, q.sql), dumpRows(t, bulk, q.sql)
		if len(a) != q.rows {
			t.Errorf("%s: %d rows, want %d", q.sql, len(a), q.rows)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\none by one %v\n      bulk %v", q.sql, a, b)
		}
	}
	for _, r := range rs {
		got, err := bulk.SchedReports(ctx, r.Cluster, r.JobID)
		if err != nil || len(got) != 1 || got[0] != NormalizeRecord(r) {
			t.Errorf("SchedReports(%s) = %+v, %v; want the one report", r.JobID, got, err)
		}
	}
}

// countReports is the number of reports kept: those in sched_events and
// the rows that are their job's only report.
func countReports(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	err := db.r.QueryRow(`SELECT (SELECT count(*) FROM sched_events) + (SELECT count(*) FROM sched_jobs s
		WHERE NOT EXISTS (SELECT 1 FROM sched_events e WHERE e.cluster = s.cluster AND e.job_id = s.job_id))`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dumpRows returns the rows of q with the columns that hold the time of
// writing (updated_at, reported_at) left out.
func dumpRows(t *testing.T, db *DB, q string) []map[string]any {
	t.Helper()
	rows, err := db.r.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, c := range cols {
			if c != "updated_at" && c != "reported_at" {
				if b, ok := vals[i].([]byte); ok {
					vals[i] = string(b)
				}
				m[c] = vals[i]
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportMark(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	if got, err := db.GetImportMark(ctx, "lab", "sacct"); err != nil || !got.IsZero() {
		t.Fatalf("GetImportMark before any = %v, %v; want zero, nil", got, err)
	}
	mark := t0.Add(time.Hour)
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(tx *Tx) error {
		if _, _, _, err := tx.PutSchedJobs(ctx, []slurmext.JobRecord{sacctRec("1", "COMPLETED", t0, mark)}); err != nil {
			return err
		}
		if err := tx.SetImportMark(ctx, "lab", "sacct", mark); err != nil {
			return err
		}
		return boom // the import fails after the batch: neither stays
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got, _ := db.GetImportMark(ctx, "lab", "sacct"); !got.IsZero() {
		t.Errorf("mark after rollback = %v, want zero", got)
	}
	if n := countRows(t, db, "sched_jobs"); n != 0 {
		t.Errorf("records after rollback = %d, want 0", n)
	}

	err = db.WithTx(ctx, func(tx *Tx) error {
		if _, _, _, err := tx.PutSchedJobs(ctx, []slurmext.JobRecord{sacctRec("1", "COMPLETED", t0, mark)}); err != nil {
			return err
		}
		return tx.SetImportMark(ctx, "lab", "sacct", mark)
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cluster, source string
		want                  time.Time
	}{
		{name: "set", cluster: "lab", source: "sacct", want: normTime(mark)},
		{name: "other source", cluster: "lab", source: "jobcomp"},
		{name: "other cluster", cluster: "hpc", source: "sacct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.GetImportMark(ctx, tt.cluster, tt.source)
			if err != nil || !got.Equal(tt.want) {
				t.Errorf("GetImportMark(%s, %s) = %v, %v; want %v", tt.cluster, tt.source, got, err, tt.want)
			}
		})
	}
	if err := db.SetImportMark(ctx, "lab", "sacct", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.GetImportMark(ctx, "lab", "sacct"); !got.IsZero() {
		t.Errorf("mark after clearing = %v, want zero", got)
	}
}

func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	old := openAtVersion(t, path, 1)
	j := richJob("7", t0, 20, true)
	putLegacyJob(t, old, j)
	var version int
	if err := old.r.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 1 {
		t.Fatalf("old database at version %d, %v; want 1", version, err)
	}
	if err := old.PutSchedJob(ctx, sacctRec("7", "COMPLETED", t0, t0.Add(time.Hour))); err == nil {
		t.Fatalf("PutSchedJob on a version 1 database worked; the fixture is not version 1")
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.r.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion {
		t.Errorf("migrated database at version %d, %v; want %d", version, err, SchemaVersion)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil || !reflect.DeepEqual(got, Normalize(j)) {
		t.Errorf("profile after migration = %+v, %v; want it unchanged", got.Key, err)
	}
	// The profile is a job of its own, without scheduler record yet.
	if v, err := db.getView(ctx, "lab", "7"); err != nil || v.Sched != nil || len(v.Profiles) != 1 {
		t.Errorf("GetView before jobcomp = %+v, %v; want the profile alone", v, err)
	}
	r := sacctRec("7", "COMPLETED", t0, t0.Add(time.Hour))
	if err := db.PutSchedJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	v, err := db.getView(ctx, "lab", "7")
	if err != nil || v.Sched == nil || *v.Sched != NormalizeRecord(r) || len(v.Profiles) != 1 {
		t.Errorf("GetView after jobcomp = %+v, %v; want record and profile", v, err)
	}
	// 0002 widened jobs_start.
	var cols int
	if err := db.r.QueryRow(`SELECT count(*) FROM pragma_index_info('jobs_start')`).Scan(&cols); err != nil || cols != 3 {
		t.Errorf("jobs_start has %d columns, %v; want 3", cols, err)
	}
}

// importBatch returns n sacct records of new jobs, numbered from first.
func importBatch(first, n int) []slurmext.JobRecord {
	rs := make([]slurmext.JobRecord, n)
	for i := range rs {
		id := first + i
		start := t0.Add(time.Duration(id) * 30 * time.Second)
		rs[i] = sacctRec(fmt.Sprint(id), "COMPLETED", start, start.Add(time.Duration(id%97+1)*time.Minute))
		rs[i].Name = "train"
	}
	return rs
}

// cpuTime is the process's user and system time: on a shared machine it
// says more about the cost of an import than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPutSchedJobs imports batches of 10,000 new jobs (the bulk path
// of sacct imports) into a growing database and reports records/s, by
// the wall clock and by CPU time: go test ./store -run '^$' -bench PutSchedJobs.
func BenchmarkPutSchedJobs(b *testing.B) {
	ctx := context.Background()
	const batch = 10_000
	for _, bb := range []struct {
		name string
		// again re-imports the batch just stored: every record unchanged.
		again bool
	}{
		{name: "new jobs"},
		{name: "unchanged", again: true},
	} {
		b.Run(bb.name, func(b *testing.B) {
			db := openTest(b, Options{})
			var wall, cpu time.Duration
			records, next := 0, 0
			for b.Loop() {
				rs := importBatch(next, batch)
				next += batch
				if bb.again {
					b.StopTimer()
					if _, _, _, err := db.PutSchedJobs(ctx, rs); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				w0, c0 := time.Now(), cpuTime()
				ins, _, same, err := db.PutSchedJobs(ctx, rs)
				wall, cpu = wall+time.Since(w0), cpu+cpuTime()-c0
				if err != nil {
					b.Fatal(err)
				}
				if done := ins + same; done != batch || (bb.again && same != batch) {
					b.Fatalf("PutSchedJobs = %d inserted, %d unchanged; want %d", ins, same, batch)
				}
				records += batch
			}
			b.ReportMetric(float64(records)/wall.Seconds(), "records/s")
			b.ReportMetric(float64(records)/cpu.Seconds(), "records/cpu-s")
		})
	}
}

// A later report without an exit code (sacct text in a narrower layout)
// keeps the exit code an earlier one gave; alone, its exit stays unknown.
func TestExitUnknownKeepsExitCode(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	full := sacctRec("30", "FAILED", t0, t0.Add(time.Hour))
	full.ExitStatus = 3
	narrow := full
	narrow.ExitStatus, narrow.ExitUnknown = 0, true
	narrow.QOS = "" // a layout without QOS either
	for _, r := range []slurmext.JobRecord{full, narrow} {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.GetSchedJob(ctx, full.Cluster, "30")
	if err != nil {
		t.Fatal(err)
	}
	if got.ExitStatus != 3 || got.ExitUnknown {
		t.Errorf("exit %d (unknown %v), want 3 from the fuller report", got.ExitStatus, got.ExitUnknown)
	}
	narrow.JobID = "31"
	if err := db.PutSchedJob(ctx, narrow); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetSchedJob(ctx, full.Cluster, "31"); err != nil || !got.ExitUnknown {
		t.Errorf("a job reported only without an exit code: %+v, %v; want the exit unknown", got, err)
	}
}

// usageRec is a sacct import with steps: the job's CPU time, memory peak
// and request (slurmext.HostUsage).
func usageRec(id string, start, end time.Time) slurmext.JobRecord {
	r := sacctRec(id, "COMPLETED", start, end)
	r.Usage = slurmext.HostUsage{
		TotalCPU: 2*24*time.Hour + 10*time.Minute + 384*time.Millisecond + 700*time.Microsecond, TotalCPUValid: true,
		MemPeak: 12<<30 + 400<<20, MemPeakValid: true,
		ReqMem: 64 << 30, ReqMemValid: true,
	}
	return r
}

// The accounting is stored in its columns (NULL when unknown, never 0) and
// read back by the job's record and its view.
func TestSchedUsageColumns(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	start := t0.Add(time.Hour)
	withUsage := usageRec("10", start, start.Add(19*time.Hour))
	without := sacctRec("11", "COMPLETED", start, start.Add(time.Hour))
	onlyReq := sacctRec("12", "COMPLETED", start, start.Add(time.Hour))
	onlyReq.Usage.ReqMem, onlyReq.Usage.ReqMemValid = 1<<30, true
	onlyReq.Usage.TotalCPU = time.Hour // not valid: must not be stored
	for _, r := range []slurmext.JobRecord{withUsage, without, onlyReq} {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		totalCPU     sql.NullFloat64
		memPeak, req sql.NullInt64
	}
	tests := []struct {
		id   string
		want row
	}{
		{"10", row{sql.NullFloat64{Float64: 2*86400 + 600.384, Valid: true}, sql.NullInt64{Int64: 12<<30 + 400<<20, Valid: true}, sql.NullInt64{Int64: 64 << 30, Valid: true}}},
		{"11", row{}},
		{"12", row{req: sql.NullInt64{Int64: 1 << 30, Valid: true}}},
	}
	for _, tt := range tests {
		var got row
		err := db.r.QueryRow(`SELECT total_cpu, host_mem_peak, req_mem FROM sched_jobs WHERE job_id = ?`, tt.id).
			Scan(&got.totalCPU, &got.memPeak, &got.req)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("job %s: columns %+v, want %+v", tt.id, got, tt.want)
		}
	}
	for _, r := range []slurmext.JobRecord{withUsage, without, onlyReq} {
		got, err := db.GetSchedJob(ctx, r.Cluster, r.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if want := NormalizeRecord(r); got != want {
			t.Errorf("GetSchedJob %s:\n got %+v\nwant %+v", r.JobID, got.Usage, want.Usage)
		}
		v, err := db.getView(ctx, r.Cluster, r.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Sched == nil || v.Sched.Usage != NormalizeRecord(r).Usage {
			t.Errorf("GetView %s: Sched %+v, want usage %+v", r.JobID, v.Sched, NormalizeRecord(r).Usage)
		}
	}
	if got := NormalizeRecord(withUsage).Usage.TotalCPU; got != 2*24*time.Hour+10*time.Minute+384*time.Millisecond {
		t.Errorf("TotalCPU kept as %v, want it cut to sacct's milliseconds", got)
	}
}

// A report without accounting (jobcomp at the end of the run, a later
// sacct -X import) keeps what an import with steps gave; a new run of a
// requeued job does not inherit the old run's.
func TestSchedUsageMerge(t *testing.T) {
	ctx := context.Background()
	start, end := t0.Add(time.Hour), t0.Add(20*time.Hour)
	withUsage := usageRec("20", start, end)
	noUsage := jobcompRec("20", "COMPLETED", start, end)
	xOnly := sacctRec("20", "COMPLETED", start, end)
	xOnly.Usage.ReqMem, xOnly.Usage.ReqMemValid = 64<<30, true
	for name, order := range map[string][]slurmext.JobRecord{
		"import first":   {withUsage, noUsage, xOnly},
		"jobcomp first":  {noUsage, withUsage, xOnly},
		"sacct -X first": {xOnly, noUsage, withUsage},
	} {
		t.Run(name, func(t *testing.T) {
			db := openTest(t, Options{})
			for _, r := range order {
				if err := db.PutSchedJob(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.GetSchedJob(ctx, "lab", "20")
			if err != nil {
				t.Fatal(err)
			}
			if want := NormalizeRecord(withUsage).Usage; got.Usage != want {
				t.Errorf("usage %+v, want %+v", got.Usage, want)
			}
		})
	}
	t.Run("requeued", func(t *testing.T) {
		db := openTest(t, Options{})
		if err := db.PutSchedJob(ctx, usageRec("21", start, end)); err != nil {
			t.Fatal(err)
		}
		again := jobcompRec("21", "COMPLETED", end.Add(time.Hour), end.Add(2*time.Hour))
		if err := db.PutSchedJob(ctx, again); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetSchedJob(ctx, "lab", "21")
		if err != nil {
			t.Fatal(err)
		}
		if got.Usage.TotalCPUValid || got.Usage.MemPeakValid {
			t.Errorf("the new run took the old run's accounting: %+v", got.Usage)
		}
		if !got.Usage.ReqMemValid {
			t.Errorf("the request was lost: %+v", got.Usage)
		}
	})
}

// Real sacct output (slurmext/testdata/real, 22.05.8) through the reader
// into the store: the jobs' CPU time and memory as Slurm measured them.
func TestSchedUsageFromRealSacct(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	f, err := os.Open(filepath.Join("..", "slurmext", "testdata", "real", "22.05-own-P-epoch-usage.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sacct.NewReader(f, nil, sacct.Options{})
	var rs []slurmext.JobRecord
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, rec)
	}
	if _, _, _, err := db.PutSchedJobs(ctx, rs); err != nil {
		t.Fatal(err)
	}
	var total float64
	var peak, req sql.NullInt64
	var cpus int
	var el int64
	err = db.r.QueryRow(`SELECT total_cpu, "end" - "start", cpus FROM sched_jobs WHERE job_id = '1'`).Scan(&total, &el, &cpus)
	if err != nil {
		t.Fatal(err)
	}
	// Job "burn": 2 tasks of 10 s CPU each, 17 s on 2 CPUs.
	if total != 19.383 || el != 17 || cpus != 2 {
		t.Errorf("job 1: total_cpu %v, elapsed %d s, %d CPUs; want 19.383, 17, 2", total, el, cpus)
	}
	if err := db.r.QueryRow(`SELECT host_mem_peak, req_mem FROM sched_jobs WHERE job_id = '2'`).Scan(&peak, &req); err != nil {
		t.Fatal(err)
	}
	if peak.Int64 != 315292<<10 || req.Int64 != 512<<20 {
		t.Errorf("job 2: host_mem_peak %v, req_mem %v; want 315292K of 512M", peak, req)
	}
	v, err := db.getView(ctx, "gpuproftest", "1")
	if err != nil {
		t.Fatal(err)
	}
	el2, _ := v.Sched.Elapsed()
	if eff, ok := v.Sched.Usage.CPUEfficiency(el2, v.Sched.CPUs); !ok || eff < 0.56 || eff > 0.58 {
		t.Errorf("job 1 CPU efficiency %v, %v; want 19.383 / (17 × 2) = 0.57", eff, ok)
	}
}

// TestStateReadThroughParse: a state is read, from a report and from the
// column, through slurmext.ParseState; text it does not parse stays as it
// is, an unknown state.
func TestStateReadThroughParse(t *testing.T) {
	for _, tt := range []struct {
		name, put, column string
		want              slurmext.JobState
	}{
		{name: "canonical", put: "TIMEOUT", column: "TIMEOUT", want: slurmext.StateTimeout},
		{name: "cancelled by a uid", put: "CANCELLED by 0", column: "CANCELLED by 1000", want: slurmext.StateCancelled},
		{name: "lower case", put: "deadline", column: "deadline", want: slurmext.StateDeadline},
		{name: "unknown kept", put: "EXPLODED", column: "EXPLODED", want: "EXPLODED"},
		{name: "empty", put: "", column: "", want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			r := rec("7", tt.put, t0, t0.Add(time.Hour), "sacct")
			if err := db.PutSchedJob(ctx, r); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetSchedJob(ctx, "lab", "7")
			if err != nil {
				t.Fatal(err)
			}
			if put := NormalizeRecord(r).State; got.State != tt.want || put != tt.want {
				t.Errorf("put %q: got %q, NormalizeRecord %q, want %q", tt.put, got.State, put, tt.want)
			}
			if _, err := db.w.Exec(`UPDATE sched_jobs SET state = ?`, tt.column); err != nil {
				t.Fatal(err)
			}
			if got, err = db.GetSchedJob(ctx, "lab", "7"); err != nil || got.State != tt.want {
				t.Errorf("column %q: got %q, %v; want %q", tt.column, got.State, err, tt.want)
			}
		})
	}
}

// TestPutSchedJobsCancelled: the rows' statements run with a context that
// cannot be cancelled (see schedWriter.exec), so cancellation is checked
// between rows: a bulk put cancelled on its way stops with
// context.Canceled, and its transaction stores nothing.
func TestPutSchedJobsCancelled(t *testing.T) {
	db := openTest(t, Options{})
	s, e := t0, t0.Add(time.Hour)
	var recs []slurmext.JobRecord
	for i := range 600 {
		recs = append(recs, jobcompRec(fmt.Sprint(i), "COMPLETED", s, e))
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := db.WithTx(ctx, func(tx *Tx) error {
		// The first chunk goes in, then the put is cancelled.
		if _, _, _, err := tx.PutSchedJobs(ctx, recs[:schedChunk]); err != nil {
			return err
		}
		cancel()
		_, _, _, err := tx.PutSchedJobs(ctx, recs[schedChunk:])
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := db.GetSchedJob(context.Background(), "lab", "0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("job 0 after the cancelled transaction: err %v, want ErrNotFound (nothing stored)", err)
	}
}
