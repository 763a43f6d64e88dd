// Package termtext is gpuprof's one rule for showing untrusted text (job
// names, accounts, partitions, node and process names, anything a user or
// another program wrote) on a terminal: Clean removes what could move the
// cursor, recolour, retitle or clear the screen, reorder the line, or hide
// characters, and marks what it replaced so nothing is silently merged.
//
// It is a leaf: every layer that prints or stores such text (the CLI, the
// TUI, the report, the agent, slurmext's parsers) calls it, so it must not
// import any other gpuprof package. HTML escaping is not its job:
// html/template does that, after Clean.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Replacement marks where Clean replaced a character that must not reach a
// terminal.
const Replacement = '\uFFFD'

// Unsafe reports the runes that must never reach a terminal or a report as
// they are, whatever surrounds them:
//
//   - C0 controls, DEL and C1 controls (ESC, CSI 0x9b and OSC 0x9d among
//     them), which terminals act on;
//   - the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) and marks (U+200E, U+200F, U+061C), which make a line
//     read in another order than it is stored ("Trojan Source");
//   - the invisible separators U+200B (zero-width space), U+2060 (word
//     joiner), U+FEFF (zero-width no-break space, BOM) and U+180E, which
//     make two different names look the same;
//   - the line and paragraph separators U+2028 and U+2029, which some
//     terminals and log viewers break lines at.
//
// The zero-width joiner and non-joiner (U+200D, U+200C) are not in it:
// emoji sequences and several scripts need them. Clean keeps them only
// between two non-ASCII characters (see Clean).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x200b, r == 0x2060, r == 0xfeff, r == 0x180e, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// isJoiner reports the zero-width joiner and non-joiner.
func isJoiner(r rune) bool { return r == 0x200c || r == 0x200d }

// Clean makes s safe to print on a terminal:
//
//   - escape sequences are removed whole: ESC followed by CSI parameters
//     and final byte, by an OSC, DCS, APC, PM or SOS string up to BEL or
//     ST, or by one character; and C1 CSI (0x9b) with its parameters;
//   - tab, line feed, carriage return, U+2028 and U+2029 become spaces, so
//     a value stays on its line;
//   - every other Unsafe rune and every byte of invalid UTF-8 becomes
//     U+FFFD, so that "ad\x00min" cannot pass for "admin";
//   - a zero-width joiner or non-joiner stays only between two non-ASCII
//     runes that are not themselves unsafe (emoji sequences, Persian or
//     Indic text); elsewhere ("al\u200dice") it becomes U+FFFD.
//
// Nothing is truncated; clean input comes back unchanged without
// allocating.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := rune(-1) // the last rune written, -1 at the start
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == 0x9b && size == 2: // C1 CSI
			i += size + csiLen(s[i+size:])
			continue
		case r == '\t' || r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029:
			r = ' '
		case r == utf8.RuneError && size == 1, Unsafe(r):
			r = Replacement
		case isJoiner(r):
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			if !joinable(prev) || !joinable(next) {
				r = Replacement
			}
		}
		b.WriteRune(r)
		prev = r
		i += size
	}
	return b.String()
}

// joinable reports a rune a joiner may stand beside: a visible non-ASCII
// one (emoji, a letter of a script that uses joiners, a variation
// selector), or another joiner (emoji sequences chain them).
func joinable(r rune) bool {
	return r >= 0x80 && r != utf8.RuneError && r != Replacement && !Unsafe(r)
}

// isClean reports text with nothing for Clean to change: printable ASCII
// only, the common case, checked without decoding.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return cleanUTF8(s[i:])
		}
	}
	return true
}

// cleanUTF8 is isClean for text that is not all printable ASCII.
func cleanUTF8(s string) bool {
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Unsafe(r) {
			return false
		}
		if isJoiner(r) {
			if next, _ := utf8.DecodeRuneInString(s[i+size:]); !joinable(prev) || !joinable(next) {
				return false
			}
		}
		prev = r
		i += size
	}
	return true
}

// escapeLen returns the length of the escape sequence at the start of s,
// which begins with ESC.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return 1 + size
}

// csiLen returns the length of a CSI sequence's parameter and intermediate
// bytes and its final byte; a malformed one ends before the first byte
// that cannot belong to it.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		case c < 0x20 || c >= 0x7f:
			return i
		}
	}
	return len(s)
}

// Cut returns the longest prefix of s of at most maxBytes bytes that ends
// on a rune boundary, and whether it cut anything.
func Cut(s string, maxBytes int) (string, bool) {
	if len(s) <= maxBytes {
		return s, false
	}
	n := max(maxBytes, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Short cleans s (Clean) and cuts it to at most maxLen runes, marking a
// cut with "…": a job name in a table column, an evidence line in a mail.
func Short(s string, maxLen int) string {
	s = Clean(s)
	if r := []rune(s); len(r) > maxLen {
		s = string(r[:maxLen-1]) + "…"
	}
	return s
}
