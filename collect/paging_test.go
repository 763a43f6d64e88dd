package collect

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/store"
)

// TestPagingCursorLeaksNothing is issue 25's reproduction 6: a page after
// another user's job must answer exactly as a page after a job that does
// not exist, in every order (with sort=vram the answer once told how that
// job's peak compared with the caller's own), through the collector and
// through the local query socket alike. An admin still pages after
// anyone's job.
func TestPagingCursorLeaksNothing(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	seedViews(t, db) // alice: 1, 3; bob: 2 (scheduler record), 4 (profile only)
	local := NewLocalServer(db, nil, testLogger(t))
	transports := []struct {
		name string
		get  func(as Identity, target string) *httptest.ResponseRecorder
	}{
		{name: "collector", get: func(as Identity, target string) *httptest.ResponseRecorder {
			return serve(s.Handler(), "GET", target, nil, signed(m, as, "GET", target, nil))
		}},
		{name: "local socket", get: func(as Identity, target string) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			local.Handler().ServeHTTP(w, asPeer(Identity{UID: as.UID, GID: as.GID, Host: LocalHost}, "GET", target))
			return w
		}},
	}
	sorts := append([]string{""}, store.SortKeys()...)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			for _, sort := range sorts {
				for _, asc := range []string{"", "&asc=1"} {
					for _, foreign := range []string{"2", "4"} {
						q := func(job string) string {
							return "/v1/jobs?sort=" + sort + asc + "&limit=5&after_cluster=lab&after_job=" + job
						}
						got := tr.get(alice, q(foreign))
						absent := tr.get(alice, q("999"))
						gotBody := strings.ReplaceAll(got.Body.String(), "lab/"+foreign, "lab/999")
						if got.Code != absent.Code || gotBody != absent.Body.String() {
							t.Errorf("sort=%q%s: after bob's job %s: %d %q; after absent job 999: %d %q — the difference tells alice bob's job exists and where it sorts",
								sort, asc, foreign, got.Code, short(got.Body.String()), absent.Code, short(absent.Body.String()))
						}
					}
					// Her own cursor pages as before.
					if w := tr.get(alice, "/v1/jobs?sort="+sort+asc+"&limit=5&after_cluster=lab&after_job=1"); w.Code != http.StatusOK {
						t.Errorf("sort=%q%s: after her own job 1: %d %s, want 200", sort, asc, w.Code, w.Body.String())
					}
					// An admin pages after anyone's job.
					if w := tr.get(admin, "/v1/jobs?sort="+sort+asc+"&limit=5&after_cluster=lab&after_job=2"); w.Code != http.StatusOK {
						t.Errorf("sort=%q%s: admin after bob's job 2: %d %s, want 200", sort, asc, w.Code, w.Body.String())
					}
				}
			}
		})
	}
}

// short is s trimmed and cut for an error message.
func short(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
