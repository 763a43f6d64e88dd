package collect

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/internal/yearsim"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// TestCollectorSimulatedYear (issue 42) runs a collector's year, time
// compressed: every day a few nodes each end the node year's jobs
// (yearsim.Mix: 40 short, 4 medium, 1 long), each profile pushed with
// its jobcomp record, into two collector databases: one thinned as serve
// thins (ThinOnce with serve.series_age and serve.series_points'
// defaults, once a simulated day: serve's hourly rounds after the first
// find nothing more), one never. It logs each database's size at the
// months' ends and the latency of jobs and show (as the collector answers
// them) and of report's read at the first month against the last
// (docs/benchmarks.md, "A simulated year on a collector"), and checks that
// thinning keeps the series bounded: the thinned database grows by far
// less a month than the one kept as recorded once thinning has begun.
//
// In make test: one node, two months. GPUPROF_YEAR=1: three nodes, the
// year.
func TestCollectorSimulatedYear(t *testing.T) {
	if testing.Short() {
		t.Skip("months of jobs: run without -short")
	}
	nodes, days, months := 1, 60, []int{1, 2}
	if os.Getenv("GPUPROF_YEAR") == "1" {
		nodes, days, months = 3, 360, []int{1, 3, 6, 12}
	}
	last := months[len(months)-1]
	def := config.Default().Serve
	th := Thinning{Age: def.SeriesAge.D(), Points: def.SeriesPoints}
	ctx := context.Background()
	dir := t.TempDir()
	open := func(name string) *store.DB {
		db, err := store.Open(ctx, filepath.Join(dir, name), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	kept, thinned := open("kept.db"), open("thinned.db")
	dbs := []*store.DB{kept, thinned}

	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := 0
	var lastKey profile.Key
	size := map[int][2]int64{}
	lat := map[int][2]yearReads{}
	for day := range days {
		for n := range nodes {
			node := fmt.Sprintf("gpu%02d", n+1)
			if err := yearsim.Day(day0, day, "lab", node, &id, func(j profile.Job) error {
				rec := yearRecord(j)
				for _, db := range dbs {
					if err := db.PutSchedJob(ctx, rec); err != nil {
						return err
					}
					if err := db.PutJob(ctx, j); err != nil {
						return err
					}
				}
				lastKey = j.Key
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		now := day0.AddDate(0, 0, day+1)
		if _, err := ThinOnce(ctx, thinned, th, now); err != nil {
			t.Fatal(err)
		}
		month := (day + 1) / 30
		if (day+1)%30 != 0 || !slices.Contains(months, month) {
			continue
		}
		var s [2]int64
		for i, db := range dbs {
			st, err := db.SpaceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s[i] = st.File()
		}
		size[month] = s
		t.Logf("month %2d: %d jobs of %d nodes; as recorded %.1f MB, thinned %.1f MB", month, id, nodes, float64(s[0])/1e6, float64(s[1])/1e6)
		if month == 1 || month == last {
			var l [2]yearReads
			for i, db := range dbs {
				l[i] = collectorReads(t, db, now, lastKey)
			}
			lat[month] = l
			t.Logf("month %2d latency (median of 9): as recorded jobs %v show %v report %v; thinned jobs %v show %v report %v",
				month, l[0].jobs, l[0].show, l[0].report, l[1].jobs, l[1].show, l[1].report)
		}
	}
	// Thinning begins after month 1 (series_age 30 days): from then on
	// the thinned collector adds at most 3/4 of what the other adds a
	// month (the series are most of a profile's bytes as recorded).
	grewKept := size[last][0] - size[1][0]
	grewThinned := size[last][1] - size[1][1]
	if grewThinned*4 > grewKept*3 {
		t.Errorf("months 1 to %d: thinned database grew %d bytes, the one as recorded %d: thinning saves too little", last, grewThinned, grewKept)
	}
	if size[1][1] > size[1][0]*11/10 {
		t.Errorf("month 1: thinned %d bytes, as recorded %d: nothing is old enough to thin yet", size[1][1], size[1][0])
	}
}

// yearRecord is jobcomp's record of a simulated job: the collector has
// one for every profile (serve.placement waits for it).
func yearRecord(j profile.Job) slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: j.Cluster, JobID: j.JobID, DisplayID: j.JobID, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		Name: "train", User: j.User, UID: j.UID, Account: j.Account, Partition: j.Partition, NodeList: j.Node,
		State: "COMPLETED", Submit: j.Start, Start: j.Start, End: j.End, Source: "jobcomp",
		ReqGPUs: len(j.GPUs),
	}
}

// yearReads are the latencies of one month's reads.
type yearReads struct{ jobs, show, report time.Duration }

// collectorReads is the median of 9 runs of: `gpuprof jobs` as the
// collector answers it (an admin's first page of 50, GET /v1/jobs),
// `gpuprof show` (GET /v1/jobs/{cluster}/{job}, the job with its series)
// and report's read (every job view of the last 30 days with series,
// EachView, as `gpuprof report` reads the collector's database).
func collectorReads(t *testing.T, db *store.DB, now time.Time, k profile.Key) (l yearReads) {
	t.Helper()
	ctx := context.Background()
	m := newFakeMunge()
	h := NewServer(db, m, ServerOptions{Resolve: fakeResolve(testHosts)}, testLogger(t)).Handler()
	root := Identity{UID: 0, GID: 0, Host: "10.0.0.2"}
	get := func(target string) func() error {
		return func() error {
			w := serve(h, "GET", target, nil, signed(m, root, "GET", target, nil))
			if w.Code != http.StatusOK {
				return fmt.Errorf("GET %s: %d %s", target, w.Code, w.Body.String())
			}
			return nil
		}
	}
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
	l.jobs = med(get("/v1/jobs?" + ViewFilterQuery(store.ViewFilter{Limit: 50})))
	l.show = med(get("/v1/jobs/" + k.Cluster + "/" + k.JobID))
	rd := db.ReaderFor(store.System)
	l.report = med(func() error {
		return rd.EachView(ctx, store.ViewFilter{Since: now.AddDate(0, 0, -30), Until: now, WithSeries: true}, func(store.JobView) error { return nil })
	})
	return l
}
