package collect

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Fair service (issue 25, item 3): one client holding connections or
// sending requests without end must not keep other users from being
// answered. Every connection belongs to a peer — a uid on the local query
// socket (the kernel says which), a host on the collector (the only name a
// connection has before its credential is decoded) — and each peer gets a
// share of the connections (peerListener) and each uid a share of the
// queries answered at once (fairSlots), so a peer at its share waits or is
// refused while the others are served.

// peerListener holds at most cap(slots) connections at once, and at most
// perPeer of one peer's. A new connection of a peer at its share closes
// that peer's oldest connection that is not being answered (one still
// sending its request, or idle between requests): a client that opens
// connections and sends nothing, or sends slowly, only ever pushes out its
// own. When all of the peer's connections are being answered, the new one
// is refused with a 503. The total is a bound on file descriptors: at it,
// Accept waits and connections wait in the kernel's listen backlog.
type peerListener struct {
	net.Listener
	// identify names a connection's peer (key) and returns what the
	// server's ConnContext needs of it (info, may be nil). A connection it
	// cannot name is keyed by the error's text: it shares one peer with
	// every other such connection, and its requests are refused anyway.
	identify func(net.Conn) (key string, info any, err error)
	perPeer  int
	kind     string // "uid", "host": what a peer is, for the refusal's text
	refusals *Refusals
	// source, when set, names a connection's source for budget (the
	// failed-request budget, failbudget.go) from the connection and its
	// peer's key; nil: the peer's key. budget nil: no budget.
	source func(c net.Conn, key string) string
	budget *failBudget

	slots     chan struct{} // one per connection held
	lingering chan struct{} // one per refused connection still being answered
	closed    chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	peers map[string][]*peerConn // oldest first
}

func newPeerListener(ln net.Listener, maxConns, perPeer int, kind string, identify func(net.Conn) (string, any, error), refusals *Refusals) *peerListener {
	return &peerListener{
		Listener: ln, identify: identify, perPeer: max(perPeer, 1), kind: kind, refusals: refusals,
		slots: make(chan struct{}, max(maxConns, 1)), lingering: make(chan struct{}, 32), closed: make(chan struct{}),
		peers: map[string][]*peerConn{},
	}
}

// peerConn is a connection a peerListener accepted.
type peerConn struct {
	net.Conn
	l    *peerListener
	key  string
	info any
	// source is whose failed-request budget the connection spends
	// (peerListener.source), fixed at Accept.
	source string
	// closed is closed by Close: a read waiting for the budget ends.
	closed chan struct{}
	// readDL is the read deadline the server last set (UnixNano, 0 for
	// none): a read waiting for the budget keeps it too.
	readDL atomic.Int64
	// prepaid: the connection waited for the budget and took a token for
	// its next request (failBudget.take); the request's answer keeps it
	// (a failure) or gives it back.
	prepaid atomic.Bool
	// busy: a request of it is being answered (from the handler's start
	// to the connection's return to idle); it is not evicted then.
	busy atomic.Bool
	once sync.Once
}

// Accept waits for a free slot, then returns the next connection its
// peer's share admits, answering the others.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
		c, err := l.Listener.Accept()
		if err != nil {
			<-l.slots
			return nil, err
		}
		key, info, err := l.identify(c)
		if err != nil {
			key = "unidentified: " + err.Error()
		}
		pc := &peerConn{Conn: c, l: l, key: key, info: info, source: key, closed: make(chan struct{})}
		if l.source != nil {
			pc.source = l.source(c, key)
		}
		evict, ok := l.admit(pc)
		if evict != nil {
			l.refusals.Refuse(RefuseConnLimit, "connection closed: its peer opened another over its share",
				l.kind, key, "share", l.perPeer)
			_ = evict.Close()
		}
		if ok {
			return pc, nil
		}
		<-l.slots
		l.refusals.Refuse(RefuseConnLimit, "connection refused: every connection of its peer is being answered",
			l.kind, key, "share", l.perPeer)
		l.refuse(c, fmt.Sprintf("too many connections from %s %s at once (%d are being answered); try again when they are done\n", l.kind, key, l.perPeer))
	}
}

