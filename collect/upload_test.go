package collect

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawPush opens a connection to addr and sends a push's request line and
// headers announcing a body of size bytes, with authz as its
// Authorization (none when empty), and then sent bytes of the body (zeros).
// It returns the connection, still open.
func rawPush(t *testing.T, addr, authz string, size, sent int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("POST /v1/profiles HTTP/1.1\r\nHost: collector\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", size)
	if authz != "" {
		head += "Authorization: " + authz + "\r\n"
	}
	if _, err := c.Write([]byte(head + "\r\n")); err != nil {
		t.Fatal(err)
	}
	if sent > 0 {
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(make([]byte, sent)) // the server may answer and close first
	}
	return c
}

// status reads the status code of the answer on c within wait; 0 when
// none came.
func status(c net.Conn, wait time.Duration) int {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPushAuthenticatedBeforeBody is issue 25's reproduction 5: serve read
// a push's whole body before it looked at the credential. A push without
// a credential, or with an ordinary user's, is answered from its headers
// alone while its body has not even been sent.
func TestPushAuthenticatedBeforeBody(t *testing.T) {
	s, m, _ := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	addr := strings.TrimPrefix(hs.URL, "http://")
	body := mustJSON(t, testJob("7", "gpu01", aliceUID, true))
	tests := []struct {
		name  string
		authz string
		want  int
	}{
		{name: "no credential", authz: "", want: http.StatusUnauthorized},
		{name: "junk", authz: "MUNGE MUNGE:AAAA:", want: http.StatusUnauthorized},
		{name: "an ordinary user's credential", authz: signed(m, alice, "POST", "/v1/profiles", body), want: http.StatusForbidden},
		{name: "root's credential for another request", authz: signed(m, rootNode, "POST", "/v1/jobs", body), want: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rawPush(t, addr, tt.authz, 1<<20, 0)
			start := time.Now()
			if got := status(c, 10*time.Second); got != tt.want {
				t.Errorf("answer before the body was sent: %d (0: none within 10s), want %d", got, tt.want)
			}
			t.Logf("answered in %s", time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestStalledUploadsHoldNoMemory: the 60 stalled 16 MiB uploads
// took serve to 1.17 GB. Here 24 unauthenticated pushes each announce
// 16 MiB and send 2 MiB of it, then stall; the collector's heap must not
// grow by their bodies (it answers each from its headers).
func TestStalledUploadsHoldNoMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 48 MiB over loopback")
	}
	s, _, _ := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	addr := strings.TrimPrefix(hs.URL, "http://")
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const n, sent = 24, 2 << 20
	var wg sync.WaitGroup
	conns := make([]net.Conn, n)
	for i := range n {
		wg.Go(func() { conns[i] = rawPush(t, addr, "MUNGE MUNGE:AAAA:", 16<<20, sent) })
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // let the server read what it will
	after := heap()
	grew := int64(after) - int64(before)
	t.Logf("heap %d MiB before, %d MiB with %d stalled uploads of %d MiB sent", before>>20, after>>20, n, sent>>20)
	if grew > 16<<20 {
		t.Errorf("the heap grew by %d MiB holding %d stalled, unauthenticated uploads: bodies are read before the credential is checked", grew>>20, n)
	}
	for _, c := range conns {
		c.Close()
	}
}

// TestUploadLimits: an authenticated push whose body stalls is cut off
// after UploadTimeout (408) and holds its host's one upload slot till
// then: the same host's next push waits QueueWait and gets 503 with
// Retry-After, while another node's push is stored.
func TestUploadLimits(t *testing.T) {
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}, Limits: Limits{
		MaxUploads: 4, UploadTimeout: 1500 * time.Millisecond, QueueWait: 300 * time.Millisecond}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	addr := ln.Addr().String()
	body := mustJSON(t, testJob("7", "gpu01", aliceUID, true))
	stalled := rawPush(t, addr, signed(m, rootNode, "POST", "/v1/profiles", body), len(body), 10)
	start := time.Now()
	time.Sleep(100 * time.Millisecond) // its credential decoded, its slot taken

	sameHost := rawPush(t, addr, signed(m, rootNode, "POST", "/v1/profiles", body), len(body), 0)
	if got := status(sameHost, 5*time.Second); got != http.StatusServiceUnavailable {
		t.Errorf("a second push from the stalled node's host: %d, want 503", got)
	}
	other := Client{URL: "http://" + addr, Munge: m.as(Identity{UID: 0, Host: "10.0.0.12"})}
	j := testJob("8", "gpu02", aliceUID, true)
	if err := other.Push(context.Background(), j); err != nil {
		t.Errorf("another node's push while one node's upload stalls: %v", err)
	} else if _, err := db.GetJob(context.Background(), j.Key); err != nil {
		t.Errorf("another node's push was not stored: %v", err)
	}

	got := status(stalled, 10*time.Second)
	took := time.Since(start)
	t.Logf("the stalled upload was answered %d after %s", got, took.Round(time.Millisecond))
	if got != http.StatusRequestTimeout {
		t.Errorf("the stalled upload: %d, want 408", got)
	}
	if took > 8*time.Second {
		t.Errorf("the stalled upload was cut off after %s, want about the upload timeout (1.5s)", took)
	}
	// Its slot is free again: the node's next push is stored.
	node := Client{URL: "http://" + addr, Munge: m.as(rootNode)}
	if err := node.Push(context.Background(), testJob("9", "gpu01", aliceUID, true)); err != nil {
		t.Errorf("the node's push after its stalled one was cut off: %v", err)
	}
}
