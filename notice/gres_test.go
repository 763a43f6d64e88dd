package notice

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext"
)

// ClusterGresOf reads the GPU types and shards slurm.conf declares;
// an unreadable file is unknown.
func TestClusterGres(t *testing.T) {
	dir := t.TempDir()
	noShards := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(noShards, []byte("ClusterName=lab\nNodeName=g[1-2] Gres=gpu:a100:4 State=UNKNOWN\nNodeName=g3 Gres=gpu:l4:2,gpu:a100:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       ClusterGres
	}{
		// The example declares gpu:h100:8,shard:64 on its GPU nodes.
		{name: "contrib example", path: filepath.Join("..", "contrib", "slurm", "slurm.conf.example"),
			want: ClusterGres{Known: true, Shards: true, Types: []string{"h100"}}},
		{name: "GPUs without shards", path: noShards, want: ClusterGres{Known: true, Types: []string{"a100", "l4"}}},
		{name: "unreadable", path: filepath.Join(dir, "absent.conf"), want: ClusterGres{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := slurmext.LoadClusterConf(tt.path, nil)
			if got := ClusterGresOf(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadClusterGres(%s) = %+v, want %+v", tt.path, got, tt.want)
			}
		})
	}
}
