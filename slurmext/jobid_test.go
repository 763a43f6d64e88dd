package slurmext

import (
	"cmp"
	"errors"
	"strings"
	"testing"
)

func TestParseJobID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want JobIDParts
	}{
		{name: "plain", in: "123", want: JobIDParts{Job: "123", Base: "123", ArrayTaskID: -1, HetOffset: -1}},
		{name: "array task", in: "123_4", want: JobIDParts{Job: "123_4", Base: "123", ArrayTaskID: 4, HetOffset: -1}},
		{name: "pending array with limit", in: "123_[1-5%2]", want: JobIDParts{Job: "123_[1-5%2]", Base: "123", ArrayTaskID: -1, ArrayTaskSpec: "1-5%2", HetOffset: -1}},
		{name: "pending array list", in: "123_[1,3,5]", want: JobIDParts{Job: "123_[1,3,5]", Base: "123", ArrayTaskID: -1, ArrayTaskSpec: "1,3,5", HetOffset: -1}},
		{name: "pending array step", in: "123_[0-15:4]", want: JobIDParts{Job: "123_[0-15:4]", Base: "123", ArrayTaskID: -1, ArrayTaskSpec: "0-15:4", HetOffset: -1}},
		{name: "het component", in: "123+0", want: JobIDParts{Job: "123+0", Base: "123", ArrayTaskID: -1, HetOffset: 0}},
		{name: "batch step", in: "123.batch", want: JobIDParts{Job: "123", Base: "123", ArrayTaskID: -1, HetOffset: -1, Step: "batch"}},
		{name: "numbered step", in: "123.0", want: JobIDParts{Job: "123", Base: "123", ArrayTaskID: -1, HetOffset: -1, Step: "0"}},
		{name: "extern step", in: "123.extern", want: JobIDParts{Job: "123", Base: "123", ArrayTaskID: -1, HetOffset: -1, Step: "extern"}},
		{name: "array task step", in: "6_1.batch", want: JobIDParts{Job: "6_1", Base: "6", ArrayTaskID: 1, HetOffset: -1, Step: "batch"}},
		{name: "het component step", in: "12+1.0", want: JobIDParts{Job: "12+1", Base: "12", ArrayTaskID: -1, HetOffset: 1, Step: "0"}},
		{name: "het step", in: "12.0+1", want: JobIDParts{Job: "12", Base: "12", ArrayTaskID: -1, HetOffset: -1, Step: "0+1"}},
		{name: "SLUID", in: "sC8F3K2M1A0Z", want: JobIDParts{Job: "sC8F3K2M1A0Z", Base: "sC8F3K2M1A0Z", ArrayTaskID: -1, HetOffset: -1}},
		{name: "SLUID step", in: "sC8F3K2M1A0Z.batch", want: JobIDParts{Job: "sC8F3K2M1A0Z", Base: "sC8F3K2M1A0Z", ArrayTaskID: -1, HetOffset: -1, Step: "batch"}},
		{name: "spaces", in: " 123_4 ", want: JobIDParts{Job: "123_4", Base: "123", ArrayTaskID: 4, HetOffset: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJobID(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseJobID(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if got.IsStep() != (tt.want.Step != "") {
				t.Fatalf("IsStep() = %v", got.IsStep())
			}
		})
	}
}

func TestParseJobIDErrors(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{name: "empty", in: ""},
		{name: "empty base", in: "_4"},
		{name: "empty task", in: "123_"},
		{name: "task not a number", in: "123_x"},
		{name: "unclosed spec", in: "123_[1-5"},
		{name: "empty spec", in: "123_[]"},
		{name: "letters in spec", in: "123_[a-b]"},
		{name: "array and het", in: "123_4+0"},
		{name: "het offset missing", in: "123+"},
		{name: "empty step", in: "123."},
		{name: "bad step", in: "123.ba/tch"},
		{name: "shell characters", in: "1;reboot"},
		{name: "space inside", in: "12 3"},
		{name: "too long", in: strings.Repeat("1", 2000)},
		{name: "task over int32", in: "123_2147483648"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJobID(tt.in)
			if !errors.Is(err, ErrBadJobID) || got != (JobIDParts{}) {
				t.Fatalf("ParseJobID(%q) = %+v, %v; want zero, ErrBadJobID", tt.in, got, err)
			}
			checkErrorMessage(t, err)
		})
	}
}

