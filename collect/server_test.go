package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// fakeMunge stands in for munged: Encode (through an encoder bound to one
// identity) issues a credential naming a payload, Decode returns it once,
// as munged refuses a replayed credential.
type fakeMunge struct {
	mu    sync.Mutex
	next  int
	creds map[string]fakeCred
}

type fakeCred struct {
	id      Identity
	payload []byte
}

func newFakeMunge() *fakeMunge { return &fakeMunge{creds: map[string]fakeCred{}} }

func (m *fakeMunge) issue(id Identity, payload []byte) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	cred := fmt.Sprintf("MUNGE:fake%d:", m.next) // base64, as munge's are
	m.creds[cred] = fakeCred{id: id, payload: append([]byte(nil), payload...)}
	return cred
}

func (m *fakeMunge) Decode(_ context.Context, cred string) (Identity, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.creds[cred]
	if !ok {
		return Identity{}, nil, fmt.Errorf("%w: unknown credential", ErrAuth)
	}
	delete(m.creds, cred)
	return c.id, c.payload, nil
}

// as returns an Encoder whose credentials vouch for id.
func (m *fakeMunge) as(id Identity) Encoder { return fakeEncoder{m: m, id: id} }

type fakeEncoder struct {
	m  *fakeMunge
	id Identity
}

func (e fakeEncoder) Encode(_ context.Context, payload []byte) (string, error) {
	return e.m.issue(e.id, payload), nil
}

var _ Authenticator = (*fakeMunge)(nil)
var _ Encoder = fakeEncoder{}
var _ Encoder = Munge{}
var _ Authenticator = Munge{}

const (
	slurmUID = 64030
	aliceUID = 1001
	bobUID   = 1002
	nodeAddr = "10.0.0.11"
)

