package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

var vbase = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)

func at(hours float64) time.Time { return vbase.Add(time.Duration(hours * float64(time.Hour))) }

// viewFixture fills db with jobs that have a scheduler record and
// profiles, only one of the two, several nodes, and odd or missing times.
// Newest first they are 5 4 9 3 6 2 10 1 7 8.
func viewFixture(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	sched := func(cluster, id, user string, uid int, account, partition, state string, submit, start, end time.Time) slurmext.JobRecord {
		r := rec(id, state, start, end, "jobcomp")
		r.Cluster, r.User, r.UID, r.Account, r.Partition, r.Submit = cluster, user, uid, account, partition, submit
		return r
	}
	prof := func(id, node, user string, uid int, account string, start, end time.Time) profile.Job {
		j := simpleJob("lab", id, node, user, uid, start, end)
		j.Account = account
		return j
	}
	records := []slurmext.JobRecord{
		sched("lab", "1", "alice", 1001, "vision", "gpu", "COMPLETED", at(0.9), at(1), at(2)),
		sched("lab", "2", "bob", 1002, "nlp", "cpu", "FAILED", at(2), at(3), at(4)),
		sched("lab", "5", "alice", 1001, "vision", "gpu", "PENDING", at(8), time.Time{}, time.Time{}),
		sched("lab", "6", "dave", 1004, "nlp", "gpu", "RUNNING", at(3.9), at(4), time.Time{}),
		// No start or submit: sorted by its profile's start.
		sched("lab", "7", "erin", 1005, "nlp", "gpu", "CANCELLED", time.Time{}, time.Time{}, at(9)),
		// No time at all and no profile: last.
		sched("lab", "8", "erin", 1005, "nlp", "gpu", "CANCELLED", time.Time{}, time.Time{}, time.Time{}),
		sched("hpc", "9", "alice", 1001, "vision", "gpu", "COMPLETED", at(6), at(6.5), at(7)),
	}
	if _, _, _, err := db.PutSchedJobs(ctx, records); err != nil {
		t.Fatal(err)
	}
	for _, j := range []profile.Job{
		prof("1", "gpu02", "alice", 1001, "vision", at(1), at(2)),
		prof("1", "gpu01", "alice", 1001, "vision", at(1), at(2)),
		prof("3", "gpu03", "carol", 1003, "", at(5), at(6)),
		prof("3", "gpu04", "carol", 1003, "", at(5), at(6.2)), // ends later
		prof("4", "gpu01", "alice", 1001, "vision", at(7), time.Time{}),
		prof("6", "gpu02", "dave", 1004, "nlp", at(4), time.Time{}),
		prof("7", "gpu05", "alice", 1001, "", at(0.5), at(0.6)), // the record says erin
		prof("10", "gpu05", "frank", 1006, "", at(3), at(3.5)),
	} {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
}

func viewIDs(vs []JobView) []string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.JobID
	}
	return ids
}

func TestListViews(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	viewFixture(t, db)
	uid := 1003
	erin := 1005
	tests := []struct {
		name string
		f    ViewFilter
		want []string
	}{
		{name: "all, newest first", f: ViewFilter{}, want: []string{"5", "4", "9", "3", "6", "2", "10", "1", "7", "8"}},
		{name: "cluster", f: ViewFilter{Cluster: "hpc"}, want: []string{"9"}},
		{name: "job id with a record", f: ViewFilter{JobID: "1"}, want: []string{"1"}},
		{name: "job id with profiles only", f: ViewFilter{JobID: "3"}, want: []string{"3"}},
		{name: "job id, cluster and id", f: ViewFilter{Cluster: "lab", JobID: "9"}, want: []string{}},
		{name: "user: record or profiles", f: ViewFilter{User: "alice"}, want: []string{"5", "4", "9", "1"}},
		{name: "user of the record, not of the profile", f: ViewFilter{User: "erin"}, want: []string{"7", "8"}},
		{name: "uid of profiles only", f: ViewFilter{UID: &uid}, want: []string{"3"}},
		{name: "uid of records", f: ViewFilter{UID: &erin}, want: []string{"7", "8"}},
		{name: "account", f: ViewFilter{Account: "vision"}, want: []string{"5", "4", "9", "1"}},
		{name: "partition", f: ViewFilter{Partition: "cpu"}, want: []string{"2"}},
		{name: "state, any case", f: ViewFilter{State: "completed"}, want: []string{"9", "1"}},
		{name: "running: records and profiles", f: ViewFilter{State: "RUNNING"}, want: []string{"4", "6"}},
		{name: "finished profiles", f: ViewFilter{State: "finished"}, want: []string{"3", "10"}},
		{name: "pending", f: ViewFilter{State: "PENDING"}, want: []string{"5"}},
		// Overlap with [3.5h, 5.5h): 2 ends at 4h, 6 runs, 3 starts at 5h, 10
		// ends at 3.5h (inclusive), 7 ran from its profile's 0.5h to its
		// record's 9h; 1 ended at 2h, 9 and 5 start later, 8 has no start.
		{name: "window", f: ViewFilter{Since: at(3.5), Until: at(5.5)}, want: []string{"3", "6", "2", "10", "7"}},
		// 3 has a node that ends after 6.1h; 7 never started but ended at 9h;
		// 8, with no times at all, has not ended as far as anyone knows.
		{name: "since, with a node ending late", f: ViewFilter{Since: at(6.1)}, want: []string{"5", "4", "9", "3", "6", "7", "8"}},
		// 7's record has no start: its profile's counts.
		{name: "until", f: ViewFilter{Until: at(1)}, want: []string{"7"}},
		{name: "limit", f: ViewFilter{Limit: 3}, want: []string{"5", "4", "9"}},
		{name: "offset", f: ViewFilter{Offset: 8, Limit: 5}, want: []string{"7", "8"}},
		{name: "offset without limit", f: ViewFilter{Offset: 7}, want: []string{"1", "7", "8"}},
		{name: "offset past the end", f: ViewFilter{Offset: 20, Limit: 5}, want: []string{}},
		{name: "combined", f: ViewFilter{User: "alice", State: "running"}, want: []string{"4"}},
		{name: "none", f: ViewFilter{User: "mallory"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.listViews(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if ids := viewIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("ListViews(%+v) = %v, want %v", tt.f, ids, tt.want)
			}
		})
	}
}

