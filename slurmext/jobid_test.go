package slurmext

import (
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