var (
	t0        = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	rootNode  = Identity{UID: 0, GID: 0, Host: nodeAddr}
	slurmNode = Identity{UID: slurmUID, GID: slurmUID, Host: nodeAddr}
	alice     = Identity{UID: aliceUID, GID: 100, Host: "10.0.0.2"}
	bob       = Identity{UID: bobUID, GID: 100, Host: "10.0.0.2"}
	admin     = Identity{UID: 0, GID: 0, Host: "10.0.0.2"}
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "central.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testHosts is the tests' site as the collector's resolver sees it: the
// address each node's name resolves to.
var testHosts = map[string][]string{"gpu01": {nodeAddr}, "gpu02": {"10.0.0.12"}, "gpu03": {"10.0.0.13"}}

// rootOn is root on the host node runs on (testHosts).
func rootOn(node string) Identity { return Identity{UID: 0, GID: 0, Host: testHosts[node][0]} }

// fakeResolve answers from hosts; a name not there does not resolve.
func fakeResolve(hosts map[string][]string) ResolveFunc {
	return func(_ context.Context, name string) ([]string, error) {
		if a, ok := hosts[name]; ok {
			return a, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
}

// newTestServer returns a collector on a fresh database, its fake munge,
// and the database; node names resolve as testHosts says unless opts
// brings a resolver. Pushes are placed by their sender unless opts says
// otherwise: most tests hold other rules and have no Slurm records
// (placement_test.go holds serve.placement's).
func newTestServer(t *testing.T, opts ServerOptions) (*Server, *fakeMunge, *store.DB) {
	t.Helper()
	if opts.Resolve == nil {
		opts.Resolve = fakeResolve(testHosts)
	}
	if opts.Placement == "" {
		opts.Placement = PlacementSender
	}
	db := openStore(t)
	m := newFakeMunge()
	return NewServer(db, m, opts, testLogger(t)), m, db
}

// testJob is a profile of job id on node, owned by uid.
func testJob(id, node string, uid int, finished bool) profile.Job {
	j := profile.Job{
		Key:    profile.Key{Cluster: "lab", JobID: id, Node: node},
		User:   fmt.Sprintf("user%d", uid),
		UID:    uid,
		GID:    100,
		Start:  t0,
		Status: profile.StatusRunning,
		Source: profile.SourceAgent,
		GPUs: []profile.GPU{profile.NewGPU(gpu.Device{UUID: "GPU-" + id + "-" + node, Name: "NVIDIA H100", MemoryTotal: 80 << 30},
			0, t0, time.Second, 0)},
	}
	j.GPUs[0].Observe(profile.Reading{Time: t0.Add(time.Second), Util: gpu.Some[uint32](40), MemUsed: gpu.Some[uint64](10 << 30), Processes: 1}, time.Second)
	j.LastSample = t0.Add(time.Second)
	if finished {
		j.Finish(t0.Add(time.Hour))
	}
	return j
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request builds a request whose credential (when cred is not empty)
// comes from the caller; serve runs it through the handler.
func serve(h http.Handler, method, target string, body []byte, authz string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(string(body)))
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// signed issues a credential for exactly this request, as id.
func signed(m *fakeMunge, id Identity, method, target string, body []byte) string {
	return "MUNGE " + m.issue(id, Binding(method, target, body))
}

func TestPush(t *testing.T) {
	good := mustJSON(t, testJob("7", "gpu01", aliceUID, true))
	other := mustJSON(t, testJob("8", "gpu01", aliceUID, true))
	invalid := testJob("7", "", aliceUID, true) // no node: a bad profile
	tests := []struct {
		name  string
		body  []byte
		authz func(m *fakeMunge) string
		want  int
	}{
		{name: "root on a node", body: good, want: http.StatusNoContent,
			authz: func(m *fakeMunge) string { return signed(m, rootNode, "POST", "/v1/profiles", good) }},
		{name: "SlurmUser on a node", body: good, want: http.StatusNoContent,
			authz: func(m *fakeMunge) string { return signed(m, slurmNode, "POST", "/v1/profiles", good) }},
		{name: "no header", body: good, want: http.StatusUnauthorized,
			authz: func(*fakeMunge) string { return "" }},
		{name: "not munge", body: good, want: http.StatusUnauthorized,
			authz: func(*fakeMunge) string { return "Bearer abc" }},
		{name: "garbage credential", body: good, want: http.StatusUnauthorized,
			authz: func(*fakeMunge) string { return "MUNGE MUNGE:garbage:" }},
		{name: "credential for another body", body: good, want: http.StatusUnauthorized,
			authz: func(m *fakeMunge) string { return signed(m, rootNode, "POST", "/v1/profiles", other) }},
		{name: "credential for another path", body: good, want: http.StatusUnauthorized,
			authz: func(m *fakeMunge) string { return signed(m, rootNode, "POST", "/v1/profiles?x=1", good) }},
		{name: "credential for another method", body: good, want: http.StatusUnauthorized,
			authz: func(m *fakeMunge) string { return signed(m, rootNode, "GET", "/v1/profiles", good) }},
		{name: "ordinary user", body: good, want: http.StatusForbidden,
			authz: func(m *fakeMunge) string { return signed(m, alice, "POST", "/v1/profiles", good) }},
		{name: "root on a host that is not a node", body: good, want: http.StatusForbidden,
			authz: func(m *fakeMunge) string {
				return signed(m, Identity{UID: 0, Host: "192.168.9.9"}, "POST", "/v1/profiles", good)
			}},
		{name: "bad JSON", body: []byte(`{"job_id":`), want: http.StatusBadRequest,
			authz: func(m *fakeMunge) string { return signed(m, rootNode, "POST", "/v1/profiles", []byte(`{"job_id":`)) }},
		{name: "invalid profile", body: mustJSON(t, invalid), want: http.StatusBadRequest,
			authz: func(m *fakeMunge) string { return signed(m, rootNode, "POST", "/v1/profiles", mustJSON(t, invalid)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0, slurmUID}, PushHosts: []string{nodeAddr, "10.0.0.12"}})
			w := serve(s.Handler(), "POST", "/v1/profiles", tt.body, tt.authz(m))
			if w.Code != tt.want {
				t.Fatalf("status = %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.want)
			}
			got, err := db.GetJob(context.Background(), profile.Key{Cluster: "lab", JobID: "7", Node: "gpu01"})
			if tt.want != http.StatusNoContent {
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("after a refused push GetJob = %v, %v; want ErrNotFound", got.Key, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("GetJob after push: %v", err)
			}
			if got.Status != profile.StatusFinished || got.UID != aliceUID || len(got.GPUs) != 1 {
				t.Errorf("stored = status %s uid %d %d GPUs, want finished, %d, 1", got.Status, got.UID, len(got.GPUs), aliceUID)
			}
		})
	}
}

// TestPushAnyHostWithoutPushHosts: without serve.nodes any host may push,
// for the nodes it is (here gpu01, whose name resolves to 172.16.0.1).
func TestPushAnyHostWithoutPushHosts(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Resolve: fakeResolve(map[string][]string{"gpu01": {"172.16.0.1"}})})
	body := mustJSON(t, testJob("7", "gpu01", aliceUID, true))
	w := serve(s.Handler(), "POST", "/v1/profiles", body,
		signed(m, Identity{UID: 0, Host: "172.16.0.1"}, "POST", "/v1/profiles", body))
	if w.Code != http.StatusNoContent {
		t.Fatalf("status = %d (%s), want 204", w.Code, w.Body.String())
	}
	if _, err := db.GetJob(context.Background(), profile.Key{Cluster: "lab", JobID: "7", Node: "gpu01"}); err != nil {
		t.Errorf("GetJob: %v", err)
	}
}

func TestPushRunningAfterFinished(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	push := func(j profile.Job) int {
		body := mustJSON(t, j)
		return serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, rootNode, "POST", "/v1/profiles", body)).Code
	}
	if got := push(testJob("7", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Fatalf("finished push: status %d, want 204", got)
	}
	// A late running snapshot (an outbox retry overtaken by the final
	// profile): accepted so the node stops retrying, but not stored.
	if got := push(testJob("7", "gpu01", aliceUID, false)); got != http.StatusNoContent {
		t.Fatalf("running push after finished: status %d, want 204", got)
	}
	got, err := db.GetJob(context.Background(), profile.Key{Cluster: "lab", JobID: "7", Node: "gpu01"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != profile.StatusFinished || got.End.IsZero() {
		t.Errorf("stored status %s end %v, want the finished profile kept", got.Status, got.End)
	}
}

func TestPushBodyTooLarge(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, MaxBody: 64})
	body := mustJSON(t, testJob("7", "gpu01", aliceUID, true))
	w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, rootNode, "POST", "/v1/profiles", body))
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status = %d, want 413", w.Code)
	}
	if _, err := db.GetJob(context.Background(), profile.Key{Cluster: "lab", JobID: "7", Node: "gpu01"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetJob = %v, want ErrNotFound", err)
	}
}

