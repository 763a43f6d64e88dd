package slurmext

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadNodeGres(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want []NodeGres
	}{
		{
			name: "test cluster",
			conf: "NodeName=localhost CPUs=2 RealMemory=8000 Gres=gpu:4,shard:8 State=UNKNOWN\n",
			want: []NodeGres{{Name: "localhost", GPUs: 4, Shards: 8, GPUsByType: []TypeCount{{"", 4}}}},
		},
		{
			name: "typed with hostlist and comment",
			conf: "# nodes\nNodeName=gpu[01-02] Gres=gpu:h100:8,shard:64 # H100s\nPartitionName=gpu Nodes=ALL\n",
			want: []NodeGres{{Name: "gpu01", GPUs: 8, GPUType: "h100", Shards: 64, GPUsByType: []TypeCount{{"h100", 8}}},
				{Name: "gpu02", GPUs: 8, GPUType: "h100", Shards: 64, GPUsByType: []TypeCount{{"h100", 8}}}},
		},
		{
			name: "DEFAULT, two types, sockets, mps, continuation",
			conf: "NodeName=DEFAULT Gres=gpu:a100:2\nNodeName=a1\nNodeName=m1 \\\n  Gres=gpu:l40s:2(S:0),gpu:a100:2(S:1),mps:400,gpu:no_consume:h100:0\n",
			want: []NodeGres{{Name: "a1", GPUs: 2, GPUType: "a100", GPUsByType: []TypeCount{{"a100", 2}}},
				{Name: "m1", GPUs: 4, GPUType: "l40s,a100,h100", MPS: 400, GPUsByType: []TypeCount{{"l40s", 2}, {"a100", 2}}}},
		},
		{
			name: "node without GPUs and a later redefinition",
			conf: "nodename=c1 CPUs=64\nNodeName=g1 Gres=gpu:1\nNodeName=g1 Gres=gpu:2,shard:1K\n",
			want: []NodeGres{{Name: "c1"}, {Name: "g1", GPUs: 2, Shards: 1024, GPUsByType: []TypeCount{{"", 2}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadNodeGres(strings.NewReader(tt.conf))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadNodeGresErrors(t *testing.T) {
	for _, conf := range []string{
		"NodeName=g[1-2 Gres=gpu:1\n",
		"NodeName=g1 Gres=gpu:h100:a100:1\n",
		"NodeName=g1 Gres=gpu:99999999999999\n",
	} {
		if _, err := ReadNodeGres(strings.NewReader(conf)); !errors.Is(err, ErrBadSlurmConf) {
			t.Errorf("%q: err = %v, want ErrBadSlurmConf", conf, err)
		}
	}
}
