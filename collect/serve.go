package collect

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"
)

// maxCollectorHeader bounds a request's line and headers at the
// collector: a munge credential and a query's filter need far less.
const maxCollectorHeader = 64 << 10

// Serve answers the collector's API on ln (TCP) until ctx ends, then stops
// within a few seconds. One host holds at most Limits.ConnsPerPeer of the
// Limits.MaxConns connections (a new one over that share closes the host's
// oldest idle one), a request's headers must arrive within HeaderTimeout,
// a push's body within UploadTimeout after its credential was accepted,
// and an idle connection is closed after IdleTimeout: a client that
// connects and stalls holds nothing for long, and only its own host's
// share.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	lim := s.lim
	pl := newPeerListener(ln, lim.MaxConns, lim.ConnsPerPeer, "host", hostOf, s.refusals)
	pl.source, pl.budget = connSource, s.budget
	hs := &http.Server{
		Handler:           s.Handler(),
		ConnContext:       withConn,
		ConnState:         pl.connState,
		ReadHeaderTimeout: lim.HeaderTimeout,
		// A push sets its own deadline for the body (readBody); this bounds
		// the rest of any request.
		ReadTimeout:    lim.HeaderTimeout + lim.UploadTimeout + lim.QueueWait,
		WriteTimeout:   2*lim.QueueWait + lim.QueryTimeout + lim.UploadTimeout + 60*time.Second,
		IdleTimeout:    lim.IdleTimeout,
		MaxHeaderBytes: maxCollectorHeader,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go s.releaseLoop(ctx)
	return serveUntil(ctx, hs, pl)
}

// connSource names a collector connection's source for the failed-request
// budget and the decode shares: its host (hostKey), and on the
// collector's own host, where every user shares the loopback host, the
// uid that owns the client's socket (loopbackUID), so that one local
// user's flood spends only their own budget. A loopback connection whose
// owner the kernel does not tell counts as the host's.
func connSource(c net.Conn, host string) string {
	if host != loopbackHost {
		return host
	}
	la, ok1 := c.LocalAddr().(*net.TCPAddr)
	ra, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return host
	}
	uid, err := loopbackUID(la, ra)
	if err != nil {
		return host
	}
	return host + " uid " + strconv.Itoa(uid)
}

// requestSource is the source of the connection r came on (connSource),
// or its host when it came through no peerListener.
func requestSource(r *http.Request) string {
	if pc, ok := r.Context().Value(connKey{}).(*peerConn); ok && pc.source != "" {
		return pc.source
	}
	return requestHost(r)
}
