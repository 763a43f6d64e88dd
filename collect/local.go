package collect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/internal/safefs"
	"github.com/gpuprof/gpuprof/store"
)

// The local query socket: on a single host the node agent answers the
// collector's read API on a unix socket anyone may connect to, so users who
// cannot open the root-only database still see their own jobs. Who is
// asking comes from the kernel (SO_PEERCRED on the connection), never from
// the request, and every answer is scoped by the same code as the
// collector's.

// LocalHost is the Host of an identity the kernel vouched for on the local
// query socket.
const LocalHost = "local"

// SocketMode is the local query socket's mode: anyone may connect; the
// answer depends on who did.
const SocketMode os.FileMode = 0o666

// peerKey is the context key under which PeerConnContext keeps the
// connection's peer credentials.
type peerKey struct{}

// peer is what the kernel said about a connection's other end.
type peer struct {
	id  Identity
	pid int
	err error
}

// PeerConnContext is an http.Server ConnContext for a unix-socket listener:
// it reads the connecting process's uid and gid (SO_PEERCRED) once per
// connection, for a server made by NewLocalServer. A connection that is not
// a unix socket carries the failure, and its every request is refused.
func PeerConnContext(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*peerConn); ok {
		if p, ok := pc.info.(peer); ok {
			return context.WithValue(ctx, peerKey{}, p) // read at Accept
		}
	}
	if w, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = w.NetConn()
	}
	id, pid, err := peerIdentity(c)
	return context.WithValue(ctx, peerKey{}, peer{id: id, pid: pid, err: err})
}

// peerOf returns the identity PeerConnContext found for r's connection.
func peerOf(r *http.Request) (peer, error) {
	p, ok := r.Context().Value(peerKey{}).(peer)
	switch {
	case !ok:
		return p, fmt.Errorf("%w: no peer credentials on this connection (the local query server serves unix sockets only)", ErrAuth)
	case p.err != nil:
		return p, p.err
	}
	return p, nil
}

// NewLocalServer returns the collector's query API for one host's local
// socket: GET /v1/jobs, /v1/jobs/count and /v1/jobs/{cluster}/{job}, with
// the same filters and the same scoping as Server, the caller being the
// connection's peer (PeerConnContext) instead of a munge credential. An
// Authorization header is ignored. It serves no push: db is the node's own,
// which only its agent writes. isAdmin nil means root only.
func NewLocalServer(db *store.DB, isAdmin func(uid int) bool, log *slog.Logger) *Server {
	return newLocalServer(db, LocalOptions{IsAdmin: isAdmin}.withDefaults(), log)
}

func newLocalServer(db *store.DB, opts LocalOptions, log *slog.Logger) *Server {
	s := newServer(db, nil, ServerOptions{IsAdmin: opts.IsAdmin, Refusals: opts.Refusals, Limits: opts.limits()}, opts.limits(), log)
	s.local, s.name, s.persons = true, "agent", opts.Persons
	return s
}

// LocalOptions bound what the local query server may take from the agent
// that runs it, and what one user may take of it: the agent's sampling
// must never wait for a user's query, nor one user's queries for
// another's.
type LocalOptions struct {
	// IsAdmin says whether a uid may see every user's jobs; nil means root
	// only.
	IsAdmin func(uid int) bool
	// MaxConns is how many connections are held open at once (default
	// 64); more wait in the kernel's listen backlog.
	MaxConns int
	// ConnsPerUID is how many of them one uid holds (default 8): a user
	// at that share who opens another loses their oldest idle one, or is
	// answered 503 when all of theirs are being answered.
	ConnsPerUID int
	// MaxInFlight is how many requests are answered at once (default 2),
	// QueriesPerUID how many of one uid's (default 1); more wait up to
	// QueueWait, then get 503 and Retry-After.
	MaxInFlight, QueriesPerUID int
	// QueueWait: see MaxInFlight (default 5s).
	QueueWait time.Duration
	// RequestTimeout ends a query's context (and so its database read)
	// after this long (default 30s).
	RequestTimeout time.Duration
	// Refusals counts and logs refused queries; nil makes one that logs
	// only (NewQueryRefusals).
	Refusals *Refusals
	// Persons, when set, makes the shares (ConnsPerUID, QueriesPerUID)
	// per person: a uid in a user's subordinate range (/etc/subuid)
	// counts as that user. Nil: per uid.
	Persons *Persons
	// FailuresPerSecond and FailureBurst are each person's budget of
	// failed requests (failbudget.go), as serve's per source (defaults
	// DefaultFailuresPerSecond, DefaultFailureBurst): a person out of it
	// is not read from until a token is back, and a request already read
	// is answered 429 before it is parsed further. A user's honest
	// queries almost never fail; a flood of malformed ones no longer
	// takes the CPU the other users' queries need.
	FailuresPerSecond, FailureBurst int
}

// NewQueryRefusals returns the local query socket's refusal counter and
// log, gpuprof_agent_queries_refused_total.
func NewQueryRefusals(log *slog.Logger) *Refusals {
	return NewRefusals("gpuprof_agent_queries_refused_total",
		"Queries and connections the agent's local query socket refused, by reason (each is logged at most once per reason every 10s).", log, 0)
}

