package report

import (
	"math"
	"reflect"

	"github.com/gpuprof/gpuprof/termtext"
)

// sanitize makes s safe to show in any format by gpuprof's one rule for
// untrusted text (termtext.Clean): escape sequences removed, line breaks
// and tabs made spaces, controls, bidirectional controls, invisible
// separators and invalid UTF-8 marked U+FFFD. Nothing is truncated. HTML
// escaping is html/template's, after this.
func sanitize(s string) string { return termtext.Clean(s) }

// cleanData returns a deep copy of d with every string sanitised and every
// non-finite float set to 0, so that no format can print NaN, Inf or a
// control character. Findings.Jobs is dropped: the report does not show it.
func cleanData(d Data) Data {
	d.Findings.Jobs = nil
	return cleanValue(reflect.ValueOf(d), sanitize, nil).Interface().(Data)
}

// cleanValue returns a deep copy of v with fix applied to every string in
// an exported field, slice or array element or the value a pointer points
// to (the simulated plan's scenarios, a recommendation's simulated
// effect), non-finite floats zeroed and nil slices made empty; a nil
// pointer stays nil.
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
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(cleanValue(v.Elem(), fix, skip))
		return out
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
