package collect

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHostKey(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1":        "loopback",
		"127.0.0.5":        "loopback",
		"::1":              "loopback",
		"::ffff:127.0.0.2": "loopback",
		"10.0.0.1":         "10.0.0.1",
		"::ffff:10.0.0.1":  "10.0.0.1",
		"2001:db8::1":      "2001:db8::/64",
		"2001:db8::beef":   "2001:db8::/64",
		"2001:db8:0:1::1":  "2001:db8:0:1::/64",
	} {
		if got := hostKey(net.ParseIP(addr)); got != want {
			t.Errorf("hostKey(%s) = %q, want %q", addr, got, want)
		}
	}
	if got := addrHost("127.0.0.3:4242"); got != "loopback" {
		t.Errorf("addrHost = %q, want loopback", got)
	}
}

// slowJunkAuth is fakeMunge where a credential it did not issue costs what
// unmunge's refusal costs a flooded host: 200 ms.
type slowJunkAuth struct{ *fakeMunge }

func (a slowJunkAuth) Decode(ctx context.Context, cred string) (Identity, []byte, error) {
	if strings.HasPrefix(cred, "MUNGE:junk") {
		time.Sleep(200 * time.Millisecond)
		return Identity{}, nil, fmt.Errorf("%w: junk", ErrAuth)
	}
	return a.fakeMunge.Decode(ctx, cred)
}

// TestJunkCredentialsWaitOnTheirHostsShare (issue 39, finding 5): a client
// with no credential of its own sends plausible junk credentials on 64
// connections at once, each costing an unmunge; decoding is shared per
// sending host, so another host's user is answered at once and never
// refused. Before, the junk took every decode slot and the user's
// queries waited past the queue wait and got 503.
func TestJunkCredentialsWaitOnTheirHostsShare(t *testing.T) {
	db := openStore(t)
	m := newFakeMunge()
	s := NewServer(db, slowJunkAuth{m}, ServerOptions{Resolve: fakeResolve(testHosts),
		Limits: Limits{QueryDecodes: 8, QueueWait: time.Second}}, testLogger(t))
	h := s.Handler()
	defer junkFlood(h, []string{"192.0.2.9"}, 64)()
	time.Sleep(300 * time.Millisecond) // the flood in full swing
	took := aliceQueries(t, h, m, "the other host's query")
	t.Logf("the other host's queries during the flood took %v", took)
}

// TestJunkFromManyHostsLeavesDecodes (issue 39, finding 5): junk
// credentials from eight hosts at once, 16 connections each, would hold
// every decode slot with each host at its share (a quarter) alone; a host
// whose credential failed lately decodes within half the slots, so a
// user of a host that sends good credentials is answered at once and
// never refused. Before, that user's queries waited on junk's decodes: a
// median of 180-200 ms (every one a junk decode's 200 ms), under 1 ms
// after.
func TestJunkFromManyHostsLeavesDecodes(t *testing.T) {
	db := openStore(t)
	m := newFakeMunge()
	s := NewServer(db, slowJunkAuth{m}, ServerOptions{Resolve: fakeResolve(testHosts),
		Limits: Limits{QueryDecodes: 8, QueueWait: time.Second}}, testLogger(t))
	h := s.Handler()
	var hosts []string
	for host := range 8 {
		hosts = append(hosts, fmt.Sprintf("192.0.2.%d", 10+host))
	}
	defer junkFlood(h, hosts, 16)()
	// The flood in full swing, and past the queue wait of the requests
	// that queued before their host was first marked.
	time.Sleep(1500 * time.Millisecond)
	took := aliceQueries(t, h, m, "the clean host's query")
	slices.Sort(took)
	if med := took[len(took)/2]; med > 50*time.Millisecond {
		t.Errorf("the clean host's median query took %v during the flood: it waited on junk's 200 ms decodes", med)
	}
	t.Logf("the clean host's queries during the flood took %v", took)
}

// junkFlood sends junk credentials (slowJunkAuth's) to h from each of
// hosts on conns connections each, until the function it returns is
// called, which waits for them to end.
func junkFlood(h http.Handler, hosts []string, conns int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for host, addr := range hosts {
		for i := range conns {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-done:
						return
					default:
					}
					r := httptest.NewRequest("GET", "/v1/jobs", nil)
					r.RemoteAddr = fmt.Sprintf("%s:%d", addr, 1000+i)
					r.Header.Set("Authorization", fmt.Sprintf("MUNGE MUNGE:junk%dx%dx%d:", host, i, n))
					h.ServeHTTP(httptest.NewRecorder(), r)
				}
			})
		}
	}
	return func() { close(done); wg.Wait() }
}

// aliceQueries times ten queries of alice's, with a good credential,
// from 10.0.0.2, and reports each that is not answered 200 as what.
func aliceQueries(t *testing.T, h http.Handler, m *fakeMunge, what string) []time.Duration {
	t.Helper()
	var took []time.Duration
	for range 10 {
		r := httptest.NewRequest("GET", "/v1/jobs", nil)
		r.RemoteAddr = "10.0.0.2:5555"
		r.Header.Set("Authorization", signed(m, alice, "GET", "/v1/jobs", nil))
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, r)
		took = append(took, time.Since(start))
		if w.Code != http.StatusOK {
			t.Errorf("%s: %d %s after %v", what, w.Code, strings.TrimSpace(w.Body.String()), took[len(took)-1])
		}
	}
	return took
}