func TestListViewsContents(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	viewFixture(t, db)
	vs, err := db.listViews(ctx, ViewFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]JobView{}
	for _, v := range vs {
		byID[v.JobID] = v
	}
	tests := []struct {
		id        string
		withSched bool
		nodes     []string
	}{
		{id: "1", withSched: true, nodes: []string{"gpu01", "gpu02"}},
		{id: "2", withSched: true},
		{id: "3", nodes: []string{"gpu03", "gpu04"}},
		{id: "4", nodes: []string{"gpu01"}},
		{id: "8", withSched: true},
		{id: "9", withSched: true},
	}
	for _, tt := range tests {
		t.Run("job "+tt.id, func(t *testing.T) {
			v := byID[tt.id]
			if (v.Sched != nil) != tt.withSched {
				t.Errorf("Sched = %+v, want present %v", v.Sched, tt.withSched)
			}
			if v.Sched != nil && (v.Sched.JobID != tt.id || v.Sched.Cluster != v.Cluster) {
				t.Errorf("Sched is job %s/%s, want %s/%s", v.Sched.Cluster, v.Sched.JobID, v.Cluster, tt.id)
			}
			var nodes []string
			for _, p := range v.Profiles {
				nodes = append(nodes, p.Node)
				if p.JobID != tt.id || len(p.GPUs) != 1 || p.GPUs[0].UUID != "GPU-"+tt.id {
					t.Errorf("profile %s: job %s, GPUs %+v; want job %s with its one GPU", p.Node, p.JobID, p.GPUs, tt.id)
				}
			}
			if !slices.Equal(nodes, tt.nodes) {
				t.Errorf("profile nodes = %v, want %v", nodes, tt.nodes)
			}
		})
	}
}

// TestListViewsPages checks every page against the whole list, under
// filters that mix jobs with and without scheduler records: a page cuts
// each arm of the query short, and must still be the slice of the order.
func TestListViewsPages(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	want := randomViews(t, db, 60, rand.New(rand.NewPCG(7, 11)))
	filters := []ViewFilter{
		{},
		{User: "u1"},
		{State: "running"},
		{Since: at(10), Until: at(30)},
	}
	for _, f := range filters {
		all, err := db.listViews(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if f == (ViewFilter{}) {
			if ids := viewIDs(all); !slices.Equal(ids, want) {
				t.Fatalf("ListViews() =\n %v\nwant (computed from the fixture)\n %v", ids, want)
			}
		}
		ids := viewIDs(all)
		for limit := 1; limit <= len(ids)+1; limit += 3 {
			for offset := 0; offset <= len(ids); offset += 2 {
				pf := f
				pf.Limit, pf.Offset = limit, offset
				page, err := db.listViews(ctx, pf)
				if err != nil {
					t.Fatal(err)
				}
				wantPage := ids[offset:min(offset+limit, len(ids))]
				if got := viewIDs(page); !slices.Equal(got, wantPage) {
					t.Errorf("ListViews(%+v) = %v, want %v", pf, got, wantPage)
				}
			}
		}
	}
}

// randomViews stores n jobs, each with a scheduler record, profiles on one
// to three nodes, or both, at random and often equal times, and returns
// their ids in the order ListViews must give: computed here from what was
// stored, independently of the store's SQL.
func randomViews(t *testing.T, db *DB, n int, rng *rand.Rand) []string {
	t.Helper()
	ctx := context.Background()
	type key struct {
		id string
		t  int64
		ok bool
	}
	var keys []key
	for i := range n {
		id := fmt.Sprint(100 + i)
		user := fmt.Sprintf("u%d", rng.IntN(3))
		hasSched, hasProf := true, true
		switch rng.IntN(3) {
		case 0:
			hasSched = false
		case 1:
			hasProf = false
		}
		var k key
		k.id = id
		var profStart time.Time
		if hasProf {
			for node := range 1 + rng.IntN(3) {
				start := at(float64(rng.IntN(40)))
				var end time.Time
				if rng.IntN(4) > 0 {
					end = start.Add(time.Duration(rng.IntN(5)) * time.Hour)
				}
				j := simpleJob("lab", id, fmt.Sprintf("n%d", node), user, 1000, start, end)
				if err := db.PutJob(ctx, j); err != nil {
					t.Fatal(err)
				}
				if profStart.IsZero() || start.Before(profStart) {
					profStart = start
				}
			}
		}
		if hasSched {
			r := rec(id, []string{"COMPLETED", "RUNNING", "PENDING"}[rng.IntN(3)], time.Time{}, time.Time{}, "sacct")
			r.User = user
			switch rng.IntN(4) {
			case 0: // started
				r.Submit, r.Start = at(float64(rng.IntN(40))), at(float64(rng.IntN(40)))
			case 1: // never started
				r.Submit = at(float64(rng.IntN(40)))
			case 2: // started, submit unknown
				r.Start = at(float64(rng.IntN(40)))
			}
			if r.State == "COMPLETED" && !r.Start.IsZero() {
				r.End = r.Start.Add(time.Hour)
			}
			if err := db.PutSchedJob(ctx, r); err != nil {
				t.Fatal(err)
			}
			switch {
			case !r.Start.IsZero():
				k.t, k.ok = r.Start.Unix(), true
			case !r.Submit.IsZero():
				k.t, k.ok = r.Submit.Unix(), true
			}
		}
		if !k.ok && !profStart.IsZero() {
			k.t, k.ok = profStart.Unix(), true
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.ok != b.ok {
			if a.ok {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.t, a.t); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id) // one cluster: ties by job id, descending
	})
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.id
	}
	return ids
}

