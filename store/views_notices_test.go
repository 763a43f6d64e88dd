package store

import (
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/gpuprof/gpuprof/profile"
)

// noticeViewsFixture stores job 70 (scheduler record, nodes gpu01 and
// gpu02, two notices on gpu01 saved newest first and one on gpu02, and a
// claim on gpu03, where no profile of it exists), job 71 (profiles only,
// one notice) and job 72 (a profile, no notice). It returns the notices
// each job's nodes should read back, oldest first.
func noticeViewsFixture(t *testing.T, db *DB) map[string]map[string][]profile.Notice {
	t.Helper()
	ctx := context.Background()
	r := rec("70", "COMPLETED", at(1), at(5), "jobcomp")
	r.User, r.UID = "alice", 1001
	if err := db.PutSchedJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	idleGPU := profile.Notice{Rule: profile.RuleIdleGPU, Time: at(2), Since: at(1.25), GPUs: []int{1},
		Recipient: "alice@example.org", Status: profile.NoticeSent,
		Evidence: "GPU 1 idle for 00:45:00", Fix: "#SBATCH --gres=gpu:1"}
	idleJob := profile.Notice{Rule: profile.RuleIdleJob, Time: at(3), Since: at(2), GPUs: []int{0, 1},
		Status: profile.NoticeCapped, Evidence: "every GPU idle for 01:00:00", Detail: "daily cap of 3 reached"}
	unused := profile.Notice{Rule: profile.RuleUnusedGPUs, Time: at(2.5), Since: at(1), GPUs: []int{0, 1, 2, 3},
		Status: profile.NoticeSent, Recipient: "alice@example.org", Evidence: "4 GPUs asked for, 1 used"}
	other := profile.Notice{Rule: profile.RuleOversized, Time: at(4), Since: at(3), GPUs: []int{0},
		Status: profile.NoticeOptedOut, Evidence: "8 % of 80 GiB for 01:00:00"}

	a := simpleJob("lab", "70", "gpu01", "alice", 1001, at(1), at(5))
	a.Notices = []profile.Notice{idleJob, idleGPU} // stored newest first
	b := simpleJob("lab", "70", "gpu02", "alice", 1001, at(1), at(5))
	b.Notices = []profile.Notice{unused}
	c := simpleJob("lab", "71", "gpu01", "bob", 1002, at(3), at(6))
	c.Notices = []profile.Notice{other}
	d := simpleJob("lab", "72", "gpu01", "bob", 1002, at(3), at(6))
	for _, j := range []profile.Job{a, b, c, d} {
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	// A claim whose profile never arrived: not part of any view.
	orphan := noticeRec("70", "alice", 1001, profile.RuleIdleGPU, profile.NoticePending, at(2))
	orphan.Node = "gpu03"
	if _, err := db.ClaimNotice(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	norm := func(ns ...profile.Notice) []profile.Notice {
		return Normalize(profile.Job{Key: a.Key, Notices: ns}).Notices
	}
	return map[string]map[string][]profile.Notice{
		"70": {"gpu01": norm(idleGPU, idleJob), "gpu02": norm(unused)},
		"71": {"gpu01": norm(other)},
		"72": {"gpu01": nil},
	}
}

// checkViewNotices compares the notices of each view's profiles with want.
func checkViewNotices(t *testing.T, how string, vs []JobView, want map[string]map[string][]profile.Notice) {
	t.Helper()
	seen := 0
	for _, v := range vs {
		nodes, ok := want[v.JobID]
		if !ok {
			continue
		}
		seen++
		if len(v.Profiles) != len(nodes) {
			t.Errorf("%s: job %s has %d profiles, want %d", how, v.JobID, len(v.Profiles), len(nodes))
		}
		for _, p := range v.Profiles {
			if w := nodes[p.Node]; !reflect.DeepEqual(p.Notices, w) {
				t.Errorf("%s: job %s node %s notices =\n%+v\nwant\n%+v", how, v.JobID, p.Node, p.Notices, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%s: %d of the %d jobs read", how, seen, len(want))
	}
}

// Every view of the store carries each profile's notices, oldest first,
// as GetJob does: ListViews, GetView and EachView (whole, lean, and lean
// read in two halves).
func TestViewsCarryNotices(t *testing.T) {
	ctx := context.Background()
	for _, split := range []int{0, 1} {
		db := openTest(t, Options{SplitReadMin: split})
		want := noticeViewsFixture(t, db)

		vs, err := db.listViews(ctx, ViewFilter{})
		if err != nil {
			t.Fatal(err)
		}
		checkViewNotices(t, "ListViews", vs, want)
		page, err := db.listViews(ctx, ViewFilter{Limit: 1, Sort: SortID})
		if err != nil || len(page) != 1 {
			t.Fatalf("ListViews page: %d views, %v", len(page), err)
		}
		checkViewNotices(t, "ListViews page", page, map[string]map[string][]profile.Notice{"70": want["70"]})
		v, err := db.getView(ctx, "lab", "70")
		if err != nil {
			t.Fatal(err)
		}
		checkViewNotices(t, "GetView", []JobView{v}, map[string]map[string][]profile.Notice{"70": want["70"]})
		for _, f := range []ViewFilter{{}, {Lean: true}, {Lean: true, Since: at(0), Until: at(10)}, {WithSeries: true}} {
			all, err := allViews(t, db, f)
			if err != nil {
				t.Fatal(err)
			}
			checkViewNotices(t, "EachView", all, want)
		}
		// A filter that keeps one job keeps only its notices.
		bob, err := allViews(t, db, ViewFilter{User: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		checkViewNotices(t, "EachView bob", bob, map[string]map[string][]profile.Notice{"71": want["71"], "72": want["72"]})
		for _, v := range bob {
			if v.JobID == "70" {
				t.Errorf("EachView bob: job 70 of alice read")
			}
		}
	}
}

// The notices of a page are read with the page, in one query, whatever
// its size: a store of many jobs with notices lists them all.
func TestListViewsNoticesManyJobs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	const n = 300
	for i := range n {
		j := simpleJob("lab", strconv.Itoa(i+1), "gpu01", "alice", 1001, at(float64(i)), at(float64(i)+1))
		if i%3 == 0 {
			j.Notices = []profile.Notice{{Rule: profile.RuleIdleJob, Time: at(float64(i) + 0.5),
				Status: profile.NoticeSent, Evidence: "idle"}}
		}
		if err := db.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := db.listViews(ctx, ViewFilter{})
	if err != nil || len(vs) != n {
		t.Fatalf("ListViews: %d views, %v", len(vs), err)
	}
	with := 0
	for _, v := range vs {
		with += len(v.Profiles[0].Notices)
	}
	if with != n/3 {
		t.Errorf("ListViews carries %d notices, want %d", with, n/3)
	}
}

// BenchmarkEachViewNotices measures what the report asks of a database of
// 100,000 jobs of which one profile in 20 has a notice: every view of the
// period (EachView, lean as the report's non-admin read and full), and a
// page of ListViews. Compare with BenchmarkListViews (no notices) for the
// cost of reading them: go test ./store -run '^$' -bench EachViewNotices.
func BenchmarkEachViewNotices(b *testing.B) {
	ctx := context.Background()
	db := bigViews(b, filepath.Join(b.TempDir(), "big.db"), 100_000)
	err := db.WithTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO notices (cluster, job_id, node, rule, "user", uid, "time", status, evidence, updated_at)
			SELECT cluster, job_id, node, 'idle_job', "user", uid, coalesce("start", 0) + 600, 'sent', 'the GPU of the job idle', 0
			FROM jobs WHERE CAST(job_id AS INTEGER) % 20 = 0`)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	want := countRows(b, db, "notices")
	for _, bb := range []struct {
		name string
		f    ViewFilter
	}{
		{name: "all lean", f: ViewFilter{Lean: true}},
		{name: "all", f: ViewFilter{}},
		{name: "user", f: ViewFilter{User: "bob"}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := db.eachView(ctx, bb.f, func(v JobView) error {
					for _, p := range v.Profiles {
						n += len(p.Notices)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if bb.f.User == "" && n != want {
					b.Fatalf("EachView read %d notices, want %d", n, want)
				}
			}
		})
	}
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.listViews(ctx, ViewFilter{Limit: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
