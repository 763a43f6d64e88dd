package slurmext

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestParseTRES(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{name: "sacct ReqTRES", in: "billing=4,cpu=4,gres/gpu=2,mem=16G,node=1",
			want: map[string]string{"billing": "4", "cpu": "4", "gres/gpu": "2", "mem": "16G", "node": "1"}},
		{name: "typed gres", in: "cpu=1,gres/gpu:h100=2", want: map[string]string{"cpu": "1", "gres/gpu:h100": "2"}},
		{name: "typed and untyped", in: "gres/gpu=2,gres/gpu:h100=2", want: map[string]string{"gres/gpu": "2", "gres/gpu:h100": "2"}},
		{name: "spaces", in: " cpu = 1 , mem=0 ", want: map[string]string{"cpu": "1", "mem": "0"}},
		{name: "empty", in: "", want: map[string]string{}},
		{name: "blank", in: "  ", want: map[string]string{}},
		{name: "value with = kept whole", in: "license/x=a=b", want: map[string]string{"license/x": "a=b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTRES(tt.in)
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("ParseTRES(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if err := CheckTRES(tt.in); err != nil {
				t.Fatalf("CheckTRES(%q) = %v, ParseTRES accepts it", tt.in, err)
			}
		})
	}
}

func TestParseTRESErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		in       string
		checkToo bool // CheckTRES must refuse it as well
	}{
		{name: "no equals", in: "cpu", checkToo: true},
		{name: "empty name", in: "=4", checkToo: true},
		{name: "empty value", in: "cpu=", checkToo: true},
		{name: "empty item", in: "cpu=1,,mem=2", checkToo: true},
		{name: "trailing comma", in: "cpu=1,", checkToo: true},
		{name: "duplicate", in: "cpu=1,cpu=2"},
		{name: "too many items", in: strings.Repeat("a=1,", MaxTRESItems) + "a=1", checkToo: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTRES(tt.in)
			if !errors.Is(err, ErrBadTRES) || got != nil {
				t.Fatalf("ParseTRES(%q) = %v, %v; want nil, ErrBadTRES", tt.in, got, err)
			}
			checkErrorMessage(t, err)
			if cerr := CheckTRES(tt.in); tt.checkToo && !errors.Is(cerr, ErrBadTRES) {
				t.Fatalf("CheckTRES(%q) = %v, want ErrBadTRES", tt.in, cerr)
			}
		})
	}
}

func TestGPUsFromTRES(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		gpus    int
		gpuType string
		shards  int
	}{
		{name: "untyped", in: "billing=4,cpu=4,gres/gpu=2,mem=16G,node=1", gpus: 2},
		{name: "typed only", in: "cpu=4,gres/gpu:h100=2", gpus: 2, gpuType: "h100"},
		{name: "typed and untyped not double counted", in: "gres/gpu=2,gres/gpu:h100=2", gpus: 2, gpuType: "h100"},
		{name: "untyped after typed", in: "gres/gpu:h100=2,gres/gpu=2", gpus: 2, gpuType: "h100"},
		{name: "two types summed", in: "gres/gpu:a100=1,gres/gpu:h100=2", gpus: 3, gpuType: "a100,h100"},
		{name: "two types with total", in: "gres/gpu=3,gres/gpu:h100=2,gres/gpu:a100=1", gpus: 3, gpuType: "a100,h100"},
		{name: "MIG type", in: "gres/gpu:a100_3g.20gb=1", gpus: 1, gpuType: "a100_3g.20gb"},
		{name: "shards", in: "cpu=1,gres/shard=3", shards: 3},
		{name: "typed shards", in: "gres/shard:h100=4", shards: 4},
		{name: "mps is not counted", in: "gres/mps=50"},
		{name: "gpumem and gpuutil are not GPUs", in: "gres/gpumem=40G,gres/gpuutil=80,gres/gpu=1", gpus: 1},
		{name: "zero typed count names no type", in: "gres/gpu:h100=0", gpus: 0},
		{name: "malformed items skipped", in: "gres/gpu=x,gres/gpu:h100=2,junk", gpus: 2, gpuType: "h100"},
		{name: "hostile type counted, not named", in: "gres/gpu:h\x1b[1m=2", gpus: 2},
		{name: "empty", in: ""},
		{name: "count over int32 skipped", in: "gres/gpu=99999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus, typ, shards := GPUsFromTRES(tt.in)
			if gpus != tt.gpus || typ != tt.gpuType || shards != tt.shards {
				t.Fatalf("GPUsFromTRES(%q) = %d, %q, %d; want %d, %q, %d", tt.in, gpus, typ, shards, tt.gpus, tt.gpuType, tt.shards)
			}
		})
	}
}