func TestListViewsSeries(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 50, true)
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		withSeries bool
		wantPoints int
	}{
		{name: "with series", withSeries: true, wantPoints: len(j.GPUs[0].Series.Points)},
		{name: "without series", withSeries: false, wantPoints: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := db.listViews(ctx, ViewFilter{WithSeries: tt.withSeries})
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != 1 || len(vs[0].Profiles) != 1 || len(vs[0].Profiles[0].GPUs) != 2 {
				t.Fatalf("ListViews = %+v, want one job with one profile of two GPUs", vs)
			}
			if n := len(vs[0].Profiles[0].GPUs[0].Series.Points); n != tt.wantPoints || n == 0 && tt.withSeries {
				t.Errorf("series points = %d, want %d", n, tt.wantPoints)
			}
		})
	}
}

func TestGetView(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	viewFixture(t, db)
	rich := richJob("11", t0, 30, true)
	if err := db.PutJob(ctx, rich); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cluster, id string
		wantErr           error
		withSched         bool
		profiles          int
	}{
		{name: "record and profiles", cluster: "lab", id: "1", withSched: true, profiles: 2},
		{name: "record only", cluster: "lab", id: "2", withSched: true},
		{name: "profiles only", cluster: "lab", id: "3", profiles: 2},
		{name: "other cluster", cluster: "hpc", id: "9", withSched: true},
		{name: "wrong cluster", cluster: "hpc", id: "1", wantErr: ErrNotFound},
		{name: "missing", cluster: "lab", id: "404", wantErr: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := db.getView(ctx, tt.cluster, tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("GetView: got %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if v.Cluster != tt.cluster || v.JobID != tt.id || (v.Sched != nil) != tt.withSched || len(v.Profiles) != tt.profiles {
				t.Errorf("GetView = %s/%s, sched %v, %d profiles; want %s/%s, %v, %d",
					v.Cluster, v.JobID, v.Sched != nil, len(v.Profiles), tt.cluster, tt.id, tt.withSched, tt.profiles)
			}
		})
	}
	v, err := db.getView(ctx, "lab", "11")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Profiles) != 1 || len(v.Profiles[0].GPUs[0].Series.Points) == 0 {
		t.Errorf("GetView lost the series")
	}
}

