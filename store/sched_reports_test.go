package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// putAll stores rs one by one or in one PutSchedJobs call.
func putAll(t *testing.T, db *DB, bulk bool, rs ...slurmext.JobRecord) {
	t.Helper()
	ctx := context.Background()
	if bulk {
		if _, _, _, err := db.PutSchedJobs(ctx, rs); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, r := range rs {
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

// A job's first report lives in its row until a second one comes; every
// report must still come back, each as it was first reported.
func TestSchedReports(t *testing.T) {
	s, e := t0, t0.Add(time.Hour)
	renamed := func(r slurmext.JobRecord, name string) slurmext.JobRecord { r.Name = name; return r }
	jc, sa := jobcompRec("7", "COMPLETED", s, e), sacctRec("7", "COMPLETED", s, e)
	pending := jobcompRec("7", "PENDING", s, s)
	tests := []struct {
		name   string
		puts   []slurmext.JobRecord
		want   []slurmext.JobRecord // the reports, in order of first arrival
		events int                  // rows of sched_events
	}{
		{name: "one report: the row alone", puts: []slurmext.JobRecord{jc}, want: []slurmext.JobRecord{jc}},
		{name: "the same report twice", puts: []slurmext.JobRecord{jc, jc}, want: []slurmext.JobRecord{jc}},
		{name: "a second report writes the first out", puts: []slurmext.JobRecord{jc, sa}, want: []slurmext.JobRecord{jc, sa}, events: 2},
		{name: "a losing second report is kept too", puts: []slurmext.JobRecord{jc, pending}, want: []slurmext.JobRecord{jc, pending}, events: 2},
		{
			// The same key with another name changes the row: the first
			// report must not become the new one.
			name: "the same report with other fields", puts: []slurmext.JobRecord{jc, renamed(jc, "again")},
			want: []slurmext.JobRecord{jc}, events: 1,
		},
		{name: "three reports", puts: []slurmext.JobRecord{pending, jc, sa, jc}, want: []slurmext.JobRecord{pending, jc, sa}, events: 3},
	}
	for _, tt := range tests {
		for _, bulk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bulk=%v", tt.name, bulk), func(t *testing.T) {
				ctx := context.Background()
				db := openTest(t, Options{})
				putAll(t, db, bulk, tt.puts...)
				got, err := db.SchedReports(ctx, "lab", "7")
				if err != nil {
					t.Fatal(err)
				}
				var want []slurmext.JobRecord
				for _, r := range tt.want {
					want = append(want, NormalizeRecord(r))
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("SchedReports:\n got %+v\nwant %+v", got, want)
				}
				if n := countRows(t, db, "sched_events"); n != tt.events {
					t.Errorf("sched_events rows = %d, want %d", n, tt.events)
				}
			})
		}
	}
	t.Run("unknown job", func(t *testing.T) {
		db := openTest(t, Options{})
		if _, err := db.SchedReports(context.Background(), "lab", "404"); !errors.Is(err, ErrNotFound) {
			t.Errorf("SchedReports = %v, want ErrNotFound", err)
		}
	})
}

