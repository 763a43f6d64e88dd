// Package collect is gpuprof's multi-node transport: the collector that
// `gpuprof serve` runs on the central host — it receives finished profiles
// from node agents and answers job queries — and the client that agents and
// users' commands call. Every request is authenticated with a munge
// credential bound to that request. On a single host the node agent serves
// the same queries on a local unix socket (NewLocalServer, ServeLocal),
// where the kernel names the caller instead of munge.
//
// It must not sample GPUs or parse Slurm environments.
package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// Authenticator decodes a credential into who made it and its payload.
type Authenticator interface {
	Decode(ctx context.Context, cred string) (Identity, []byte, error)
}

// NodeRef names one Slurm node of one cluster.
type NodeRef struct {
	Cluster, Node string
}

func (n NodeRef) String() string { return n.Cluster + "/" + n.Node }

// ServerOptions configure the collector.
type ServerOptions struct {
	// PushUIDs may push profiles: root and the SlurmUser.
	PushUIDs []int
	// PushHosts, when not empty, are the only ENCODE_HOST values (node
	// addresses) whose pushes are accepted.
	PushHosts []string
	// Every push is bound to its sender, the host its credential was made
	// on (ENCODE_HOST, as munge reports it). By default a profile is
	// accepted only for a node whose name resolves (Resolve) to that
	// address, and only of Cluster. A loopback ENCODE_HOST (what munged
	// reports on any host whose name resolves to 127.0.1.1, say) binds
	// only a push that came over a loopback connection; an unspecified
	// one (0.0.0.0), or one that is no address, binds none.
	//
	// NodeHosts overrides the default rule for the hosts it lists (NAT,
	// several slurmd on one host, simulated nodes, node names that are
	// not host names): such a host may push profiles only of the nodes
	// listed for it, each of its cluster. Hosts it does not list stay
	// under the default rule (PushHosts admits only listed hosts at all).
	NodeHosts map[string][]NodeRef
	// Cluster is the cluster the default rule accepts profiles of (the
	// collector's own); empty leaves the cluster unchecked. NodeHosts
	// names clusters of its own.
	Cluster string
	// Resolve looks a node's name up for the default rule; nil means
	// HostResolver (the collector host's /etc/hosts and DNS, 2 s a lookup,
	// answers cached for 30 s).
	Resolve ResolveFunc
	// IsAdmin says whether a uid may see every user's jobs.
	IsAdmin func(uid int) bool
	// MaxBody bounds a pushed profile.
	MaxBody int64
	// Metrics, when set, counts what pushes store and refuse (the
	// collector's /metrics, metrics.go); nil counts nothing.
	Metrics *Metrics
	// Refusals counts and logs refused requests (rate-limited); nil makes
	// one of the server's own that logs and is exported nowhere.
	Refusals *Refusals
	// Limits share the server out among its clients; zero fields take
	// the collector's defaults (defaultLimits).
	Limits Limits
	// Placement decides when a push's job counts as its node's (hold.go):
	// "" or PlacementSlurm, once Slurm's records place the job on the
	// node, the profile held until then; PlacementSender, at once.
	Placement Placement
	// HeldPerNode bounds the profiles held of one node (default
	// DefaultHeldPerNode), HoldFor how long one is held (DefaultHoldFor).
	HeldPerNode int
	HoldFor     time.Duration
}

