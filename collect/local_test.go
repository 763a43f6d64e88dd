package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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
	if n, err := db.ReaderFor(store.System).CountViews(context.Background(), store.ViewFilter{JobID: "77"}); err != nil || n != 0 {
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

// TestFairSlots: with two slots and one per key, a key at its share
// waits while another key gets in; a waiter whose context ends holds
// nothing; a released slot lets the next one in.
func TestFairSlots(t *testing.T) {
	f := newFairSlots(2, 1)
	ctx := context.Background()
	releaseA, ok := f.acquire(ctx, "a")
	if !ok {
		t.Fatal("first acquire failed")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, ok := f.acquire(short, "a"); ok {
		t.Error("a second slot for key a while its one share is held")
	}
	releaseB, ok := f.acquire(ctx, "b")
	if !ok {
		t.Fatal("key b waited behind key a")
	}
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, ok := f.acquire(short2, "c"); ok {
		t.Error("a third slot of two")
	}
	releaseA()
	releaseA() // twice is once
	releaseC, ok := f.acquire(ctx, "c")
	if !ok {
		t.Fatal("no slot after one was given back")
	}
	releaseB()
	releaseC()
	if len(f.byKey) != 0 || len(f.total) != 0 {
		t.Errorf("after every release: %d keys, %d slots held; want none", len(f.byKey), len(f.total))
	}
}

// TestPeerListener: a peer at its share that connects again pushes out
// its own oldest idle connection, never another peer's; with all of its
// connections busy it is answered 503; the total bounds every peer.
func TestPeerListener(t *testing.T) {
	inner, err := net.Listen("unix", filepath.Join(t.TempDir(), "b.sock"))
	if err != nil {
		t.Fatal(err)
	}
	// The peer is what the client writes first: "a" or "b".
	identify := func(c net.Conn) (string, any, error) {
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			return "", nil, err
		}
		return string(b[:]), nil, nil
	}
	ln := newPeerListener(inner, 4, 2, "peer", identify, NewQueryRefusals(testLogger(t)))
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
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
	dial := func(peer string) net.Conn {
		t.Helper()
		c, err := net.Dial("unix", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte(peer)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	next := func() *peerConn {
		t.Helper()
		select {
		case c := <-accepted:
			return c.(*peerConn)
		case <-time.After(5 * time.Second):
			t.Fatal("no connection accepted")
			return nil
		}
	}
	closedByServer := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		var b [512]byte
		n, err := c.Read(b[:])
		return err != nil || n > 0
	}

	a1c := dial("a")
	a1 := next()
	dial("a")
	a2 := next()
	b1c := dial("b")
	b1 := next()
	a2.busy.Store(true)

	// a's third connection pushes out a1, its oldest idle one.
	dial("a")
	a3 := next()
	if !closedByServer(a1c) {
		t.Error("a's oldest idle connection stayed open when a opened one over its share")
	}
	// b is untouched.
	_ = b1c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := b1c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("b's connection was disturbed by a's: %v", err)
	}
	// With both of a's connections busy, a fourth is answered 503.
	a3.busy.Store(true)
	a4c := dial("a")
	_ = a4c.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, _ := io.ReadAll(a4c)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 503") || !strings.Contains(string(answer), "too many connections from peer a") {
		t.Errorf("a's connection over its busy share: %q, want a 503 naming peer a", answer)
	}
	if _, ok := a1.Conn.(*net.UnixConn); !ok {
		t.Error("an accepted connection does not wrap the unix connection (peer credentials need it)")
	}
	if _, ok := b1.NetConn().(*net.UnixConn); !ok {
		t.Error("NetConn does not unwrap to the unix connection")
	}
	// Closing gives the slot back: the total of 4 holds a2, a3, b1 and one more.
	dial("b")
	b2 := next()
	b2.Close()
	b2.Close() // twice is once
	dial("b")
	next().Close()
	// Accept, waiting for the next connection, holds a slot for it.
	if n := len(ln.slots); n != 4 {
		t.Errorf("%d slots held, want 4 (a2, a3, b1 and the one Accept waits with)", n)
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

// TestLocalClientKeepsWithinItsShare: a command that asks the agent many
// times (gpuprof report pages through every job, then counts) must not
// push its own idle connections over its uid's share. One NewLocalClient
// asking 40 times with a share of 2, then 20 runs of a command (a client
// each, its connections closed at its end as a process exit closes them)
// with the default share, leave
// gpuprof_agent_queries_refused_total{reason="conn_limit"} at 0. Before
// LocalHTTP, each request built a transport whose idle connection stayed
// open, and every one past the share was evicted and counted.
func TestLocalClientKeepsWithinItsShare(t *testing.T) {
	db := openStore(t)
	seedViews(t, db)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		share  int
		runs   int
		rounds int
	}{
		{name: "one client, share 2", share: 2, runs: 1, rounds: 20},
		{name: "20 runs, default share", runs: 20, rounds: 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refusals := NewQueryRefusals(testLogger(t))
			path := serveLocal(t, db, LocalOptions{IsAdmin: func(int) bool { return true }, ConnsPerUID: tt.share, Refusals: refusals})
			for run := range tt.runs {
				c := NewLocalClient(path)
				for i := range tt.rounds {
					if _, err := c.Jobs(ctx, store.ViewFilter{}); err != nil {
						t.Fatalf("run %d round %d: %v", run, i, err)
					}
					if _, err := c.Count(ctx, store.ViewFilter{}); err != nil {
						t.Fatalf("run %d round %d count: %v", run, i, err)
					}
				}
				c.HTTP.CloseIdleConnections()
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(refusals.Collector())
			fams := scrapeMetrics(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), false)
			if got, _ := sample(fams, "gpuprof_agent_queries_refused", map[string]string{"reason": RefuseConnLimit}); got != 0 {
				t.Errorf("conn_limit refusals = %v, want 0", got)
			}
		})
	}
}
