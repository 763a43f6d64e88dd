package collect

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// TestPushBoundToSender is issue 25's reproduction 7: a node's credential
// pushed a profile for another node, for another cluster, under a job id
// "../../etc", and changed a finished profile's owner. By default a push
// is accepted only for a node of the collector's cluster whose name
// resolves to the address munge reports as the credential's host; a host
// NodeHosts lists pushes only for the nodes listed for it instead; a job
// id must pass slurmext.ValidJobID whatever the configuration; and no push
// changes the owner Slurm or an earlier profile gave a job (TestPushKeepsOwner).
func TestPushBoundToSender(t *testing.T) {
	const node2Addr = "10.0.0.12"
	nodes := map[string][]NodeRef{
		nodeAddr:  {{Cluster: "lab", Node: "gpu01"}},
		node2Addr: {{Cluster: "lab", Node: "gpu02"}, {Cluster: "lab", Node: "gpu03"}}, // two slurmd on one host
	}
	// The override for one host: 10.0.0.11 runs gpu01 and, behind it,
	// simulated nodes whose names resolve nowhere.
	override := map[string][]NodeRef{nodeAddr: {{Cluster: "lab", Node: "gpu01"}, {Cluster: "lab", Node: "sim01"}}}
	on := func(host string) Identity { return Identity{UID: 0, Host: host} }
	withCluster := func(j profile.Job, c string) profile.Job { j.Cluster = c; return j }
	lookupFails := func(context.Context, string) ([]string, error) {
		return nil, &net.DNSError{Err: "i/o timeout", Name: "gpu01", IsTimeout: true}
	}
	multi := fakeResolve(map[string][]string{"gpu01": {"fd00::11", nodeAddr}})
	tests := []struct {
		name    string
		as      Identity
		job     profile.Job
		nodes   map[string][]NodeRef
		resolve ResolveFunc
		want    int
		wantIn  []string // in the answer's text
	}{
		// The default rule (no NodeHosts): node names resolve as testHosts says.
		{name: "default: a node pushes its own profile", as: on(nodeAddr), job: testJob("7", "gpu01", aliceUID, true), want: http.StatusNoContent},
		{name: "default: the SlurmUser on its node", as: Identity{UID: slurmUID, Host: nodeAddr}, job: testJob("7", "gpu01", aliceUID, true), want: http.StatusNoContent},
		{name: "default: a name with several addresses, one the sender's", as: on(nodeAddr), job: testJob("7", "gpu01", aliceUID, true), resolve: multi, want: http.StatusNoContent},
		{name: "default: a node pushes for another node", as: on(nodeAddr), job: testJob("7", "gpu02", aliceUID, true), want: http.StatusForbidden,
			wantIn: []string{"lab/gpu02", "host 10.0.0.11", "10.0.0.12", "serve.node_hosts", `"10.0.0.11" = ["gpu02"]`}},
		{name: "default: a name that does not resolve", as: on(nodeAddr), job: testJob("7", "gpu99", aliceUID, true), want: http.StatusForbidden,
			wantIn: []string{"lab/gpu99", "host 10.0.0.11", "does not resolve", "serve.node_hosts"}},
		{name: "default: a node pushes for its name in another cluster", as: on(nodeAddr), job: withCluster(testJob("7", "gpu01", aliceUID, true), "other"), want: http.StatusForbidden,
			wantIn: []string{"other/gpu01", `cluster "other"`, "serve.node_hosts", `"10.0.0.11" = ["other/gpu01"]`}},
		{name: "default: a host that is no node", as: on("10.9.9.9"), job: testJob("7", "gpu01", aliceUID, true), want: http.StatusForbidden},
		{name: "default: an unspecified address", as: on("0.0.0.0"), job: testJob("7", "gpu01", aliceUID, true), want: http.StatusForbidden,
			wantIn: []string{"0.0.0.0", "munged --origin", "serve.node_hosts"}},
		{name: "default: a loopback address from another host", as: on("127.0.1.1"), job: testJob("7", "gpu01", aliceUID, true),
			resolve: fakeResolve(map[string][]string{"gpu01": {"127.0.1.1"}}), want: http.StatusForbidden,
			wantIn: []string{"127.0.1.1", "loopback", "192.0.2.1", "munged --origin"}},
		{name: "default: the lookup fails", as: on(nodeAddr), job: testJob("7", "gpu01", aliceUID, true), resolve: lookupFails, want: http.StatusServiceUnavailable,
			wantIn: []string{"lab/gpu01", "try again"}},

		// NodeHosts for every host.
		{name: "listed: a node pushes its own profile", as: on(nodeAddr), job: testJob("7", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusNoContent},
		{name: "listed: a host of two nodes pushes for the second", as: on(node2Addr), job: testJob("7", "gpu03", aliceUID, true), nodes: nodes, want: http.StatusNoContent},
		{name: "listed: the SlurmUser on its node", as: Identity{UID: slurmUID, Host: nodeAddr}, job: testJob("7", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusNoContent},
		{name: "listed: a node pushes for another node", as: on(nodeAddr), job: testJob("7", "gpu02", aliceUID, true), nodes: nodes, want: http.StatusForbidden,
			wantIn: []string{"host 10.0.0.11", "only of lab/gpu01,", "not of lab/gpu02", "serve.node_hosts"}},
		{name: "listed: a node pushes for its name in another cluster", as: on(nodeAddr), job: withCluster(testJob("7", "gpu01", aliceUID, true), "other"), nodes: nodes, want: http.StatusForbidden},
		{name: "listed: a host that is no node", as: on("10.9.9.9"), job: testJob("7", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusForbidden},

		// NodeHosts for one host; the others stay under the default rule.
		{name: "override: a listed node whose name resolves nowhere", as: on(nodeAddr), job: testJob("7", "sim01", aliceUID, true), nodes: override, want: http.StatusNoContent},
		{name: "override: the listed host's own name", as: on(nodeAddr), job: testJob("7", "gpu01", aliceUID, true), nodes: override, want: http.StatusNoContent},
		{name: "override: the listed host for a node not listed for it", as: on(nodeAddr), job: testJob("7", "gpu02", aliceUID, true), nodes: override, want: http.StatusForbidden},
		{name: "override: another host by the default rule", as: on("10.0.0.13"), job: testJob("7", "gpu03", aliceUID, true), nodes: override, want: http.StatusNoContent},
		{name: "override: another host for the listed host's node", as: on("10.0.0.13"), job: testJob("7", "sim01", aliceUID, true), nodes: override, want: http.StatusForbidden},
		{name: "override: another host for a node its name does not resolve to", as: on("10.0.0.13"), job: testJob("7", "gpu01", aliceUID, true), nodes: override, want: http.StatusForbidden},

		{name: "a path for a job id", as: on(nodeAddr), job: testJob("../../etc", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusBadRequest},
		{name: "a path for a job id, default rule", as: on(nodeAddr), job: testJob("../../etc", "gpu01", aliceUID, true), want: http.StatusBadRequest},
		{name: "a job id with a slash", as: on(nodeAddr), job: testJob("7/8", "gpu01", aliceUID, true), want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0, slurmUID}, NodeHosts: tt.nodes, Cluster: "lab", Resolve: tt.resolve})
			body := mustJSON(t, tt.job)
			w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, tt.as, "POST", "/v1/profiles", body))
			text := strings.TrimSpace(w.Body.String())
			if w.Code != tt.want {
				t.Fatalf("status = %d (%s), want %d", w.Code, text, tt.want)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(text, s) {
					t.Errorf("answer %q lacks %q", text, s)
				}
			}
			_, err := db.GetJob(context.Background(), tt.job.Key)
			if stored := err == nil; stored != (tt.want == http.StatusNoContent) {
				t.Errorf("stored = %t (%v), want %t", stored, err, tt.want == http.StatusNoContent)
			}
		})
	}
}

