package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		samples  int
		finished bool
	}{
		{name: "running", samples: 40, finished: false},
		{name: "finished", samples: 40, finished: true},
		{name: "finished, coarsened series", samples: 3000, finished: true},
		{name: "no readings", samples: 0, finished: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			j := richJob("42", t0, tt.samples, tt.finished)
			if err := db.PutJob(ctx, j); err != nil {
				t.Fatalf("PutJob: %v", err)
			}
			got, err := db.GetJob(ctx, j.Key)
			if err != nil {
				t.Fatalf("GetJob: %v", err)
			}
			want := Normalize(j)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("GetJob:\n got %+v\nwant %+v", got, want)
			}
			// The loss is explicit: whole seconds, UTC.
			if got.Start.Equal(j.Start) || !got.Start.Equal(j.Start.Truncate(time.Second)) || got.Start.Location() != time.UTC {
				t.Errorf("Start = %v, want %v truncated to seconds in UTC", got.Start, j.Start)
			}
			if got.SampleInterval != time.Second {
				t.Errorf("SampleInterval = %v, want 1s", got.SampleInterval)
			}
			if tt.samples > 0 && len(got.GPUs[0].Series.Points) == 0 {
				t.Errorf("series points lost")
			}
		})
	}
}

func TestNormalizeDoesNotModifyInput(t *testing.T) {
	j := richJob("1", t0, 10, true)
	x0 := j.GPUs[0].XIDs[0].Time
	_ = Normalize(j)
	if !j.GPUs[0].XIDs[0].Time.Equal(x0) || j.GPUs[0].XIDs[0].Time.Nanosecond() == 0 {
		t.Errorf("Normalize changed the caller's XID time: got %v, want %v", j.GPUs[0].XIDs[0].Time, x0)
	}
}

func TestSummaryColumns(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("7", t0, 200, true)
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	type row struct {
		samples                    int
		utilMean, idle, energy     sql.NullFloat64
		p50, p95, umax, mem, tempC sql.NullInt64
		xids                       int
		idleAlloc                  bool
	}
	read := func(uuid string) row {
		var r row
		err := db.r.QueryRow(`SELECT samples, util_mean, idle_fraction, energy_j, util_p50, util_p95, util_max,
			mem_peak, max_temp_c, xid_count, idle_allocation FROM job_gpus WHERE uuid = ?`, uuid).
			Scan(&r.samples, &r.utilMean, &r.idle, &r.energy, &r.p50, &r.p95, &r.umax, &r.mem, &r.tempC, &r.xids, &r.idleAlloc)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	g := &j.GPUs[0]
	mean, _ := g.UtilMean()
	p50, _ := g.UtilPercentile(50)
	p95, _ := g.UtilPercentile(95)
	idle, _ := g.IdleFraction()
	want := row{
		samples:  g.Samples,
		utilMean: sql.NullFloat64{Float64: mean, Valid: true},
		idle:     sql.NullFloat64{Float64: idle, Valid: true},
		energy:   sql.NullFloat64{Float64: g.EnergyJ, Valid: true},
		p50:      sql.NullInt64{Int64: int64(p50), Valid: true},
		p95:      sql.NullInt64{Int64: int64(p95), Valid: true},
		umax:     sql.NullInt64{Int64: int64(g.UtilMax), Valid: true},
		mem:      sql.NullInt64{Int64: int64(g.MemPeak), Valid: true},
		tempC:    sql.NullInt64{Int64: int64(g.MaxTempC), Valid: true},
		xids:     2,
	}
	if got := read(g.UUID); got != want {
		t.Errorf("busy GPU summary:\n got %+v\nwant %+v", got, want)
	}
	// The untouched GPU has nothing measured: NULL, not zero. Without a
	// single reading it is not called an idle allocation either (profile's
	// rule: no evidence, no accusation).
	if got, want := read(j.GPUs[1].UUID), (row{}); got != want {
		t.Errorf("idle GPU summary:\n got %+v\nwant %+v", got, want)
	}
}

func TestPutJobReplacesGPUs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 10, false)
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	j.GPUs = []profile.GPU{profile.NewGPU(gpu.Device{UUID: "GPU-33333333-cccc", Minor: 5}, 2, t0, time.Second, 16)}
	j.User = "bob"
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, Normalize(j)) {
		t.Errorf("after second PutJob:\n got %+v\nwant %+v", got, Normalize(j))
	}
	if n := countRows(t, db, "job_gpus"); n != 1 {
		t.Errorf("job_gpus rows = %d, want 1", n)
	}
	if n := countRows(t, db, "jobs"); n != 1 {
		t.Errorf("jobs rows = %d, want 1", n)
	}
}