// Limits bound what one client may take of a server. Zero means the
// default for each field (defaultLimits for the collector, the local
// query socket's in LocalOptions).
//
// Users' queries and nodes' pushes wait in lanes of their own: a query
// takes a query decode and a query slot, a push a push decode and an
// upload slot, and neither kind ever takes the other's. A job-end burst of
// a thousand nodes therefore queues pushes behind pushes only; a user's
// query waits for other queries (and the CPU), never for the burst.
type Limits struct {
	// MaxConns is how many connections are held at once; more wait in
	// the kernel's listen backlog.
	MaxConns int
	// ConnsPerPeer is how many of them one peer holds at once: one uid
	// on the local query socket, one host on the collector. A peer at its
	// share that opens another loses its oldest idle one.
	ConnsPerPeer int
	// MaxQueries is how many queries are answered at once, QueriesPerUID
	// how many of one uid's; more wait up to QueueWait, then get 503 and
	// Retry-After.
	MaxQueries, QueriesPerUID int
	// QueueWait: see MaxQueries; also the longest a push waits for an
	// upload slot and a credential for its decoding.
	QueueWait time.Duration
	// QueryTimeout ends a query's database read.
	QueryTimeout time.Duration
	// MaxUploads is how many pushes' bodies are read at once,
	// UploadsPerHost how many of one sending host's (a node pushes one
	// profile at a time): only after the credential in the header was
	// decoded and allowed, within UploadTimeout of the body's first byte
	// being asked for.
	MaxUploads, UploadsPerHost int
	UploadTimeout              time.Duration
	// ConnsPerSender is how many connections one authenticated sender
	// (a user by uid, a node by its host) holds once a request on them was
	// authenticated; until then a connection counts in its host's
	// ConnsPerPeer. Collector only.
	ConnsPerSender int
	// QueryDecodes is how many queries' credentials are decoded at once,
	// PushDecodes how many pushes' (each runs unmunge): two lanes, told
	// apart by the request's method and path before anything is decoded.
	// In each lane a quarter of its decodes (at least one) serve one
	// sending host: a host flooding junk credentials waits on its own
	// share, never ahead of other hosts' requests.
	QueryDecodes, PushDecodes int
	// HeaderTimeout is how long a client has to send a request's line
	// and headers; IdleTimeout how long a connection may wait for its next
	// request.
	HeaderTimeout, IdleTimeout time.Duration
	// FailuresPerSecond and FailureBurst are each source's budget of
	// failed requests (failbudget.go): a source — a remote host, or a uid
	// on the collector's own host — may fail FailureBurst requests at
	// once and FailuresPerSecond a second after that; beyond, its
	// connections are not read from and a request of it already read is
	// refused 429 before its credential is decoded. Collector only.
	FailuresPerSecond, FailureBurst int
}

// defaultLimits are the collector's (serve's settings of the same names,
// docs/configuration.md). 4096 connections stay far below the file
// descriptors Go raises the soft limit to; 1024 of one host leave room for
// a login node's users (who share their host's share); 8 queries at once,
// 2 of one uid, so that one user's costly sorts leave the others slots;
// 4 uploads, one per host (a node pushes one profile at a time), so
// bodies in memory stay under 4 × MaxBody; 8 unmunge processes at once for
// pushes and 8 for queries; 5 s to send a request's headers, which a
// client sends at once.
func defaultLimits() Limits {
	return Limits{
		MaxConns: 4096, ConnsPerPeer: 1024, ConnsPerSender: 64, MaxQueries: 8, QueriesPerUID: 2, QueueWait: 5 * time.Second,
		QueryTimeout: 30 * time.Second, MaxUploads: 4, UploadsPerHost: 1, UploadTimeout: 30 * time.Second,
		QueryDecodes: 8, PushDecodes: 8, HeaderTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second,
		FailuresPerSecond: DefaultFailuresPerSecond, FailureBurst: DefaultFailureBurst,
	}
}

// DefaultFailuresPerSecond and DefaultFailureBurst are the collector's
// failed-request budget of a source (Limits): far more than an honest
// client fails (a node retries a refused push with backoff, a user
// mistypes a filter), far less than a flood (14 million requests in 40 s
// in issue 39's load test), and an unmunge each second costs the
// collector a few milliseconds of CPU.
const (
	DefaultFailuresPerSecond = 10
	DefaultFailureBurst      = 100
)

// orDefault returns l with each zero field taken from def.
func (l Limits) orDefault(def Limits) Limits {
	pick := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	pickD := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	return Limits{
		MaxConns: pick(l.MaxConns, def.MaxConns), ConnsPerPeer: pick(l.ConnsPerPeer, def.ConnsPerPeer),
		ConnsPerSender: pick(l.ConnsPerSender, def.ConnsPerSender),
		MaxQueries:     pick(l.MaxQueries, def.MaxQueries), QueriesPerUID: pick(l.QueriesPerUID, def.QueriesPerUID),
		QueueWait: pickD(l.QueueWait, def.QueueWait), QueryTimeout: pickD(l.QueryTimeout, def.QueryTimeout),
		MaxUploads: pick(l.MaxUploads, def.MaxUploads), UploadsPerHost: pick(l.UploadsPerHost, def.UploadsPerHost),
		UploadTimeout: pickD(l.UploadTimeout, def.UploadTimeout),
		QueryDecodes:  pick(l.QueryDecodes, def.QueryDecodes), PushDecodes: pick(l.PushDecodes, def.PushDecodes),
		HeaderTimeout: pickD(l.HeaderTimeout, def.HeaderTimeout), IdleTimeout: pickD(l.IdleTimeout, def.IdleTimeout),
		FailuresPerSecond: pick(l.FailuresPerSecond, def.FailuresPerSecond), FailureBurst: pick(l.FailureBurst, def.FailureBurst),
	}
}

