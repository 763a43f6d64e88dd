package report

import (
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
)

// sanitize makes s safe to show in any format: ANSI escape sequences
// (CSI, OSC and two-byte ESC sequences) are removed, newlines and tabs
// become spaces, every other C0 or C1 control, DEL, bidirectional override
// and invalid UTF-8 becomes U+FFFD. Nothing is truncated.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == 0x9b: // C1 CSI
			i += size + csiLen(s[i+size:])
			continue
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case r == utf8.RuneError || unsafeRune(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports control characters and the bidirectional controls
// that can reorder the text around them.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
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

// csiLen returns the length of a CSI sequence's parameters and final byte.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		} else if c < 0x20 || c > 0x3f && c < 0x40 || c >= 0x80 {
			return i // malformed: drop only the introducer
		}
	}
	return len(s)
}

// cleanData returns a deep copy of d with every string sanitised and every
// non-finite float set to 0, so that no format can print NaN, Inf or a
// control character. Findings.Jobs is dropped: the report does not show it.
func cleanData(d Data) Data {
	d.Findings.Jobs = nil
	return cleanValue(reflect.ValueOf(d), sanitize, nil).Interface().(Data)
}

// cleanValue returns a deep copy of v with fix applied to every string in
// an exported field, slice or array element, non-finite floats zeroed and
// nil slices made empty.
// Structs with unexported fields (time.Time) are copied as they are;
// struct fields for which skip (if not nil) returns true are copied with
// only their floats cleaned.
func cleanValue(v reflect.Value, fix func(string) string, skip func(reflect.StructField) bool) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		out := reflect.New(v.Type()).Elem()
		out.SetString(fix(v.String()))
		return out
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return reflect.Zero(v.Type())
		}
		return v
	case reflect.Slice:
		if v.IsNil() {
			// Empty, not nil: the JSON report never writes null.
			return reflect.MakeSlice(v.Type(), 0, 0)
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(cleanValue(v.Index(i), fix, skip))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(cleanValue(v.Index(i), fix, skip))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		t := v.Type()
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			f := fix
			if skip != nil && skip(t.Field(i)) {
				f = func(s string) string { return s }
			}
			out.Field(i).Set(cleanValue(v.Field(i), f, skip))
		}
		return out
	}
	return v
}
