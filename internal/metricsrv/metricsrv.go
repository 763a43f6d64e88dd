// Package metricsrv is the one home of how gpuprof's daemons (the agent and
// gpuprof serve) listen for and answer Prometheus scrapes of /metrics: the
// listen address forms, the unix socket's mode, and the HTTP server's
// deadlines and shutdown. What the metrics are belongs to each daemon.
//
// It must not know what it serves, nor take any lock of its caller's.
package metricsrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/safefs"
)

// Listen opens the listener of a metrics endpoint (the agent's, and
// gpuprof serve's): addr is a TCP address ("127.0.0.1:9842") or "unix:" and
// a socket path. A unix socket is made readable by everyone (mode 0666):
// what the agent serves is what squeue shows any user of the node, serve's
// totals by account are no more, and a local Prometheus or proxy need not
// run as root.
func Listen(addr string) (net.Listener, error) {
	path, isUnix := strings.CutPrefix(addr, "unix:")
	if !isUnix {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("metrics listen: %w", err)
		}
		return ln, nil
	}
	// The socket is bound, removed when stale and re-moded by path (bind
	// and chmod take nothing else): only in a directory whose path no
	// other account can change, or a link planted on the way would have
	// root make a file mode 0666 elsewhere.
	dir, err := safefs.MkdirPrivate(filepath.Dir(path), 0o755)
	if err != nil {
		return nil, fmt.Errorf("metrics socket dir: %w", err)
	}
	dir.Close()
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("metrics listen: something is listening on %s already", path)
	}
	_ = os.Remove(path) // stale socket of a dead agent
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("metrics socket mode: %w", err)
	}
	return ln, nil
}

// Serve answers /metrics on ln with h until ctx ends, then removes a unix
// socket it served on. Read and write deadlines bound what a stuck scraper
// can hold: one connection and a formatted buffer, no lock of the caller's
// beyond what h takes. It returns nil when ctx ended it.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
	}()
	err := srv.Serve(ln)
	if ln.Addr().Network() == "unix" {
		_ = os.Remove(ln.Addr().String())
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics endpoint: %w", err)
	}
	return nil
}