// The merge must come out the same whether a job's first report was
// written out or stood in its row: every merge rule test, with each job's
// first report put on its own first (the row-only state) and then the rest.
func TestSchedMergeAfterRowOnlyReport(t *testing.T) {
	ctx := context.Background()
	h := time.Hour
	s1, e1, s2, e2 := t0, t0.Add(10*time.Minute), t0.Add(h), t0.Add(3*h)
	seqs := [][]slurmext.JobRecord{
		{jobcompRec("7", "PENDING", s1, e1), jobcompRec("7", "COMPLETED", s2, e2)},
		{jobcompRec("7", "COMPLETED", s2, e2), sacctRec("7", "RUNNING", s2, time.Time{}), sacctRec("7", "PREEMPTED", s1, e1), jobcompRec("7", "PENDING", s1, e1)},
		{sacctRec("7", "PREEMPTED", s1, e1), sacctRec("7", "RUNNING", s2, time.Time{})},
	}
	for i, puts := range seqs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			// reference: every report written (each put in a database
			// that already had a report of the job written out).
			ref := openTest(t, Options{})
			putAll(t, ref, false, puts...)
			lazy := openTest(t, Options{})
			putAll(t, lazy, true, puts[0])
			putAll(t, lazy, true, puts[1:]...)
			a, err := ref.GetSchedJob(ctx, "lab", "7")
			if err != nil {
				t.Fatal(err)
			}
			b, err := lazy.GetSchedJob(ctx, "lab", "7")
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("merged:\none by one %+v\n  bulk    %+v", a, b)
			}
			ra, _ := ref.SchedReports(ctx, "lab", "7")
			rb, _ := lazy.SchedReports(ctx, "lab", "7")
			if !reflect.DeepEqual(ra, rb) || len(ra) != len(puts) {
				t.Errorf("reports: %d and %d, want %d, equal", len(ra), len(rb), len(puts))
			}
		})
	}
}

// withGPU is r with Slurm's GPU readings.
func withGPU(r slurmext.JobRecord, mem uint64, util float64) slurmext.JobRecord {
	r.SlurmGPUMem, r.SlurmGPUMemValid = mem, true
	r.SlurmGPUUtil, r.SlurmGPUUtilValid = util, true
	return r
}

func TestSlurmGPUReadings(t *testing.T) {
	s, e := t0, t0.Add(time.Hour)
	s2, e2 := e.Add(time.Hour), e.Add(2*time.Hour)
	sa := withGPU(sacctRec("7", "COMPLETED", s, e), 38<<30, 87.5)
	memOnly := sacctRec("7", "COMPLETED", s, e)
	memOnly.SlurmGPUMem, memOnly.SlurmGPUMemValid = 0, true // a recorded zero is a reading
	tests := []struct {
		name string
		puts []slurmext.JobRecord
		// want: the readings the merged record has
		mem    uint64
		memOK  bool
		util   float64
		utilOK bool
	}{
		{name: "recorded", puts: []slurmext.JobRecord{sa}, mem: 38 << 30, memOK: true, util: 87.5, utilOK: true},
		{name: "not recorded: not valid", puts: []slurmext.JobRecord{sacctRec("7", "COMPLETED", s, e)}},
		{name: "a zero reading stays a reading", puts: []slurmext.JobRecord{memOnly}, memOK: true},
		{
			name: "a later record without them does not erase them",
			puts: []slurmext.JobRecord{sa, jobcompRec("7", "COMPLETED", s, e)},
			mem:  38 << 30, memOK: true, util: 87.5, utilOK: true,
		},
		{
			name: "an earlier record without them takes them",
			puts: []slurmext.JobRecord{jobcompRec("7", "COMPLETED", s, e), sa},
			mem:  38 << 30, memOK: true, util: 87.5, utilOK: true,
		},
		{
			name: "the later run's record wins and its readings with it",
			puts: []slurmext.JobRecord{sa, withGPU(sacctRec("7", "COMPLETED", s2, e2), 1<<30, 10)},
			mem:  1 << 30, memOK: true, util: 10, utilOK: true,
		},
		{
			name: "a requeued run does not inherit the earlier run's readings",
			puts: []slurmext.JobRecord{sa, sacctRec("7", "COMPLETED", s2, e2)},
		},
	}
	for _, tt := range tests {
		for _, bulk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bulk=%v", tt.name, bulk), func(t *testing.T) {
				ctx := context.Background()
				db := openTest(t, Options{})
				putAll(t, db, bulk, tt.puts...)
				got, err := db.GetSchedJob(ctx, "lab", "7")
				if err != nil {
					t.Fatal(err)
				}
				if got.SlurmGPUMem != tt.mem || got.SlurmGPUMemValid != tt.memOK ||
					got.SlurmGPUUtil != tt.util || got.SlurmGPUUtilValid != tt.utilOK {
					t.Errorf("readings = %d %v, %v %v; want %d %v, %v %v",
						got.SlurmGPUMem, got.SlurmGPUMemValid, got.SlurmGPUUtil, got.SlurmGPUUtilValid,
						tt.mem, tt.memOK, tt.util, tt.utilOK)
				}
				// Not recorded is NULL in the database, never 0.
				var mem sql.NullInt64
				var util sql.NullFloat64
				if err := db.r.QueryRow(`SELECT slurm_gpu_mem, slurm_gpu_util FROM sched_jobs WHERE job_id = '7'`).Scan(&mem, &util); err != nil {
					t.Fatal(err)
				}
				if mem.Valid != tt.memOK || util.Valid != tt.utilOK {
					t.Errorf("columns NULL = %v, %v; want %v, %v", !mem.Valid, !util.Valid, !tt.memOK, !tt.utilOK)
				}
			})
		}
	}
}

