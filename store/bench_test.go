package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
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
