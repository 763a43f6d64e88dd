package collect

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
)

// ResolveFunc returns the addresses a host name resolves to, as
// net.Resolver.LookupHost does. An error that is a *net.DNSError with
// IsNotFound set means the name does not resolve; any other error that the
// lookup could not be made (the push is refused for now and retried).
type ResolveFunc func(ctx context.Context, name string) ([]string, error)

// The collector's default resolver: each lookup bounded by resolveTimeout,
// an answer kept for resolveTTL (a name that does not resolve for
// resolveNegTTL), at most resolveCacheMax names held.
const (
	resolveTimeout  = 2 * time.Second
	resolveTTL      = 30 * time.Second
	resolveNegTTL   = 5 * time.Second
	resolveCacheMax = 4096
)

// HostResolver returns the collector's default ResolveFunc: the resolver
// of the host serve runs on (/etc/hosts, DNS, as nsswitch.conf says),
// each lookup bounded by 2 s, answers cached for 30 s (that a name does
// not resolve for 5 s; a failed lookup is not cached).
func HostResolver() ResolveFunc {
	return cachedResolver(net.DefaultResolver.LookupHost, resolveTimeout, resolveTTL, resolveNegTTL, time.Now)
}

// cachedResolver wraps lookup: each call bounded by timeout, answers kept
// for ttl, "no such host" for negTTL, other errors not at all.
func cachedResolver(lookup ResolveFunc, timeout, ttl, negTTL time.Duration, now func() time.Time) ResolveFunc {
	c := &resolveCache{lookup: lookup, timeout: timeout, ttl: ttl, negTTL: negTTL, now: now, m: map[string]resolved{}}
	return c.resolve
}

type resolved struct {
	addrs   []string
	err     error // not found
	expires time.Time
}

type resolveCache struct {
	lookup               ResolveFunc
	timeout, ttl, negTTL time.Duration
	now                  func() time.Time

	mu sync.Mutex
	m  map[string]resolved
}

func (c *resolveCache) resolve(ctx context.Context, name string) ([]string, error) {
	c.mu.Lock()
	r, ok := c.m[name]
	c.mu.Unlock()
	if ok && c.now().Before(r.expires) {
		return r.addrs, r.err
	}
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	addrs, err := c.lookup(lctx, name)
	cancel()
	var ttl time.Duration
	switch {
	case err == nil:
		ttl = c.ttl
	case notFound(err):
		ttl = c.negTTL
	default:
		return nil, err // a timeout or a resolver's failure: ask again next time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now()
	if len(c.m) >= resolveCacheMax {
		for k, v := range c.m {
			if !t.Before(v.expires) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < resolveCacheMax {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[name] = resolved{addrs: addrs, err: err, expires: t.Add(ttl)}
	return addrs, err
}

// notFound says whether a lookup's error means the name does not resolve
// (rather than that the lookup failed).
func notFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// sameAddr says whether two addresses as strings name the same address
// (an IPv4-mapped IPv6 address is its IPv4 one); strings that are no
// address are compared as they are.
func sameAddr(a, b string) bool {
	pa, errA := netip.ParseAddr(a)
	pb, errB := netip.ParseAddr(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return pa.Unmap().WithZone("") == pb.Unmap().WithZone("")
}
