package slurmext

import (
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
		if n = NormalClusterName(n); n != "" {
			return n
		}
	}
	if slurmConf != "" {
		if n, err := ConfClusterName(slurmConf); err == nil && n != "" {
			return n
		}
	}
	return DefaultCluster
}

// NormalClusterName is a cluster name as Slurm records it: without
// surrounding space, lowercased.
func NormalClusterName(name string) string {
	return strings.ToLower(strings.TrimSpace(name))
}

// ValidClusterName reports whether name (as NormalClusterName leaves it) is
// a cluster name Slurm could record: 1–64 letters, digits, '-', '_' or '.'
// (a job id's characters, ValidJobID, without the het-job '+').
func ValidClusterName(name string) bool {
	return ValidJobID(name) && !strings.Contains(name, "+")
}

// ConfClusterName reads the ClusterName the slurm.conf at path sets (""
// when it sets none), its Include lines followed; an error when the file,
// or a file it includes, cannot be read.
func ConfClusterName(path string) (string, error) {
	t, err := ReadConfText(path, nil)
	if err != nil {
		return "", err
	}
	name := ""
	for _, l := range t.Lines {
		if v, ok := l.Get("ClusterName"); ok && !isRecordKey(strings.ToLower(l.Pairs[0].Key)) {
			name = strings.ToLower(v)
		}
	}
	if !ValidClusterName(name) {
		return "", nil
	}
	return name, nil
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
