package slurmext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpuprof/gpuprof/termtext"
)

// maxQuoted bounds how much of an untrusted value goes into an error message
// or a note.
const maxQuoted = 64

// QuoteShort renders an untrusted value for an error message: at most
// maxQuoted bytes, quoted with %+q so that control characters, invalid UTF-8
// and anything non-ASCII (look-alikes, bidi controls) are escaped and cannot
// forge or disguise log lines, with the full length when cut.
func QuoteShort(s string) string {
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%+q", s)
	}
	return fmt.Sprintf("%+q... (%d bytes)", s[:maxQuoted], len(s))
}

// sanitizeText makes an untrusted value safe to store and display: invalid
// UTF-8 becomes U+FFFD, the runes gpuprof's one rule for untrusted text
// calls unsafe (termtext.Unsafe: controls, bidirectional controls,
// invisible separators) are removed, and the result is cut to at most
// maxBytes bytes on a rune boundary. Stored values are cleaned again for
// display (termtext.Clean), which also removes whole escape sequences.
// removed counts the dropped characters up to the cut; truncated reports a cut.
func sanitizeText(s string, maxBytes int) (out string, removed int, truncated bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean && len(s) <= maxBytes {
		return s, 0, false
	}
	var b strings.Builder
	b.Grow(min(len(s), maxBytes))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			removed++ // counted as a change; replaced below
			r = unicode.ReplacementChar
		} else if termtext.Unsafe(r) {
			removed++
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxBytes {
			truncated = true
			break
		}
		b.WriteRune(r)
	}
	return b.String(), removed, truncated
}

// ParseDigits parses a non-negative decimal of ASCII digits only (no sign, no
// spaces) that is at most maxVal. Leading zeros are allowed.
func ParseDigits(s string, maxVal uint64) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > maxVal {
			return 0, false
		}
	}
	return n, true
}
