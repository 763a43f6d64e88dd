package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/yearsim"
	"github.com/gpuprof/gpuprof/profile"
)

// TestSimulatedYear runs a node's year, time compressed: every day's jobs
// (yearsim.Mix) stored as the agent stores them and delivered, into two
// databases, one pruned by the default retention once a simulated hour,
// one never. It logs each database's size at months 1, 3, 6 and 12 and
// the latency of the reads behind jobs, show and report at months 1 and
// 12 (docs/benchmarks.md, "A simulated year"), and checks that retention
// bounds the size.
func TestSimulatedYear(t *testing.T) {
	if testing.Short() {
		t.Skip("a year of jobs: run without -short")
	}
	// The whole year (docs/benchmarks.md) with GPUPROF_YEAR=1; otherwise
	// four months, enough to see retention stop the growth after month 3.
	// Without retention the file grows with every month; with it, by
	// month 4 the node keeps at least 3 times less, by month 12 5 times.
	days, months, last, factor := 120, []int{1, 3, 4}, 4, int64(3)
	if os.Getenv("GPUPROF_YEAR") == "1" {
		days, months, last, factor = 360, []int{1, 3, 6, 12}, 12, 5
	}
	ctx := context.Background()
	dir := t.TempDir()
	kept, err := Open(ctx, filepath.Join(dir, "kept.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	pruned, err := Open(ctx, filepath.Join(dir, "pruned.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pruned.Close()
	// The defaults of [retention] (config.Default) on a node with a
	// collector.
	r := Retention{Delivered: true, SeriesAge: 14 * 24 * time.Hour, JobAge: 90 * 24 * time.Hour, MaxSize: 4 << 30}

	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := 0
	type sizes struct{ kept, pruned int64 }
	at := map[int]sizes{}
	type lat struct{ jobs, show, report time.Duration }
	lats := map[int][2]lat{}
	var lastID string
	for day := range days {
		if err := yearsim.Day(day0, day, "lab", "gpu01", &id, func(j profile.Job) error {
			for _, db := range []*DB{kept, pruned} {
				if err := db.PutJob(ctx, j); err != nil {
					return err
				}
			}
			deliver(t, pruned, j)
			lastID = j.JobID
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// The agent prunes every hour; a day's passes after the first find
		// nothing more, so one at the day's end does the same work.
		if _, err := pruned.Prune(ctx, day0.AddDate(0, 0, day+1), r); err != nil {
			t.Fatal(err)
		}
		month := (day + 1) / 30
		if (day+1)%30 != 0 || !slices.Contains(months, month) {
			continue
		}
		var s sizes
		for _, x := range []struct {
			db  *DB
			dst *int64
		}{{kept, &s.kept}, {pruned, &s.pruned}} {
			st, err := x.db.SpaceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			*x.dst = st.File()
		}
		at[month] = s
		t.Logf("month %2d: %d jobs; without retention %.1f MB, with %.1f MB", month, id, float64(s.kept)/1e6, float64(s.pruned)/1e6)
		if month == 1 || month == last {
			now := day0.AddDate(0, 0, day+1)
			var pair [2]lat
			for i, db := range []*DB{kept, pruned} {
				pair[i] = yearLatency(t, db, now, lastID)
			}
			lats[month] = pair
			t.Logf("month %2d latency (median of 9): without retention jobs %v show %v report %v; with jobs %v show %v report %v",
				month, pair[0].jobs, pair[0].show, pair[0].report, pair[1].jobs, pair[1].show, pair[1].report)
		}
	}
	// Retention bounds the node: after month 3 (90 days of summaries, 14
	// of series) it stops growing, within 10 %.
	if s3, sl := at[3].pruned, at[last].pruned; sl > s3*11/10 {
		t.Errorf("with retention the database grew from %d bytes at month 3 to %d at month %d", s3, sl, last)
	}
	if at[last].kept < factor*at[last].pruned {
		t.Errorf("without retention %d bytes at month %d, with %d: want retention to keep far less", at[last].kept, last, at[last].pruned)
	}
}

// yearLatency is the median of 9 runs of the reads behind gpuprof jobs
// (the last 7 days' job views), show (one job with its series) and
// report (every job view of the last 30 days with series).
func yearLatency(t *testing.T, db *DB, now time.Time, id string) (l struct{ jobs, show, report time.Duration }) {
	t.Helper()
	ctx := context.Background()
	rd := db.ReaderFor(System)
	med := func(fn func() error) time.Duration {
		var d []time.Duration
		for range 9 {
			start := time.Now()
			if err := fn(); err != nil {
				t.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2].Round(10 * time.Microsecond)
	}
	l.jobs = med(func() error {
		_, err := rd.ListViews(ctx, ViewFilter{Since: now.AddDate(0, 0, -7), Until: now})
		return err
	})
	l.show = med(func() error {
		_, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: id, Node: "gpu01"})
		return err
	})
	l.report = med(func() error {
		return rd.EachView(ctx, ViewFilter{Since: now.AddDate(0, 0, -30), Until: now, WithSeries: true}, func(JobView) error { return nil })
	})
	return l
}
