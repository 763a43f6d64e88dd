package collect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// TestClientAgainstServer runs the client against the real handler: the
// binding the client makes must be the one the server checks, for every
// shape of query.
func TestClientAgainstServer(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	ctx := context.Background()

	node := Client{URL: hs.URL + "/", Munge: m.as(rootOn("gpu03"))}
	j := testJob("9", "gpu03", aliceUID, true)
	if err := node.Push(ctx, j); err != nil {
		t.Fatalf("Push: %v", err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatalf("GetJob after Push: %v", err)
	}
	if got.Status != profile.StatusFinished || got.UID != aliceUID {
		t.Errorf("pushed profile stored as status %s uid %d", got.Status, got.UID)
	}
	// Pushing again is harmless (the outbox delivers at least once).
	if err := node.Push(ctx, j); err != nil {
		t.Errorf("second Push: %v", err)
	}

	tests := []struct {
		name string
		as   Identity
		f    store.ViewFilter
		want []string
	}{
		{name: "user, no filter", as: alice, want: []string{"1", "3", "9"}},
		{name: "user, job filter", as: alice, f: store.ViewFilter{JobID: "3", Limit: 5}, want: []string{"3"}},
		{name: "admin, user filter", as: admin, f: store.ViewFilter{User: "user1002"}, want: []string{"2", "4"}},
		{name: "admin, time window", as: admin, f: store.ViewFilter{Since: t0.Add(90 * time.Minute), Until: t0.Add(3 * time.Hour)}, want: []string{"2", "3"}},
		{name: "hostile user value", as: admin, f: store.ViewFilter{User: "a b&user=user1001", State: "x=y"}, want: []string{}},
		{name: "paging", as: admin, f: store.ViewFilter{Limit: 1, Offset: 1, WithSeries: true}, want: []string{"2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			views, err := Client{URL: hs.URL, Munge: m.as(tt.as)}.Jobs(ctx, tt.f)
			if err != nil {
				t.Fatalf("Jobs: %v", err)
			}
			ids := make([]string, 0, len(views))
			for _, v := range views {
				ids = append(ids, v.JobID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tt.want) {
				t.Errorf("jobs = %v, want %v", ids, tt.want)
			}
		})
	}
}

// TestClientCountAndSort checks that Count and the sort and text fields
// reach the collector, and that the collector scopes the count.
func TestClientCountAndSort(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	ctx := context.Background()
	counts := []struct {
		name string
		as   Identity
		f    store.ViewFilter
		want int
	}{
		{name: "user, no filter", as: alice, want: 2},
		{name: "user asks for someone else", as: alice, f: store.ViewFilter{User: "user1002"}, want: 0},
		{name: "admin, paged filter", as: admin, f: store.ViewFilter{Limit: 1, Offset: 3, WithSeries: true}, want: 4},
		{name: "admin, text", as: admin, f: store.ViewFilter{Text: "4"}, want: 1},
	}
	for _, tt := range counts {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Client{URL: hs.URL, Munge: m.as(tt.as)}.Count(ctx, tt.f)
			if err != nil || n != tt.want {
				t.Errorf("Count(%+v) = %d, %v; want %d", tt.f, n, err, tt.want)
			}
		})
	}
	views, err := Client{URL: hs.URL, Munge: m.as(admin)}.Jobs(ctx, store.ViewFilter{Sort: store.SortID, Asc: true, Text: "", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range views {
		ids = append(ids, v.JobID)
	}
	if want := []string{"4", "3", "2"}; !slices.Equal(ids, want) {
		t.Errorf("Jobs(sort id, reversed, limit 3) = %v, want %v", ids, want)
	}
	if _, err := (Client{URL: hs.URL, Munge: m.as(admin)}).Count(ctx, store.ViewFilter{Sort: "nope"}); !errors.Is(err, ErrRejected) {
		t.Errorf("Count(sort nope) error = %v, want ErrRejected", err)
	}
}

func TestClientRejected(t *testing.T) {
	s, m, _ := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	// A user may not push: 403, for good.
	err := Client{URL: hs.URL, Munge: m.as(alice)}.Push(context.Background(), testJob("9", "gpu03", aliceUID, true))
	if !errors.Is(err, ErrRejected) {
		t.Errorf("Push as a user: err = %v, want ErrRejected", err)
	}
}

type failingEncoder struct{}

func (failingEncoder) Encode(context.Context, []byte) (string, error) {
	return "", errors.New("munged: socket gone")
}

func TestClientStatus(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         string
		wantErr      bool
		wantRejected bool
	}{
		{name: "ok", status: http.StatusOK, body: "[]"},
		{name: "bad request", status: http.StatusBadRequest, body: "bad filter", wantErr: true, wantRejected: true},
		{name: "unauthorized", status: http.StatusUnauthorized, wantErr: true, wantRejected: true},
		{name: "forbidden", status: http.StatusForbidden, wantErr: true, wantRejected: true},
		{name: "not found", status: http.StatusNotFound, wantErr: true, wantRejected: true},
		{name: "too many requests", status: http.StatusTooManyRequests, wantErr: true},
		{name: "server error", status: http.StatusInternalServerError, wantErr: true},
		{name: "unavailable (locked)", status: http.StatusServiceUnavailable, wantErr: true},
		{name: "bad gateway", status: http.StatusBadGateway, wantErr: true},
		{name: "ok but not JSON", status: http.StatusOK, body: "<html>", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotAuth string
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotAuth = r.Header.Get("Authorization")
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			t.Cleanup(hs.Close)
			m := newFakeMunge()
			_, err := Client{URL: hs.URL, Munge: m.as(alice)}.Jobs(context.Background(), store.ViewFilter{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrRejected) != tt.wantRejected {
				t.Errorf("errors.Is(%v, ErrRejected) = %v, want %v", err, !tt.wantRejected, tt.wantRejected)
			}
			if gotAuth != "MUNGE MUNGE:fake1:" {
				t.Errorf("Authorization = %q, want the issued credential", gotAuth)
			}
		})
	}
}

func TestClientEncodeFails(t *testing.T) {
	called := false
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
	t.Cleanup(hs.Close)
	err := Client{URL: hs.URL, Munge: failingEncoder{}}.Push(context.Background(), testJob("9", "gpu03", aliceUID, true))
	if err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("err = %v, want a munge error that is not ErrRejected (retrying may work)", err)
	}
	if called {
		t.Error("request sent without a credential")
	}
}