// seedViews stores alice's jobs 1 and 3 and bob's job 2, each with a
// scheduler record and a profile, and job 4, a profile of bob's without a
// scheduler record.
func seedViews(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for i, uid := range []int{aliceUID, bobUID, aliceUID} {
		id := fmt.Sprint(i + 1)
		r := slurmext.JobRecord{
			Cluster: "lab", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
			Name: "train", User: fmt.Sprintf("user%d", uid), UID: uid, Account: "vision", Partition: "gpu",
			State: "COMPLETED", Submit: t0.Add(time.Duration(i) * time.Hour), Start: t0.Add(time.Duration(i) * time.Hour),
			End: t0.Add(time.Duration(i)*time.Hour + 30*time.Minute), Source: "jobcomp",
		}
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := db.PutJob(ctx, testJob(id, "gpu01", uid, true)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutJob(ctx, testJob("4", "gpu02", bobUID, true)); err != nil {
		t.Fatal(err)
	}
}

func viewIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var views []store.JobView
	if err := json.Unmarshal(body, &views); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	ids := make([]string, 0, len(views))
	for _, v := range views {
		ids = append(ids, v.JobID)
	}
	slices.Sort(ids)
	return ids
}

func TestListScoping(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, IsAdmin: func(uid int) bool { return uid == 0 || uid == 5000 }})
	seedViews(t, db)
	tests := []struct {
		name   string
		as     Identity
		target string
		want   []string
	}{
		{name: "user sees own", as: alice, target: "/v1/jobs", want: []string{"1", "3"}},
		{name: "user asks for another user", as: alice, target: "/v1/jobs?user=user1002", want: []string{}},
		{name: "other user sees own, with and without sched record", as: bob, target: "/v1/jobs", want: []string{"2", "4"}},
		{name: "root sees all", as: admin, target: "/v1/jobs", want: []string{"1", "2", "3", "4"}},
		{name: "admin group member sees all", as: Identity{UID: 5000, Host: "h"}, target: "/v1/jobs", want: []string{"1", "2", "3", "4"}},
		{name: "admin filters by user", as: admin, target: "/v1/jobs?user=user1002", want: []string{"2", "4"}},
		{name: "user filters own by job", as: alice, target: "/v1/jobs?job=3", want: []string{"3"}},
		{name: "user asks for another user's job id", as: alice, target: "/v1/jobs?job=2", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s.Handler(), "GET", tt.target, nil, signed(m, tt.as, "GET", tt.target, nil))
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d (%s), want 200", w.Code, w.Body.String())
			}
			if got := viewIDs(t, w.Body.Bytes()); !slices.Equal(got, tt.want) {
				t.Errorf("jobs = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCountScoping checks that the count obeys the list's access rule: a
// user counts only their own jobs, whatever the filter says.
func TestCountScoping(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, IsAdmin: func(uid int) bool { return uid == 0 || uid == 5000 }})
	seedViews(t, db)
	tests := []struct {
		name   string
		as     Identity
		target string
		want   int
	}{
		{name: "user counts own", as: alice, target: "/v1/jobs/count", want: 2},
		{name: "user asks for another user", as: alice, target: "/v1/jobs/count?user=user1002", want: 0},
		{name: "user asks for another user's job id", as: alice, target: "/v1/jobs/count?job=2", want: 0},
		{name: "other user, with and without sched record", as: bob, target: "/v1/jobs/count", want: 2},
		{name: "root counts all", as: admin, target: "/v1/jobs/count", want: 4},
		{name: "admin group member counts all", as: Identity{UID: 5000, Host: "h"}, target: "/v1/jobs/count", want: 4},
		{name: "admin filters by user", as: admin, target: "/v1/jobs/count?user=user1002", want: 2},
		{name: "limit and offset are ignored", as: admin, target: "/v1/jobs/count?limit=1&offset=1", want: 4},
		{name: "text", as: admin, target: "/v1/jobs/count?text=TRA", want: 3},
		{name: "sort is accepted", as: alice, target: "/v1/jobs/count?sort=vram&asc=1", want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s.Handler(), "GET", tt.target, nil, signed(m, tt.as, "GET", tt.target, nil))
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d (%s), want 200", w.Code, w.Body.String())
			}
			var got CountAnswer
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("answer %s: %v", w.Body.String(), err)
			}
			if got.Count != tt.want {
				t.Errorf("count = %d, want %d", got.Count, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name, target, authz string
		want                int
	}{
		{name: "no credential", target: "/v1/jobs/count", want: http.StatusUnauthorized},
		{name: "credential for the list", target: "/v1/jobs/count", authz: signed(m, alice, "GET", "/v1/jobs", nil), want: http.StatusUnauthorized},
		{name: "bad sort", target: "/v1/jobs/count?sort=mem", authz: signed(m, alice, "GET", "/v1/jobs/count?sort=mem", nil), want: http.StatusBadRequest},
		{name: "bad since", target: "/v1/jobs/count?since=x", authz: signed(m, alice, "GET", "/v1/jobs/count?since=x", nil), want: http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if w := serve(s.Handler(), "GET", tt.target, nil, tt.authz); w.Code != tt.want {
				t.Errorf("status = %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.want)
			}
		})
	}

	// The count route does not shadow a job of a cluster named "count".
	j := testJob("7", "gpu01", aliceUID, true)
	j.Cluster = "count"
	if err := db.PutJob(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	target := "/v1/jobs/count/7"
	w := serve(s.Handler(), "GET", target, nil, signed(m, alice, "GET", target, nil))
	var v store.JobView
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &v) != nil || v.Cluster != "count" || v.JobID != "7" {
		t.Errorf("GET %s: status %d, body %.200s; want job count/7", target, w.Code, w.Body.String())
	}
}

