package jobsource

import (
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// noticesBase is the day of the notices tests: 2026-10-05 08:00 UTC.
var noticesBase = time.Date(2026, 10, 5, 8, 0, 0, 0, time.UTC)

// fakeViews serves fixed views, as the collector or the agent's query
// socket would (scoped there).
type fakeViews []store.JobView

func (f fakeViews) Each(_ context.Context, _ store.ViewFilter, fn func(store.JobView) error) error {
	for _, v := range f {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// Through the collector or the socket, the notices come with the
// profiles: every node's, filtered by rule and time here.
func TestCollectNoticesFromProfiles(t *testing.T) {
	b := noticesBase
	n := func(rule string, at time.Time) profile.Notice {
		return profile.Notice{Rule: rule, Time: at, Status: profile.NoticeSent, Evidence: rule}
	}
	rec := &slurmext.JobRecord{Cluster: "lab", JobID: "58", DisplayID: "53_1", ArrayJobID: "53", ArrayTaskID: 1, HetOffset: -1,
		Name: "sweep", User: "carol"}
	views := fakeViews{
		{Cluster: "lab", JobID: "58", Sched: rec, Profiles: []profile.Job{
			{Key: profile.Key{Cluster: "lab", JobID: "58", Node: "gpu01"}, Notices: []profile.Notice{n(profile.RuleIdleGPU, b)}},
			{Key: profile.Key{Cluster: "lab", JobID: "58", Node: "gpu02"}, Notices: []profile.Notice{
				n(profile.RuleIdleGPU, b.Add(time.Minute)), n(profile.RuleIdleJob, b.Add(2*time.Hour))}},
		}},
		{Cluster: "lab", JobID: "60", Profiles: []profile.Job{
			{Key: profile.Key{Cluster: "lab", JobID: "60", Node: "gpu01"}, User: "dave",
				Notices: []profile.Notice{n(profile.RuleIdleGPU, b.Add(-time.Hour))}},
		}},
	}
	rows, err := collectNotices(context.Background(), views, NoticeQuery{Rule: profile.RuleIdleGPU, Since: b.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Node != "gpu02" || rows[1].Node != "gpu01" {
		t.Fatalf("rows = %+v, want the idle_gpu notices of both nodes of job 58, newest first", rows)
	}
	if r := rows[0]; r.SlurmID != "53_1" || r.JobID != "58" || r.User != "carol" || r.JobName != "sweep" {
		t.Errorf("row = %+v, want job 53_1 (raw 58) of carol, named sweep", r)
	}
	all, err := collectNotices(context.Background(), views, NoticeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 || all[3].User != "dave" || all[3].SlurmID != "60" {
		t.Errorf("all = %+v, want 4 with job 60's (user from its profile) last", all)
	}
}

// Over noticeLookups jobs, their Slurm ids and names come from one pass
// over the window's jobs: the same rows as one lookup each.
func TestNoticesManyJobs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "many.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := noticeLookups + 20
	for k := range n {
		id := strconv.Itoa(2000 + k)
		start := noticesBase.Add(time.Duration(k) * time.Minute)
		p := profile.Job{Key: profile.Key{Cluster: "lab", JobID: id, Node: "gpu01"}, User: "alice", UID: 1001,
			Start: start, End: start.Add(time.Hour), Status: profile.StatusFinished, Source: profile.SourceAgent,
			Notices: []profile.Notice{{Rule: profile.RuleIdleJob, Status: profile.NoticeSent, Time: start.Add(30 * time.Minute), Evidence: "idle"}}}
		if err := db.PutJob(ctx, p); err != nil {
			t.Fatal(err)
		}
		if k%2 == 0 { // every other job has its scheduler record: an array task
			r := slurmext.JobRecord{Cluster: "lab", JobID: id, DisplayID: "900_" + strconv.Itoa(k), ArrayJobID: "900", ArrayTaskID: k,
				HetOffset: -1, Name: "sweep", User: "alice", UID: 1001, State: "COMPLETED", CancelledBy: -1,
				Submit: start, Start: start, End: start.Add(time.Hour)}
			if err := db.PutSchedJob(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := ForCaller(db, store.Caller{Admin: true})
	rows, err := src.Notices(ctx, NoticeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for _, r := range rows {
		k, _ := strconv.Atoi(r.JobID)
		k -= 2000
		want, name := r.JobID, ""
		if k%2 == 0 {
			want, name = "900_"+strconv.Itoa(k), "sweep"
		}
		if r.SlurmID != want || r.JobName != name {
			t.Errorf("job %s: slurm id %q, name %q; want %q, %q", r.JobID, r.SlurmID, r.JobName, want, name)
		}
	}
	// The digest's one pass gives the same rows, with the jobs' input;
	// so do a few notices (looked up one by one in Notices).
	for _, q := range []NoticeQuery{{}, {Since: noticesBase.Add(30 * time.Minute), Until: noticesBase.Add(35 * time.Minute)}} {
		want, err := src.Notices(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		in, got, err := src.inputAndNotices(ctx, store.ViewFilter{Lean: true}, noticesBase, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Jobs) != n || !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: one pass: %d jobs, rows\n%+v\nwant %d jobs, rows\n%+v", q, len(in.Jobs), got, n, want)
		}
	}
}
