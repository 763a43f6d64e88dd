package metricsrv

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const exposition = "# TYPE up gauge\nup 1\n"

var handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	io.WriteString(w, exposition)
})

// serve runs Serve on ln until the returned stop is called; stop returns
// what Serve returned.
func serve(t *testing.T, ln net.Listener) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, handler) }()
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return within 5 s of its context's end")
			return nil
		}
	}
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func unixClient(path string) *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
}

func TestUnixSocket(t *testing.T) {
	// Short: a unix socket path is limited to 108 bytes.
	dir, err := os.MkdirTemp("", "msrv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "run", "metrics.sock") // run/ does not exist yet

	ln, err := Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o666 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %v, %v; want a socket of mode 0666", fi.Mode(), err)
	}
	stop := serve(t, ln)
	if _, err := Listen("unix:" + path); err == nil {
		t.Error("a second endpoint on a socket in use was opened")
	}
	c := unixClient(path)
	if code, body := get(t, c, "http://node/metrics"); code != http.StatusOK || body != exposition {
		t.Errorf("GET /metrics: %d %q, want 200 and the handler's exposition", code, body)
	}
	if code, _ := get(t, c, "http://node/"); code != http.StatusNotFound {
		t.Errorf("GET /: %d, want 404 (only /metrics is served)", code)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve after its context ended: %v, want nil", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after Serve returned: %v", err)
	}
}

// TestUnixSocketStale: the socket file of an agent that died without
// removing it is no reason to refuse.
func TestUnixSocketStale(t *testing.T) {
	dir, err := os.MkdirTemp("", "msrv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "metrics.sock")
	dead, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	dead.(*net.UnixListener).SetUnlinkOnClose(false)
	dead.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the dead listener's socket file: %v", err)
	}
	ln, err := Listen("unix:" + path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	stop := serve(t, ln)
	if code, body := get(t, unixClient(path), "http://node/metrics"); code != http.StatusOK || body != exposition {
		t.Errorf("GET /metrics: %d %q", code, body)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
}

func TestTCP(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := serve(t, ln)
	c := &http.Client{Timeout: 2 * time.Second}
	if code, body := get(t, c, "http://"+ln.Addr().String()+"/metrics"); code != http.StatusOK || body != exposition {
		t.Errorf("GET /metrics: %d %q", code, body)
	}
	if _, err := Listen(ln.Addr().String()); err == nil {
		t.Error("a second endpoint on a port in use was opened")
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	if _, err := Listen("127.0.0.1:notaport"); err == nil {
		t.Error("Listen accepted a malformed address")
	}
}
