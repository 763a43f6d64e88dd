package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestListViewsAfterScoped: for a reader scoped to a uid, a page after
// another uid's job fails exactly as a page after a job that does not
// exist, in every order and for both arms (a scheduler record, a job known
// from profiles only, owned by its first node's uid); the reader's own
// cursors and an unscoped reader's page as before (issue 25, item 6).
func TestListViewsAfterScoped(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	sched := func(id, user string, uid int, hours float64) {
		r := rec(id, "COMPLETED", at(hours), at(hours+1), "jobcomp")
		r.User, r.UID = user, uid
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	prof := func(id, node, user string, uid int, hours float64) {
		if err := db.PutJob(ctx, simpleJob("lab", id, node, user, uid, at(hours), at(hours+1))); err != nil {
			t.Fatal(err)
		}
	}
	sched("1", "alice", 1001, 1)
	prof("1", "n1", "alice", 1001, 1)
	sched("2", "bob", 1002, 2)
	prof("2", "n1", "bob", 1002, 2)
	prof("3", "n1", "bob", 1002, 3) // profiles only, bob's first node
	prof("3", "n2", "alice", 1001, 4)
	prof("4", "n1", "alice", 1001, 5)

	alice := 1001
	for _, key := range SortKeys() {
		for _, asc := range []bool{false, true} {
			f := ViewFilter{Sort: key, Asc: asc, Limit: 5, Now: at(100), AfterCluster: "lab"}.ScopedTo(alice, "alice")
			page := func(id string) ([]JobView, error) {
				pf := f
				pf.AfterJobID = id
				return db.listViews(ctx, pf)
			}
			_, absentErr := page("999")
			if !errors.Is(absentErr, ErrNotFound) {
				t.Fatalf("sort %s asc %v: after an absent job: %v, want ErrNotFound", key, asc, absentErr)
			}
			for _, foreign := range []string{"2", "3"} {
				vs, err := page(foreign)
				if err == nil {
					t.Errorf("sort %s asc %v: alice pages after bob's job %s: %v, want the absent job's ErrNotFound", key, asc, foreign, viewIDs(vs))
					continue
				}
				if got, want := strings.ReplaceAll(err.Error(), "lab/"+foreign, "lab/999"), absentErr.Error(); got != want {
					t.Errorf("sort %s asc %v: after bob's job %s: %q, after an absent one: %q", key, asc, foreign, got, want)
				}
			}
			for _, own := range []string{"1", "4"} {
				if _, err := page(own); err != nil {
					t.Errorf("sort %s asc %v: alice pages after her own job %s: %v", key, asc, own, err)
				}
			}
			unscoped := f
			unscoped.UID, unscoped.AfterJobID = nil, "3"
			if _, err := db.listViews(ctx, unscoped); err != nil {
				t.Errorf("sort %s asc %v: an unscoped reader after bob's job 3: %v", key, asc, err)
			}
		}
	}
}