// TestPushLoopbackSender: a credential whose host munge reports as a
// loopback address binds, under the default rule, only a push that came
// over a loopback connection (the collector's own host); every node whose
// name resolves to 127.0.1.1 would report that address.
func TestPushLoopbackSender(t *testing.T) {
	for _, tt := range []struct {
		name, remote string
		want         int
	}{
		{name: "from this host", remote: "127.0.0.1:40000", want: http.StatusNoContent},
		{name: "from this host over IPv6", remote: "[::1]:40000", want: http.StatusNoContent},
		{name: "from another host", remote: "10.0.0.12:40000", want: http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Cluster: "lab",
				Resolve: fakeResolve(map[string][]string{"gpu01": {"127.0.1.1"}})})
			j := testJob("7", "gpu01", aliceUID, true)
			body := mustJSON(t, j)
			r := httptest.NewRequest("POST", "/v1/profiles", bytes.NewReader(body))
			r.RemoteAddr = tt.remote
			r.Header.Set("Authorization", signed(m, Identity{UID: 0, Host: "127.0.1.1"}, "POST", "/v1/profiles", body))
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status = %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.want)
			}
			if _, err := db.GetJob(context.Background(), j.Key); (err == nil) != (tt.want == http.StatusNoContent) {
				t.Errorf("stored: %v, want %t", err, tt.want == http.StatusNoContent)
			}
		})
	}
}

