package slurmext

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bounds on hostlist expansion. A cluster has far fewer nodes and a node far
// fewer device files; the bounds only stop a mistaken or hostile expression
// such as "n[0-4294967295]" from exhausting memory.
const (
	// MaxHostlistHosts is the most names ExpandHostlist returns.
	MaxHostlistHosts = 65536
	// maxHostlistBytes bounds the total length of the expanded names (an
	// upper estimate is checked before anything is allocated).
	maxHostlistBytes = 8 << 20
)

// hlRange is one item of a bracket group: lo..hi, zero-padded to width digits
// (the length of lo as written, as Slurm does: "01-10" → 01..10, "8-10" →
// 8,9,10).
type hlRange struct {
	lo, hi uint64
	width  int
}

// hlPart is a literal run of text or, when ranges is non-nil, a bracket group.
type hlPart struct {
	lit    string
	ranges []hlRange
}

// hlTerm is one comma-separated item of a hostlist: its names are the
// cartesian product of its parts, left to right, the first group varying
// slowest ("r[1-2]n[1-2]" → r1n1 r1n2 r2n1 r2n2).
type hlTerm []hlPart

func isHostlistSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseHostlist splits an expression into terms. Commas and white space
// outside brackets separate terms (as in Slurm's hostlist_create); empty terms
// are skipped. It allocates in proportion to the input only.
func parseHostlist(s string) ([]hlTerm, error) { return scanHostlist(s, true) }

// scanHostlist is parseHostlist; without keep it only checks s and returns
// no terms, allocating nothing unless s is malformed (CheckHostlist runs
// on every job an import reads).
func scanHostlist(s string, keep bool) ([]hlTerm, error) {
	var terms []hlTerm
	var cur hlTerm
	litStart := 0
	flushLit := func(end int) {
		if keep && end > litStart {
			cur = append(cur, hlPart{lit: s[litStart:end]})
		}
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ',' || isHostlistSpace(c):
			flushLit(i)
			if len(cur) > 0 {
				terms = append(terms, cur)
				cur = nil
			}
			i++
			litStart = i
		case c == '[':
			flushLit(i)
			end := strings.IndexByte(s[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("hostlist %s: '[' at byte %d is not closed: %w", QuoteShort(s), i, ErrBadHostlist)
			}
			body := s[i+1 : i+1+end]
			if strings.IndexByte(body, '[') >= 0 {
				return nil, fmt.Errorf("hostlist %s: nested '[' after byte %d: %w", QuoteShort(s), i, ErrBadHostlist)
			}
			ranges, err := parseRangeGroup(body, keep)
			if err != nil {
				return nil, fmt.Errorf("hostlist %s: %w", QuoteShort(s), err)
			}
			if keep {
				cur = append(cur, hlPart{ranges: ranges})
			}
			i += end + 2
			litStart = i
		case c == ']':
			return nil, fmt.Errorf("hostlist %s: ']' at byte %d has no '[': %w", QuoteShort(s), i, ErrBadHostlist)
		default:
			i++
		}
	}
	flushLit(len(s))
	if len(cur) > 0 {
		terms = append(terms, cur)
	}
	return terms, nil
}

// parseRangeGroup parses the inside of brackets: "01-04,07"; without keep
// it only checks it and returns nil.
func parseRangeGroup(body string, keep bool) ([]hlRange, error) {
	if body == "" {
		return nil, fmt.Errorf("empty brackets: %w", ErrBadHostlist)
	}
	var out []hlRange
	for item := range strings.SplitSeq(body, ",") {
		loStr, hiStr, isRange := strings.Cut(item, "-")
		lo, ok := ParseDigits(loStr, math.MaxUint32)
		if !ok {
			return nil, fmt.Errorf("bracket item %s is not a number or range: %w", QuoteShort(item), ErrBadHostlist)
		}
		hi := lo
		if isRange {
			if hi, ok = ParseDigits(hiStr, math.MaxUint32); !ok {
				return nil, fmt.Errorf("bracket item %s is not a number or range: %w", QuoteShort(item), ErrBadHostlist)
			}
			if hi < lo {
				return nil, fmt.Errorf("reverse range %s: %w", QuoteShort(item), ErrBadHostlist)
			}
		}
		if keep {
			out = append(out, hlRange{lo: lo, hi: hi, width: len(loStr)})
		}
	}
	return out, nil
}

// size returns how many names the term expands to, saturated at limit+1, and
// the length of its longest name.
func (t hlTerm) size(limit uint64) (count uint64, maxLen int) {
	count = 1
	for _, p := range t {
		if p.ranges == nil {
			maxLen += len(p.lit)
			continue
		}
		var n uint64
		w := 0
		for _, r := range p.ranges {
			n += r.hi - r.lo + 1 // at most 2^32 per item; no overflow before saturation
			if n > limit {
				n = limit + 1
			}
			w = max(w, r.width, len(strconv.FormatUint(r.hi, 10)))
		}
		maxLen += w
		if count > (limit+1)/n { // count*n would pass limit
			count = limit + 1
		} else {
			count *= n
		}
		count = min(count, limit+1)
	}
	return count, maxLen
}

