package demo

import (
	"fmt"
	"slices"
	"strings"
)

// SlurmConf is the slurm.conf of the simulated cluster: its name
// (Cluster), its nodes with their typed GPUs, its partitions and the
// scheduler Month simulates — submission order (priority/basic) with
// backfill on the time limits, no partition time limit. spoolDir is
// slurmd's spool (SlurmdSpoolDir), a directory of the demo's own, so that
// an agent reading this file never looks at the host's slurmd. The demo
// points its configuration at this file, so its answers are the same on
// every machine, whatever /etc/slurm holds.
func SlurmConf(nodes []NodeSpec, spoolDir string) string {
	if nodes == nil {
		nodes = DefaultNodes()
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# The simulated cluster of gpuprof's demo (gpuprof demo conf), as Slurm
# would describe it. Not for a real slurmctld: no hosts, no ports.
ClusterName=%s
SlurmdSpoolDir=%s
GresTypes=gpu
SelectType=select/cons_tres
# Month's scheduler: submission order, backfill on the jobs' time limits.
SchedulerType=sched/backfill
PriorityType=priority/basic
`, Cluster, spoolDir)
	var parts []string
	members := map[string][]string{}
	for _, n := range nodes {
		fmt.Fprintf(&b, "NodeName=%s Gres=gpu:%s:%d State=UNKNOWN\n", n.Name, n.Type, n.GPUs)
		if !slices.Contains(parts, n.Partition) {
			parts = append(parts, n.Partition)
		}
		members[n.Partition] = append(members[n.Partition], n.Name)
	}
	for i, p := range parts {
		def := ""
		if i == 0 {
			def = " Default=YES"
		}
		fmt.Fprintf(&b, "PartitionName=%s Nodes=%s%s MaxTime=INFINITE State=UP\n", p, strings.Join(members[p], ","), def)
	}
	return b.String()
}

// GresConf is the gres.conf of the simulated cluster: each node's GPUs
// with their type, their device files devDir/nvidia0… (stand-ins the
// demo creates; every node names the same ones, as each is its own host).
func GresConf(nodes []NodeSpec, devDir string) string {
	if nodes == nil {
		nodes = DefaultNodes()
	}
	var b strings.Builder
	b.WriteString("# The simulated cluster's GPUs (gpuprof demo conf), as Slurm would list them.\n")
	for _, n := range nodes {
		files := fmt.Sprintf("%s/nvidia0", devDir)
		if n.GPUs > 1 {
			files = fmt.Sprintf("%s/nvidia[0-%d]", devDir, n.GPUs-1)
		}
		fmt.Fprintf(&b, "NodeName=%s Name=gpu Type=%s File=%s\n", n.Name, n.Type, files)
	}
	return b.String()
}
