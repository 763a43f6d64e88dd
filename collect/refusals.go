package collect

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a request or a connection was refused, the values of the reason
// label of gpuprof_serve_requests_refused_total and
// gpuprof_agent_queries_refused_total. A fixed set: whoever sends the
// request chooses none of it.
const (
	RefuseUnauthenticated = "unauthenticated" // 401: no, a bad or a replayed credential; no peer credentials
	RefuseForbidden       = "forbidden"       // 403: a uid or host that may not push, a node it may not push for
	RefuseBadRequest      = "bad_request"     // 400: a bad filter, a bad profile, a page after an unknown job
	RefuseTooLarge        = "too_large"       // 413: a body over the limit
	RefuseTimeout         = "timeout"         // 408: a body that did not arrive in time
	RefuseConflict        = "conflict"        // 409: a push naming another owner for a job
	RefuseHeld            = "held"            // 503: a push whose job Slurm's records do not place on its node yet (held)
	RefuseConnLimit       = "conn_limit"      // a connection over its uid's or host's share, closed unanswered but for a 503
	RefuseBusy            = "busy"            // 503: no query, upload or credential slot came free in time
	RefuseRateLimited     = "rate_limited"    // 429: a source out of its failed-request budget
	RefuseDBBusy          = "db_busy"         // 503: the database stayed locked
	RefuseError           = "error"           // 500 or anything else
)

var refuseReasons = []string{RefuseUnauthenticated, RefuseForbidden, RefuseBadRequest, RefuseTooLarge, RefuseTimeout,
	RefuseConflict, RefuseHeld, RefuseConnLimit, RefuseBusy, RefuseRateLimited, RefuseDBBusy, RefuseError}

// refuseReason is the reason an answer's status stands for.
func refuseReason(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return RefuseUnauthenticated
	case http.StatusForbidden:
		return RefuseForbidden
	case http.StatusBadRequest:
		return RefuseBadRequest
	case http.StatusRequestEntityTooLarge:
		return RefuseTooLarge
	case http.StatusRequestTimeout:
		return RefuseTimeout
	case http.StatusConflict:
		return RefuseConflict
	case http.StatusServiceUnavailable:
		return RefuseBusy
	case http.StatusTooManyRequests:
		return RefuseRateLimited
	}
	return RefuseError
}

// DefaultRefusalLogEvery is how often Refusals logs each reason at most.
const DefaultRefusalLogEvery = 10 * time.Second

// Refusals counts refused requests by reason and logs them, at most one
// line per reason per interval: whoever can send requests must not be able
// to fill the disk with the log of their refusal (issue 25 saw 173 MB in
// ten seconds). The first refusal of a reason is logged at once with its
// details; those that follow within the interval are counted, and the
// next line logged says how many were left out (suppressed). The counter,
// exported to /metrics, misses none. Safe for concurrent use; a nil
// *Refusals logs and counts nothing.
type Refusals struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	byWhy   map[string]*refusalLog
	counter *prometheus.CounterVec
}

// refusalLog is one reason's logging state.
type refusalLog struct {
	last       time.Time // when a line was last logged
	suppressed uint64    // refusals since then not logged
}

// NewRefusals returns a counter named name (a complete metric name ending
// in _total) with help, and a logger that logs each reason at most once
// every every (DefaultRefusalLogEvery when 0).
func NewRefusals(name, help string, log *slog.Logger, every time.Duration) *Refusals {
	if every <= 0 {
		every = DefaultRefusalLogEvery
	}
	r := &Refusals{
		log: log, every: every, now: time.Now, byWhy: map[string]*refusalLog{},
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"reason"}),
	}
	// Every reason from the start: a series that appears only with its
	// first increment hides that increment from increase().
	for _, why := range refuseReasons {
		r.counter.WithLabelValues(why)
	}
	return r
}

// Collector is the counter, to register with a Prometheus registry.
func (r *Refusals) Collector() prometheus.Collector { return r.counter }

// Refuse counts one refusal for reason (one of the Refuse* constants) and
// logs it with attrs unless that reason was logged less than the interval
// ago.
func (r *Refusals) Refuse(reason string, msg string, attrs ...any) {
	if r == nil {
		return
	}
	r.counter.WithLabelValues(reason).Inc()
	now := r.now()
	r.mu.Lock()
	st := r.byWhy[reason]
	if st == nil {
		st = &refusalLog{}
		r.byWhy[reason] = st
	}
	if !st.last.IsZero() && now.Sub(st.last) < r.every {
		st.suppressed++
		r.mu.Unlock()
		return
	}
	suppressed := st.suppressed
	st.last, st.suppressed = now, 0
	r.mu.Unlock()
	attrs = append(attrs, "reason", reason)
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	r.log.Warn(msg, attrs...)
}