func TestSlurmGPUReadingsInvalid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *slurmext.JobRecord)
	}{
		{name: "memory beyond int64", mutate: func(r *slurmext.JobRecord) { r.SlurmGPUMem = math.MaxUint64 - 1 }},
		{name: "utilisation NaN", mutate: func(r *slurmext.JobRecord) { r.SlurmGPUUtil = math.NaN() }},
		{name: "utilisation infinite", mutate: func(r *slurmext.JobRecord) { r.SlurmGPUUtil = math.Inf(1) }},
		{name: "utilisation negative", mutate: func(r *slurmext.JobRecord) { r.SlurmGPUUtil = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			r := withGPU(sacctRec("7", "COMPLETED", t0, t0.Add(time.Hour)), 1<<30, 50)
			tt.mutate(&r)
			if err := db.PutSchedJob(ctx, r); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutSchedJob = %v, want ErrInvalid", err)
			}
			if _, _, _, err := db.PutSchedJobs(ctx, []slurmext.JobRecord{r}); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutSchedJobs = %v, want ErrInvalid", err)
			}
			// The same values marked not valid are no readings at all.
			r.SlurmGPUMemValid, r.SlurmGPUUtilValid = false, false
			if err := db.PutSchedJob(ctx, r); err != nil {
				t.Errorf("PutSchedJob without valid readings = %v", err)
			}
		})
	}
}

// A version 2 database (every report in sched_events, no reading columns)
// migrates with its jobs intact, readings unknown, and merges as before.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	old := openAtVersion(t, path, 2)
	r := sacctRec("7", "COMPLETED", t0, t0.Add(time.Hour))
	n := NormalizeRecord(r)
	// What a version 2 gpuprof wrote for one report: the row and the event.
	if _, err := old.w.Exec(`INSERT INTO sched_jobs (cluster, job_id, display_id, array_task_id, het_offset, "user", uid,
		account, "partition", qos, state, cancelled_by, submit, eligible, "start", "end", time_limit, node_list, node_count,
		cpus, req_gpus, req_gpu_type, req_tres, alloc_tres, source, event_seq, updated_at)
		VALUES ('lab', '7', '7', -1, -1, 'alice', 1001, 'vision', 'gpu', 'normal', 'COMPLETED', -1, ?, ?, ?, ?, 14400,
		'gpu[01-02]', 2, 16, 4, 'h100', ?, ?, 'sacct', 1, 1)`,
		n.Submit.Unix(), n.Eligible.Unix(), n.Start.Unix(), n.End.Unix(), r.ReqTRES, r.AllocTRES); err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.Exec(`INSERT INTO sched_events (cluster, job_id, state, "start", "end", source, seq, reported_at, payload)
		VALUES ('lab', '7', 'COMPLETED', ?, ?, 'sacct', 1, 1, '{}')`, n.Start.Unix(), n.End.Unix()); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.GetSchedJob(ctx, "lab", "7")
	if err != nil {
		t.Fatal(err)
	}
	if got != n || got.SlurmGPUMemValid || got.SlurmGPUUtilValid {
		t.Errorf("after migration:\n got %+v\nwant %+v, readings unknown", got, n)
	}
	// The same report again is known from its event; a jobcomp report is a
	// second one.
	if ins, upd, same, err := db.PutSchedJobs(ctx, []slurmext.JobRecord{r}); err != nil || ins+upd != 0 || same != 1 {
		t.Errorf("re-import = %d, %d, %d, %v; want unchanged", ins, upd, same, err)
	}
	if err := db.PutSchedJob(ctx, withGPU(jobcompRec("7", "COMPLETED", t0, t0.Add(time.Hour)), 1<<30, 5)); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, "sched_events"); n != 2 {
		t.Errorf("sched_events rows = %d, want 2", n)
	}
	var indexes []string
	rows, err := db.r.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sched_jobs' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, name)
	}
	want := []string{"sched_jobs_account", "sched_jobs_array", "sched_jobs_het", "sched_jobs_partition", "sched_jobs_state",
		"sched_jobs_uid", "sched_jobs_user", "sched_jobs_when"}
	if !reflect.DeepEqual(indexes, want) {
		t.Errorf("indexes = %v, want %v", indexes, want)
	}
}

