package collect

import (
	"sync"
	"time"
)

// Decoding a credential costs an unmunge whether or not the credential is
// good, so junk costs the collector what a real request does. Every host
// has its share of a lane's decodes (a quarter; queries and pushes each
// have their lane), but junk from four hosts would still hold them all. A
// host whose credential failed to decode in the last suspectFor is
// suspect: its decodes also take one of a separate, smaller pool (half the
// lane's decodes), so junk from any number of hosts holds at most half of
// them and hosts that send good credentials always find the other half.

// suspectFor is how long a failed decode marks its host.
const suspectFor = 30 * time.Second

// maxSuspects bounds the hosts remembered; past it the oldest marks are
// dropped first (a flood of new addresses forgets itself, never grows
// memory).
const maxSuspects = 4096

// suspects remembers the hosts whose credentials failed lately.
type suspects struct {
	now   func() time.Time
	mu    sync.Mutex
	since map[string]time.Time
}

func newSuspects() *suspects {
	return &suspects{now: time.Now, since: map[string]time.Time{}}
}

// mark records a failed decode from host.
func (s *suspects) mark(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.since) >= maxSuspects {
		for h, t := range s.since {
			if now.Sub(t) > suspectFor {
				delete(s.since, h)
			}
		}
		for h := range s.since { // still full: drop any
			if len(s.since) < maxSuspects {
				break
			}
			delete(s.since, h)
		}
	}
	s.since[host] = now
}

// is says whether host's credentials failed within suspectFor.
func (s *suspects) is(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.since[host]
	if ok && s.now().Sub(t) > suspectFor {
		delete(s.since, host)
		return false
	}
	return ok
}
