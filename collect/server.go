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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/user"
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

// ServerOptions configure the collector.
type ServerOptions struct {
	// PushUIDs may push profiles: root and the SlurmUser.
	PushUIDs []int
	// PushHosts, when not empty, are the only ENCODE_HOST values (node
	// addresses) whose pushes are accepted.
	PushHosts []string
	// IsAdmin says whether a uid may see every user's jobs.
	IsAdmin func(uid int) bool
	// MaxBody bounds a pushed profile.
	MaxBody int64
	// Metrics, when set, counts what pushes store and refuse (the
	// collector's /metrics, metrics.go); nil counts nothing.
	Metrics *Metrics
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
// Binding(method, path?query, body). A server made by NewLocalServer takes
// the caller from the connection instead and serves the queries only.
type Server struct {
	db   *store.DB
	auth Authenticator
	opts ServerOptions
	log  *slog.Logger
	// local: the caller is the connection's peer (PeerConnContext), never
	// a credential, and nothing may be pushed.
	local bool
}

// NewServer returns a collector writing to db.
func NewServer(db *store.DB, auth Authenticator, opts ServerOptions, log *slog.Logger) *Server {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 16 << 20
	}
	if opts.IsAdmin == nil {
		opts.IsAdmin = func(uid int) bool { return uid == 0 }
	}
	return &Server{db: db, auth: auth, opts: opts, log: log}
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
	return mux
}

// authenticate checks the credential against the request it came with.
func (s *Server) authenticate(r *http.Request, body []byte) (Identity, error) {
	cred, ok := strings.CutPrefix(r.Header.Get("Authorization"), "MUNGE ")
	if !ok {
		return Identity{}, fmt.Errorf("%w: no munge credential", ErrAuth)
	}
	id, payload, err := s.auth.Decode(r.Context(), cred)
	if err != nil {
		return Identity{}, err
	}
	if want := Binding(r.Method, r.URL.RequestURI(), body); string(payload) != string(want) {
		return Identity{}, fmt.Errorf("%w: credential made for another request", ErrAuth)
	}
	return id, nil
}

// caller says who sent a query: the munge credential's maker, or on a
// local server the connection's peer as the kernel reports it (anything
// the request says, headers included, is ignored there).
func (s *Server) caller(r *http.Request) (Identity, error) {
	if !s.local {
		return s.authenticate(r, nil)
	}
	p, err := peerOf(r)
	if err != nil {
		return Identity{}, err
	}
	s.log.Debug("local query", "uid", p.id.UID, "pid", p.pid, "path", r.URL.Path)
	return p.id, nil
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	s.log.Warn("request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "status", code, "err", err)
	http.Error(w, err.Error(), code)
}

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		s.fail(w, r, http.StatusRequestEntityTooLarge, err)
		return
	}
	id, err := s.authenticate(r, body)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	if !slices.Contains(s.opts.PushUIDs, id.UID) {
		s.fail(w, r, http.StatusForbidden, fmt.Errorf("uid %d from %s may not push profiles", id.UID, id.Host))
		return
	}
	if len(s.opts.PushHosts) > 0 && !slices.Contains(s.opts.PushHosts, id.Host) {
		s.fail(w, r, http.StatusForbidden, fmt.Errorf("host %s is not a node of this cluster", id.Host))
		return
	}
	var j profile.Job
	if err := json.Unmarshal(body, &j); err != nil {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("bad profile: %w", err))
		return
	}
	err = s.opts.Metrics.store(r.Context(), s.db, j) // db.PutJob, counted
	switch {
	case errors.Is(err, store.ErrFinished):
		// A running snapshot after the finished profile: already have better.
	case errors.Is(err, store.ErrLocked):
		w.Header().Set("Retry-After", "2")
		s.fail(w, r, http.StatusServiceUnavailable, err)
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

// scope restricts a query to the caller's own jobs unless they are an admin.
func (s *Server) scope(id Identity) *int {
	if s.opts.IsAdmin(id.UID) {
		return nil
	}
	uid := id.UID
	return &uid
}

// scopedFilter authenticates a query and returns its filter, restricted
// to the caller's own jobs unless they are an admin. On failure it has
// answered the request and ok is false.
func (s *Server) scopedFilter(w http.ResponseWriter, r *http.Request) (f store.ViewFilter, ok bool) {
	id, err := s.caller(r)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err)
		return f, false
	}
	f, err = parseViewFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return f, false
	}
	if uid := s.scope(id); uid != nil {
		f.UID = uid
	}
	return f, true
}

// queryFailed answers a failed store query.
func (s *Server) queryFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrBadFilter) || errors.Is(err, store.ErrNotFound) {
		// A bad filter, or a page after a job that does not exist.
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	s.fail(w, r, http.StatusInternalServerError, err)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	f, ok := s.scopedFilter(w, r)
	if !ok {
		return
	}
	views, err := s.db.ListViews(r.Context(), f)
	if err != nil {
		s.queryFailed(w, r, err)
		return
	}
	writeJSON(w, views)
}

// CountAnswer is the body of GET /v1/jobs/count.
type CountAnswer struct {
	Count int `json:"count"`
}

func (s *Server) count(w http.ResponseWriter, r *http.Request) {
	f, ok := s.scopedFilter(w, r)
	if !ok {
		return
	}
	n, err := s.db.CountViews(r.Context(), f)
	if err != nil {
		s.queryFailed(w, r, err)
		return
	}
	writeJSON(w, CountAnswer{Count: n})
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id, err := s.caller(r)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	f := store.ViewFilter{Cluster: r.PathValue("cluster"), JobID: r.PathValue("job"), WithSeries: true, Limit: 1}
	if uid := s.scope(id); uid != nil {
		f.UID = uid
	}
	views, err := s.db.ListViews(r.Context(), f)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
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

// GroupAdmin returns an IsAdmin function: root, or a member of group.
func GroupAdmin(group string) (func(uid int) bool, error) {
	if group == "" {
		return func(uid int) bool { return uid == 0 }, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return nil, fmt.Errorf("admin group: %w", err)
	}
	return func(uid int) bool {
		if uid == 0 {
			return true
		}
		u, err := user.LookupId(strconv.Itoa(uid))
		if err != nil {
			return false
		}
		if u.Gid == g.Gid {
			return true
		}
		ids, err := u.GroupIds()
		return err == nil && slices.Contains(ids, g.Gid)
	}, nil
}