func TestListSortAndText(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db)
	get := func(target string) *httptest.ResponseRecorder {
		return serve(s.Handler(), "GET", target, nil, signed(m, admin, "GET", target, nil))
	}
	// Unsorted ids: the order is the server's.
	ids := func(body []byte) []string {
		var views []store.JobView
		if err := json.Unmarshal(body, &views); err != nil {
			t.Fatalf("answer %s: %v", body, err)
		}
		var out []string
		for _, v := range views {
			out = append(out, v.JobID)
		}
		return out
	}
	for _, tt := range []struct {
		target string
		want   []string
	}{
		{target: "/v1/jobs?sort=id", want: []string{"1", "2", "3", "4"}},
		{target: "/v1/jobs?sort=id&asc=1", want: []string{"4", "3", "2", "1"}},
		{target: "/v1/jobs?sort=id&text=tRaIn", want: []string{"1", "2", "3"}},
		{target: "/v1/jobs?text=%25", want: nil}, // % is literal
	} {
		w := get(tt.target)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d (%s)", tt.target, w.Code, w.Body.String())
		}
		if got := ids(w.Body.Bytes()); !slices.Equal(got, tt.want) {
			t.Errorf("GET %s = %v, want %v", tt.target, got, tt.want)
		}
	}
	if w := get("/v1/jobs?sort=bogus"); w.Code != http.StatusBadRequest {
		t.Errorf("unknown sort: status %d, want 400", w.Code)
	}
}

