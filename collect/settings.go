package collect

import (
	"log/slog"
	"os/user"
	"strconv"
	"time"

	"github.com/gpuprof/gpuprof/config"
)

// MungeOf is the munge client the [munge] section describes, with the
// timeout every gpuprof call to munge and unmunge has.
func MungeOf(c config.MungeConfig) Munge {
	return Munge{MungeBin: c.Munge, UnmungeBin: c.Unmunge, Socket: c.Socket, Timeout: 10 * time.Second}
}

// PushUIDs are the uids whose pushes the collector accepts
// (ServerOptions.PushUIDs): root, and slurmUser (serve.slurm_user, whom
// jobcomp runs as) when it is another user and known here. An unknown
// slurmUser is logged: then only root may push.
func PushUIDs(slurmUser string, log *slog.Logger) []int {
	push := []int{0}
	if slurmUser != "" && slurmUser != "root" {
		if u, err := user.Lookup(slurmUser); err == nil {
			if uid, err := strconv.Atoi(u.Uid); err == nil {
				push = append(push, uid)
			}
		} else {
			log.Warn("SlurmUser unknown; only root may push", "user", slurmUser, "err", err)
		}
	}
	return push
}

// NodeHosts is serve.node_hosts as the collector binds pushes
// (ServerOptions.NodeHosts): a node without a cluster is of own, this
// collector's cluster (cluster, else slurm_conf's ClusterName).
// config.Validate has checked every entry; one that does not parse is
// left out.
func NodeHosts(entries map[string][]string, own string) map[string][]NodeRef {
	if len(entries) == 0 {
		return nil
	}
	out := make(map[string][]NodeRef, len(entries))
	for host, es := range entries {
		for _, e := range es {
			cluster, node, err := config.SplitNode(e)
			if err != nil {
				continue
			}
			if cluster == "" {
				cluster = own
			}
			out[host] = append(out[host], NodeRef{Cluster: cluster, Node: node})
		}
	}
	return out
}

// LimitsOf is the [serve] section's admission limits as the collector
// takes them (ServerOptions.Limits): the connections, the users' query
// lane and the nodes' push lane. The limits serve's settings do not name
// keep the collector's defaults.
func LimitsOf(c config.ServeConfig) Limits {
	return Limits{
		MaxConns: c.MaxConns, ConnsPerPeer: c.ConnsPerHost,
		MaxQueries: c.MaxQueries, QueriesPerUID: c.QueriesPerUser, QueryDecodes: c.QueryDecodes,
		PushDecodes: c.PushDecodes, MaxUploads: c.MaxUploads, UploadsPerHost: c.UploadsPerHost,
		QueueWait:         c.QueueWait.D(),
		FailuresPerSecond: c.FailuresPerSecond, FailureBurst: c.FailureBurst,
	}
}