func (o LocalOptions) withDefaults() LocalOptions {
	if o.MaxConns <= 0 {
		o.MaxConns = 64
	}
	if o.ConnsPerUID <= 0 {
		o.ConnsPerUID = 8
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 2
	}
	if o.QueriesPerUID <= 0 {
		o.QueriesPerUID = 1
	}
	if o.QueueWait <= 0 {
		o.QueueWait = 5 * time.Second
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.FailuresPerSecond <= 0 {
		o.FailuresPerSecond = DefaultFailuresPerSecond
	}
	if o.FailureBurst <= 0 {
		o.FailureBurst = DefaultFailureBurst
	}
	return o
}

// limits are o as the server's Limits (after withDefaults).
func (o LocalOptions) limits() Limits {
	return Limits{
		MaxConns: o.MaxConns, ConnsPerPeer: o.ConnsPerUID, MaxQueries: o.MaxInFlight, QueriesPerUID: o.QueriesPerUID,
		QueueWait: o.QueueWait, QueryTimeout: o.RequestTimeout, MaxUploads: 1, UploadsPerHost: 1, UploadTimeout: time.Second, QueryDecodes: 1, PushDecodes: 1,
		HeaderTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second,
		FailuresPerSecond: o.FailuresPerSecond, FailureBurst: o.FailureBurst,
	}
}

// maxLocalHeader bounds a request's line and headers; a query needs far
// less, and its body is never read.
const maxLocalHeader = 32 << 10

// ListenLocal creates the local query socket at path, mode SocketMode, in
// a directory it creates 0755 when missing. A stale socket left by a dead
// agent is replaced; a live one, or a path that is not a socket, is an
// error. The socket is bound, removed and made 0666 by path, so its
// directory's whole path must be one no other account can change
// (safefs.MkdirPrivate): in a directory the group or users may write, a
// planted link would have root chmod another file 0666.
func ListenLocal(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	d, err := safefs.MkdirPrivate(dir, 0o755)
	if err != nil {
		return nil, fmt.Errorf("query socket directory: %w", err)
	}
	d.Close()
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("query socket %s: exists and is not a socket; remove it or set query_socket elsewhere", path)
		}
		if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
			c.Close()
			return nil, fmt.Errorf("query socket %s: another process answers there (a second agent?)", path)
		}
		_ = os.Remove(path) // a dead agent's
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("query socket: %w", err)
	}
	// Chmod after listen only widens the mode (umask narrowed it): nobody
	// is let in before the mode is meant to let them.
	if err := os.Chmod(path, SocketMode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("query socket mode: %w", err)
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
		ln.Close()
		return nil, fmt.Errorf("query socket %s: directory %s is mode %v, which users cannot enter; make it 0755 or set query_socket elsewhere", path, dir, fi.Mode().Perm())
	}
	return ln, nil
}

// ServeLocal answers queries from ln (ListenLocal's) out of db until ctx
// ends, then stops within a few seconds. db should be a read-only handle
// of its own, so queries share no connection with the agent's writes.
func ServeLocal(ctx context.Context, ln net.Listener, db *store.DB, opts LocalOptions, log *slog.Logger) error {
	opts = opts.withDefaults()
	if opts.Refusals == nil {
		opts.Refusals = NewQueryRefusals(log)
	}
	srv := newLocalServer(db, opts, log)
	lim := srv.lim
	personOf := func(c net.Conn) (string, any, error) {
		key, info, err := uidOf(c)
		if p, ok := info.(peer); ok && err == nil {
			key = opts.Persons.Key(p.id.UID)
		}
		return key, info, err
	}
	pl := newPeerListener(ln, lim.MaxConns, lim.ConnsPerPeer, "uid", personOf, opts.Refusals)
	// Each person's failed requests spend their own budget (the peer's
	// key: the person's, or the uid's).
	pl.budget = srv.budget
	hs := &http.Server{
		Handler: srv.Handler(),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return PeerConnContext(withConn(ctx, c), c)
		},
		ConnState:         pl.connState,
		ReadHeaderTimeout: lim.HeaderTimeout,
		ReadTimeout:       10 * time.Second,
		// Room to write a large answer to a slow reader, no more; the
		// reader holds its own connection meanwhile, not a query slot.
		WriteTimeout:   lim.QueueWait + lim.QueryTimeout + 30*time.Second,
		IdleTimeout:    lim.IdleTimeout,
		MaxHeaderBytes: maxLocalHeader,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return serveUntil(ctx, hs, pl)
}

// serveUntil serves hs on ln until ctx ends, then shuts it down within a
// few seconds.
func serveUntil(ctx context.Context, hs *http.Server, ln net.Listener) error {
	stop, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-ctx.Done():
		case <-stop:
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			_ = hs.Close()
		}
	}()
	err := hs.Serve(ln)
	if !errors.Is(err, http.ErrServerClosed) {
		close(stop) // Serve failed on its own
	} else {
		err = nil
	}
	<-finished
	return err
}

// uidOf is a unix-socket connection's peer: its uid, as the kernel says.
func uidOf(c net.Conn) (string, any, error) {
	id, pid, err := peerIdentity(c)
	if err != nil {
		return "", nil, err
	}
	return strconv.Itoa(id.UID), peer{id: id, pid: pid}, nil
}
