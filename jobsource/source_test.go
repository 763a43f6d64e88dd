package jobsource

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// collectAll collects what a Source's Each hands over.
func collectAll(ctx context.Context, s *Source, f store.ViewFilter) ([]store.JobView, error) {
	var vs []store.JobView
	err := s.Each(ctx, f, func(v store.JobView) error {
		vs = append(vs, v)
		return nil
	})
	return vs, err
}

// A non-admin's Source returns that uid's jobs alone, through every
// reader (Each for the analysis and the report, Jobs and Count for the
// lists and the TUI, Job for show and the detail), whatever the filter
// asks for.
func TestJobSourceScopesNonAdmin(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC)
	for i, j := range []struct {
		id, user string
		uid      int
		sched    bool
	}{
		{"1", "alice", 1001, true}, {"2", "alice", 1001, false}, {"3", "bob", 1002, true}, {"4", "bob", 1002, false},
	} {
		start := base.Add(time.Duration(i) * time.Hour)
		if j.sched {
			r := slurmext.JobRecord{Cluster: "c", JobID: j.id, Name: "job" + j.id, User: j.user, UID: j.uid, State: "COMPLETED",
				Submit: start, Start: start, End: start.Add(time.Hour), ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1}
			if err := db.PutSchedJob(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		p := profile.Job{Key: profile.Key{Cluster: "c", JobID: j.id, Node: "n1"}, User: j.user, UID: j.uid, GID: j.uid,
			Start: start, End: start.Add(time.Hour), Status: profile.StatusFinished, Source: "agent"}
		if err := db.PutJob(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	src := ForCaller(db, store.Caller{UID: 1001, User: "alice"})
	defer src.Close()

	ids := func(vs []store.JobView) []string {
		var s []string
		for _, v := range vs {
			s = append(s, v.JobID)
		}
		slices.Sort(s)
		return s
	}
	for _, f := range []store.ViewFilter{{}, {User: "bob"}, {User: "alice"}, {JobID: "3"}, {Since: base, Until: base.AddDate(0, 0, 1)}} {
		all, err := collectAll(ctx, src, f)
		if err != nil {
			t.Fatal(err)
		}
		list, err := src.Jobs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		n, err := src.Count(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]string{ids(all), ids(list)} {
			for _, id := range got {
				if id != "1" && id != "2" {
					t.Errorf("filter %+v: job %s of another user in %v", f, id, got)
				}
			}
		}
		if !slices.Equal(ids(all), ids(list)) || n != len(list) {
			t.Errorf("filter %+v: All %v, Jobs %v, Count %d: want the same jobs", f, ids(all), ids(list), n)
		}
	}
	if got, _ := collectAll(ctx, src, store.ViewFilter{}); !slices.Equal(ids(got), []string{"1", "2"}) {
		t.Errorf("All() = %v, want alice's 1 and 2", ids(got))
	}
	if _, err := src.Job(ctx, "c", "3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(bob's 3) = %v, want not found", err)
	}
	if v, err := src.Job(ctx, "c", "2"); err != nil || v.JobID != "2" {
		t.Errorf("Job(alice's 2) = %v, %v", v.JobID, err)
	}
	// An admin's source (no uid) sees everyone.
	admin := ForCaller(db, store.Caller{User: "root", Admin: true})
	if got, _ := collectAll(ctx, admin, store.ViewFilter{}); len(got) != 4 {
		t.Errorf("admin All() = %v, want all 4 jobs", ids(got))
	}
	// Completion's names come through the same scope.
	if got, err := src.Names(ctx, base, "user"); err != nil || !slices.Equal(got, []string{"alice"}) {
		t.Errorf("alice's Names(user) = %v, %v; want only alice", got, err)
	}
	if got, err := admin.Names(ctx, base, "user"); err != nil || !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("admin Names(user) = %v, %v; want alice and bob", got, err)
	}
	if _, err := admin.Names(ctx, base, "qos"); err == nil {
		t.Error("Names(qos): no error, want one (user, account or partition)")
	}
}
