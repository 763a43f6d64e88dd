package slurmext

import (
	"errors"
	"testing"
)

// TestParseSqueueTRESPerNode: squeue's %b as Slurm 22.05 prints it
// ("gres:shard:2", seen on the test cluster's sbatch --gres) and as 23.02
// and later do ("gres/shard:2"); N/A (GPUs per job or task) is unknown.
func TestParseSqueueTRESPerNode(t *testing.T) {
	tests := []struct {
		name, out string
		want      JobGres
		err       error
	}{
		{"22.05 shards", "gres:shard:2\n", JobGres{Known: true, Shards: 2}, nil},
		{"23.02 shards", "gres/shard:3\n", JobGres{Known: true, Shards: 3}, nil},
		{"typed shards", "gres/shard:h100:4", JobGres{Known: true, Shards: 4}, nil},
		{"22.05 gpus", "gres:gpu:2", JobGres{Known: true, GPUs: 2}, nil},
		{"typed gpus", "gres/gpu:h100:1", JobGres{Known: true, GPUs: 1}, nil},
		{"a type, no count", "gres/gpu:h100", JobGres{Known: true, GPUs: 1}, nil},
		{"with another gres", "gres/gpu:1,gres/license:2", JobGres{Known: true, GPUs: 1}, nil},
		{"per job", "N/A", JobGres{}, nil},
		{"no line", "", JobGres{}, ErrNoSqueueLine},
		{"bad count", "gres/shard:h100:x", JobGres{}, ErrBadIndexList},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSqueueTRESPerNode(tt.out)
			switch {
			case tt.err == ErrBadIndexList:
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
			case !errors.Is(err, tt.err):
				t.Fatalf("err = %v, want %v", err, tt.err)
			case got != tt.want:
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
