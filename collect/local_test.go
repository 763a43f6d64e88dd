package collect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/store"
)

// asPeer is a request as it reaches the local server from a connection
// whose peer the kernel named id.
func asPeer(id Identity, method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	return r.WithContext(context.WithValue(r.Context(), peerKey{}, peer{id: id, pid: 4242}))
}

// TestLocalScoping: whatever a user puts in the request (another user,
// uid, job, a munge credential the collector would accept, identity
// headers), the local server answers with the peer's own jobs only.
func TestLocalScoping(t *testing.T) {
	db := openStore(t)
	seedViews(t, db)
	m := newFakeMunge()
	s := NewLocalServer(db, func(uid int) bool { return uid == 0 || uid == 5000 }, testLogger(t))
	tests := []struct {
		name   string
		as     Identity
		target string
		header map[string]string
		want   []string
	}{
		{name: "user sees own", as: alice, target: "/v1/jobs", want: []string{"1", "3"}},
		{name: "user asks for another user", as: alice, target: "/v1/jobs?user=user1002", want: []string{}},
		{name: "user forges a uid parameter", as: alice, target: "/v1/jobs?uid=1002&UID=1002", want: []string{"1", "3"}},
		{name: "user asks for another's job id", as: alice, target: "/v1/jobs?job=2", want: []string{}},
		{name: "user repeats the user parameter", as: alice, target: "/v1/jobs?user=user1001&user=user1002", want: []string{"1", "3"}},
		{name: "user sends root's munge credential", as: alice, target: "/v1/jobs",
			header: map[string]string{"Authorization": signed(m, admin, "GET", "/v1/jobs", nil)}, want: []string{"1", "3"}},
		{name: "user sends identity headers", as: bob, target: "/v1/jobs",
			header: map[string]string{"X-Remote-User": "root", "X-Forwarded-For": "127.0.0.1", "X-Uid": "0"}, want: []string{"2", "4"}},
		{name: "other user sees own", as: bob, target: "/v1/jobs", want: []string{"2", "4"}},
		{name: "root sees all", as: Identity{UID: 0, Host: LocalHost}, target: "/v1/jobs", want: []string{"1", "2", "3", "4"}},
		{name: "admin group sees all", as: Identity{UID: 5000, Host: LocalHost}, target: "/v1/jobs", want: []string{"1", "2", "3", "4"}},
		{name: "admin filters by user", as: Identity{UID: 5000, Host: LocalHost}, target: "/v1/jobs?user=user1002", want: []string{"2", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := asPeer(tt.as, "GET", tt.target)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d (%s), want 200", w.Code, w.Body.String())
			}
			if got := viewIDs(t, w.Body.Bytes()); !slices.Equal(got, tt.want) {
				t.Errorf("jobs = %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("count and one job", func(t *testing.T) {
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, asPeer(alice, "GET", "/v1/jobs/count?user=user1002"))
		if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"count":0}` {
			t.Errorf("alice counts bob's jobs: %d %s, want 200 {\"count\":0}", w.Code, w.Body.String())
		}
		w = httptest.NewRecorder()
		s.Handler().ServeHTTP(w, asPeer(alice, "GET", "/v1/jobs/count"))
		if strings.TrimSpace(w.Body.String()) != `{"count":2}` {
			t.Errorf("alice counts her own jobs: %s, want {\"count\":2}", w.Body.String())
		}
		for target, code := range map[string]int{"/v1/jobs/lab/1": http.StatusOK, "/v1/jobs/lab/2": http.StatusNotFound} {
			w = httptest.NewRecorder()
			s.Handler().ServeHTTP(w, asPeer(alice, "GET", target))
			if w.Code != code {
				t.Errorf("alice GET %s: status %d, want %d", target, w.Code, code)
			}
		}
	})
}

// TestLocalRefuses: no peer credentials (the handler served somewhere
// other than the unix socket) is a refusal, never root; the local server
// takes no push; and the munge collector never takes a peer identity.
func TestLocalRefuses(t *testing.T) {
	db := openStore(t)
	seedViews(t, db)
	local := NewLocalServer(db, nil, testLogger(t))

	w := serve(local.Handler(), "GET", "/v1/jobs", nil, "")
	if w.Code != http.StatusUnauthorized {
		t.Errorf("local query without peer credentials: status %d, want 401", w.Code)
	}
	r := httptest.NewRequest("GET", "/v1/jobs", nil)
	r = r.WithContext(context.WithValue(r.Context(), peerKey{}, peer{err: fmt.Errorf("%w: test", ErrAuth)}))
	w = httptest.NewRecorder()
	local.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("local query whose credentials could not be read: status %d, want 401", w.Code)
	}

	body := mustJSON(t, testJob("77", "gpu01", aliceUID, true))
	pr := asPeer(Identity{UID: 0, Host: LocalHost}, "POST", "/v1/profiles")
	pr.Body = http.NoBody
	pr = httptest.NewRequest("POST", "/v1/profiles", strings.NewReader(string(body))).WithContext(pr.Context())
	w = httptest.NewRecorder()
	local.Handler().ServeHTTP(w, pr)
	if w.Code != http.StatusMethodNotAllowed && w.Code != http.StatusNotFound {
		t.Errorf("push to the local server as root: status %d, want 405", w.Code)
	}
	if n, err := db.CountViews(context.Background(), store.ViewFilter{JobID: "77"}); err != nil || n != 0 {
		t.Errorf("push to the local server stored %d jobs (%v), want none", n, err)
	}

	collector, _, cdb := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, cdb)
	w = httptest.NewRecorder()
	collector.Handler().ServeHTTP(w, asPeer(Identity{UID: 0, Host: LocalHost}, "GET", "/v1/jobs"))
	if w.Code != http.StatusUnauthorized {
		t.Errorf("collector, peer credentials of root but no munge credential: status %d, want 401", w.Code)
	}
}

// serveLocal runs ServeLocal on a new socket in a temporary directory and
// returns the socket's path.
func serveLocal(t *testing.T, db *store.DB, opts LocalOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run", "query.sock")
	ln, err := ListenLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeLocal(ctx, ln, db, opts, testLogger(t)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeLocal: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("ServeLocal did not stop 10s after its context ended")
		}
	})
	return path
}

// TestLocalSocketPeerCred goes through a real unix socket: the kernel's
// SO_PEERCRED names this test process, and the client needs no munge.
func TestLocalSocketPeerCred(t *testing.T) {
	me := os.Getuid()
	other := me + 1
	if me == aliceUID || other == aliceUID {
		other = me + 7
	}
	db := openStore(t)
	ctx := context.Background()
	for id, uid := range map[string]int{"11": me, "12": other, "13": me} {
		if err := db.PutJob(ctx, testJob(id, "gpu01", uid, true)); err != nil {
			t.Fatal(err)
		}
	}
	var asked atomic.Int32
	isAdmin := func(uid int) bool { asked.Add(1); return false } // not even root: scope this process
	path := serveLocal(t, db, LocalOptions{IsAdmin: isAdmin})

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != SocketMode {
		t.Errorf("query socket mode %v, want a socket with %v", fi.Mode(), SocketMode)
	}

	c := Client{Socket: path}
	for _, f := range []store.ViewFilter{{}, {User: fmt.Sprintf("user%d", other)}, {JobID: "12"}} {
		views, err := c.Jobs(ctx, f)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", f, err)
		}
		for _, v := range views {
			if v.JobID == "12" {
				t.Errorf("Jobs(%+v) over the socket returned job 12 of uid %d to uid %d", f, other, me)
			}
		}
	}
	views, err := c.Jobs(ctx, store.ViewFilter{})
	if err != nil || len(views) != 2 {
		t.Errorf("own jobs over the socket: %d (%v), want 2", len(views), err)
	}
	if n, err := c.Count(ctx, store.ViewFilter{}); err != nil || n != 2 {
		t.Errorf("Count over the socket = %d (%v), want 2", n, err)
	}
	var seen []string
	if err := c.Each(ctx, store.ViewFilter{WithSeries: true}, func(v store.JobView) error {
		seen = append(seen, v.JobID)
		return nil
	}); err != nil || len(seen) != 2 {
		t.Errorf("Each over the socket: %v (%v), want jobs 11 and 13", seen, err)
	}
	if asked.Load() == 0 {
		t.Error("the local server never asked IsAdmin about the peer")
	}
}

func TestLocalSocketAdmin(t *testing.T) {
	db := openStore(t)
	seedViews(t, db)
	me := os.Getuid()
	path := serveLocal(t, db, LocalOptions{IsAdmin: func(uid int) bool { return uid == me }})
	views, err := Client{Socket: path}.Jobs(context.Background(), store.ViewFilter{})
	if err != nil || len(views) != 4 {
		t.Errorf("admin over the socket: %d jobs (%v), want all 4", len(views), err)
	}
}

func TestListenLocal(t *testing.T) {
	dir := t.TempDir()
	t.Run("stale socket is replaced", func(t *testing.T) {
		path := filepath.Join(dir, "stale.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close() // the socket file stays, nobody answers: a dead agent's
		ln, err = ListenLocal(path)
		if err != nil {
			t.Fatalf("ListenLocal over a stale socket: %v", err)
		}
		ln.Close()
	})
	t.Run("live socket is an error", func(t *testing.T) {
		path := filepath.Join(dir, "live.sock")
		ln, err := ListenLocal(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if ln2, err := ListenLocal(path); err == nil || !strings.Contains(err.Error(), "another process answers") {
			if ln2 != nil {
				ln2.Close()
			}
			t.Errorf("second ListenLocal on a live socket: %v, want an error", err)
		}
	})
	t.Run("a regular file is left alone", func(t *testing.T) {
		path := filepath.Join(dir, "file.sock")
		if err := os.WriteFile(path, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		if ln, err := ListenLocal(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
			if ln != nil {
				ln.Close()
			}
			t.Errorf("ListenLocal on a regular file: %v, want an error", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "keep" {
			t.Error("ListenLocal changed the regular file in its way")
		}
	})
	t.Run("a directory users cannot enter", func(t *testing.T) {
		sub := filepath.Join(dir, "private")
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		if ln, err := ListenLocal(filepath.Join(sub, "q.sock")); err == nil || !strings.Contains(err.Error(), "cannot enter") {
			if ln != nil {
				ln.Close()
			}
			t.Errorf("ListenLocal in a 0700 directory: %v, want an error", err)
		}
	})
}

// TestBounded: one request at a time with MaxInFlight 1, the next refused
// with 503 after QueueWait, and each request's context ending after
// RequestTimeout.
func TestBounded(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	var deadline atomic.Bool
	h := bounded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := r.Context().Deadline()
		deadline.Store(ok)
		entered <- struct{}{}
		<-release
	}), LocalOptions{MaxInFlight: 1, QueueWait: 50 * time.Millisecond, RequestTimeout: time.Minute}.withDefaults())
	first := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/jobs", nil))
		first <- w.Code
	}()
	<-entered
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/jobs", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("second request while the only slot is taken: %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("first request: %d, want 200", code)
	}
	if !deadline.Load() {
		t.Error("the request's context has no deadline")
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/jobs", nil))
	if w.Code != http.StatusOK {
		t.Errorf("request after the slot came back: %d, want 200", w.Code)
	}
}

// TestBoundedListener: with one slot, a second connection is not accepted
// until the first is closed.
func TestBoundedListener(t *testing.T) {
	inner, err := net.Listen("unix", filepath.Join(t.TempDir(), "b.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln := newBoundedListener(inner, 1)
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 2 {
		c, err := net.Dial("unix", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	c1 := <-accepted
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted while the only slot was held")
	case <-time.After(100 * time.Millisecond):
	}
	if _, ok := c1.(interface{ NetConn() net.Conn }).NetConn().(*net.UnixConn); !ok {
		t.Error("an accepted connection does not unwrap to the unix connection (peer credentials need it)")
	}
	c1.Close()
	select {
	case c2 := <-accepted:
		c2.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the second connection was not accepted after the first closed")
	}
	ln.Close()
	if _, ok := <-accepted; ok {
		t.Error("Accept returned a connection after Close")
	}
}

func TestLocalClientUnreachable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.sock")
	_, err := Client{Socket: path}.Jobs(context.Background(), store.ViewFilter{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "is gpuprof agent running") {
		t.Errorf("Jobs on a missing socket: %v, want an error naming the socket and asking whether the agent runs", err)
	}
	if errors.Is(err, ErrRejected) {
		t.Error("an unreachable socket is not a rejection")
	}
}
