package collect

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// realMunge returns a Munge talking to the local munged: the socket
// GPUPROF_TEST_MUNGE_SOCKET names, else munge's default. The test is
// skipped only where munge is not installed or munged does not answer.
func realMunge(t *testing.T) Munge {
	t.Helper()
	for _, bin := range []string{"/usr/bin/munge", "/usr/bin/unmunge"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("munge not installed: %v", err)
		}
	}
	sock := os.Getenv("GPUPROF_TEST_MUNGE_SOCKET")
	path := sock
	if path == "" {
		path = "/run/munge/munge.socket.2"
	}
	requireMunged(t, path)
	return Munge{Socket: sock, Timeout: 10 * time.Second}
}

// TestRealMungePushBinding runs issue 25's reproductions 5 and 7 against
// real munge credentials: the host munged puts in a credential
// (ENCODE_HOST) binds the push to its configured node and cluster; a job
// id that is a path, another node's profile, another cluster's, and an
// owner change are refused and store nothing; a credential of this host
// with a body that never comes is cut off after the upload timeout; junk
// is refused by unmunge.
func TestRealMungePushBinding(t *testing.T) {
	m := realMunge(t)
	ctx := context.Background()
	probe, err := m.Encode(ctx, []byte("probe"))
	if err != nil {
		t.Fatalf("munge: %v", err)
	}
	me, _, err := m.Decode(ctx, probe)
	if err != nil {
		t.Fatalf("unmunge: %v", err)
	}
	db := openStore(t)
	s := NewServer(db, m, ServerOptions{
		PushUIDs:  []int{me.UID},
		NodeHosts: map[string][]NodeRef{me.Host: {{Cluster: "lab", Node: "gpu01"}}},
		Limits:    Limits{UploadTimeout: time.Second},
		Placement: PlacementSender, // no Slurm records here
	}, testLogger(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, ln) }()
	t.Cleanup(func() { stop(); <-done })
	addr := ln.Addr().String()
	node := Client{URL: "http://" + addr, Munge: m}

	mine := testJob("7", "gpu01", aliceUID, true)
	if err := node.Push(ctx, mine); err != nil {
		t.Fatalf("this host (%s) pushes for its own node gpu01: %v", me.Host, err)
	}
	other := testJob("8", "gpu02", aliceUID, true)
	otherCluster := testJob("9", "gpu01", aliceUID, true)
	otherCluster.Cluster = "elsewhere"
	path := testJob("../../etc", "gpu01", aliceUID, true)
	stolen := testJob("7", "gpu01", bobUID, true)
	for _, tt := range []struct {
		name string
		j    profile.Job
		want string
	}{
		{name: "another node", j: other, want: "403"},
		{name: "another cluster", j: otherCluster, want: "403"},
		{name: "a path for a job id", j: path, want: "400"},
		{name: "another owner for a finished profile", j: stolen, want: "409"},
	} {
		err := node.Push(ctx, tt.j)
		if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: push = %v, want rejected with %s", tt.name, err, tt.want)
		}
	}
	for _, k := range []profile.Key{other.Key, otherCluster.Key, path.Key} {
		if _, err := db.GetJob(ctx, k); err == nil {
			t.Errorf("a refused push stored %v", k)
		}
	}
	if j, err := db.GetJob(ctx, mine.Key); err != nil || j.UID != aliceUID {
		t.Errorf("job 7 after the attempt to take it: uid %d (%v), want alice's %d", j.UID, err, aliceUID)
	}

	// A real credential for a body that never comes.
	body := mustJSON(t, testJob("10", "gpu01", aliceUID, true))
	cred, err := m.Encode(ctx, Binding(http.MethodPost, "/v1/profiles", body))
	if err != nil {
		t.Fatal(err)
	}
	c := rawPush(t, addr, "MUNGE "+cred, len(body), 1)
	start := time.Now()
	if got := status(c, 10*time.Second); got != http.StatusRequestTimeout {
		t.Errorf("a stalled body behind a valid credential: %d after %s, want 408", got, time.Since(start).Round(time.Millisecond))
	}
	// Junk that looks like a credential reaches unmunge, which refuses it.
	c = rawPush(t, addr, "MUNGE MUNGE:AAAAAAAAAAAAAAAA:", 100, 0)
	if got := status(c, 10*time.Second); got != http.StatusUnauthorized {
		t.Errorf("a forged credential: %d, want 401", got)
	}
}

// ownName returns a name that resolves, on this host's resolver, to addr
// (the address munge reports for this host); "" when none does.
func ownName(ctx context.Context, addr string) string {
	names, _ := net.DefaultResolver.LookupAddr(ctx, addr)
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
	}
	names = append(names, "localhost")
	for _, n := range names {
		n = strings.TrimSuffix(n, ".")
		addrs, err := net.DefaultResolver.LookupHost(ctx, n)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if sameAddr(a, addr) {
				return n
			}
		}
	}
	return ""
}

// TestRealMungeDefaultBinding: without serve.node_hosts, a real munge
// credential pushes for a node only when the node's name resolves, on the
// collector host's own resolver, to the address munge reports as the
// credential's ENCODE_HOST, and only for the collector's cluster.
func TestRealMungeDefaultBinding(t *testing.T) {
	m := realMunge(t)
	ctx := context.Background()
	probe, err := m.Encode(ctx, []byte("probe"))
	if err != nil {
		t.Fatalf("munge: %v", err)
	}
	me, _, err := m.Decode(ctx, probe)
	if err != nil {
		t.Fatalf("unmunge: %v", err)
	}
	name := ownName(ctx, me.Host)
	if name == "" {
		t.Skipf("no name resolves to %s, the address munge reports for this host", me.Host)
	}
	t.Logf("munge reports this host as %s; %q resolves to it", me.Host, name)
	db := openStore(t)
	s := NewServer(db, m, ServerOptions{PushUIDs: []int{me.UID}, Cluster: "lab", Placement: PlacementSender}, testLogger(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, ln) }()
	t.Cleanup(func() { stop(); <-done })
	node := Client{URL: "http://" + ln.Addr().String(), Munge: m}

	mine := testJob("7", name, aliceUID, true)
	if err := node.Push(ctx, mine); err != nil {
		t.Fatalf("this host pushes for %q, its own name: %v", name, err)
	}
	otherCluster := testJob("8", name, aliceUID, true)
	otherCluster.Cluster = "elsewhere"
	for _, tt := range []struct {
		what string
		j    profile.Job
		want []string // any of
	}{
		// An address literal resolves to itself: another host's.
		{what: "another host's node", j: testJob("9", "192.0.2.1", aliceUID, true), want: []string{"403"}},
		{what: "its own name in another cluster", j: otherCluster, want: []string{"403"}},
		// 503 where the resolver cannot be asked at all.
		{what: "a name that resolves nowhere", j: testJob("10", "gpuprof-no-such-node.invalid", aliceUID, true), want: []string{"403", "503"}},
	} {
		err := node.Push(ctx, tt.j)
		if err == nil || !slices.ContainsFunc(tt.want, func(code string) bool { return strings.Contains(err.Error(), code) }) {
			t.Errorf("push for %s: %v, want refused with %s", tt.what, err, strings.Join(tt.want, " or "))
		}
		if _, err := db.GetJob(ctx, tt.j.Key); err == nil {
			t.Errorf("the refused push for %s stored %v", tt.what, tt.j.Key)
		}
	}
}