// bigViews fills path with n jobs shaped like a controller's year: 95 % with
// a scheduler record, 70 % with profiles (every 50th on two nodes), 5 %
// profiles only.
func bigViews(tb testing.TB, path string, n int) *DB {
	tb.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}
	var recs []slurmext.JobRecord
	var profs []profile.Job
	flush := func() {
		err := db.WithTx(ctx, func(tx *Tx) error {
			if _, _, _, err := tx.PutSchedJobs(ctx, recs); err != nil {
				return err
			}
			for _, p := range profs {
				if err := tx.PutJob(ctx, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		recs, profs = recs[:0], profs[:0]
	}
	for i := range n {
		id := fmt.Sprint(1000 + i)
		start := vbase.Add(time.Duration(i) * 30 * time.Second)
		end := start.Add(time.Duration(i%97+1) * time.Minute)
		user := users[i%len(users)]
		if i%20 != 19 {
			r := sacctRec(id, "COMPLETED", start, end)
			r.User, r.UID, r.Account = user, 1000+i%len(users), fmt.Sprintf("acct%d", i%5)
			recs = append(recs, r)
		}
		if i%10 < 7 || i%20 == 19 {
			nodes := 1
			if i%50 == 0 {
				nodes = 2
			}
			for nd := range nodes {
				profs = append(profs, simpleJob("lab", id, fmt.Sprintf("gpu%02d", nd+1), user, 1000+i%len(users), start, end))
			}
		}
		if len(recs) >= 10000 {
			flush()
		}
	}
	flush()
	return db
}

// BenchmarkListViews measures a page of 50 from a database of 100,000
// jobs: go test ./store -run '^$' -bench ListViews.
func BenchmarkListViews(b *testing.B) {
	ctx := context.Background()
	db := bigViews(b, filepath.Join(b.TempDir(), "big.db"), 100_000)
	uid := 1003
	for _, bb := range []struct {
		name string
		f    ViewFilter
	}{
		{name: "newest", f: ViewFilter{Limit: 50}},
		{name: "page 101", f: ViewFilter{Limit: 50, Offset: 5000}},
		{name: "user", f: ViewFilter{User: "bob", Limit: 50}},
		{name: "uid", f: ViewFilter{UID: &uid, Limit: 50}},
		{name: "account", f: ViewFilter{Account: "acct2", Limit: 50}},
		{name: "state", f: ViewFilter{State: "completed", Limit: 50}},
		{name: "running", f: ViewFilter{State: "running", Limit: 50}},
		{name: "window", f: ViewFilter{Since: vbase.Add(200 * time.Hour), Until: vbase.Add(220 * time.Hour), Limit: 50}},
		{name: "job id", f: ViewFilter{JobID: "51019", Limit: 50}},
		// What show asks: the raw id or the array or het job of that id,
		// and an array task.
		{name: "slurm job id", f: ViewFilter{Job: &slurmext.JobRef{Base: "51019", ArrayTaskID: -1, HetOffset: -1}}},
		{name: "array task", f: ViewFilter{Job: &slurmext.JobRef{Base: "51019", ArrayTaskID: 1, HetOffset: -1}}},
		{name: "newest with series", f: ViewFilter{Limit: 50, WithSeries: true}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.listViews(ctx, bb.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("GetView", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.getView(ctx, "lab", "51000"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// busyGPU is a GPU of job id observed n times at util percent with mem
// bytes in use.
func busyGPU(id string, index int, start time.Time, util uint32, mem uint64) profile.GPU {
	g := profile.NewGPU(gpu.Device{UUID: fmt.Sprintf("GPU-%s-%d", id, index), Name: "NVIDIA H100 80GB HBM3", Minor: index, MemoryTotal: 80 << 30},
		index, start, time.Second, profile.DefaultMaxPoints)
	for i := range 5 {
		g.Observe(profile.Reading{Time: start.Add(time.Duration(i) * time.Second), Util: gpu.Some(util), MemUsed: gpu.Some(mem)}, time.Second)
	}
	return g
}

// sortFixture stores five jobs whose every sort key differs, with ties
// where the tie-break matters; TestListViewsSort lists their values.
func sortFixture(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	sched := func(cluster, id, name, user, state string, submit, start, end time.Time, gpus int) slurmext.JobRecord {
		r := rec(id, state, start, end, "jobcomp")
		r.Cluster, r.Name, r.User, r.Submit, r.ReqGPUs = cluster, name, user, submit, gpus
		return r
	}
	records := []slurmext.JobRecord{
		sched("lab", "11", "Train-A", "bob", "COMPLETED", at(0.5), at(1), at(3), 2),
		sched("lab", "2", "eval", "alice", "RUNNING", at(4), at(5), time.Time{}, 4),
		sched("lab", "4", "", "dave", "PENDING", at(7), time.Time{}, time.Time{}, 1),
		sched("hpc", "5", "train-b", "alice", "FAILED", at(-1), at(0), at(4), 1),
	}
	if _, _, _, err := db.PutSchedJobs(ctx, records); err != nil {
		t.Fatal(err)
	}
	a := simpleJob("lab", "11", "gpu01", "bob", 1002, at(1), time.Time{})
	a.GPUs = []profile.GPU{busyGPU("11", 0, at(1), 50, 10<<30), busyGPU("11", 1, at(1), 70, 30<<30)}
	a.Finish(at(3))
	c := simpleJob("lab", "30", "gpu02", "carol", 1003, at(2), time.Time{})
	c.GPUs = []profile.GPU{busyGPU("30", 0, at(2), 10, 50<<30)}
	c.Finish(at(2.5))
	e := simpleJob("hpc", "5", "gpu01", "alice", 1001, at(0), time.Time{})
	e.GPUs = []profile.GPU{busyGPU("5", 0, at(0), 90, 30<<30)}
	e.Finish(at(4))
	for _, j := range []profile.Job{a, c, e} {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
}

func TestListViewsSort(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	sortFixture(t, db)
	// Job:      11          2          4          5 (hpc)    30 (profile only)
	// name:     Train-A     eval       -          train-b    -
	// user:     bob         alice      dave       alice      carol
	// state:    COMPLETED   RUNNING    PENDING    FAILED     finished
	// start:    1h          5h         (submit 7h) 0h        2h
	// elapsed:  2h          1h (now 6h) -         4h         0.5h
	// gpus:     2 (seen)    4 (asked)  1 (asked)  1          1
	// vram:     30G         -          -          30G        50G
	// util:     60          -          -          90         10
	now := at(6)
	tests := []struct {
		sort string
		asc  bool
		want []string
	}{
		{sort: "", want: []string{"4", "2", "30", "11", "5"}},
		{sort: SortStart, want: []string{"4", "2", "30", "11", "5"}},
		{sort: SortStart, asc: true, want: []string{"5", "11", "30", "2", "4"}},
		{sort: SortID, want: []string{"2", "4", "5", "11", "30"}},
		{sort: SortID, asc: true, want: []string{"30", "11", "5", "4", "2"}},
		// Case folded; no name last, ties by cluster and id ("30" < "4").
		{sort: SortName, want: []string{"2", "11", "5", "30", "4"}},
		{sort: SortName, asc: true, want: []string{"5", "11", "2", "4", "30"}},
		// alice twice: hpc before lab.
		{sort: SortUser, want: []string{"5", "2", "11", "30", "4"}},
		{sort: SortState, want: []string{"11", "5", "30", "4", "2"}},
		{sort: SortElapsed, want: []string{"5", "11", "2", "30", "4"}},
		{sort: SortElapsed, asc: true, want: []string{"30", "2", "11", "5", "4"}},
		// Three with 1 GPU: lab before hpc, "4" before "30" (descending).
		{sort: SortGPUs, want: []string{"2", "11", "4", "30", "5"}},
		{sort: SortVRAM, want: []string{"30", "11", "5", "4", "2"}},
		{sort: SortVRAM, asc: true, want: []string{"5", "11", "30", "2", "4"}},
		{sort: SortUtil, want: []string{"5", "11", "30", "4", "2"}},
		{sort: SortUtil, asc: true, want: []string{"30", "11", "5", "2", "4"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s asc=%v", tt.sort, tt.asc), func(t *testing.T) {
			f := ViewFilter{Sort: tt.sort, Asc: tt.asc, Now: now}
			got, err := db.listViews(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if ids := viewIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("ListViews(sort %q, asc %v) = %v, want %v", tt.sort, tt.asc, ids, tt.want)
			}
			// Every page is the slice of the whole order.
			for limit := 1; limit <= 3; limit++ {
				for offset := 0; offset <= len(tt.want); offset++ {
					f.Limit, f.Offset = limit, offset
					page, err := db.listViews(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := viewIDs(page), tt.want[offset:min(offset+limit, len(tt.want))]; !slices.Equal(got, want) {
						t.Errorf("page limit %d offset %d = %v, want %v", limit, offset, got, want)
					}
				}
			}
		})
	}
}

func TestListViewsBadSort(t *testing.T) {
	db := openTest(t, Options{})
	_, err := db.listViews(context.Background(), ViewFilter{Sort: "memory"})
	if !errors.Is(err, ErrBadFilter) {
		t.Fatalf("ListViews(sort memory) error = %v, want ErrBadFilter", err)
	}
	for _, k := range SortKeys() {
		if _, ok := SortDescending(k); !ok {
			t.Errorf("SortKeys has %q, SortDescending does not know it", k)
		}
		if _, err := db.listViews(context.Background(), ViewFilter{Sort: k}); err != nil {
			t.Errorf("ListViews(sort %q): %v", k, err)
		}
	}
}

func TestListViewsText(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	sortFixture(t, db)
	odd := []slurmext.JobRecord{rec("100", "COMPLETED", at(1), at(2), "sacct"), rec("101", "COMPLETED", at(1), at(2), "sacct"), rec("102", "COMPLETED", at(1), at(2), "sacct")}
	odd[0].Name = "50%_done"
	odd[1].Name = "50xxdone"
	odd[2].Name, odd[2].DisplayID = `back\slash`, "77_3"
	odd[0].Account, odd[1].Partition = "vision", "l40s"
	if _, _, _, err := db.PutSchedJobs(ctx, odd); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []string
	}{
		{text: "TRAIN", want: []string{"5", "11"}},
		{text: "ain-", want: []string{"5", "11"}},
		{text: "3", want: []string{"30", "102"}}, // a profile-only job by id; 77_3
		{text: "30", want: []string{"30"}},
		{text: "1", want: []string{"11", "100", "101", "102"}},
		{text: "%", want: []string{"100"}},
		{text: "50%_", want: []string{"100"}},
		{text: "_", want: []string{"100", "102"}},
		{text: "x_", want: []string{}},
		{text: `\`, want: []string{"102"}},
		{text: "77_3", want: []string{"102"}}, // display id
		{text: "nothing", want: []string{}},
		// Users: from the scheduler record, and from the profile of a job
		// that has none (30 is carol's).
		{text: "ALICE", want: []string{"2", "5"}},
		{text: "dave", want: []string{"4"}},
		{text: "carol", want: []string{"30"}},
		{text: "Vision", want: []string{"100"}}, // account
		{text: "l40", want: []string{"101"}},    // partition
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			f := ViewFilter{Text: tt.text, Sort: SortID}
			got, err := db.listViews(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if ids := viewIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("ListViews(text %q) = %v, want %v", tt.text, ids, tt.want)
			}
			n, err := db.countViews(ctx, f)
			if err != nil || n != len(tt.want) {
				t.Errorf("CountViews(text %q) = %d, %v; want %d", tt.text, n, err, len(tt.want))
			}
		})
	}
}

// TestCountViews checks that CountViews counts what ListViews lists, for
// every filter of TestListViews's fixture and of random databases.
func TestCountViews(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	viewFixture(t, db)
	uid, erin := 1003, 1005
	filters := []ViewFilter{
		{}, {Cluster: "hpc"}, {JobID: "3"}, {User: "alice"}, {User: "erin"}, {UID: &uid}, {UID: &erin},
		{Account: "vision"}, {State: "completed"}, {State: "RUNNING"}, {State: "finished"},
		{Since: at(3.5), Until: at(5.5)}, {Since: at(6.1)}, {Until: at(1)}, {User: "alice", State: "running"},
		{User: "mallory"}, {Text: "1"},
		{Limit: 2, Offset: 1}, // ignored
	}
	for _, f := range filters {
		vs, err := db.listViews(ctx, ViewFilter{Cluster: f.Cluster, JobID: f.JobID, User: f.User, UID: f.UID, Account: f.Account,
			State: f.State, Text: f.Text, Since: f.Since, Until: f.Until})
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.countViews(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(vs) {
			t.Errorf("CountViews(%+v) = %d, ListViews lists %d: %v", f, n, len(vs), viewIDs(vs))
		}
	}
	// A known answer, so a count that agrees with a broken list still fails.
	if n, err := db.countViews(ctx, ViewFilter{}); err != nil || n != 10 {
		t.Errorf("CountViews() = %d, %v; want 10", n, err)
	}

	rdb := openTest(t, Options{})
	want := randomViews(t, rdb, 60, rand.New(rand.NewPCG(3, 5)))
	for _, f := range []ViewFilter{{}, {User: "u1"}, {State: "running"}, {State: "finished"}, {Since: at(10), Until: at(30)}} {
		vs, err := rdb.listViews(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		n, err := rdb.countViews(ctx, f)
		if err != nil || n != len(vs) {
			t.Errorf("CountViews(%+v) = %d, %v; ListViews lists %d", f, n, err, len(vs))
		}
		if f == (ViewFilter{}) && n != len(want) {
			t.Errorf("CountViews() = %d, want %d jobs", n, len(want))
		}
	}
}

// TestListViewsSortPages checks pages of every sort key against the whole
// list on random databases, where arms and ties mix.
func TestListViewsSortPages(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	randomViews(t, db, 40, rand.New(rand.NewPCG(9, 4)))
	eachSortedList(t, db, func(f ViewFilter, all []JobView) {
		ids := viewIDs(all)
		if len(ids) != len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
			t.Errorf("%s: duplicate jobs in %v", describeSort(f), ids)
		}
		for limit := 1; limit <= len(ids)+1; limit += 4 {
			for offset := 0; offset <= len(ids); offset += 3 {
				pf := f
				pf.Limit, pf.Offset = limit, offset
				page, err := db.listViews(ctx, pf)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := viewIDs(page), ids[offset:min(offset+limit, len(ids))]; !slices.Equal(got, want) {
					t.Errorf("%s: page %d+%d = %v, want %v", describeSort(f), offset, limit, got, want)
				}
			}
		}
	})
}

// eachSortedList calls check with every sort key, in both directions,
// over a few filters, and the whole list ListViews gives for each.
func eachSortedList(t *testing.T, db *DB, check func(f ViewFilter, all []JobView)) {
	t.Helper()
	for _, key := range SortKeys() {
		for _, asc := range []bool{false, true} {
			for _, base := range []ViewFilter{{}, {User: "u2"}, {Since: at(10), Until: at(30)}} {
				f := base
				f.Sort, f.Asc, f.Now = key, asc, at(100)
				all, err := db.listViews(context.Background(), f)
				if err != nil {
					t.Fatal(err)
				}
				check(f, all)
			}
		}
	}
}

func describeSort(f ViewFilter) string {
	return fmt.Sprintf("sort %s asc %v user %q since %v", f.Sort, f.Asc, f.User, !f.Since.IsZero())
}

func TestViewFilterScopedTo(t *testing.T) {
	f := ViewFilter{User: "alice", State: "FAILED"}.ScopedTo(1001, "alice")
	if f.UID == nil || *f.UID != 1001 || f.User != "" || f.State != "FAILED" {
		t.Errorf("own user: %+v, want uid 1001, no user filter, the state kept", f)
	}
	f = ViewFilter{User: "bob"}.ScopedTo(1001, "alice")
	if f.UID == nil || *f.UID != 1001 || f.User != "bob" {
		t.Errorf("another user: %+v, want uid 1001 and the user filter kept (it then matches nothing)", f)
	}
	uid := 7
	f = ViewFilter{UID: &uid}.ScopedTo(1001, "")
	if *f.UID != 1001 || uid != 7 {
		t.Errorf("a uid in the filter: %+v (caller's %d), want 1001 and the caller's value untouched", f, uid)
	}
}

// allViews collects what EachView hands over.
func allViews(t *testing.T, db *DB, f ViewFilter) ([]JobView, error) {
	t.Helper()
	var vs []JobView
	err := db.eachView(context.Background(), f, func(v JobView) error {
		vs = append(vs, v)
		return nil
	})
	return vs, err
}

// EachView hands over the jobs ListViews lists, with the same profiles, for
// every filter, on random databases.
func TestEachViewMatchesListViews(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	randomViews(t, db, 80, rand.New(rand.NewPCG(21, 8)))
	uid := 1
	for _, f := range []ViewFilter{{}, {User: "u1"}, {UID: &uid}, {State: "running"}, {State: "finished"}, {State: "COMPLETED"},
		{Since: at(10), Until: at(30)}, {Since: at(25)}, {Until: at(15)}, {Text: "10"}, {Cluster: "c", Partition: "gpu"},
		{Since: at(10), Until: at(30), WithSeries: true}} {
		want, err := db.listViews(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := allViews(t, db, f)
		if err != nil {
			t.Fatal(err)
		}
		byKey := func(a, b JobView) int {
			return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.JobID, b.JobID))
		}
		slices.SortFunc(want, byKey)
		slices.SortFunc(got, byKey)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("EachView(%+v): %v, ListViews: %v", f, viewIDs(got), viewIDs(want))
		}
	}
	if vs, err := allViews(t, db, ViewFilter{}); err != nil || len(vs) != 80 {
		t.Errorf("EachView() = %d views, %v; want 80", len(vs), err)
	}
	if _, err := allViews(t, db, ViewFilter{Sort: "bogus"}); !errors.Is(err, ErrBadFilter) {
		t.Errorf("EachView with a bad sort key: %v, want ErrBadFilter", err)
	}
}

// A lean read hands over the same jobs, each scheduler record the full one
// with only the fields outside analysisColumns left at their defaults.
// SplitReadMin 1: the lean read scans the table in two halves at once.
func TestEachViewLean(t *testing.T) {
	db := openTest(t, Options{SplitReadMin: 1})
	randomViews(t, db, 80, rand.New(rand.NewPCG(3, 9)))
	byKey := func(a, b JobView) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.JobID, b.JobID))
	}
	for _, f := range []ViewFilter{{}, {Since: at(10), Until: at(30)}, {User: "u1"}, {State: "running"}} {
		full, err := allViews(t, db, f)
		if err != nil {
			t.Fatal(err)
		}
		f.Lean = true
		lean, err := allViews(t, db, f)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(full, byKey)
		slices.SortFunc(lean, byKey)
		if len(full) != len(lean) || len(full) == 0 {
			t.Fatalf("%+v: %d lean views, %d full", f, len(lean), len(full))
		}
		withSched := 0
		for i := range full {
			w, g := full[i], lean[i]
			if w.Sched != nil {
				withSched++
				r := *w.Sched
				r.Reason, r.NodeCount, r.CPUs, r.ReqTRES, r.AllocTRES, r.GPUsFrom = "", 0, 0, "", "", ""
				if !r.Start.Equal(r.End) || r.Start.IsZero() {
					r.NodeList = "" // kept where slurmext.Started needs it
				}
				r.ArrayTaskSpec, r.CancelledBy, r.DerivedStatus, r.DerivedSignal, r.Restarts, r.Source = "", -1, 0, 0, 0, ""
				w.Sched = &r
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%+v: lean view %s = %+v\nwant %+v", f, g.JobID, g.Sched, w.Sched)
			}
		}
		if withSched == 0 && f.State == "" {
			t.Errorf("%+v: no scheduler records to compare", f)
		}
	}
	// fn's error stops both halves and is returned as it is.
	stop := errors.New("stop")
	n := 0
	err := db.eachView(context.Background(), ViewFilter{Lean: true}, func(JobView) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("EachView after fn's error: %v after %d views, want stop after 3", err, n)
	}
}

// A page after a job (keyset paging) is the page an offset of that job's
// position + 1 gives, for every sort key and direction, on random
// databases where the arms, ties and missing values mix.
func TestListViewsAfter(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	randomViews(t, db, 40, rand.New(rand.NewPCG(5, 17)))
	eachSortedList(t, db, func(f ViewFilter, all []JobView) {
		ids := viewIDs(all)
		for i, v := range all {
			for _, limit := range []int{1, 3, 7} {
				pf := f
				pf.AfterCluster, pf.AfterJobID, pf.Limit = v.Cluster, v.JobID, limit
				page, err := db.listViews(ctx, pf)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := viewIDs(page), ids[i+1:min(i+1+limit, len(ids))]; !slices.Equal(got, want) {
					t.Errorf("%s: %d after %s = %v, want %v", describeSort(f), limit, v.JobID, got, want)
				}
			}
		}
	})
	if _, err := db.listViews(ctx, ViewFilter{AfterCluster: "nope", AfterJobID: "1", Limit: 5}); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a job that does not exist: %v, want ErrNotFound", err)
	}
}

// EachView stops at fn's error, and otherwise hands over every view.
func TestEachViewStops(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	randomViews(t, db, 30, rand.New(rand.NewPCG(2, 9)))
	stop := errors.New("enough")
	n := 0
	err := db.eachView(ctx, ViewFilter{}, func(JobView) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("EachView stopped after %d views with %v, want 5 and fn's error", n, err)
	}
	all, err := allViews(t, db, ViewFilter{})
	if err != nil || len(all) != 30 {
		t.Errorf("EachView = %d views, %v; want 30", len(all), err)
	}
}

// slurmIDFixture fills db with what a real Slurm 22.05 reported
// (../slurmext/testdata: arrays 6 and 7, heterogeneous jobs 12 and 21, the
// unsplit array 25_[1-4]) as an sacct import, plus GPU profiles, which
// know only raw ids: one of task 6_1 (raw id 10) and one of job 99, which
// has no record. Task 6_1 belongs to uid 1001, the rest to root. Cluster
// "hpc" has a job 6 of its own.
func slurmIDFixture(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	var recs []slurmext.JobRecord
	for _, file := range []string{"22.05-P-steps-iso.txt", "22.05-P-duplicates.txt"} {
		f, err := os.Open(filepath.Join("..", "slurmext", "testdata", "sacct", file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fields := strings.Split("JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS,Submit,Eligible,Start,End,"+
			"Elapsed,Timelimit,State,ExitCode,DerivedExitCode,NodeList,NNodes,NCPUS,ReqTRES,AllocTRES,Reason,Cluster", ",")
		r := sacct.NewReader(f, fields, sacct.Options{Cluster: "lab"})
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			rec.Cluster = "lab"
			if rec.JobID == "10" {
				rec.UID, rec.User = 1001, "alice"
			}
			recs = append(recs, rec)
		}
	}
	other := rec("6", "COMPLETED", at(1), at(2), "sacct")
	other.Cluster = "hpc"
	recs = append(recs, other)
	if _, _, _, err := db.PutSchedJobs(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, j := range []profile.Job{
		simpleJob("lab", "10", "localhost", "alice", 1001, at(1), at(2)),
		simpleJob("lab", "99", "localhost", "root", 0, at(1), at(2)),
	} {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListViewsSlurmJobID looks jobs up by the ids Slurm prints, as `sacct
// -j` reads them: through every reader (ListViews, CountViews, EachView),
// and within a non-admin's scope.
func TestListViewsSlurmJobID(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	slurmIDFixture(t, db)
	ref := func(s string) *slurmext.JobRef {
		r, err := slurmext.ParseJobRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	key := func(v JobView) string { return v.Cluster + "/" + v.JobID }
	tests := []struct {
		name string
		f    ViewFilter
		want []string // cluster/raw id, by cluster then raw id
		ids  []string // their SlurmID, same order
	}{
		{name: "array task", f: ViewFilter{Job: ref("6_1")}, want: []string{"lab/10"}, ids: []string{"6_1"}},
		{name: "array task whose raw id is the array's", f: ViewFilter{Job: ref("6_3")}, want: []string{"lab/6"}, ids: []string{"6_3"}},
		{name: "raw id of a task", f: ViewFilter{Job: ref("10")}, want: []string{"lab/10"}, ids: []string{"6_1"}},
		{name: "array job: every task, in every cluster", f: ViewFilter{Job: ref("6")},
			want: []string{"hpc/6", "lab/10", "lab/11", "lab/6"}, ids: []string{"6", "6_1", "6_2", "6_3"}},
		{name: "array job in one cluster", f: ViewFilter{Cluster: "lab", Job: ref("6")},
			want: []string{"lab/10", "lab/11", "lab/6"}, ids: []string{"6_1", "6_2", "6_3"}},
		{name: "array job of five", f: ViewFilter{Job: ref("7")},
			want: []string{"lab/16", "lab/17", "lab/18", "lab/19", "lab/7"}, ids: []string{"7_1", "7_2", "7_3", "7_4", "7_5"}},
		{name: "het component", f: ViewFilter{Job: ref("12+1")}, want: []string{"lab/13"}, ids: []string{"12+1"}},
		{name: "het leader", f: ViewFilter{Job: ref("12+0")}, want: []string{"lab/12"}, ids: []string{"12+0"}},
		{name: "het job: every component", f: ViewFilter{Job: ref("21")}, want: []string{"lab/21", "lab/22"}, ids: []string{"21+0", "21+1"}},
		{name: "raw id of a het component", f: ViewFilter{Job: ref("22")}, want: []string{"lab/22"}, ids: []string{"21+1"}},
		{name: "unsplit array tasks", f: ViewFilter{Job: ref("25_[1-4]")}, want: []string{"lab/25"}, ids: []string{"25_[1-4]"}},
		{name: "unsplit array by its id", f: ViewFilter{Job: ref("25")}, want: []string{"lab/25"}, ids: []string{"25_[1-4]"}},
		{name: "plain job", f: ViewFilter{Job: ref("1")}, want: []string{"lab/1"}, ids: []string{"1"}},
		{name: "profile only, by raw id", f: ViewFilter{Job: ref("99")}, want: []string{"lab/99"}, ids: []string{"99"}},
		{name: "profile only has no array id", f: ViewFilter{Job: ref("99_1")}, want: nil},
		{name: "no such task", f: ViewFilter{Job: ref("6_4")}, want: nil},
		{name: "another array's tasks", f: ViewFilter{Job: ref("25_[1-3]")}, want: nil},
		{name: "a task is not a het component", f: ViewFilter{Job: ref("6+1")}, want: nil},
		{name: "no such job", f: ViewFilter{Job: ref("4242")}, want: nil},
		{name: "scoped: only the own task of an array", f: ViewFilter{Job: ref("6")}.ScopedTo(1001, "alice"),
			want: []string{"lab/10"}, ids: []string{"6_1"}},
		{name: "scoped: someone else's task", f: ViewFilter{Job: ref("6_2")}.ScopedTo(1001, "alice"), want: nil},
		{name: "with other filters", f: ViewFilter{Job: ref("7"), State: "COMPLETED"},
			want: []string{"lab/16", "lab/17", "lab/18", "lab/19", "lab/7"}, ids: []string{"7_1", "7_2", "7_3", "7_4", "7_5"}},
		{name: "with a filter that excludes", f: ViewFilter{Job: ref("7"), State: "FAILED"}, want: nil},
	}
	sorted := func(vs []JobView) ([]string, []string) {
		slices.SortFunc(vs, func(a, b JobView) int {
			return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.JobID, b.JobID))
		})
		var keys, ids []string
		for _, v := range vs {
			keys, ids = append(keys, key(v)), append(ids, v.SlurmID())
		}
		return keys, ids
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := db.listViews(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			keys, ids := sorted(vs)
			if !slices.Equal(keys, tt.want) || !slices.Equal(ids, tt.ids) {
				t.Errorf("ListViews(job %s) = %v as %v, want %v as %v", tt.f.Job, keys, ids, tt.want, tt.ids)
			}
			if n, err := db.countViews(ctx, tt.f); err != nil || n != len(tt.want) {
				t.Errorf("CountViews(job %s) = %d, %v; want %d", tt.f.Job, n, err, len(tt.want))
			}
			each, err := allViews(t, db, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if keys, _ := sorted(each); !slices.Equal(keys, tt.want) {
				t.Errorf("EachView(job %s) = %v, want %v", tt.f.Job, keys, tt.want)
			}
		})
	}
	// The task's profile comes with it, found by its Slurm id.
	vs, err := db.listViews(ctx, ViewFilter{Job: ref("6_1"), WithSeries: true})
	if err != nil || len(vs) != 1 || len(vs[0].Profiles) != 1 || vs[0].Sched == nil {
		t.Fatalf("6_1: %+v, %v; want the record and its profile", vs, err)
	}
}

func TestParseStateFilter(t *testing.T) {
	tests := []struct{ name, in, want, wantErr string }{
		{"empty selects every state", "", "", ""},
		{"slurm state", "completed", "COMPLETED", ""},
		{"short form", "CD", "COMPLETED", ""},
		{"profile status", " Finished ", "finished", ""},
		{"unknown", "done", "", "or finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStateFilter(tt.in)
			if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("ParseStateFilter(%q) = %q, %v; want %q, error containing %q", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