// admit records pc under its peer. At the peer's share it takes out the
// oldest connection that is not busy, which the caller closes; with none,
// ok is false and pc is not recorded.
func (l *peerListener) admit(pc *peerConn) (evict *peerConn, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	conns := l.peers[pc.key]
	if len(conns) >= l.perPeer {
		i := -1
		for j, c := range conns {
			if !c.busy.Load() {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, false
		}
		evict = conns[i]
		conns = append(conns[:i:i], conns[i+1:]...)
	}
	l.peers[pc.key] = append(conns, pc)
	return evict, true
}

// forget removes pc from its peer's connections.
func (l *peerListener) forget(pc *peerConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removeLocked(pc)
}

func (l *peerListener) removeLocked(pc *peerConn) {
	conns := l.peers[pc.key]
	for i, c := range conns {
		if c == pc {
			conns = append(conns[:i:i], conns[i+1:]...)
			break
		}
	}
	if len(conns) == 0 {
		delete(l.peers, pc.key)
	} else {
		l.peers[pc.key] = conns
	}
}

// refuse answers a connection over its peer's share with a 503 and closes
// it, on a goroutine of its own (at most cap(lingering) at once; beyond,
// the connection is closed unanswered) so the accept loop never waits on a
// client.
func (l *peerListener) refuse(c net.Conn, msg string) {
	select {
	case l.lingering <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.lingering }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		resp := fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
			"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
		if _, err := c.Write([]byte(resp)); err != nil {
			return
		}
		// Half-close and read what the client sent, so that TCP does not
		// reset the connection (and lose the answer) for unread data.
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		var buf [4096]byte
		for range 16 {
			if _, err := c.Read(buf[:]); err != nil {
				return
			}
		}
	}()
}

// rekey moves pc into key's share of at most share connections, once a
// request on it has named who sent it (a credential decoded): from then
// on its host's unauthenticated connections never push it out, only its
// own principal's. A principal at its share loses its oldest connection
// that is not being answered; pc itself is busy while this runs.
func (l *peerListener) rekey(pc *peerConn, key string, share int) {
	l.mu.Lock()
	if pc.key == key {
		l.mu.Unlock()
		return
	}
	l.removeLocked(pc)
	conns := l.peers[key]
	var evict *peerConn
	if len(conns) >= max(share, 1) {
		for i, c := range conns {
			if c != pc && !c.busy.Load() {
				evict = c
				conns = append(conns[:i:i], conns[i+1:]...)
				break
			}
		}
	}
	pc.key = key
	l.peers[key] = append(conns, pc)
	l.mu.Unlock()
	if evict != nil {
		l.refusals.Refuse(RefuseConnLimit, "connection closed: its sender opened another over its share", "sender", key, "share", share)
		_ = evict.Close()
	}
}

// Close stops Accept, also one waiting for a slot.
func (l *peerListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// connState is the http.Server's ConnState hook: a connection back to
// idle is no longer busy.
func (l *peerListener) connState(c net.Conn, st http.ConnState) {
	if pc, ok := c.(*peerConn); ok && st == http.StateIdle {
		pc.busy.Store(false)
	}
}

// Close closes the connection and gives its slot back (once).
func (c *peerConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		close(c.closed)
		c.l.forget(c)
		<-c.l.slots
	})
	return err
}

// Read reads the next request only once the connection's source has a
// failed request left in its budget (failbudget.go): a source out of its
// budget is not read from at all, its sender stopped by the kernel's flow
// control, until a token is back, the read deadline passes or the
// connection is closed. A request being answered (a push's body) reads
// on unchecked.
func (c *peerConn) Read(p []byte) (int, error) {
	if b := c.l.budget; b != nil && !c.busy.Load() {
		if err := c.awaitBudget(b); err != nil {
			return 0, err
		}
	}
	return c.Conn.Read(p)
}

func (c *peerConn) awaitBudget(b *failBudget) error {
	for waited := false; ; waited = true {
		var d time.Duration
		if !waited {
			d = b.wait(c.source) // within budget: read on, nothing taken
		} else if d = b.take(c.source); d <= 0 {
			c.prepaid.Store(true)
		}
		if d <= 0 {
			return nil
		}
		if dl := c.readDL.Load(); dl != 0 {
			left := time.Until(time.Unix(0, dl))
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			d = min(d, left)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.closed:
			t.Stop()
			return net.ErrClosed
		}
	}
}

