package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/tools/benchdb"
	"github.com/gpuprof/gpuprof/tools/mksacct"
)

// seriesJob is a finished job with gpus GPUs observed every interval for
// d, each with a full-width series (up to profile.DefaultMaxPoints points).
func seriesJob(id string, gpus int, d, interval time.Duration) profile.Job {
	start := time.Date(2025, 2, 1, 8, 0, 0, 0, time.UTC)
	j := profile.Job{
		Key:            profile.Key{Cluster: "lab", JobID: id, Node: "gpu01"},
		User:           "alice",
		UID:            1001,
		GID:            100,
		Account:        "vision",
		Partition:      "gpu",
		Start:          start,
		Status:         profile.StatusRunning,
		Source:         profile.SourceAgent,
		SampleInterval: interval,
		Driver:         "550.54.15",
		CUDADriver:     "12.4",
	}
	for g := range gpus {
		p := profile.NewGPU(gpu.Device{
			UUID: fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", g), Name: "NVIDIA H100 80GB HBM3",
			Minor: g, MemoryTotal: 80 << 30,
		}, g, start, interval, profile.DefaultMaxPoints)
		n := int(d / interval)
		for i := range n {
			p.Observe(profile.Reading{
				Time:      start.Add(time.Duration(i) * interval),
				Util:      gpu.Some(uint32((i*13 + g) % 101)),
				MemUsed:   gpu.Some(uint64(30<<30 + (i%977)<<20)),
				EnergyMJ:  gpu.Some(uint64(i) * 350_000),
				TempC:     gpu.Some(uint32(55 + i%25)),
				Processes: 2,
			}, interval)
		}
		p.AddProcessName("python")
		j.GPUs = append(j.GPUs, p)
	}
	j.IO.Observe(profile.IOScopeCgroup, d.Seconds()/20, d.Seconds())
	j.LastSample = start.Add(d - interval)
	j.Finish(start.Add(d))
	return j
}