// Server answers the collector's HTTP API:
//
//	POST /v1/profiles              a finished (or running) profile; upsert by cluster, job, node
//	GET  /v1/jobs?user=&account=&partition=&state=&text=&since=&until=&sort=&asc=&limit=&offset=
//	GET  /v1/jobs/count?…          {"count": n}: how many jobs the same filter selects (limit, offset ignored)
//	GET  /v1/jobs/{cluster}/{job}  one job: scheduler view and every node's profile
//
// A caller who is not an admin gets only their own jobs from all three
// queries, whatever the filter asks for.
//
// Each request carries "Authorization: MUNGE <credential>" whose payload is
// Binding(method, path?query, body). A push's credential is decoded and
// its sender allowed before a byte of its body is read; the body must then
// arrive within Limits.UploadTimeout and match the digest the credential
// carries. A server made by NewLocalServer takes the caller from the
// connection instead and serves the queries only.
type Server struct {
	db   *store.DB
	auth Authenticator
	opts ServerOptions
	lim  Limits
	log  *slog.Logger
	// local: the caller is the connection's peer (PeerConnContext), never
	// a credential, and nothing may be pushed.
	local bool
	// persons makes the local socket's shares per person (LocalOptions);
	// nil: per uid.
	persons *Persons
	// name says who answers, in a busy answer's text.
	name string

	refusals *Refusals
	queries  *fairSlots // database reads, per uid
	uploads  *fairSlots // push bodies being read, per host
	// Credentials being decoded, a lane for queries and one for pushes.
	queryDecodes, pushDecodes decodeLane
	held                      *holdings // pushes waiting for Slurm's records (hold.go)
	// suspect hosts (a credential of theirs failed lately) decode only
	// within their lane's suspect slots as well (suspects.go).
	suspect *suspects
	// budget is every source's failed-request budget (failbudget.go): a
	// host's or local uid's at the collector, a person's on the local
	// query socket.
	budget *failBudget
}

// decodeLane is one kind of request's credential decoding: slots shared
// out by sending host, and the suspects' half of them.
type decodeLane struct {
	slots    *fairSlots
	suspects chan struct{}
}

func newDecodeLane(n int) decodeLane {
	return decodeLane{slots: newFairSlots(n, max(n/4, 1)), suspects: make(chan struct{}, max(n/2, 1))}
}

// NewServeRefusals returns the collector's refusal counter and log,
// gpuprof_serve_requests_refused_total.
func NewServeRefusals(log *slog.Logger) *Refusals {
	return NewRefusals("gpuprof_serve_requests_refused_total",
		"Requests and connections the collector refused, by reason (each is logged at most once per reason every 10s).", log, 0)
}

// NewServer returns a collector writing to db.
func NewServer(db *store.DB, auth Authenticator, opts ServerOptions, log *slog.Logger) *Server {
	return newServer(db, auth, opts, defaultLimits(), log)
}

