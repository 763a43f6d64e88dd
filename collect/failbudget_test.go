package collect

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFailBudget(t *testing.T) {
	now := t0
	f := newFailBudget(10, 5)
	f.now = func() time.Time { return now }
	if d := f.wait("a"); d != 0 {
		t.Fatalf("a new source waits %v, want 0", d)
	}
	for range 5 {
		f.charge("a")
	}
	if d := f.wait("a"); d != 100*time.Millisecond {
		t.Errorf("after its burst: wait %v, want 100ms (one token at 10/s)", d)
	}
	if d := f.wait("b"); d != 0 {
		t.Errorf("another source waits %v, want 0", d)
	}
	now = now.Add(100 * time.Millisecond)
	if d := f.wait("a"); d != 0 {
		t.Errorf("a token back: wait %v, want 0", d)
	}
	for range 100 { // failures while out of budget: debt, at most a burst
		f.charge("a")
	}
	if d := f.wait("a"); d != 600*time.Millisecond {
		t.Errorf("in debt: wait %v, want 600ms (from -5 to 1 at 10/s)", d)
	}
	now = now.Add(600 * time.Millisecond)
	if d := f.take("a"); d != 0 {
		t.Errorf("take with a token back: %v, want 0", d)
	}
	if d := f.take("a"); d != 100*time.Millisecond {
		t.Errorf("take again: %v, want 100ms (the token was taken)", d)
	}
	f.refund("a")
	if d := f.take("a"); d != 0 {
		t.Errorf("take after a refund: %v, want 0", d)
	}
	now = now.Add(time.Hour)
	if d := f.wait("a"); d != 0 || len(f.buckets) != 0 {
		t.Errorf("an hour on: wait %v, %d sources remembered; want 0 and none (a full bucket is a new source's)", d, len(f.buckets))
	}
	for i := range maxFailBuckets + 10 {
		f.charge(fmt.Sprint("flood-", i))
	}
	if len(f.buckets) > maxFailBuckets {
		t.Errorf("%d sources remembered, want at most %d", len(f.buckets), maxFailBuckets)
	}
	for _, tc := range []struct {
		status int
		want   bool
	}{{200, false}, {204, false}, {400, true}, {401, true}, {403, true}, {404, true}, {408, true}, {409, false}, {413, true}, {429, false}, {503, false}} {
		if got := charged(tc.status); got != tc.want {
			t.Errorf("charged(%d) = %t, want %t", tc.status, got, tc.want)
		}
	}
}

// countingJunkAuth is fakeMunge where a credential it did not issue fails
// at once, counting every decode: an unmunge run, the CPU a request costs.
type countingJunkAuth struct {
	*fakeMunge
	junk, good atomic.Int64
}

func (a *countingJunkAuth) Decode(ctx context.Context, cred string) (Identity, []byte, error) {
	if strings.HasPrefix(cred, "MUNGE:junk") {
		a.junk.Add(1)
		return Identity{}, nil, fmt.Errorf("%w: junk", ErrAuth)
	}
	a.good.Add(1)
	return a.fakeMunge.Decode(ctx, cred)
}

