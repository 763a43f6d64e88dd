package slurmext

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// openbConf writes an openb-sized configuration (1,523 nodes, as the
// Alibaba openb trace's cluster has; one node per line, typed GPUs and
// shards, 24 partitions by hostlist) split as slurm.conf + Include
// nodes.conf + Include partitions.conf, and returns the slurm.conf.
func openbConf(b testing.TB) string {
	dir := b.TempDir()
	var nodes, parts strings.Builder
	types := []string{"a100", "v100m32", "t4", "p100", "g2", "a10"}
	nodes.WriteString("NodeName=DEFAULT CPUs=96 RealMemory=786432 State=UNKNOWN\n")
	for i := range 1523 {
		fmt.Fprintf(&nodes, "NodeName=openb-node-%04d Gres=gpu:%s:%d,shard:%d Features=%s\n", i, types[i%len(types)], 1+i%8, 4*(1+i%8), types[i%len(types)])
	}
	for p := range 24 {
		lo := p * 63
		fmt.Fprintf(&parts, "PartitionName=p%02d Nodes=openb-node-[%04d-%04d] MaxTime=7-00:00:00 PriorityTier=%d\n", p, lo, min(lo+62, 1522), 1+p%3)
	}
	parts.WriteString("NodeSet=a100s Feature=a100\nPartitionName=a100 Nodes=a100s\nPartitionName=all Nodes=ALL Default=YES\n")
	main := "ClusterName=openb\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\nInclude nodes.conf\nInclude partitions.conf\n"
	for name, text := range map[string]string{"slurm.conf": main, "nodes.conf": nodes.String(), "partitions.conf": parts.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Join(dir, "slurm.conf")
}

// BenchmarkLoadClusterConf reads an openb-sized configuration from disk,
// Include lines followed, into the model.
func BenchmarkLoadClusterConf(b *testing.B) {
	path := openbConf(b)
	b.ReportAllocs()
	for b.Loop() {
		c, err := LoadClusterConf(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Nodes) != 1523 || len(c.Sched.Partitions) != 26 {
			b.Fatalf("%d nodes, %d partitions", len(c.Nodes), len(c.Sched.Partitions))
		}
	}
}

// TestOpenbSplitEqualsSingle: the openb-sized configuration split over
// Include files gives the same model as the same lines in one file.
func TestOpenbSplitEqualsSingle(t *testing.T) {
	split := openbConf(t)
	dir := filepath.Dir(split)
	var one strings.Builder
	for _, name := range []string{"slurm.conf", "nodes.conf", "partitions.conf"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasPrefix(line, "Include ") {
				one.WriteString(line)
			}
		}
	}
	single := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(single, []byte(one.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := LoadClusterConf(split, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadClusterConf(single, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Nodes) != 1523 || !reflect.DeepEqual(a.Nodes, b.Nodes) || !reflect.DeepEqual(a.Sched, b.Sched) || !reflect.DeepEqual(a.NodeSets, b.NodeSets) || len(a.Files) != 3 {
		t.Fatalf("split %d nodes, %d partitions, files %v; single %d nodes, %d partitions", len(a.Nodes), len(a.Sched.Partitions), a.Files, len(b.Nodes), len(b.Sched.Partitions))
	}
	// One node of six is a100 (i%6 == 0): the node set by Feature=a100.
	if got := len(a.Sched.Partitions[24].Nodes); got != 254 {
		t.Errorf("partition a100 has %d nodes, want 254 (⌈1523/6⌉)", got)
	}
	// Old readers of the text, without Include, agree on the single file.
	f, _ := os.Open(single)
	defer f.Close()
	nodes, err := ReadNodeGres(f)
	if err != nil || !reflect.DeepEqual(nodes, a.Nodes) {
		t.Fatalf("ReadNodeGres of the single file: %d nodes, %v", len(nodes), err)
	}
}