func newServer(db *store.DB, auth Authenticator, opts ServerOptions, def Limits, log *slog.Logger) *Server {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 16 << 20
	}
	if opts.IsAdmin == nil {
		opts.IsAdmin = func(uid int) bool { return uid == 0 }
	}
	if opts.Refusals == nil {
		opts.Refusals = NewServeRefusals(log)
	}
	if opts.Resolve == nil {
		opts.Resolve = HostResolver()
	}
	lim := opts.Limits.orDefault(def)
	var budget *failBudget
	if lim.FailuresPerSecond > 0 {
		budget = newFailBudget(lim.FailuresPerSecond, lim.FailureBurst)
	}
	return &Server{
		budget: budget,
		db:     db, auth: auth, opts: opts, lim: lim, log: log, name: "collector", refusals: opts.Refusals,
		queries:      newFairSlots(lim.MaxQueries, lim.QueriesPerUID),
		uploads:      newFairSlots(lim.MaxUploads, lim.UploadsPerHost),
		queryDecodes: newDecodeLane(lim.QueryDecodes), pushDecodes: newDecodeLane(lim.PushDecodes),
		held:    newHoldings(opts.HeldPerNode, opts.HoldFor, nil),
		suspect: newSuspects(),
	}
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	if !s.local {
		mux.HandleFunc("POST /v1/profiles", s.opts.Metrics.countRejects(s.push))
	}
	mux.HandleFunc("GET /v1/jobs", s.list)
	// Three segments: never taken for a job of cluster "count", whose path
	// has four.
	mux.HandleFunc("GET /v1/jobs/count", s.count)
	mux.HandleFunc("GET /v1/jobs/{cluster}/{job}", s.get)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		markBusy(r)
		if s.budget != nil {
			source := requestSource(r)
			prepaid := takePrepaid(r)
			if d := s.budget.wait(source); d > 0 && !prepaid {
				s.overBudget(w, r, source, d)
				return
			}
			sw := &statusWriter{ResponseWriter: w}
			defer func() {
				switch failed := charged(sw.status); {
				case failed && !prepaid:
					s.budget.charge(source)
				case !failed && prepaid:
					s.budget.refund(source)
				}
			}()
			w = sw
		}
		if r.Method != http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 0) // a query has no body
			if r.ContentLength != 0 {
				// Else net/http would wait for the unread body after the
				// answer, for the connection's next request.
				w.Header().Set("Connection", "close")
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// overBudget refuses a request of a source out of its failed-request
// budget (failbudget.go), before anything of it is looked at, and closes
// its connection: what the client pipelined behind it is never read.
func (s *Server) overBudget(w http.ResponseWriter, r *http.Request, source string, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(max(1, (wait+time.Second-1)/time.Second))))
	w.Header().Set("Connection", "close")
	s.fail(w, r, http.StatusTooManyRequests, fmt.Errorf("too many failed requests from %s; try again in %s", source, wait.Round(time.Millisecond)))
}

// errBusy means no slot came free within Limits.QueueWait.
var errBusy = errors.New("busy")

// decode decodes the request's munge credential in lane (a query's or a
// push's, at most Limits.QueryDecodes or PushDecodes at once: each runs
// unmunge), without reading the body.
func (s *Server) decode(r *http.Request, lane decodeLane) (Identity, []byte, error) {
	cred, ok := strings.CutPrefix(r.Header.Get("Authorization"), "MUNGE ")
	if !ok {
		return Identity{}, nil, fmt.Errorf("%w: no munge credential", ErrAuth)
	}
	if !plausibleCredential(cred) {
		return Identity{}, nil, fmt.Errorf("%w: not a munge credential", ErrAuth)
	}
	// Before the credential is decoded, the sending host (on this host,
	// the connection's uid) is all a request tells: its share of the
	// decodes is the source's, and a source that sent junk lately decodes
	// within the suspects' half too.
	host := requestSource(r)
	wctx, cancel := context.WithTimeout(r.Context(), s.lim.QueueWait)
	defer cancel()
	busy := func() (Identity, []byte, error) {
		if err := r.Context().Err(); err != nil {
			return Identity{}, nil, err
		}
		return Identity{}, nil, fmt.Errorf("%w: no credential decoded within %s", errBusy, s.lim.QueueWait)
	}
	if s.suspect.is(host) {
		select {
		case lane.suspects <- struct{}{}:
			defer func() { <-lane.suspects }()
		case <-wctx.Done():
			return busy()
		}
	}
	release, ok := lane.slots.acquire(wctx, host)
	if !ok {
		return busy()
	}
	defer release()
	id, payload, err := s.auth.Decode(r.Context(), cred)
	if err != nil && r.Context().Err() == nil {
		s.suspect.mark(host)
	}
	return id, payload, err
}