func TestFinishedNotDowngraded(t *testing.T) {
	running := richJob("9", t0, 10, false)
	finished := richJob("9", t0, 20, true)
	tests := []struct {
		name        string
		first, then profile.Job
		wantErr     error
		want        profile.Job
	}{
		{name: "running over finished", first: finished, then: running, wantErr: ErrFinished, want: finished},
		{name: "finished over running", first: running, then: finished, want: finished},
		{name: "finished again", first: finished, then: finished, want: finished},
		{name: "running again", first: running, then: running, want: running},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTest(t, Options{})
			if err := db.PutJob(ctx, tt.first); err != nil {
				t.Fatal(err)
			}
			if err := db.PutJob(ctx, tt.then); !errors.Is(err, tt.wantErr) {
				t.Fatalf("second PutJob: got %v, want %v", err, tt.wantErr)
			}
			got, err := db.GetJob(ctx, tt.first.Key)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, Normalize(tt.want)) {
				t.Errorf("stored:\n got %+v\nwant %+v", got, Normalize(tt.want))
			}
		})
	}
}

func TestInsertJobIfAbsent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	agent := richJob("5", t0, 30, false)
	hook := simpleJob("lab", "5", "gpu01", "alice", 1001, t0, time.Time{})

	ok, err := db.InsertJobIfAbsent(ctx, agent)
	if err != nil || !ok {
		t.Fatalf("first InsertJobIfAbsent = %v, %v; want true, nil", ok, err)
	}
	ok, err = db.InsertJobIfAbsent(ctx, hook)
	if err != nil || ok {
		t.Fatalf("second InsertJobIfAbsent = %v, %v; want false, nil", ok, err)
	}
	got, err := db.GetJob(ctx, agent.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, Normalize(agent)) {
		t.Errorf("stored:\n got %+v\nwant %+v (the first insert)", got, Normalize(agent))
	}
}

func TestGetJobNotFound(t *testing.T) {
	db := openTest(t, Options{})
	_, err := db.GetJob(context.Background(), profile.Key{Cluster: "lab", JobID: "404", Node: "gpu01"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("GetJob: got %v, want ErrNotFound", err)
	}
}

func TestRunningJobs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	h := time.Hour
	for _, j := range []profile.Job{
		simpleJob("lab", "1", "gpu01", "a", 1, t0, time.Time{}),
		simpleJob("lab", "2", "gpu01", "a", 1, t0.Add(h), t0.Add(2*h)), // finished
		simpleJob("lab", "3", "gpu02", "a", 1, t0, time.Time{}),        // other node
		simpleJob("other", "4", "gpu01", "a", 1, t0, time.Time{}),      // other cluster
		simpleJob("lab", "5", "gpu01", "b", 2, t0.Add(3*h), time.Time{}),
	} {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.RunningJobs(ctx, "lab", "gpu01")
	if err != nil {
		t.Fatal(err)
	}
	if ids, want := jobIDs(got), []string{"5", "1"}; !slices.Equal(ids, want) {
		t.Errorf("RunningJobs = %v, want %v", ids, want)
	}
	for _, j := range got {
		if len(j.GPUs) != 1 || j.GPUs[0].UUID != "GPU-"+j.JobID {
			t.Errorf("job %s GPUs = %+v", j.JobID, j.GPUs)
		}
	}
}

func TestListJobs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	h := time.Hour
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := []profile.Job{
		simpleJob("lab", "1", "gpu01", "alice", 1001, base, base.Add(2*h)),
		simpleJob("lab", "2", "gpu02", "bob", 1002, base.Add(1*h), base.Add(5*h)),
		simpleJob("lab", "3", "gpu01", "alice", 1001, base.Add(3*h), time.Time{}),
		simpleJob("hpc", "4", "n1", "carol", 1003, base.Add(4*h), base.Add(6*h)),
		simpleJob("lab", "5", "gpu01", "bob", 1002, base.Add(10*h), time.Time{}),
	}
	for _, j := range jobs {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	uid := 1002
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{name: "all, newest first", f: Filter{}, want: []string{"5", "4", "3", "2", "1"}},
		{name: "cluster", f: Filter{Cluster: "hpc"}, want: []string{"4"}},
		{name: "node", f: Filter{Node: "gpu01"}, want: []string{"5", "3", "1"}},
		{name: "job id", f: Filter{JobID: "2"}, want: []string{"2"}},
		{name: "user", f: Filter{User: "alice"}, want: []string{"3", "1"}},
		{name: "uid", f: Filter{UID: &uid}, want: []string{"5", "2"}},
		{name: "status finished", f: Filter{Status: profile.StatusFinished}, want: []string{"4", "2", "1"}},
		{name: "status running", f: Filter{Status: profile.StatusRunning}, want: []string{"5", "3"}},
		// Overlap with [2h, 4h): 1 ends at 2h (inclusive), 2 spans it, 3 runs;
		// 4 starts at 4h (exclusive), 5 later.
		{name: "window", f: Filter{Since: base.Add(2 * h), Until: base.Add(4 * h)}, want: []string{"3", "2", "1"}},
		{name: "since only", f: Filter{Since: base.Add(5*h + time.Second)}, want: []string{"5", "4", "3"}},
		{name: "until with fraction", f: Filter{Until: base.Add(h + time.Nanosecond)}, want: []string{"2", "1"}},
		{name: "limit", f: Filter{Limit: 2}, want: []string{"5", "4"}},
		{name: "combined", f: Filter{Cluster: "lab", User: "bob", Status: profile.StatusRunning}, want: []string{"5"}},
		{name: "none", f: Filter{User: "mallory"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ListJobs(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if ids := jobIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("ListJobs(%+v) = %v, want %v", tt.f, ids, tt.want)
			}
			for _, j := range got {
				if len(j.GPUs) != 1 || j.GPUs[0].UUID != "GPU-"+j.JobID {
					t.Errorf("job %s GPUs = %+v, want its own one", j.JobID, j.GPUs)
				}
			}
		})
	}
}

