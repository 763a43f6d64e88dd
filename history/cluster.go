package history

import (
	"errors"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
)

// ClusterOrigin says what named the cluster of the imported jobs whose
// input names none.
type ClusterOrigin int

// The origins of an import's cluster, in the order they are tried.
const (
	ClusterFromFlag      ClusterOrigin = iota + 1 // the command's --cluster
	ClusterFromSetting                            // the configuration's cluster setting
	ClusterFromSlurmConf                          // ClusterName of the configuration's slurm_conf
	ClusterFromSection                            // the configuration's one [clusters.NAME] section
	ClusterFromNothing                            // nothing: slurmext.DefaultCluster
)

// ImportCluster is the cluster of the imported jobs whose input names none
// (Options.Cluster) and what chose it.
type ImportCluster struct {
	Name   string
	Origin ClusterOrigin
	// SlurmConf is the slurm.conf whose ClusterName it is
	// (ClusterFromSlurmConf).
	SlurmConf string
}

// ErrClusterName is a cluster asked for that is not a name Slurm could
// record (slurmext.ValidClusterName).
var ErrClusterName = errors.New("not a cluster name as Slurm records it")

// ChooseCluster is the cluster of the imported jobs whose input names
// none: asked (the command's --cluster, as Slurm records it), else the
// cluster the configuration names (the cluster setting, else slurm_conf's
// ClusterName, else its one [clusters.NAME] section), else
// slurmext.DefaultCluster. An asked name that Slurm could not record is
// ErrClusterName.
func ChooseCluster(asked string, cfg config.Config) (ImportCluster, error) {
	if asked != "" {
		name := slurmext.NormalClusterName(asked)
		if !slurmext.ValidClusterName(name) {
			return ImportCluster{}, ErrClusterName
		}
		return ImportCluster{Name: name, Origin: ClusterFromFlag}, nil
	}
	if c := slurmext.NormalClusterName(cfg.Cluster); c != "" {
		return ImportCluster{Name: c, Origin: ClusterFromSetting}, nil
	}
	if c, err := slurmext.ConfClusterName(cfg.SlurmConf); err == nil && c != "" {
		return ImportCluster{Name: c, Origin: ClusterFromSlurmConf, SlurmConf: cfg.SlurmConf}, nil
	}
	if len(cfg.Clusters) == 1 {
		for c := range cfg.Clusters {
			return ImportCluster{Name: c, Origin: ClusterFromSection}, nil
		}
	}
	return ImportCluster{Name: slurmext.DefaultCluster, Origin: ClusterFromNothing}, nil
}
