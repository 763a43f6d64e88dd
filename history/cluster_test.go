package history_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/history"
)

// TestChooseCluster: --cluster first (as Slurm records it, refused when
// Slurm could not), then the cluster setting, slurm_conf's ClusterName,
// the one [clusters.NAME] section, else "default".
func TestChooseCluster(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=GpuLab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.conf")
	if err := os.WriteFile(bare, []byte("SlurmctldHost=h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := map[string]config.ClusterConfig{"alpha": {}}
	two := map[string]config.ClusterConfig{"alpha": {}, "beta": {}}
	tests := []struct {
		name  string
		asked string
		cfg   config.Config
		want  history.ImportCluster
	}{
		{name: "asked", asked: " Other ", cfg: config.Config{Cluster: "site"}, want: history.ImportCluster{Name: "other", Origin: history.ClusterFromFlag}},
		{name: "setting", cfg: config.Config{Cluster: " Site", SlurmConf: conf}, want: history.ImportCluster{Name: "site", Origin: history.ClusterFromSetting}},
		{name: "slurm.conf", cfg: config.Config{SlurmConf: conf, Clusters: one}, want: history.ImportCluster{Name: "gpulab", Origin: history.ClusterFromSlurmConf, SlurmConf: conf}},
		{name: "one section", cfg: config.Config{SlurmConf: bare, Clusters: one}, want: history.ImportCluster{Name: "alpha", Origin: history.ClusterFromSection}},
		{name: "two sections", cfg: config.Config{SlurmConf: filepath.Join(dir, "missing"), Clusters: two}, want: history.ImportCluster{Name: "default", Origin: history.ClusterFromNothing}},
		{name: "nothing", want: history.ImportCluster{Name: "default", Origin: history.ClusterFromNothing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := history.ChooseCluster(tt.asked, tt.cfg)
			if err != nil || got != tt.want {
				t.Errorf("ChooseCluster(%q) = %+v, %v; want %+v", tt.asked, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"a+b", "gpu lab", "../x"} {
		if _, err := history.ChooseCluster(bad, config.Config{}); !errors.Is(err, history.ErrClusterName) {
			t.Errorf("ChooseCluster(%q): %v, want ErrClusterName", bad, err)
		}
	}
}