func TestListJobsSeries(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 100, true)
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	want := Normalize(j)
	t.Run("with series", func(t *testing.T) {
		got, err := db.ListJobs(ctx, Filter{WithSeries: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("ListJobs:\n got %+v\nwant [%+v]", got, want)
		}
	})
	t.Run("without series", func(t *testing.T) {
		got, err := db.ListJobs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.GPUs {
			want.GPUs[i].Series.Points = nil
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("ListJobs:\n got %+v\nwant [%+v] (series without points)", got, want)
		}
		if s := got[0].GPUs[0].Series; s.Step == 0 || s.MaxPoints == 0 || s.Start == 0 {
			t.Errorf("series header lost: %+v", s)
		}
	})
}

func TestPutJobInvalid(t *testing.T) {
	valid := func() profile.Job { return richJob("1", t0, 5, false) }
	tests := []struct {
		name   string
		mutate func(j *profile.Job)
	}{
		{name: "empty cluster", mutate: func(j *profile.Job) { j.Cluster = "" }},
		{name: "empty job id", mutate: func(j *profile.Job) { j.JobID = "" }},
		{name: "job id not one", mutate: func(j *profile.Job) { j.JobID = "../1" }},
		{name: "job id with shell syntax", mutate: func(j *profile.Job) { j.JobID = "1;rm" }},
		{name: "empty node", mutate: func(j *profile.Job) { j.Node = "" }},
		{name: "unknown status", mutate: func(j *profile.Job) { j.Status = "done" }},
		{name: "GPU without UUID", mutate: func(j *profile.Job) { j.GPUs[1].UUID = "" }},
		{name: "duplicate GPU", mutate: func(j *profile.Job) { j.GPUs[1].UUID = j.GPUs[0].UUID }},
		{name: "NaN energy", mutate: func(j *profile.Job) { j.GPUs[0].EnergyJ = math.NaN() }},
		{name: "infinite IO", mutate: func(j *profile.Job) { j.IO.Seconds = math.Inf(1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, Options{})
			j := valid()
			tt.mutate(&j)
			if err := db.PutJob(context.Background(), j); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutJob: got %v, want ErrInvalid", err)
			}
			if n := countRows(t, db, "jobs"); n != 0 {
				t.Errorf("jobs rows = %d, want 0", n)
			}
		})
	}
}

func TestWithTx(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	a, b := richJob("1", t0, 5, false), richJob("2", t0, 5, false)
	boom := errors.New("boom")

	err := db.WithTx(ctx, func(tx *Tx) error {
		if err := tx.PutJob(ctx, a); err != nil {
			return err
		}
		if _, err := tx.GetJob(ctx, a.Key); err != nil {
			t.Errorf("GetJob inside the transaction: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx: got %v, want fn's error", err)
	}
	if _, err := db.GetJob(ctx, a.Key); !errors.Is(err, ErrNotFound) {
		t.Errorf("after rollback GetJob: got %v, want ErrNotFound", err)
	}

	err = db.WithTx(ctx, func(tx *Tx) error {
		if err := tx.PutJob(ctx, a); err != nil {
			return err
		}
		return tx.PutJob(ctx, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.ListJobs(ctx, Filter{}); err != nil || len(got) != 2 {
		t.Errorf("after commit ListJobs = %d jobs, %v; want 2", len(got), err)
	}

	// A panic must not leave the single writer connection in a transaction.
	func() {
		defer func() { _ = recover() }()
		_ = db.WithTx(ctx, func(tx *Tx) error { panic("bug") })
	}()
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PutJob(tctx, richJob("3", t0, 1, false)); err != nil {
		t.Errorf("PutJob after a panic in WithTx: %v", err)
	}
}

func TestContextCanceled(t *testing.T) {
	db := openTest(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := richJob("1", t0, 5, false)
	if err := db.PutJob(ctx, j); !errors.Is(err, context.Canceled) {
		t.Errorf("PutJob: got %v, want context.Canceled", err)
	}
	if _, err := db.ListJobs(ctx, Filter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ListJobs: got %v, want context.Canceled", err)
	}
}