// plausibleCredential says whether cred can be a munge credential at all
// ("MUNGE:", base64, ":"), so that junk costs no unmunge.
func plausibleCredential(cred string) bool {
	body, ok := strings.CutPrefix(cred, "MUNGE:")
	if !ok || len(cred) > 64<<10 {
		return false
	}
	body = strings.TrimSuffix(body, ":")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// authenticate checks a bodiless request's credential against the request.
func (s *Server) authenticate(r *http.Request) (Identity, error) {
	id, payload, err := s.decode(r, s.queryDecodes)
	if err != nil {
		return Identity{}, err
	}
	if want := Binding(r.Method, r.URL.RequestURI(), nil); string(payload) != string(want) {
		return Identity{}, fmt.Errorf("%w: credential made for another request", ErrAuth)
	}
	authenticated(r, "uid "+strconv.Itoa(id.UID), s.lim.ConnsPerSender)
	return id, nil
}

// bodyDigest returns the body digest a push's credential payload binds,
// after checking that the payload was made for this method and URI.
func bodyDigest(r *http.Request, payload []byte) (string, error) {
	head := r.Method + " " + r.URL.RequestURI() + " "
	digest, ok := strings.CutPrefix(string(payload), head)
	if !ok || len(digest) != 2*sha256.Size {
		return "", fmt.Errorf("%w: credential made for another request", ErrAuth)
	}
	return digest, nil
}

// caller says who sent a query: the munge credential's maker, or on a
// local server the connection's peer as the kernel reports it (anything
// the request says, headers included, is ignored there).
func (s *Server) caller(r *http.Request) (Identity, error) {
	if !s.local {
		return s.authenticate(r)
	}
	p, err := peerOf(r)
	if err != nil {
		return Identity{}, err
	}
	s.log.Debug("local query", "uid", p.id.UID, "pid", p.pid, "path", r.URL.Path)
	return p.id, nil
}

// fail answers a refused request with code and counts it; the log gets a
// line per reason at most every few seconds (Refusals).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	attrs := []any{"method", r.Method, "path", r.URL.Path, "status", code, "err", err}
	if s.local {
		if p, perr := peerOf(r); perr == nil {
			attrs = append(attrs, "uid", p.id.UID, "pid", p.pid)
		}
	} else {
		attrs = append(attrs, "remote", r.RemoteAddr)
	}
	s.refusals.Refuse(refuseReason(code), "request refused", attrs...)
	if r.ContentLength != 0 {
		// The body may be unread (a push refused from its headers): close
		// rather than let net/http wait for it before answering.
		w.Header().Set("Connection", "close")
	}
	if code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, err.Error(), code)
}

// authFailed answers a failed authentication: 503 when no decoding slot
// came free, else 401.
func (s *Server) authFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errBusy) {
		s.fail(w, r, http.StatusServiceUnavailable, fmt.Errorf("the %s is answering other requests; try again in a moment", s.name))
		return
	}
	s.fail(w, r, http.StatusUnauthorized, err)
}

// allowedPusher checks that id, who sent r, may push at all: its uid,
// and its host (PushHosts; listed in NodeHosts, else an address that can
// name one host, for the default rule).
func (s *Server) allowedPusher(r *http.Request, id Identity) error {
	if !slices.Contains(s.opts.PushUIDs, id.UID) {
		return fmt.Errorf("uid %d from %s may not push profiles", id.UID, id.Host)
	}
	if len(s.opts.PushHosts) > 0 && !slices.Contains(s.opts.PushHosts, id.Host) {
		return fmt.Errorf("host %s is not a node of this cluster", id.Host)
	}
	if len(s.opts.NodeHosts[id.Host]) > 0 {
		return nil // bound to its list (boundNode)
	}
	a, err := netip.ParseAddr(id.Host)
	switch {
	case err != nil:
		// unmunge --numeric prints an address; anything else binds nothing.
		return fmt.Errorf("host %q: munge reports no address for the credential's host; list the nodes in serve.node_hosts", id.Host)
	case a.IsUnspecified():
		return fmt.Errorf("host %s: munge reports no address (%s) for the credential's host, as munged does when it cannot "+
			"tell its own: set the node's origin address (munged --origin), or list its nodes in serve.node_hosts", id.Host, id.Host)
	case a.Unmap().IsLoopback() && !loopbackPeer(r):
		// Every node whose name resolves to 127.0.1.1 reports that.
		return fmt.Errorf("host %s: munge reports a loopback address for the credential's host, and the push came from %s, "+
			"not from this host: set the node's origin address (munged --origin, or its host name's address in /etc/hosts), "+
			"or list its nodes in serve.node_hosts", id.Host, r.RemoteAddr)
	}
	return nil
}