// formatPadded writes n zero-padded to width digits.
func formatPadded(b []byte, n uint64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], n, 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// expandHostlist expands s into at most maxHosts names.
func expandHostlist(s string, maxHosts int) ([]string, error) {
	terms, err := parseHostlist(s)
	if err != nil {
		return nil, err
	}
	limit := uint64(maxHosts)
	var total, bytes uint64
	for _, t := range terms {
		n, l := t.size(limit)
		total += n
		bytes += n * uint64(l) // n ≤ limit+1 and l ≤ len(s)+20·groups: no overflow
		if total > limit {
			return nil, fmt.Errorf("hostlist %s: more than %d names: %w", QuoteShort(s), maxHosts, ErrTooLarge)
		}
		if bytes > maxHostlistBytes {
			return nil, fmt.Errorf("hostlist %s: names longer than %d bytes in all: %w", QuoteShort(s), maxHostlistBytes, ErrTooLarge)
		}
	}
	if total == 0 {
		return nil, nil
	}
	out := make([]string, 0, total)
	for _, t := range terms {
		out = expandTerm(out, t)
	}
	return out, nil
}

// expandTerm appends the names of t, first bracket group varying slowest.
func expandTerm(out []string, t hlTerm) []string {
	prefixes := [][]byte{nil}
	for _, p := range t {
		if p.ranges == nil {
			for i := range prefixes {
				prefixes[i] = append(prefixes[i], p.lit...)
			}
			continue
		}
		var next [][]byte
		for _, pre := range prefixes {
			for _, r := range p.ranges {
				for v := r.lo; ; v++ {
					name := make([]byte, len(pre), len(pre)+r.width+10)
					copy(name, pre)
					next = append(next, formatPadded(name, v, r.width))
					if v == r.hi {
						break
					}
				}
			}
		}
		prefixes = next
	}
	for _, p := range prefixes {
		out = append(out, string(p))
	}
	return out
}

// CheckHostlist returns an error wrapping ErrBadHostlist (or ErrTooLarge)
// when s is not a hostlist expression this package can read, without
// expanding it.
func CheckHostlist(s string) error {
	_, err := scanHostlist(s, false)
	return err
}

// ExpandHostlist expands a Slurm hostlist expression:
// "gpu[01-04,07],login1" → gpu01 gpu02 gpu03 gpu04 gpu07 login1. Zero padding
// is kept, several bracket groups in one name form their cartesian product,
// commas inside brackets separate ranges, commas and white space outside them
// separate names. Order follows the expression; duplicates are kept. The same
// syntax expands gres.conf File= values ("/dev/nvidia[0-3]").
//
// An empty expression gives nil, nil. Errors wrap ErrBadHostlist (unbalanced
// or nested brackets, empty brackets, a non-numeric or reverse range) or
// ErrTooLarge (more than MaxHostlistHosts names, or an absurd total length).
func ExpandHostlist(s string) ([]string, error) {
	return expandHostlist(s, MaxHostlistHosts)
}

// HostlistContains reports whether the expression names host, without
// expanding it, so a NodeName covering any number of nodes costs no memory.
// Errors wrap ErrBadHostlist.
func HostlistContains(expr, host string) (bool, error) {
	terms, err := parseHostlist(expr)
	if err != nil {
		return false, err
	}
	for _, t := range terms {
		m := termMatcher{t: t, host: host}
		if m.match(0, 0) {
			return true, nil
		}
	}
	return false, nil
}

// termMatcher matches one term against a name by backtracking over the
// lengths a bracket group's number may take, remembering failed (part,
// position) pairs so that many adjacent groups stay polynomial.
type termMatcher struct {
	t      hlTerm
	host   string
	failed map[[2]int]bool
}

func (m *termMatcher) match(part, pos int) bool {
	if part == len(m.t) {
		return pos == len(m.host)
	}
	p := m.t[part]
	rest := m.host[pos:]
	if p.ranges == nil {
		return strings.HasPrefix(rest, p.lit) && m.match(part+1, pos+len(p.lit))
	}
	key := [2]int{part, pos}
	if m.failed[key] {
		return false
	}
	for _, r := range p.ranges {
		hiDigits := len(strconv.FormatUint(r.hi, 10))
		// A number below 10^width prints as exactly width digits (padded);
		// a larger one prints its own digits, never with a leading zero.
		for l := r.width; l <= max(r.width, hiDigits) && l <= len(rest); l++ {
			digits := rest[:l]
			if l > r.width && digits[0] == '0' {
				continue
			}
			v, ok := ParseDigits(digits, math.MaxUint32)
			if ok && v >= r.lo && v <= r.hi && m.match(part+1, pos+l) {
				return true
			}
		}
	}
	if m.failed == nil {
		m.failed = make(map[[2]int]bool)
	}
	m.failed[key] = true
	return false
}
