package collect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// seedArray stores array job 53 as jobcomp reports it: task 1 (raw id 58)
// and task 3 (raw id 53, the array's own) of alice, task 2 (raw id 59) of
// bob, with a profile of task 1.
func seedArray(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for _, task := range []struct {
		raw  string
		n    int
		uid  int
		hour int
	}{{"58", 1, aliceUID, 0}, {"59", 2, bobUID, 1}, {"53", 3, aliceUID, 2}} {
		start := t0.Add(time.Duration(task.hour) * time.Hour)
		r := slurmext.JobRecord{
			Cluster: "lab", JobID: task.raw, DisplayID: fmt.Sprintf("53_%d", task.n), ArrayJobID: "53", ArrayTaskID: task.n,
			HetOffset: -1, CancelledBy: -1, Name: "sweep", User: fmt.Sprintf("user%d", task.uid), UID: task.uid,
			State: "COMPLETED", Submit: t0, Start: start, End: start.Add(time.Minute), Source: "jobcomp",
		}
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutJob(ctx, testJob("58", "gpu01", aliceUID, true)); err != nil {
		t.Fatal(err)
	}
}

// TestClientSlurmJobID: a Slurm job id goes from the client to the
// collector and selects what the local database would, within the
// caller's scope.
func TestClientSlurmJobID(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedArray(t, db)
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	ref := func(id string) *slurmext.JobRef {
		r, err := slurmext.ParseJobRef(id)
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	tests := []struct {
		name string
		as   Identity
		job  string
		want []string // raw ids, sorted
	}{
		{name: "admin: array task", as: admin, job: "53_1", want: []string{"58"}},
		{name: "admin: the array", as: admin, job: "53", want: []string{"53", "58", "59"}},
		{name: "admin: raw id of a task", as: admin, job: "59", want: []string{"59"}},
		{name: "user: own tasks of the array", as: alice, job: "53", want: []string{"53", "58"}},
		{name: "user: own task", as: alice, job: "53_1", want: []string{"58"}},
		{name: "user: someone else's task", as: alice, job: "53_2", want: []string{}},
		{name: "no such task", as: admin, job: "53_7", want: []string{}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := store.ViewFilter{Job: ref(tt.job)}
			views, err := Client{URL: hs.URL, Munge: m.as(tt.as)}.Jobs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, v := range views {
				got = append(got, v.JobID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Jobs(job %s) = %v, want %v", tt.job, got, tt.want)
			}
			n, err := Client{URL: hs.URL, Munge: m.as(tt.as)}.Count(ctx, f)
			if err != nil || n != len(tt.want) {
				t.Errorf("Count(job %s) = %d, %v; want %d", tt.job, n, err, len(tt.want))
			}
		})
	}
}

func TestSlurmJobQuery(t *testing.T) {
	for _, id := range []string{"53_1", "53", "60+1", "53_[1-5%2]", "s0C8F3K2M1A0ZX"} {
		t.Run(id, func(t *testing.T) {
			r, err := slurmext.ParseJobRef(id)
			if err != nil {
				t.Fatal(err)
			}
			raw := ViewFilterQuery(store.ViewFilter{Job: &r, Limit: 5})
			q, err := url.ParseQuery(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseViewFilter(q)
			if err != nil || got.Job == nil || *got.Job != r {
				t.Errorf("round trip of %q: %+v, %v; want job %+v", raw, got.Job, err, r)
			}
		})
	}
	s, m, _ := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	for _, bad := range []string{"abc", "53_1.batch", "0"} {
		target := "/v1/jobs?slurm_job=" + url.QueryEscape(bad)
		w := serve(s.Handler(), "GET", target, nil, signed(m, admin, "GET", target, nil))
		if w.Code != http.StatusBadRequest {
			t.Errorf("slurm_job=%q: status %d (%s), want 400", bad, w.Code, w.Body.String())
		}
		q, _ := url.ParseQuery("slurm_job=" + url.QueryEscape(bad))
		if _, err := parseViewFilter(q); !errors.Is(err, slurmext.ErrBadJobID) {
			t.Errorf("parseViewFilter(slurm_job=%q) = %v, want ErrBadJobID", bad, err)
		}
	}
}