// SetReadDeadline and SetDeadline keep the deadline for awaitBudget.
func (c *peerConn) SetReadDeadline(t time.Time) error {
	c.keepDeadline(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *peerConn) SetDeadline(t time.Time) error {
	c.keepDeadline(t)
	return c.Conn.SetDeadline(t)
}

func (c *peerConn) keepDeadline(t time.Time) {
	if t.IsZero() {
		c.readDL.Store(0)
	} else {
		c.readDL.Store(t.UnixNano())
	}
}

// NetConn returns the accepted connection itself (PeerConnContext reads
// a unix socket's credentials from it).
func (c *peerConn) NetConn() net.Conn { return c.Conn }

// connKey is the context key of the *peerConn a request came on.
type connKey struct{}

// withConn is an http.Server ConnContext that keeps c for markBusy.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*peerConn); ok {
		return context.WithValue(ctx, connKey{}, pc)
	}
	return ctx
}

// takePrepaid says whether the request r is the one a token was taken
// for in advance (peerConn.prepaid), and clears it.
func takePrepaid(r *http.Request) bool {
	pc, ok := r.Context().Value(connKey{}).(*peerConn)
	return ok && pc.prepaid.Swap(false)
}

// markBusy marks the connection r came on busy until it is idle again.
func markBusy(r *http.Request) {
	if pc, ok := r.Context().Value(connKey{}).(*peerConn); ok {
		pc.busy.Store(true)
	}
}

// authenticated moves the connection r came on into the share of who
// sent it (peerListener.rekey), key naming them, when it came through a
// peerListener.
func authenticated(r *http.Request, key string, share int) {
	if pc, ok := r.Context().Value(connKey{}).(*peerConn); ok {
		pc.l.rekey(pc, key, share)
	}
}

// hostOf is a TCP connection's peer: its remote address without the port.
func hostOf(c net.Conn) (string, any, error) {
	addr := c.RemoteAddr()
	if addr == nil {
		return "", nil, fmt.Errorf("no remote address")
	}
	if ta, ok := addr.(*net.TCPAddr); ok {
		return hostKey(ta.IP), nil, nil
	}
	return addrHost(addr.String()), nil, nil
}

// addrHost is the host key of a "host:port" address (hostKey), or the
// address itself when it has no IP.
func addrHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if ip := net.ParseIP(host); ip != nil {
		return hostKey(ip)
	}
	return host
}

// loopbackHost is the host key of every loopback address.
const loopbackHost = "loopback"

// requestHost is the host key of a request's sender.
func requestHost(r *http.Request) string { return addrHost(r.RemoteAddr) }

// hostKey names the host an address belongs to, for per-host shares: one
// host may hold many addresses. Every loopback address (127.0.0.0/8, ::1)
// is this host's: anyone on it can bind 127.0.0.2, .3, ...; an IPv4
// address written as IPv6 is that IPv4 address; any other IPv6 address
// counts by its /64, the block one interface takes its addresses from
// (privacy addresses, SLAAC).
func hostKey(ip net.IP) string {
	switch {
	case ip.IsLoopback():
		return loopbackHost
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// fairSlots lets at most cap(total) holders in at once, and at most per of
// one key: a key at its share waits on its own, never ahead of others.
type fairSlots struct {
	total chan struct{}
	per   int

	mu    sync.Mutex
	byKey map[string]*keySlots
}

type keySlots struct {
	held chan struct{}
	refs int // holders and waiters
}

func newFairSlots(total, per int) *fairSlots {
	return &fairSlots{total: make(chan struct{}, max(total, 1)), per: max(per, 1), byKey: map[string]*keySlots{}}
}

// acquire waits, until ctx ends, for a slot of key's share and one of the
// total. ok false means ctx ended first and nothing is held.
func (f *fairSlots) acquire(ctx context.Context, key string) (release func(), ok bool) {
	f.mu.Lock()
	ks := f.byKey[key]
	if ks == nil {
		ks = &keySlots{held: make(chan struct{}, f.per)}
		f.byKey[key] = ks
	}
	ks.refs++
	f.mu.Unlock()
	drop := func() {
		f.mu.Lock()
		if ks.refs--; ks.refs == 0 {
			delete(f.byKey, key)
		}
		f.mu.Unlock()
	}
	select {
	case ks.held <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, false
	}
	select {
	case f.total <- struct{}{}:
	case <-ctx.Done():
		<-ks.held
		drop()
		return nil, false
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-f.total
			<-ks.held
			drop()
		})
	}, true
}
