package collect

import (
	"sync"
	"time"
)

// Cheap refusal ahead of the expensive work (issue 39). The shares bound
// how much of the collector one client holds at once, not how much CPU
// its requests take: a client that floods requests that fail (no
// credential, junk credentials that each cost an unmunge, bad filters)
// takes the CPU that other clients' credentials and queries need, while
// each of its requests stays within its shares. So every source of
// requests — a remote host, or on the collector's own host the uid that
// opened the connection — has a budget of failed requests, a token
// bucket: each answer in the 4xx range but 409 takes one token, tokens
// come back at a steady rate, and a source without a token left is not
// read from (its connections wait, unread, until a token is back; the
// kernel's flow control stops its sender) and a request of it already
// read is refused 429 with Retry-After before its credential is decoded
// or its filter parsed, and its connection closed. A source whose
// requests succeed never spends a token: honest nodes and users are
// never slowed by the budget, only by sharing a remote host with a
// flooder (the collector cannot tell a remote host's users apart before
// their credential is decoded).

// failBudget is the failed-request token bucket of every source.
type failBudget struct {
	rate  float64 // tokens back per second
	burst float64 // tokens a source starts with and holds at most
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*failBucket
}

type failBucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// maxFailBuckets bounds the sources remembered: past it, the sources
// whose buckets are full again are forgotten (a full bucket is what a
// new source gets), then the oldest-looking any (a flood of new addresses
// forgets itself, never grows memory).
const maxFailBuckets = 4096

func newFailBudget(perSecond, burst int) *failBudget {
	return &failBudget{rate: float64(max(perSecond, 1)), burst: float64(max(burst, 1)), now: time.Now,
		buckets: map[string]*failBucket{}}
}

// refill brings b up to date; mu held.
func (f *failBudget) refill(b *failBucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(f.burst, b.tokens+d.Seconds()*f.rate)
	}
	b.at = now
}

// charge takes one token of source's for a failed request. The bucket
// goes into debt down to -burst at most: a source that keeps failing
// while it has no token (requests already read when the budget ran out)
// waits longer, but never longer than two bursts' worth.
func (f *failBudget) charge(source string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	b := f.buckets[source]
	if b == nil {
		if len(f.buckets) >= maxFailBuckets {
			f.forgetLocked(now)
		}
		b = &failBucket{tokens: f.burst, at: now}
		f.buckets[source] = b
	}
	f.refill(b, now)
	b.tokens = max(b.tokens-1, -f.burst)
}

// forgetLocked makes room in a full map: first every bucket full again,
// then any, until a quarter is free.
func (f *failBudget) forgetLocked(now time.Time) {
	for k, b := range f.buckets {
		f.refill(b, now)
		if b.tokens >= f.burst {
			delete(f.buckets, k)
		}
	}
	for k := range f.buckets {
		if len(f.buckets) < maxFailBuckets*3/4 {
			break
		}
		delete(f.buckets, k)
	}
}

// wait is how long source must wait for a token: zero when it has one.
func (f *failBudget) wait(source string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buckets[source]
	if b == nil {
		return 0
	}
	now := f.now()
	f.refill(b, now)
	if b.tokens >= 1 {
		if b.tokens >= f.burst {
			delete(f.buckets, source) // what a new source gets
		}
		return 0
	}
	return time.Duration((1 - b.tokens) / f.rate * float64(time.Second))
}

// take takes a token of source's in advance, for a connection that
// waited for the budget and is about to read its next request: zero when
// it took one, else how long until one is back. Only one waiting
// connection goes on per token, not every one that waited for it at
// once; refund gives the token back when the request succeeds.
func (f *failBudget) take(source string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	b := f.buckets[source]
	if b == nil { // full again since the wait began: a new source's
		if len(f.buckets) >= maxFailBuckets {
			f.forgetLocked(now)
		}
		b = &failBucket{tokens: f.burst, at: now}
		f.buckets[source] = b
	}
	f.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / f.rate * float64(time.Second))
}

// refund gives back a token take took for a request that succeeded.
func (f *failBudget) refund(source string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.buckets[source]; b != nil {
		f.refill(b, f.now())
		b.tokens = min(f.burst, b.tokens+1)
	}
}

// charged says whether an answer with this status spends a token: a
// client error, but a conflict (a node's push naming a job another node
// holds is the node's honest mistake, answered once per profile) and our
// own 429.
func charged(status int) bool {
	return status >= 400 && status < 500 && status != 409 && status != 429
}
