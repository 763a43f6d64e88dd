package collect

import (
	"bufio"
	"bytes"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/internal/conffile"
)

// Persons maps a uid to the person who owns it, for the local query
// socket's shares: every user useradd creates owns a range of subordinate
// uids (/etc/subuid, 65,536 by default) that newuidmap lets them run
// processes as, so a share per uid would be a share per number, and one
// person's nine uids would take nine shares. A uid in an owner's range
// counts as its owner; any other uid is its own person.
//
// The file is read again when it changes (looked at at most every
// personsRecheck); unreadable, every uid is its own person. Ranges
// another source hands out (sssd, systemd-homed without /etc/subuid) are
// not seen: docs/security.md says so.
type Persons struct {
	path string

	mu      sync.Mutex
	checked time.Time
	mtime   time.Time
	size    int64
	ranges  []subRange // sorted by start, not overlapping as read
}

// subRange is one /etc/subuid line: uids [start, end) belong to owner.
type subRange struct {
	start, end uint64
	owner      string // the owner's uid as text, or "user:NAME" when NAME has no uid here
}

// personsRecheck bounds how often the file's status is looked at.
const personsRecheck = 10 * time.Second

// maxSubuidFile bounds /etc/subuid: 64 bytes a user, a million users.
const maxSubuidFile = 64 << 20

// NewPersons returns the mapping of the subordinate-uid file at path
// (normally /etc/subuid); "" maps every uid to itself.
func NewPersons(path string) *Persons {
	return &Persons{path: path}
}

// Key is the person uid belongs to, as a share's key: the owner's uid
// when uid is in an owner's subordinate range, else uid.
func (p *Persons) Key(uid int) string {
	if p == nil || p.path == "" || uid < 0 {
		return strconv.Itoa(uid)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked(time.Now())
	u := uint64(uid)
	i, _ := slices.BinarySearchFunc(p.ranges, u, func(r subRange, u uint64) int {
		switch {
		case r.end <= u:
			return -1
		case r.start > u:
			return 1
		}
		return 0
	})
	if i < len(p.ranges) && p.ranges[i].start <= u && u < p.ranges[i].end {
		return p.ranges[i].owner
	}
	return strconv.Itoa(uid)
}

// refreshLocked reads the file again when it changed.
func (p *Persons) refreshLocked(now time.Time) {
	if !p.checked.IsZero() && now.Sub(p.checked) < personsRecheck {
		return
	}
	p.checked = now
	fi, err := os.Stat(p.path)
	if err != nil {
		p.ranges, p.mtime, p.size = nil, time.Time{}, 0
		return
	}
	if fi.ModTime().Equal(p.mtime) && fi.Size() == p.size && p.ranges != nil {
		return
	}
	b, err := conffile.Read(p.path, maxSubuidFile)
	if err != nil {
		p.ranges = nil
		return
	}
	p.mtime, p.size = fi.ModTime(), fi.Size()
	p.ranges = parseSubuid(b, lookupUID)
}

// lookupUID is the uid of a user name, as os/user finds it.
func lookupUID(name string) (string, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return "", false
	}
	return u.Uid, true
}

// parseSubuid reads subuid(5) lines, "owner:start:count" (owner a name or a
// uid), skipping malformed ones, and returns the ranges sorted by start;
// where two overlap, the range that starts first keeps the overlap.
func parseSubuid(b []byte, lookup func(string) (string, bool)) []subRange {
	var out []subRange
	names := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 4096)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) != 3 || f[0] == "" {
			continue
		}
		start, err1 := strconv.ParseUint(f[1], 10, 32)
		count, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil || count == 0 {
			continue
		}
		owner := f[0]
		if _, err := strconv.ParseUint(owner, 10, 32); err != nil {
			uid, ok := names[owner]
			if !ok {
				if uid, ok = lookup(owner); !ok {
					uid = "user:" + owner
				}
				names[owner] = uid
			}
			owner = uid
		}
		out = append(out, subRange{start: start, end: start + count, owner: owner})
	}
	slices.SortStableFunc(out, func(a, b subRange) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	// Trim overlaps so that a binary search finds one range: the range
	// that starts first keeps the overlap.
	kept := out[:0]
	for _, r := range out {
		if n := len(kept); n > 0 && r.start < kept[n-1].end {
			if r.end <= kept[n-1].end {
				continue
			}
			r.start = kept[n-1].end
		}
		kept = append(kept, r)
	}
	return kept
}
