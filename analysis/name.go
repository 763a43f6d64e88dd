package analysis

import (
	"unicode"
	"unicode/utf8"
)

// NormaliseName reduces a job name to the name of the task it runs, so that
// "train_resnet50_seed3", "train_resnet18_seed4" and "Train-ResNet_seed7"
// are one recurring task. The rule, in order:
//
//  1. Slurm filename patterns (%A %a %b %J %j %N %n %s %t %u %x, which
//     users copy from --output into --job-name, where Slurm does not expand
//     them) and UUIDs (8-4-4-4-12 hex digits) are removed.
//  2. The rest is split into words at every character that is not a letter
//     or digit, and lower-cased.
//  3. A word with more digits than letters is dropped: numbers, array
//     indices, dates and timestamps ("2025", "20250301t120000").
//  4. A word of at least 7 hex digits that contains a digit is dropped: a
//     hash ("3f9a2b1c", a git commit).
//  5. The digits of the remaining words are removed ("resnet50" → "resnet",
//     "seed3" → "seed"), and empty words dropped.
//  6. The words are joined with "_".
//
// The cost of 5 is that model sizes merge ("gpt2" and "gpt3" both become
// "gpt"); a task profile then spans both, and its VRAM spread shows it.
// A name with nothing left normalises to "".
func NormaliseName(name string) string {
	buf := make([]byte, 0, len(name))
	buf = appendNormalised(buf, name)
	if string(buf) == name {
		return name // already normal: no second copy
	}
	return string(buf)
}

// appendNormalised appends the normalised name to dst.
func appendNormalised(dst []byte, name string) []byte {
	start := len(dst)
	i := 0
	for i < len(name) {
		// Skip to the start of a word, dropping patterns and UUIDs.
		if isPatternAt(name, i) {
			i += 2
			continue
		}
		if isUUIDAt(name, i) {
			i += 36
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		// A word runs to the next separator, '%' pattern or UUID.
		j := i
		letters, digits, hex := 0, 0, true
		for j < len(name) {
			if isPatternAt(name, j) {
				break
			}
			r, size := utf8.DecodeRuneInString(name[j:])
			if !isWordRune(r) {
				break
			}
			switch {
			case r >= '0' && r <= '9':
				digits++
			default:
				letters++
				if !(r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
					hex = false
				}
			}
			j += size
		}
		word := name[i:j]
		i = j
		if digits > letters || (hex && digits > 0 && len(word) >= 7) {
			continue
		}
		if len(dst) > start {
			dst = append(dst, '_')
		}
		for _, r := range word {
			if r >= '0' && r <= '9' {
				continue
			}
			if r < utf8.RuneSelf {
				if r >= 'A' && r <= 'Z' {
					r += 'a' - 'A'
				}
				dst = append(dst, byte(r))
			} else {
				dst = utf8.AppendRune(dst, unicode.ToLower(r))
			}
		}
	}
	return dst
}

// isWordRune reports whether r belongs to a word: a letter or an ASCII
// digit. Anything else separates words.
func isWordRune(r rune) bool {
	return r >= '0' && r <= '9' || unicode.IsLetter(r)
}

// isPatternAt reports whether a Slurm filename pattern starts at s[i].
func isPatternAt(s string, i int) bool {
	if s[i] != '%' || i+1 >= len(s) {
		return false
	}
	switch s[i+1] {
	case 'A', 'a', 'b', 'J', 'j', 'N', 'n', 's', 't', 'u', 'x':
		return true
	}
	return false
}

func isHexDigit(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// isUUIDAt reports whether a UUID (8-4-4-4-12 hex digits) starts at s[i]
// and is not glued to a longer hex run on either side.
func isUUIDAt(s string, i int) bool {
	if len(s)-i < 36 || (i > 0 && isHexDigit(s[i-1])) {
		return false
	}
	for k := range 36 {
		c := s[i+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHexDigit(c) {
				return false
			}
		}
	}
	return i+36 == len(s) || !isHexDigit(s[i+36])
}