// TestFloodFromOneHostCostsItsBudget (issue 39): a host floods junk
// credentials, each costing an unmunge, on 16 connections for a second,
// while a user of another host queries. The flooder gets at most its
// failed-request budget of decodes (burst + rate × time), the rest
// refused 429 before the credential is looked at; the other host's user
// is answered every time. Counted, not timed: before, every junk request
// was decoded (thousands in the second, each an unmunge's CPU taken from
// the other host's request).
func TestFloodFromOneHostCostsItsBudget(t *testing.T) {
	db := openStore(t)
	auth := &countingJunkAuth{fakeMunge: newFakeMunge()}
	const rate, burst = 10, 20
	s := NewServer(db, auth, ServerOptions{Resolve: fakeResolve(testHosts),
		Limits: Limits{FailuresPerSecond: rate, FailureBurst: burst}}, testLogger(t))
	h := s.Handler()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent, limited atomic.Int64
	start := time.Now()
	for i := range 16 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				r := httptest.NewRequest("GET", "/v1/jobs", nil)
				r.RemoteAddr = fmt.Sprintf("192.0.2.9:%d", 1000+i)
				r.Header.Set("Authorization", fmt.Sprintf("MUNGE MUNGE:junk%dx%d:", i, n))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				sent.Add(1)
				if w.Code == http.StatusTooManyRequests {
					limited.Add(1)
					if w.Header().Get("Retry-After") == "" || w.Header().Get("Connection") != "close" {
						t.Errorf("a 429 without Retry-After or Connection: close: %v", w.Header())
					}
				}
			}
		})
	}
	for range 20 {
		r := httptest.NewRequest("GET", "/v1/jobs", nil)
		r.RemoteAddr = "10.0.0.2:5555"
		r.Header.Set("Authorization", signed(auth.fakeMunge, alice, "GET", "/v1/jobs", nil))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("the other host's query: %d %s", w.Code, strings.TrimSpace(w.Body.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	// The budget is checked before a request and charged after it: the
	// flooder's 16 requests in flight when its last token went may pass.
	bound := int64(burst + rate*elapsed.Seconds() + 16)
	t.Logf("in %v the flooder sent %d requests: %d decoded, %d refused 429; the other host's 20 decoded (%d)",
		elapsed.Round(time.Millisecond), sent.Load(), auth.junk.Load(), limited.Load(), auth.good.Load())
	if got := auth.junk.Load(); got > bound {
		t.Errorf("the flooder's junk was decoded %d times in %v, want at most its budget, %d", got, elapsed, bound)
	}
	if auth.good.Load() != 20 {
		t.Errorf("the other host's credentials decoded %d times, want 20", auth.good.Load())
	}
}

// TestOverBudgetConnectionNotRead: on a real connection, pipelined
// requests that fail are answered until the source's budget is spent;
// the next is refused 429 and the connection closed, so the rest of what
// the flooder sent is never read; the same source's honest request is
// answered once a token is back. Before, all 500 were answered 401.
func TestOverBudgetConnectionNotRead(t *testing.T) {
	const rate, burst = 10, 20
	s, m, _ := newTestServer(t, ServerOptions{Limits: Limits{FailuresPerSecond: rate, FailureBurst: burst}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	codes, elapsed := pipelined(c, "GET /v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n", 500)
	t.Logf("500 pipelined requests without a credential: answers %v in %v", codes, elapsed.Round(time.Millisecond))
	if bound := int(burst + rate*elapsed.Seconds() + 1); codes[http.StatusUnauthorized] > bound {
		t.Errorf("%d answered 401, want at most the budget, %d", codes[http.StatusUnauthorized], bound)
	}
	if codes[http.StatusTooManyRequests] != 1 {
		t.Errorf("%d answered 429, want 1, then the connection closed", codes[http.StatusTooManyRequests])
	}

	// 30 more connections of the source, one failing request each, while
	// it is out of budget: one goes on per token that comes back, not all
	// at once when the first does. Before take, all 30 were answered at
	// the first token.
	var conns []net.Conn
	for range 30 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	start := time.Now()
	var answered atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				resp.Body.Close()
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	t.Logf("30 connections out of budget: %d answered in %v", answered.Load(), elapsed.Round(time.Millisecond))
	if bound := int64(rate*elapsed.Seconds() + 2); answered.Load() > bound {
		t.Errorf("%d of 30 waiting connections answered in %v, want at most one a token, %d", answered.Load(), elapsed, bound)
	}

	// The same source's honest query, once its budget has a token again.
	cl := &http.Client{Transport: &http.Transport{}}
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/jobs", nil)
	req.Header.Set("Authorization", signed(m, alice, "GET", "/v1/jobs", nil))
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the same source's honest query: %d, want 200", resp.StatusCode)
	}
}

// TestLoopbackUID: the kernel names the owner of a TCP connection's client
// end on this host, so the collector's own host's users are sources of
// their own.
func TestLoopbackUID(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "tcp6" {
				addr = "[::1]:0"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Skipf("no %s loopback here: %v", network, err)
			}
			defer ln.Close()
			c, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sc, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			uid, err := loopbackUID(sc.LocalAddr().(*net.TCPAddr), sc.RemoteAddr().(*net.TCPAddr))
			if err != nil {
				t.Fatalf("loopbackUID: %v", err)
			}
			if uid != os.Getuid() {
				t.Errorf("loopbackUID = %d, want %d", uid, os.Getuid())
			}
			if got, want := connSource(sc, loopbackHost), fmt.Sprintf("loopback uid %d", os.Getuid()); got != want {
				t.Errorf("connSource = %q, want %q", got, want)
			}
			// A connection whose owner is not told counts as the host's.
			p1, p2 := net.Pipe()
			defer p1.Close()
			defer p2.Close()
			if got := connSource(p1, loopbackHost); got != loopbackHost {
				t.Errorf("connSource of a connection without TCP addresses = %q, want %q", got, loopbackHost)
			}
			if got := connSource(sc, "10.0.0.2"); got != "10.0.0.2" {
				t.Errorf("connSource of a remote host = %q, want the host", got)
			}
		})
	}
}

// TestLocalSocketFailBudget (issue 39): the agent's query socket spends a
// person's failed requests from their own budget, as serve does a
// source's: 500 pipelined malformed queries on one connection get at most
// the burst (and what comes back meanwhile) of 400s, then one 429 and the
// connection closed — before, every one was parsed and answered 400 (the
// load test's flood of them took the CPU the other users' queries
// needed: one victim query of 18 over 2 s on an idle machine).
func TestLocalSocketFailBudget(t *testing.T) {
	const rate, burst = 10, 20
	path := serveLocal(t, openStore(t), LocalOptions{FailuresPerSecond: rate, FailureBurst: burst})
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	codes, elapsed := pipelined(c, "GET /v1/jobs?sort=bogus HTTP/1.1\r\nHost: x\r\n\r\n", 500)
	t.Logf("500 pipelined malformed queries on the local socket: answers %v in %v", codes, elapsed.Round(time.Millisecond))
	if codes[http.StatusBadRequest] == 0 {
		t.Fatalf("no query answered 400 (%v): the test's queries are not malformed", codes)
	}
	if bound := int(burst + rate*elapsed.Seconds() + 1); codes[http.StatusBadRequest] > bound {
		t.Errorf("%d answered 400, want at most the budget, %d", codes[http.StatusBadRequest], bound)
	}
	if codes[http.StatusTooManyRequests] != 1 {
		t.Errorf("%d answered 429, want 1, then the connection closed", codes[http.StatusTooManyRequests])
	}
}

// pipelined writes req n times on c without waiting and counts the
// answers by status until c is closed (or 30 s pass), with the time taken.
func pipelined(c net.Conn, req string, n int) (map[int]int, time.Duration) {
	start := time.Now()
	go func() { _, _ = io.WriteString(c, strings.Repeat(req, n)) }()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	codes := map[int]int{}
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	return codes, time.Since(start)
}
