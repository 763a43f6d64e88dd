package collect

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// lockedBuffer is a log destination safe for concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRefusalLogBounded is issue 25's reproduction 4: every refused
// request was logged (173 MB in 10 s of pipelined bad requests on the
// query socket, 58 MB in 5 s of unauthenticated requests to serve). Here
// 3,000 bad queries on the local socket and 3,000 unauthenticated
// requests and pushes to the collector must leave a few lines, not
// thousands.
func TestRefusalLogBounded(t *testing.T) {
	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db := openStore(t)
	seedViews(t, db)
	local := NewLocalServer(db, nil, log).Handler()
	collector := NewServer(db, newFakeMunge(), ServerOptions{PushUIDs: []int{0}}, log).Handler()
	const n = 1000
	for range n {
		w := httptest.NewRecorder()
		local.ServeHTTP(w, asPeer(alice, "GET", "/v1/jobs?sort=bogus"))
		// 400, or 429 once alice's failed-request budget is spent.
		if w.Code != http.StatusBadRequest && w.Code != http.StatusTooManyRequests {
			t.Fatalf("bad sort on the local socket: %d, want 400 or 429", w.Code)
		}
		// 401, or 429 once the host's failed-request budget is spent
		// (failbudget.go): a refusal logged under a reason of its own.
		if w := serve(collector, "GET", "/v1/jobs", nil, ""); w.Code != http.StatusUnauthorized && w.Code != http.StatusTooManyRequests {
			t.Fatalf("no credential: %d, want 401 or 429", w.Code)
		}
		if w := serve(collector, "POST", "/v1/profiles", []byte(`{}`), "MUNGE MUNGE:AAAA:"); w.Code != http.StatusUnauthorized && w.Code != http.StatusTooManyRequests {
			t.Fatalf("a junk credential: %d, want 401 or 429", w.Code)
		}
	}
	out := logBuf.String()
	lines := strings.Count(out, "\n")
	t.Logf("%d refusals logged in %d lines, %d bytes", 3*n, lines, len(out))
	if lines > 10 || len(out) > 10<<10 {
		t.Errorf("%d refused requests logged %d lines (%d bytes), want a few: one per reason per interval\n%s",
			3*n, lines, len(out), short(out))
	}
}

// TestRefusalsRateLimited: the first refusal of a reason is logged at
// once, those within the interval are counted, and the next line after it
// says how many were left out; other reasons have intervals of their own;
// the counter misses none and passes promtool beside the collector's
// other metrics.
func TestRefusalsRateLimited(t *testing.T) {
	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	r := NewRefusals("gpuprof_test_refused_total", "Refused, by reason.", log, 10*time.Second)
	now := t0
	r.now = func() time.Time { return now }
	for range 5 {
		r.Refuse(RefuseUnauthenticated, "request refused", "remote", "10.0.0.9:1234")
	}
	r.Refuse(RefuseBadRequest, "request refused")
	now = now.Add(11 * time.Second)
	r.Refuse(RefuseUnauthenticated, "request refused")
	lines := strings.Split(strings.TrimSpace(logBuf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("logged %d lines, want 3 (unauthenticated, bad_request, unauthenticated again):\n%s", len(lines), logBuf.String())
	}
	if !strings.Contains(lines[0], "reason=unauthenticated") || strings.Contains(lines[0], "suppressed") {
		t.Errorf("first line %q: want reason=unauthenticated, nothing suppressed yet", lines[0])
	}
	if !strings.Contains(lines[1], "reason=bad_request") {
		t.Errorf("second line %q: want the other reason logged at once", lines[1])
	}
	if !strings.Contains(lines[2], "suppressed=4") {
		t.Errorf("third line %q: want suppressed=4", lines[2])
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(r.Collector())
	fams := scrapeMetrics(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), false)
	for why, want := range map[string]float64{RefuseUnauthenticated: 6, RefuseBadRequest: 1, RefuseConnLimit: 0} {
		if got, ok := sample(fams, "gpuprof_test_refused", map[string]string{"reason": why}); !ok || got != want {
			t.Errorf("refused{reason=%q} = %v (present %t), want %v", why, got, ok, want)
		}
	}
	var nilRefusals *Refusals
	nilRefusals.Refuse(RefuseError, "nothing happens")
}

// TestCollectorRefusalsInMetrics: the collector's refusals, queries and
// pushes alike, are counted by reason in its /metrics.
func TestCollectorRefusalsInMetrics(t *testing.T) {
	metrics := NewMetrics(nil)
	refusals := NewServeRefusals(testLogger(t))
	if err := metrics.Register(refusals.Collector()); err != nil {
		t.Fatal(err)
	}
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Metrics: metrics, Refusals: refusals})
	seedViews(t, db)
	h := s.Handler()
	for range 7 {
		serve(h, "GET", "/v1/jobs", nil, "")
	}
	serve(h, "GET", "/v1/jobs?sort=bogus", nil, signed(m, alice, "GET", "/v1/jobs?sort=bogus", nil))
	body := mustJSON(t, testJob("7", "gpu01", aliceUID, true))
	serve(h, "POST", "/v1/profiles", body, signed(m, alice, "POST", "/v1/profiles", body))
	fams := scrapeMetrics(t, metrics.Handler(), false)
	for why, want := range map[string]float64{RefuseUnauthenticated: 7, RefuseBadRequest: 1, RefuseForbidden: 1, RefuseBusy: 0} {
		if got, ok := sample(fams, "gpuprof_serve_requests_refused", map[string]string{"reason": why}); !ok || got != want {
			t.Errorf("gpuprof_serve_requests_refused_total{reason=%q} = %v (present %t), want %v", why, got, ok, want)
		}
	}
}