func TestClientUnreachable(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	err := Client{URL: url, Munge: newFakeMunge().as(rootNode)}.Push(context.Background(), testJob("9", "gpu03", aliceUID, true))
	if err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("err = %v, want a transport error that is not ErrRejected", err)
	}
}

// each collects what Client.Each hands over.
func each(ctx context.Context, c Client, f store.ViewFilter) ([]store.JobView, error) {
	var vs []store.JobView
	err := c.Each(ctx, f, func(v store.JobView) error {
		vs = append(vs, v)
		return nil
	})
	return vs, err
}

// Each pages through more jobs than one request answers, each page after
// the last job of the one before, and stays scoped to the caller.
func TestClientEachPages(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	ctx := context.Background()
	for _, size := range []int{1, 2, 3, 4, 0} {
		views, err := each(ctx, Client{URL: hs.URL, Munge: m.as(admin), PageSize: size}, store.ViewFilter{Limit: 1, Offset: 2, Sort: store.SortID})
		if err != nil {
			t.Fatalf("page size %d: %v", size, err)
		}
		var ids []string
		for _, v := range views {
			ids = append(ids, v.JobID)
		}
		if want := []string{"3", "2", "4", "1"}; !slices.Equal(ids, want) {
			t.Errorf("Each with pages of %d = %v, want every job newest first %v", size, ids, want)
		}
	}
	views, err := each(ctx, Client{URL: hs.URL, Munge: m.as(alice), PageSize: 1}, store.ViewFilter{})
	if err != nil || len(views) != 2 {
		t.Errorf("Each as alice = %d jobs, %v; want her 2", len(views), err)
	}
}