// Lookups by Slurm's job id ("53_1") use the display id index.
func TestJobIDIndexesUsed(t *testing.T) {
	db := openTest(t, Options{})
	for q, want := range map[string]string{
		// ViewFilter.Job's queries (schedConds): an array task, a het
		// component, and a plain id that may be an array's or a het job's.
		`SELECT job_id FROM sched_jobs s WHERE s.array_job_id = '53' AND s.array_task_id = 1`:                     "sched_jobs_array",
		`SELECT job_id FROM sched_jobs s WHERE s.het_job_id = '60' AND s.het_offset = 1`:                          "sched_jobs_het",
		`SELECT job_id FROM sched_jobs s WHERE (s.job_id = '53' OR s.array_job_id = '53' OR s.het_job_id = '53')`: "sched_jobs_array",
	} {
		var plan string
		rows, err := db.r.Query(`EXPLAIN QUERY PLAN ` + q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan += detail + "; "
		}
		rows.Close()
		if !strings.Contains(plan, "INDEX "+want) || strings.Contains(plan, "SCAN s;") {
			t.Errorf("%s: plan %q, want %s and no scan", q, plan, want)
		}
	}
}

// A bulk put raises the writer's page cache and checkpoint interval (see
// bulkSettings); a single put leaves SQLite's defaults.
func TestBulkSettings(t *testing.T) {
	ctx := context.Background()
	settings := func(db *DB) (cache, checkpoint int64) {
		t.Helper()
		if err := db.w.QueryRow(`PRAGMA cache_size`).Scan(&cache); err != nil {
			t.Fatal(err)
		}
		if err := db.w.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&checkpoint); err != nil {
			t.Fatal(err)
		}
		return cache, checkpoint
	}
	db := openTest(t, Options{})
	if err := db.PutSchedJob(ctx, sacctRec("1", "COMPLETED", t0, t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if c, p := settings(db); c != -2000 || p != 1000 {
		t.Errorf("after one put: cache_size %d, wal_autocheckpoint %d; want SQLite's -2000, 1000", c, p)
	}
	if _, _, _, err := db.PutSchedJobs(ctx, importBatch(10, schedChunk)); err != nil {
		t.Fatal(err)
	}
	if c, p := settings(db); c != -bulkCacheKiB || p != bulkCheckpointPages {
		t.Errorf("after a bulk put: cache_size %d, wal_autocheckpoint %d; want %d, %d", c, p, -bulkCacheKiB, bulkCheckpointPages)
	}
}