func TestListRefused(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db)
	tests := []struct {
		name  string
		authz func() string
		want  int
	}{
		{name: "no credential", authz: func() string { return "" }, want: http.StatusUnauthorized},
		{name: "credential for another query", want: http.StatusUnauthorized,
			authz: func() string { return signed(m, alice, "GET", "/v1/jobs", nil) }},
		{name: "credential with a body", want: http.StatusUnauthorized,
			authz: func() string { return signed(m, alice, "GET", "/v1/jobs?since=x", []byte("x")) }},
		{name: "bad filter", want: http.StatusBadRequest,
			authz: func() string { return signed(m, alice, "GET", "/v1/jobs?since=x", nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s.Handler(), "GET", "/v1/jobs?since=x", nil, tt.authz())
			if w.Code != tt.want {
				t.Errorf("status = %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.want)
			}
		})
	}
}

func TestGetScoping(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db)
	get := func(as Identity, target string) *httptest.ResponseRecorder {
		return serve(s.Handler(), "GET", target, nil, signed(m, as, "GET", target, nil))
	}

	w := get(alice, "/v1/jobs/lab/1")
	if w.Code != http.StatusOK {
		t.Fatalf("own job: status %d (%s), want 200", w.Code, w.Body.String())
	}
	var v store.JobView
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.JobID != "1" || v.Sched == nil || v.Sched.UID != aliceUID || len(v.Profiles) != 1 {
		t.Errorf("own job view = %s sched %v profiles %d, want job 1 of alice with one profile", v.JobID, v.Sched, len(v.Profiles))
	}
	if len(v.Profiles) == 1 && len(v.Profiles[0].GPUs) == 1 && len(v.Profiles[0].GPUs[0].Series.Points) == 0 {
		t.Error("single-job view has no series; it is asked for WithSeries")
	}

	others := get(alice, "/v1/jobs/lab/2")
	absent := get(alice, "/v1/jobs/lab/999")
	if others.Code != http.StatusNotFound || absent.Code != http.StatusNotFound {
		t.Fatalf("someone else's job: %d, absent job: %d; want 404 for both", others.Code, absent.Code)
	}
	if others.Body.String() != absent.Body.String() {
		t.Errorf("someone else's job answers %q, an absent one %q: the difference leaks which jobs exist",
			others.Body.String(), absent.Body.String())
	}
	if w := get(admin, "/v1/jobs/lab/2"); w.Code != http.StatusOK {
		t.Errorf("admin, bob's job: status %d, want 200", w.Code)
	}
	if w := get(bob, "/v1/jobs/lab/4"); w.Code != http.StatusOK {
		t.Errorf("bob, his profile-only job: status %d, want 200", w.Code)
	}
	if w := get(bob, "/v1/jobs/other/2"); w.Code != http.StatusNotFound {
		t.Errorf("bob, his job id on another cluster: status %d, want 404", w.Code)
	}
	if w := serve(s.Handler(), "GET", "/v1/jobs/lab/1", nil, ""); w.Code != http.StatusUnauthorized {
		t.Errorf("no credential: status %d, want 401", w.Code)
	}
}