// boundNode checks that a push whose credential id made is for a node
// its host is: one NodeHosts lists for it when it lists the host, else
// (the default rule) a node of Cluster whose name resolves to id.Host.
// code is the answer when it is not: 403, or 503 when the name could not
// be looked up now.
func (s *Server) boundNode(r *http.Request, id Identity, j profile.Job) (code int, err error) {
	host, ref := id.Host, NodeRef{Cluster: j.Cluster, Node: j.Node}
	if nodes := s.opts.NodeHosts[host]; len(nodes) > 0 {
		if slices.Contains(nodes, ref) {
			return 0, nil
		}
		names := make([]string, len(nodes))
		for i, n := range nodes {
			names[i] = n.String()
		}
		return http.StatusForbidden, fmt.Errorf("host %s may push profiles only of %s, its nodes in serve.node_hosts, not of %s",
			host, strings.Join(names, ", "), ref)
	}
	refuse := func(why string) (int, error) {
		entry := j.Node // serve.node_hosts' form: the collector's cluster
		if j.Cluster != s.opts.Cluster {
			entry = ref.String()
		}
		return http.StatusForbidden, fmt.Errorf("host %s may not push profiles of node %s: %s; if that host runs the node "+
			"(NAT, several slurmd on one host, simulated nodes), list its nodes in serve.node_hosts: %q = [%q]", host, ref, why, host, entry)
	}
	if s.opts.Cluster != "" && j.Cluster != s.opts.Cluster {
		return refuse(fmt.Sprintf("cluster %q is not this collector's (%q)", j.Cluster, s.opts.Cluster))
	}
	addrs, err := s.opts.Resolve(r.Context(), j.Node)
	switch {
	case notFound(err):
		return refuse(fmt.Sprintf("%q does not resolve on the collector", j.Node))
	case err != nil:
		return http.StatusServiceUnavailable, fmt.Errorf("node %s of host %s: its name could not be looked up now (%v); try again", ref, host, err)
	}
	for _, a := range addrs {
		if sameAddr(a, host) {
			return 0, nil
		}
	}
	return refuse(fmt.Sprintf("%q resolves to %s on the collector, not to the credential's host (munge's ENCODE_HOST)", j.Node, strings.Join(addrs, ", ")))
}

// loopbackPeer says whether r came over a loopback connection.
func loopbackPeer(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// readBody reads a push's body: at most MaxBody, within UploadTimeout,
// UploadsPerHost of one host's at a time and at most MaxUploads at once. code is the answer
// when it fails.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, host string) (body []byte, code int, err error) {
	if r.ContentLength > s.opts.MaxBody {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body of %d bytes: over the limit of %d", r.ContentLength, s.opts.MaxBody)
	}
	wctx, cancel := context.WithTimeout(r.Context(), s.lim.QueueWait)
	release, ok := s.uploads.acquire(wctx, host)
	cancel()
	if !ok {
		w.Header().Set("Retry-After", "2")
		return nil, http.StatusServiceUnavailable, fmt.Errorf("the %s is reading other profiles; try again in a moment", s.name)
	}
	defer release()
	// A recorder in tests supports no deadline: nothing to bound there.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.lim.UploadTimeout))
	size := r.ContentLength
	if size < 0 {
		size = 64 << 10
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, s.opts.MaxBody)+1))
	_, err = buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, fmt.Errorf("body not received within %s", s.lim.UploadTimeout)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("body: %w", err)
	}
	return buf.Bytes(), 0, nil
}