// TestHostResolverCache: answers are kept for the TTL, "no such host" for
// the shorter one, a failed lookup not at all; each lookup is bounded.
func TestHostResolverCache(t *testing.T) {
	now := t0
	calls := map[string]int{}
	fail := true
	lookup := func(ctx context.Context, name string) ([]string, error) {
		calls[name]++
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("lookup of %s without a deadline", name)
		}
		switch name {
		case "gpu01":
			return []string{nodeAddr}, nil
		case "flaky":
			if fail {
				return nil, &net.DNSError{Err: "server misbehaving", Name: name, IsTemporary: true}
			}
			return []string{"10.0.0.14"}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	resolve := cachedResolver(lookup, time.Second, 30*time.Second, 5*time.Second, func() time.Time { return now })
	ctx := context.Background()
	ask := func(name string) ([]string, error) { return resolve(ctx, name) }

	for range 3 {
		if a, err := ask("gpu01"); err != nil || len(a) != 1 || a[0] != nodeAddr {
			t.Fatalf("gpu01 = %v, %v", a, err)
		}
		if _, err := ask("nowhere"); !notFound(err) {
			t.Fatalf("nowhere: %v, want not found", err)
		}
		if _, err := ask("flaky"); err == nil || notFound(err) {
			t.Fatalf("flaky: %v, want a failed lookup", err)
		}
	}
	if calls["gpu01"] != 1 || calls["nowhere"] != 1 || calls["flaky"] != 3 {
		t.Errorf("lookups %v: want gpu01 and nowhere once (cached), flaky each time (a failure is not)", calls)
	}
	now = now.Add(6 * time.Second)
	ask("gpu01")
	ask("nowhere")
	if calls["gpu01"] != 1 || calls["nowhere"] != 2 {
		t.Errorf("after 6s lookups %v: want gpu01 still cached, nowhere asked again", calls)
	}
	now = now.Add(30 * time.Second)
	ask("gpu01")
	if calls["gpu01"] != 2 {
		t.Errorf("after 36s gpu01 was looked up %d times, want 2", calls["gpu01"])
	}
	fail = false
	if a, err := ask("flaky"); err != nil || len(a) != 1 {
		t.Errorf("flaky once the resolver answers: %v, %v", a, err)
	}
}

func TestSameAddr(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"10.0.0.11", "10.0.0.11", true},
		{"::ffff:10.0.0.11", "10.0.0.11", true},
		{"fd00::1", "fd00:0::1", true},
		{"10.0.0.11", "10.0.0.12", false},
		{"10.0.0.1", "10.0.0.11", false},
		{"gpu01", "gpu01", true},
		{"", "10.0.0.11", false},
	} {
		if got := sameAddr(tt.a, tt.b); got != tt.want {
			t.Errorf("sameAddr(%q, %q) = %t, want %t", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestPushKeepsOwner: a push never changes who owns a job. The owner is
// the scheduler record's when jobcomp reported the job, else that of the
// job's finished profiles, else that of its running profiles on other
// nodes; a node's own running profile may still be corrected (a job found
// before its prolog is provisional), its finished one may not.
func TestPushKeepsOwner(t *testing.T) {
	ctx := context.Background()
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	push := func(j profile.Job) int {
		as := rootOn(j.Node)
		body := mustJSON(t, j)
		w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, as, "POST", "/v1/profiles", body))
		t.Logf("push %s/%s uid %d %s: %d %s", j.JobID, j.Node, j.UID, j.Status, w.Code, strings.TrimSpace(w.Body.String()))
		return w.Code
	}
	owner := func(k profile.Key) int {
		j, err := db.GetJob(ctx, k)
		if err != nil {
			t.Fatalf("GetJob %v: %v", k, err)
		}
		return j.UID
	}

	// A finished profile's owner stays.
	if got := push(testJob("7", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Fatalf("first push: %d, want 204", got)
	}
	if got := push(testJob("7", "gpu01", bobUID, true)); got != http.StatusConflict {
		t.Errorf("the same finished profile with bob as owner: %d, want 409", got)
	}
	if got := owner(profile.Key{Cluster: "lab", JobID: "7", Node: "gpu01"}); got != aliceUID {
		t.Errorf("owner after the refused push = %d, want alice %d", got, aliceUID)
	}
	// Nor may another node's profile of that job name another owner.
	if got := push(testJob("7", "gpu02", bobUID, false)); got != http.StatusConflict {
		t.Errorf("a second node's profile of alice's job with bob as owner: %d, want 409", got)
	}
	if got := push(testJob("7", "gpu02", aliceUID, false)); got != http.StatusNoContent {
		t.Errorf("a second node's profile of alice's job as alice's: %d, want 204", got)
	}

	// The scheduler record is Slurm's word on the owner.
	r := slurmext.JobRecord{Cluster: "lab", JobID: "8", DisplayID: "8", ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		User: "user1001", UID: aliceUID, State: "COMPLETED", Start: t0, End: t0.Add(time.Hour), Source: "jobcomp"}
	if err := db.PutSchedJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := push(testJob("8", "gpu01", bobUID, false)); got != http.StatusConflict {
		t.Errorf("a profile naming bob for a job Slurm says is alice's: %d, want 409", got)
	}
	if _, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: "8", Node: "gpu01"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused profile was stored: %v", err)
	}

	// A node's own running profile is provisional: its next push may name
	// the owner Slurm gave (prolog after discovery), then it is fixed.
	if got := push(testJob("9", "gpu01", bobUID, false)); got != http.StatusNoContent {
		t.Fatalf("a discovered job: %d, want 204", got)
	}
	if got := push(testJob("9", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Errorf("the same node corrects its running profile's owner: %d, want 204", got)
	}
	if got := owner(profile.Key{Cluster: "lab", JobID: "9", Node: "gpu01"}); got != aliceUID {
		t.Errorf("owner after the correction = %d, want %d", got, aliceUID)
	}
}