func TestViewFilterQueryRoundTrip(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		f    store.ViewFilter
	}{
		{name: "limit only", f: store.ViewFilter{Limit: 50}},
		{name: "every field", f: store.ViewFilter{
			Cluster: "lab", JobID: "123_4", User: "alice", Account: "vision", Partition: "gpu", State: "COMPLETED",
			Text: "50%_done", Sort: store.SortVRAM, Asc: true, Since: since, Until: since.Add(48 * time.Hour), Limit: 20, Offset: 40, WithSeries: true,
			AfterCluster: "lab&x", AfterJobID: "99_1"}},
		{name: "hostile values", f: store.ViewFilter{
			User: "a&user=root", Account: "x=y z", Partition: "p+q%20r", State: "#frag?x", Cluster: "c/d;e", JobID: "1 2", Limit: 1}},
		{name: "hostile text", f: store.ViewFilter{Text: "\x1b[31m<script>&sort=id\"'", Sort: store.SortName, Limit: 2}},
		{name: "unicode", f: store.ViewFilter{User: "unicodé", Account: "研究", Limit: 3}},
		{name: "epoch since", f: store.ViewFilter{Since: time.Unix(0, 0), Limit: 10}},
		{name: "before epoch", f: store.ViewFilter{Until: time.Unix(-86400, 0), Limit: 10}},
		{name: "max limit", f: store.ViewFilter{Limit: 10000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := ViewFilterQuery(tt.f)
			q, err := url.ParseQuery(raw)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", raw, err)
			}
			got, err := parseViewFilter(q)
			if err != nil {
				t.Fatalf("parseViewFilter(%q): %v", raw, err)
			}
			// Times come back in local time: compare instants.
			if !got.Since.Equal(tt.f.Since) || !got.Until.Equal(tt.f.Until) {
				t.Errorf("since, until = %v, %v, want %v, %v", got.Since, got.Until, tt.f.Since, tt.f.Until)
			}
			got.Since, got.Until = tt.f.Since, tt.f.Until
			if !reflect.DeepEqual(got, tt.f) {
				t.Errorf("round trip of %q:\n got %+v\nwant %+v", raw, got, tt.f)
			}
		})
	}
	if got := ViewFilterQuery(store.ViewFilter{}); got != "" {
		t.Errorf("ViewFilterQuery(zero) = %q, want empty", got)
	}
}

func TestParseViewFilter(t *testing.T) {
	tests := []struct {
		name      string
		query     string
		wantErr   bool
		wantLimit int
		wantOff   int
	}{
		{name: "no limit means the cap", query: "", wantLimit: 10000},
		{name: "zero limit means the cap", query: "limit=0", wantLimit: 10000},
		{name: "limit above the cap", query: "limit=999999", wantLimit: 10000},
		{name: "limit and offset", query: "limit=5&offset=10", wantLimit: 5, wantOff: 10},
		{name: "negative limit", query: "limit=-1", wantErr: true},
		{name: "negative offset", query: "offset=-3", wantErr: true},
		{name: "word limit", query: "limit=ten", wantErr: true},
		{name: "since not a number", query: "since=2026-01-01", wantErr: true},
		{name: "until not a number", query: "until=x", wantErr: true},
		{name: "series other than 1", query: "series=true", wantLimit: 10000},
		{name: "every sort key", query: "sort=util&asc=1", wantLimit: 10000},
		{name: "unknown sort key", query: "sort=memory", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parseViewFilter(q)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if f.Limit != tt.wantLimit || f.Offset != tt.wantOff || f.WithSeries {
				t.Errorf("limit, offset, series = %d, %d, %v, want %d, %d, false", f.Limit, f.Offset, f.WithSeries, tt.wantLimit, tt.wantOff)
			}
		})
	}
}

func TestGroupAdmin(t *testing.T) {
	isAdmin, err := store.AdminGroup("")
	if err != nil {
		t.Fatal(err)
	}
	if !isAdmin(0) || isAdmin(aliceUID) {
		t.Errorf("no admin group: isAdmin(0), isAdmin(%d) = %v, %v; want true, false", aliceUID, isAdmin(0), isAdmin(aliceUID))
	}
	if _, err := store.AdminGroup("no-such-group-gpuprof-test"); err == nil {
		t.Error("GroupAdmin of a missing group: no error")
	}
}
