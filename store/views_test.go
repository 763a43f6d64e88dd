package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
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
			got, err := db.ListViews(ctx, tt.f)
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
	vs, err := db.ListViews(ctx, ViewFilter{})
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
		all, err := db.ListViews(ctx, f)
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
				page, err := db.ListViews(ctx, pf)
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
			vs, err := db.ListViews(ctx, ViewFilter{WithSeries: tt.withSeries})
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
			v, err := db.GetView(ctx, tt.cluster, tt.id)
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
	v, err := db.GetView(ctx, "lab", "11")
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
		{name: "newest with series", f: ViewFilter{Limit: 50, WithSeries: true}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.ListViews(ctx, bb.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("GetView", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.GetView(ctx, "lab", "51000"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
