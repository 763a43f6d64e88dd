package slurmext

import (
	"errors"
	"testing"
)

func TestParseSqueueQOSName(t *testing.T) {
	tests := []struct {
		out, qos, name string
		err            error
		bad            bool
	}{
		{out: "normal|train\n", qos: "normal", name: "train"},
		// A name holding the separator keeps it: the QOS comes first.
		{out: "gpu-debug|a|b|c\n", qos: "gpu-debug", name: "a|b|c"},
		{out: "normal|\r\n", qos: "normal", name: ""},
		{out: "normal|first\nnormal|second\n", qos: "normal", name: "first"},
		{out: "", err: ErrNoSqueueLine},
		{out: "  \n", err: ErrNoSqueueLine},
		{out: "no separator\n", bad: true},
	}
	for _, tt := range tests {
		qos, name, err := ParseSqueueQOSName(tt.out)
		switch {
		case tt.err != nil:
			if !errors.Is(err, tt.err) {
				t.Errorf("%q: err %v, want %v", tt.out, err, tt.err)
			}
		case tt.bad:
			if err == nil || errors.Is(err, ErrNoSqueueLine) {
				t.Errorf("%q: err %v, want a format error", tt.out, err)
			}
		case err != nil || qos != tt.qos || name != tt.name:
			t.Errorf("%q = %q, %q, %v; want %q, %q", tt.out, qos, name, err, tt.qos, tt.name)
		}
	}
}