// fullRetryAfter is the Retry-After, in seconds, of a push refused
// because the collector's database or disk is full.
const fullRetryAfter = "60"

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	// Who sends, from the header alone: nothing of the body is read for
	// a sender that may not push.
	id, payload, err := s.decode(r, s.pushDecodes)
	if err != nil {
		s.authFailed(w, r, err)
		return
	}
	digest, err := bodyDigest(r, payload)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	if err := s.allowedPusher(r, id); err != nil {
		s.fail(w, r, http.StatusForbidden, err)
		return
	}
	authenticated(r, "node "+id.Host, s.lim.ConnsPerSender)
	body, code, err := s.readBody(w, r, id.Host)
	if err != nil {
		s.fail(w, r, code, err)
		return
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != digest {
		s.fail(w, r, http.StatusUnauthorized, fmt.Errorf("%w: credential made for another body", ErrAuth))
		return
	}
	var j profile.Job
	if err := json.Unmarshal(body, &j); err != nil {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("bad profile: %w", err))
		return
	}
	if !slurmext.ValidJobID(j.JobID) {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("bad profile: job id %q is not a Slurm job id", j.JobID))
		return
	}
	if j.Cluster == "" || j.Node == "" {
		s.fail(w, r, http.StatusBadRequest, errors.New("bad profile: cluster and node must both be set"))
		return
	}
	if code, err := s.boundNode(r, id, j); err != nil {
		if code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "5")
		}
		s.fail(w, r, code, err)
		return
	}
	placed, why, err := s.placed(r.Context(), j)
	switch {
	case errors.Is(err, store.ErrLocked):
		w.Header().Set("Retry-After", "2")
		s.fail(w, r, http.StatusServiceUnavailable, err)
		return
	case err != nil:
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	case !placed:
		s.holdPush(w, r, j, len(body), why)
		return
	}
	s.held.forget(j.Key)                             // this push has it now
	err = s.opts.Metrics.store(r.Context(), s.db, j) // CheckOwner, then PutJob, counted
	switch {
	case errors.Is(err, store.ErrFinished):
		// A running snapshot after the finished profile: already have better.
	case errors.Is(err, store.ErrOwner):
		s.fail(w, r, http.StatusConflict, err)
		return
	case errors.Is(err, store.ErrLocked):
		w.Header().Set("Retry-After", "2")
		s.fail(w, r, http.StatusServiceUnavailable, err)
		return
	case errors.Is(err, store.ErrFull):
		// The collector's disk is full: nothing was stored. The node keeps
		// the profile in its outbox and sends it again (retryable, like
		// every 5xx); a minute, not seconds, since space comes back by an
		// admin's hand.
		w.Header().Set("Retry-After", fullRetryAfter)
		s.fail(w, r, http.StatusServiceUnavailable, fmt.Errorf("the %s's disk is full: profile not stored; keep it and try again later: %w", s.name, err))
		return
	case errors.Is(err, store.ErrInvalid):
		s.fail(w, r, http.StatusBadRequest, err)
		return
	case err != nil:
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	s.log.Debug("profile stored", "cluster", j.Cluster, "job", j.JobID, "node", j.Node, "status", j.Status)
	w.WriteHeader(http.StatusNoContent)
}

// reader is the store's reader for the caller id: their own jobs unless
// they are an admin (store.Reader applies the rule). A credential names a
// uid only, so the caller has no name: a filter on their user name stays
// as asked.
func (s *Server) reader(id Identity) *store.Reader {
	return s.db.ReaderFor(store.CallerOf(id.UID, "", s.opts.IsAdmin))
}

// scopedFilter authenticates a query and returns its caller's reader and
// the filter. On failure it has answered the request and ok is false.
func (s *Server) scopedFilter(w http.ResponseWriter, r *http.Request) (id Identity, rd *store.Reader, f store.ViewFilter, ok bool) {
	id, err := s.caller(r)
	if err != nil {
		s.authFailed(w, r, err)
		return id, nil, f, false
	}
	f, err = parseViewFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return id, nil, f, false
	}
	return id, s.reader(id), f, true
}

// query runs read, a database read, in one of the caller's query slots
// (Limits.MaxQueries, QueriesPerUID) with a context that ends after
// QueryTimeout. The slot is given back before the answer is written: a
// client reading its answer slowly holds its connection, never a slot.
// On failure it has answered the request and ok is false.
func (s *Server) query(w http.ResponseWriter, r *http.Request, id Identity, read func(ctx context.Context) error) (ok bool) {
	wctx, cancel := context.WithTimeout(r.Context(), s.lim.QueueWait)
	release, ok := s.queries.acquire(wctx, s.persons.Key(id.UID))
	cancel()
	if !ok {
		if r.Context().Err() != nil {
			return false // the client left
		}
		s.fail(w, r, http.StatusServiceUnavailable, fmt.Errorf("the %s is answering other queries; try again in a moment", s.name))
		return false
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), s.lim.QueryTimeout)
	defer cancel()
	if err := read(ctx); err != nil {
		s.queryFailed(w, r, err)
		return false
	}
	return true
}

// queryFailed answers a failed store query.
func (s *Server) queryFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrBadFilter) || errors.Is(err, store.ErrNotFound):
		// A bad filter, or a page after a job that does not exist (or is
		// someone else's: the store answers the same).
		s.fail(w, r, http.StatusBadRequest, err)
	case errors.Is(err, store.ErrLocked):
		s.fail(w, r, http.StatusServiceUnavailable, err)
	default:
		s.fail(w, r, http.StatusInternalServerError, err)
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	id, rd, f, ok := s.scopedFilter(w, r)
	if !ok {
		return
	}
	var views []store.JobView
	if !s.query(w, r, id, func(ctx context.Context) (err error) {
		views, err = rd.ListViews(ctx, f)
		return err
	}) {
		return
	}
	writeJSON(w, views)
}

