package slurmext

import (
	"os"
	"strings"
)

// The one rule naming the cluster and the node a record belongs to. Every
// writer — the prolog and epilog, the spool ingest, the agent's discovery,
// jobcomp and the sacct import — keys a job's records by (cluster, node,
// job id) through these two functions, so a record keeps its key whatever
// path it takes. docs/configuration.md states the order once.

// DefaultCluster is the cluster name when nothing names one.
const DefaultCluster = "default"

// ClusterName picks a record's cluster: the configured name, else the one
// Slurm gave the hook (SLURM_CLUSTER_NAME, jobcomp's CLUSTER), else
// slurm.conf's ClusterName (slurmConf is its path; "" or unreadable skips
// it), else "default". Slurm lowercases cluster names; so does this.
func ClusterName(configured, fromSlurm, slurmConf string) string {
	for _, n := range []string{configured, fromSlurm} {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			return n
		}
	}
	if slurmConf != "" {
		if f, err := os.Open(slurmConf); err == nil {
			defer f.Close()
			if n := ReadClusterName(f); n != "" {
				return n
			}
		}
	}
	return DefaultCluster
}

// NodeName picks a record's node: the configured name, else the one slurmd
// gave the hook (SLURMD_NODENAME), else the short host name (up to the
// first dot), else "localhost". hostname is os.Hostname in production.
func NodeName(configured, fromSlurm string, hostname func() (string, error)) string {
	for _, n := range []string{configured, fromSlurm} {
		if n = strings.TrimSpace(n); n != "" {
			return n
		}
	}
	if hostname != nil {
		if h, err := hostname(); err == nil {
			if h, _, _ = strings.Cut(strings.TrimSpace(h), "."); h != "" {
				return h
			}
		}
	}
	return "localhost"
}