func TestParseJobRef(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  JobRef
		str   string // String(); "" means the input
		plain bool
	}{
		{name: "raw id", in: "58", want: JobRef{Base: "58", ArrayTaskID: -1, HetOffset: -1}, plain: true},
		{name: "leading zeros", in: "0058", want: JobRef{Base: "58", ArrayTaskID: -1, HetOffset: -1}, str: "58", plain: true},
		{name: "spaces", in: " 53_1 ", want: JobRef{Base: "53", ArrayTaskID: 1, HetOffset: -1}, str: "53_1"},
		{name: "array task", in: "53_1", want: JobRef{Base: "53", ArrayTaskID: 1, HetOffset: -1}},
		{name: "array task 0", in: "53_0", want: JobRef{Base: "53", ArrayTaskID: 0, HetOffset: -1}},
		{name: "pending tasks", in: "53_[1-5%2]", want: JobRef{Base: "53", ArrayTaskID: -1, ArrayTaskSpec: "1-5%2", HetOffset: -1}},
		{name: "het component", in: "60+1", want: JobRef{Base: "60", ArrayTaskID: -1, HetOffset: 1}},
		{name: "het leader", in: "60+0", want: JobRef{Base: "60", ArrayTaskID: -1, HetOffset: 0}},
		{name: "largest job id", in: "4294967293", want: JobRef{Base: "4294967293", ArrayTaskID: -1, HetOffset: -1}, plain: true},
		{name: "SLUID", in: "s0C8F3K2M1A0ZX", want: JobRef{Base: "s0C8F3K2M1A0ZX", ArrayTaskID: -1, HetOffset: -1}, plain: true},
		{name: "SLUID as str2sluid reads it", in: "S0c8f3k2mlaozx", want: JobRef{Base: "s0C8F3K2M1A0ZX", ArrayTaskID: -1, HetOffset: -1}, str: "s0C8F3K2M1A0ZX", plain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJobRef(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseJobRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			str := tt.str
			if str == "" {
				str = tt.in
			}
			if got.String() != str {
				t.Errorf("String() = %q, want %q", got.String(), str)
			}
			if got.Plain() != tt.plain {
				t.Errorf("Plain() = %v, want %v", got.Plain(), tt.plain)
			}
			again, err := ParseJobRef(got.String())
			if err != nil || again != got {
				t.Errorf("ParseJobRef(String()) = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func TestParseJobRefErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, says string }{
		{name: "word", in: "abc", says: `"abc" is not a job id (want a job id such as 58`},
		{name: "empty", in: "", says: "not a job id"},
		{name: "zero", in: "0", says: "not a job id"},
		{name: "NO_VAL", in: "4294967294", says: "not a job id"},
		{name: "over 32 bits", in: "4294967296", says: "not a job id"},
		{name: "negative", in: "-5", says: "not a job id"},
		{name: "SLUID too short", in: "sC8F3K2M1A0Z", says: "not a job id"},
		{name: "SLUID bad digit", in: "s0C8F3K2M1A0ZU", says: "not a job id"},
		{name: "task not a number", in: "53_x", says: "not a job id"},
		{name: "empty task", in: "53_", says: "not a job id"},
		{name: "array of a SLUID", in: "s0C8F3K2M1A0ZX_1", says: "an array or heterogeneous job id is a number"},
		{name: "batch step", in: "53_1.batch", says: `"53_1.batch" is a job step: gpuprof profiles whole jobs, use 53_1`},
		{name: "numbered step", in: "58.0", says: "is a job step"},
		{name: "shell characters", in: "58;reboot", says: "not a job id"},
		{name: "terminal escape", in: "5\x1b[2J8", says: `"5\x1b[2J8" is not a job id`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJobRef(tt.in)
			if !errors.Is(err, ErrBadJobID) || got != (JobRef{}) {
				t.Fatalf("ParseJobRef(%q) = %+v, %v; want zero, ErrBadJobID", tt.in, got, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			checkErrorMessage(t, err)
		})
	}
}

func TestJobRecordSlurmID(t *testing.T) {
	base := JobRecord{JobID: "58", ArrayTaskID: -1, HetOffset: -1}
	tests := []struct {
		name string
		edit func(*JobRecord)
		want string
	}{
		{name: "plain job", want: "58"},
		{name: "display id wins", edit: func(r *JobRecord) { r.DisplayID, r.ArrayJobID, r.ArrayTaskID = "53_1", "53", 1 }, want: "53_1"},
		{name: "array task without display id", edit: func(r *JobRecord) { r.ArrayJobID, r.ArrayTaskID = "53", 1 }, want: "53_1"},
		{name: "pending tasks without display id", edit: func(r *JobRecord) { r.ArrayJobID, r.ArrayTaskSpec = "53", "2-5%2" }, want: "53_[2-5%2]"},
		{name: "cancelled pending array", edit: func(r *JobRecord) { r.JobID, r.ArrayJobID = "53", "53" }, want: "53"},
		{name: "het component without display id", edit: func(r *JobRecord) { r.HetJobID, r.HetOffset = "57", 1 }, want: "57+1"},
		{name: "het job without offset", edit: func(r *JobRecord) { r.HetJobID = "57" }, want: "58"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			if tt.edit != nil {
				tt.edit(&r)
			}
			if got := r.SlurmID(); got != tt.want {
				t.Errorf("SlurmID() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJobRefCompare(t *testing.T) {
	want := []string{"9", "53", "53_1", "53_2", "53_10", "53_[11-20%2]", "60", "60+0", "60+1", "100", "s0C8F3K2M1A0ZX", "s1C8F3K2M1A0ZX"}
	refs := make([]JobRef, len(want))
	for i, id := range want {
		r, err := ParseJobRef(id)
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = r
	}
	for i := range refs {
		for j := range refs {
			if got, want := refs[i].Compare(refs[j]), cmp.Compare(i, j); got != want {
				t.Errorf("%s.Compare(%s) = %d, want %d", refs[i], refs[j], got, want)
			}
		}
	}
}

func TestCompareJobIDs(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       int
	}{
		{"array tasks by index", "53_2", "53_10", -1},
		{"plain id before its tasks", "53_1", "53", 1},
		{"numbers by value", "100", "9", 1},
		{"heterogeneous components", "60+1", "60+0", 1},
		{"the same job", "58", "058", 0},
		{"not a job id: no order", "abc", "9", 0},
		{"a step: no order", "9", "53_1.batch", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompareJobIDs(tt.a, tt.b); got != tt.want {
				t.Errorf("CompareJobIDs(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