// CountAnswer is the body of GET /v1/jobs/count.
type CountAnswer struct {
	Count int `json:"count"`
}

func (s *Server) count(w http.ResponseWriter, r *http.Request) {
	id, rd, f, ok := s.scopedFilter(w, r)
	if !ok {
		return
	}
	var n int
	if !s.query(w, r, id, func(ctx context.Context) (err error) {
		n, err = rd.CountViews(ctx, f)
		return err
	}) {
		return
	}
	writeJSON(w, CountAnswer{Count: n})
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id, err := s.caller(r)
	if err != nil {
		s.authFailed(w, r, err)
		return
	}
	f := store.ViewFilter{Cluster: r.PathValue("cluster"), JobID: r.PathValue("job"), WithSeries: true, Limit: 1}
	var views []store.JobView
	if !s.query(w, r, id, func(ctx context.Context) (err error) {
		views, err = s.reader(id).ListViews(ctx, f)
		return err
	}) {
		return
	}
	if len(views) == 0 {
		// The same answer whether the job is absent or someone else's.
		http.Error(w, "no such job", http.StatusNotFound)
		return
	}
	writeJSON(w, views[0])
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ViewFilterQuery encodes a filter as URL query parameters (the inverse of
// parseViewFilter); the client and server share it. UID is not sent (the
// collector decides it from the credential), nor Now (the collector's
// clock measures running jobs).
func ViewFilterQuery(f store.ViewFilter) string {
	q := make([]string, 0, 8)
	add := func(k, v string) {
		if v != "" {
			q = append(q, k+"="+urlEscape(v))
		}
	}
	add("cluster", f.Cluster)
	add("job", f.JobID)
	if f.Job != nil {
		add("slurm_job", f.Job.String())
	}
	add("user", f.User)
	add("account", f.Account)
	add("partition", f.Partition)
	add("state", f.State)
	add("text", f.Text)
	add("sort", f.Sort)
	if f.Asc {
		add("asc", "1")
	}
	if !f.Since.IsZero() {
		add("since", strconv.FormatInt(f.Since.Unix(), 10))
	}
	if !f.Until.IsZero() {
		add("until", strconv.FormatInt(f.Until.Unix(), 10))
	}
	if f.Limit > 0 {
		add("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		add("offset", strconv.Itoa(f.Offset))
	}
	if f.WithSeries {
		add("series", "1")
	}
	if f.Lean {
		add("lean", "1")
	}
	if f.AfterJobID != "" {
		add("after_cluster", f.AfterCluster)
		add("after_job", f.AfterJobID)
	}
	return strings.Join(q, "&")
}

// MaxPage is the most jobs one list request returns; a request for more,
// or for all, gets this many (Client.Each pages through the rest).
const MaxPage = 10000

func parseViewFilter(q map[string][]string) (store.ViewFilter, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	f := store.ViewFilter{
		Cluster: get("cluster"), JobID: get("job"), User: get("user"), Account: get("account"),
		Partition: get("partition"), State: get("state"), Text: get("text"), Sort: get("sort"),
		Asc: get("asc") == "1", WithSeries: get("series") == "1", Lean: get("lean") == "1",
		AfterCluster: get("after_cluster"), AfterJobID: get("after_job"),
	}
	if _, ok := store.SortDescending(f.Sort); !ok {
		return f, fmt.Errorf("bad sort %q (want one of %s)", f.Sort, strings.Join(store.SortKeys(), ", "))
	}
	if v := get("slurm_job"); v != "" {
		ref, err := slurmext.ParseJobRef(v)
		if err != nil {
			return f, fmt.Errorf("slurm_job: %w", err)
		}
		f.Job = &ref
	}
	for k, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := get(k); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return f, fmt.Errorf("bad %s %q", k, v)
			}
			*dst = time.Unix(n, 0)
		}
	}
	for k, dst := range map[string]*int{"limit": &f.Limit, "offset": &f.Offset} {
		if v := get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return f, fmt.Errorf("bad %s %q", k, v)
			}
			*dst = n
		}
	}
	if f.Limit == 0 || f.Limit > MaxPage {
		f.Limit = MaxPage
	}
	return f, nil
}