func BenchmarkPutJob(b *testing.B) {
	ctx := context.Background()
	db := openTest(b, Options{})
	j := seriesJob("", 2, 1024*time.Second, time.Second)
	if n := len(j.GPUs[0].Series.Points); n != 1024 {
		b.Fatalf("series has %d points, want 1024", n)
	}
	i := 0
	for b.Loop() {
		j.JobID = fmt.Sprint(i)
		i++
		if err := db.PutJob(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if i == 0 {
		return
	}
	if _, err := db.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(db.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Size())/float64(i), "file-bytes/job")
}

// footprint is what one profile costs on disk.
type footprint struct {
	summaryBytes  float64 // database bytes per job without series: job row, 2 GPU rows, indexes
	stateBytes    int     // JSON state of one GPU including its series
	bytesPerGPUHr float64 // stateBytes per hour of the job
}

// measureFootprint stores jobs of length d with and without their series
// and reports the cost per job.
func measureFootprint(tb testing.TB, d, interval time.Duration) footprint {
	tb.Helper()
	ctx := context.Background()
	const jobs = 200
	db := openTest(tb, Options{})
	size := func() int64 {
		if _, err := db.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			tb.Fatal(err)
		}
		st, err := os.Stat(db.Path())
		if err != nil {
			tb.Fatal(err)
		}
		return st.Size()
	}
	j := seriesJob("", 2, d, interval)
	state, err := json.Marshal(Normalize(j).GPUs[0])
	if err != nil {
		tb.Fatal(err)
	}
	for i := range j.GPUs {
		j.GPUs[i].Series.Points = nil
	}
	before := size()
	err = db.WithTx(ctx, func(tx *Tx) error {
		for i := range jobs {
			j.JobID = fmt.Sprint(i)
			if err := tx.PutJob(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return footprint{
		summaryBytes:  float64(size()-before) / jobs,
		stateBytes:    len(state),
		bytesPerGPUHr: float64(len(state)) / d.Hours(),
	}
}

func TestStorageFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a few hundred profiles")
	}
	tests := []struct {
		name     string
		d        time.Duration
		interval time.Duration
	}{
		{name: "10 min at 1s", d: 10 * time.Minute, interval: time.Second},
		{name: "1 h at 1s", d: time.Hour, interval: time.Second},
		{name: "1 h at 10s", d: time.Hour, interval: 10 * time.Second},
		{name: "1 day at 10s", d: 24 * time.Hour, interval: 10 * time.Second},
		{name: "7 days at 10s", d: 7 * 24 * time.Hour, interval: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := measureFootprint(t, tt.d, tt.interval)
			t.Logf("%-14s summary %6.0f B/job (2 GPUs), state %6d B/GPU, %8.0f B per GPU-hour",
				tt.name, f.summaryBytes, f.stateBytes, f.bytesPerGPUHr)
			// The series is bounded, so a GPU's state is too, whatever the
			// job's length: about 60 B per point plus the histogram.
			if limit := 96 << 10; f.stateBytes > limit {
				t.Errorf("state = %d B per GPU, want at most %d", f.stateBytes, limit)
			}
			if limit := 4096.0; f.summaryBytes > limit {
				t.Errorf("summary = %.0f B per job, want at most %.0f", f.summaryBytes, limit)
			}
		})
	}
}

// millionViews fills a database with benchdb's million jobs (see
// tools/benchdb): 10,310 of them user "target"'s.
func millionViews(tb testing.TB) *DB {
	tb.Helper()
	db := openTest(tb, Options{})
	if err := benchdb.Fill(context.Background(), db.w, vbase); err != nil {
		tb.Fatal(err)
	}
	return db
}

// BenchmarkViewsPage1M measures what the terminal UI asks of a database of
// 1,000,000 jobs for one user with 10,000 of them: the first page of 50
// and the count, then the first page sorted by memory peak and by
// utilisation. Run it with: go test ./store -run '^$' -bench ViewsPage1M
// (building the fixture takes a while; -short skips it).
func BenchmarkViewsPage1M(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a database of 1,000,000 jobs")
	}
	ctx := context.Background()
	start := time.Now()
	db := millionViews(b)
	b.Logf("fixture built in %v", time.Since(start).Round(time.Millisecond))
	target := ViewFilter{User: "target", Limit: 50}
	if n, err := db.countViews(ctx, target); err != nil || n != 10_310 {
		b.Fatalf("CountViews(target) = %d, %v; want 10310", n, err)
	}
	for _, bb := range []struct {
		name string
		f    ViewFilter
		page bool
		cnt  bool
	}{
		{name: "user page", f: target, page: true},
		{name: "user count", f: target, cnt: true},
		{name: "user page and count", f: target, page: true, cnt: true},
		{name: "user by vram", f: ViewFilter{User: "target", Limit: 50, Sort: SortVRAM}, page: true},
		{name: "user by util", f: ViewFilter{User: "target", Limit: 50, Sort: SortUtil}, page: true},
		{name: "user by elapsed", f: ViewFilter{User: "target", Limit: 50, Sort: SortElapsed}, page: true},
		{name: "user text", f: ViewFilter{User: "target", Limit: 50, Text: "train-10"}, page: true, cnt: true},
		{name: "all page", f: ViewFilter{Limit: 50}, page: true},
		{name: "all count", f: ViewFilter{}, cnt: true},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if bb.page {
					vs, err := db.listViews(ctx, bb.f)
					if err != nil || len(vs) != 50 {
						b.Fatalf("ListViews(%+v): %d views, %v", bb.f, len(vs), err)
					}
				}
				if bb.cnt {
					if _, err := db.countViews(ctx, bb.f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// sacctRecords parses n jobs of mksacct's sacct text (header, steps, GPU
// readings) as an import would.
func sacctRecords(tb testing.TB, n int) []slurmext.JobRecord {
	tb.Helper()
	var text bytes.Buffer
	err := mksacct.Write(&text, mksacct.Options{Jobs: n, Seed: 1, Base: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		Fields: sacct.Fields(), Header: true, Steps: true})
	if err != nil {
		tb.Fatal(err)
	}
	sr := sacct.NewReader(&text, nil, sacct.Options{Cluster: "lab"})
	rs := make([]slurmext.JobRecord, 0, n)
	for {
		r, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		r.Source = "sacct"
		rs = append(rs, r)
	}
	if len(rs) != n {
		tb.Fatalf("parsed %d records, want %d", len(rs), n)
	}
	return rs
}

// BenchmarkImportSacct is the store's part of a sacct import: 100,000
// parsed jobs of a realistic mix (arrays, states, users, GPU readings; see
// tools/mksacct) put into a fresh database in transactions of 5,000,
// as history.Import does, then the same again (all unchanged: a repeated
// import). The whole import of a million jobs beside sqlite3 is
// scripts/bench-import.sh. Run it with:
// go test ./store -run '^$' -bench ImportSacct -benchtime 1x
func BenchmarkImportSacct(b *testing.B) {
	ctx := context.Background()
	const jobs, batch = 100_000, 5000
	rs := sacctRecords(b, jobs)
	put := func(db *DB) (ins, same int) {
		for i := 0; i < len(rs); i += batch {
			n, _, u, err := db.PutSchedJobs(ctx, rs[i:min(i+batch, len(rs))])
			if err != nil {
				b.Fatal(err)
			}
			ins, same = ins+n, same+u
		}
		return ins, same
	}
	for _, again := range []bool{false, true} {
		name := map[bool]string{false: "new jobs", true: "unchanged"}[again]
		b.Run(name, func(b *testing.B) {
			var wall, cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				db, err := Open(ctx, filepath.Join(b.TempDir(), "import.db"), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if again {
					put(db)
				}
				b.StartTimer()
				w0, c0 := time.Now(), cpuTime()
				ins, same := put(db)
				wall, cpu = wall+time.Since(w0), cpu+cpuTime()-c0
				b.StopTimer()
				if want := map[bool][2]int{false: {jobs, 0}, true: {0, jobs}}[again]; ins != want[0] || same != want[1] {
					b.Fatalf("%d inserted, %d unchanged; want %v", ins, same, want)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(jobs*b.N)/wall.Seconds(), "records/s")
			b.ReportMetric(float64(jobs*b.N)/cpu.Seconds(), "records/cpu-s")
		})
	}
}
