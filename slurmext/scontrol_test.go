package slurmext

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func readScontrol(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "scontrol", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The real test cluster's answers (22.05.8), in both the one-line (-o)
// and the multi-line forms: the same model.
func TestScontrolTestCluster(t *testing.T) {
	cfg := readScontrol(t, "gpuproftest-22.05.8-config.txt")
	for _, form := range []string{"-o", ""} {
		c, err := NewClusterConfScontrol(ScontrolText{
			Config:     cfg,
			Nodes:      readScontrol(t, "gpuproftest-22.05.8-nodes"+form+".txt"),
			Partitions: readScontrol(t, "gpuproftest-22.05.8-partitions"+form+".txt"),
		})
		if err != nil {
			t.Fatalf("form %q: %v", form, err)
		}
		if c.ClusterName != "gpuproftest" || c.SlurmConf != ScontrolSource {
			t.Errorf("form %q: cluster %q source %q", form, c.ClusterName, c.SlurmConf)
		}
		want := []NodeGres{{Name: "localhost", GPUs: 4, GPUsByType: []TypeCount{{Type: "", Count: 4}}, Shards: 32}}
		if !reflect.DeepEqual(c.Nodes, want) {
			t.Errorf("form %q: nodes %+v, want %+v", form, c.Nodes, want)
		}
		if len(c.Sched.Partitions) != 1 {
			t.Fatalf("form %q: partitions %+v", form, c.Sched.Partitions)
		}
		p := c.Sched.Partitions[0]
		if p.Name != "gpu" || !reflect.DeepEqual(p.Nodes, []string{"localhost"}) || !p.MaxTimeUnlimited ||
			p.PriorityTier != 1 || p.PriorityFactor != 1 || p.QOS != "" || p.AllowQOS != nil || !p.Default || p.State != "UP" {
			t.Errorf("form %q: partition %+v", form, p)
		}
		if c.Sched.PriorityType != "priority/basic" || c.Sched.SchedulerType != "sched/backfill" {
			t.Errorf("form %q: sched %+v", form, c.Sched)
		}
		if got := ScontrolClusterName(cfg); got != "gpuproftest" {
			t.Errorf("ScontrolClusterName = %q", got)
		}
	}
}

// Published answers of real clusters: a typed, socket-bound Gres with a
// value (OS=, Reason=) that has blanks; a partition with a MaxTime.
func TestScontrolPublished(t *testing.T) {
	c, err := NewClusterConfScontrol(ScontrolText{
		Nodes:      readScontrol(t, "bih-20.02.0-node-med0304.txt"),
		Partitions: readScontrol(t, "aris-partition-compute.txt"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeGres{{Name: "med0304", GPUs: 4, GPUType: "tesla", GPUsByType: []TypeCount{{Type: "tesla", Count: 4}}}}
	if !reflect.DeepEqual(c.Nodes, want) {
		t.Errorf("nodes %+v, want %+v", c.Nodes, want)
	}
	if c.ClusterName != "" {
		t.Errorf("cluster %q without show config", c.ClusterName)
	}
	p := c.Sched.Partitions[0]
	if p.Name != "compute" || len(p.Nodes) != 48 || p.Nodes[0] != "m01" || p.Nodes[47] != "m48" ||
		p.MaxTime != 48*time.Hour || p.MaxTimeUnlimited || p.DefaultTime != 0 || p.PriorityTier != 1 || !p.Default || p.State != "UP" || p.QOS != "" {
		t.Errorf("partition %+v", p)
	}
}

func TestScontrolRecordsText(t *testing.T) {
	c, err := NewClusterConfScontrol(ScontrolText{
		Nodes: []byte("NodeName=g1 Gres=gpu:h100:4(S:0-1),shard:32 AvailableFeatures=h100,ib State=IDLE\n" +
			"NodeName=g2 Gres=gpu:a100:2,gpu:h100:2 State=DOWN+DRAIN Reason=fan broken [root@2024-01-01T00:00:00]\n" +
			"NodeName=c1 Gres=(null)\n"),
		Partitions: []byte("PartitionName=hi Nodes=g[1-2] MaxTime=1-00:00:00 PriorityTier=10 QoS=gpuqos AllowQos=a,b State=DRAIN\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeGres{
		{Name: "g1", GPUs: 4, GPUType: "h100", GPUsByType: []TypeCount{{"h100", 4}}, Shards: 32},
		{Name: "g2", GPUs: 4, GPUType: "a100,h100", GPUsByType: []TypeCount{{"a100", 2}, {"h100", 2}}},
		{Name: "c1"},
	}
	if !reflect.DeepEqual(c.Nodes, want) {
		t.Errorf("nodes %+v\nwant  %+v", c.Nodes, want)
	}
	p := c.Sched.Partitions[0]
	if !reflect.DeepEqual(p.Nodes, []string{"g1", "g2"}) || p.MaxTime != 24*time.Hour || p.PriorityTier != 10 ||
		p.QOS != "gpuqos" || !reflect.DeepEqual(p.AllowQOS, []string{"a", "b"}) || p.State != "DRAIN" || p.Default {
		t.Errorf("partition %+v", p)
	}
	if !reflect.DeepEqual(c.NodeSets["h100"], []string(nil)) {
		t.Errorf("node sets %v", c.NodeSets)
	}
	for _, bad := range []string{"Gres=gpu:1\n", "NodeName= Gres=gpu:1\n", "garbage\n"} {
		if _, err := NewClusterConfScontrol(ScontrolText{Nodes: []byte(bad)}); !errors.Is(err, ErrBadConf) {
			t.Errorf("%q: err %v, want ErrBadConf", bad, err)
		}
	}
}

// The real test Slurm with typed GPUs and a second partition (22.05.8):
// slurmctld reports the shards typed too ("shard:h100:32"); the model
// equals the one the same slurm.conf gives.
func TestScontrolTyped(t *testing.T) {
	for _, form := range []string{"-o", ""} {
		c, err := NewClusterConfScontrol(ScontrolText{
			Config:     readScontrol(t, "typed-22.05.8-config.txt"),
			Nodes:      readScontrol(t, "typed-22.05.8-nodes"+form+".txt"),
			Partitions: readScontrol(t, "typed-22.05.8-partitions"+form+".txt"),
		})
		if err != nil {
			t.Fatalf("form %q: %v", form, err)
		}
		want := []NodeGres{{Name: "localhost", GPUs: 4, GPUType: "h100", GPUsByType: []TypeCount{{Type: "h100", Count: 4}}, Shards: 32}}
		if !reflect.DeepEqual(c.Nodes, want) {
			t.Errorf("form %q: nodes %+v, want %+v", form, c.Nodes, want)
		}
		ps := c.Sched.Partitions
		if len(ps) != 2 {
			t.Fatalf("form %q: partitions %+v", form, ps)
		}
		if g := ps[0]; g.Name != "gpu" || !g.MaxTimeUnlimited || g.PriorityTier != 1 || !g.Default {
			t.Errorf("form %q: gpu %+v", form, g)
		}
		if s := ps[1]; s.Name != "short" || s.MaxTime != time.Hour || s.MaxTimeUnlimited || s.DefaultTime != 10*time.Minute ||
			s.PriorityTier != 10 || s.PriorityFactor != 5 || s.Default || s.State != "UP" || !reflect.DeepEqual(s.Nodes, []string{"localhost"}) {
			t.Errorf("form %q: short %+v", form, s)
		}
		sc := c.Sched
		if sc.PriorityType != "priority/multifactor" || sc.WeightAge != 1000 || sc.WeightPartition != 2000 || sc.WeightFairshare != 0 ||
			sc.PriorityMaxAge != 7*24*time.Hour || sc.PriorityDecayHalfLife != 7*24*time.Hour || sc.PriorityCalcPeriod != 5*time.Minute ||
			sc.PriorityFavorSmall || sc.BfInterval != time.Minute || sc.BfWindow != 48*time.Hour {
			t.Errorf("form %q: sched %+v", form, sc)
		}
		f, err := os.Open(filepath.Join("testdata", "scontrol", "typed-22.05.8-slurm.conf.txt"))
		if err != nil {
			t.Fatal(err)
		}
		files, err := ReadClusterConf(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(files.Nodes, c.Nodes) || !reflect.DeepEqual(files.Sched.Partitions, c.Sched.Partitions) || files.ClusterName != c.ClusterName {
			t.Errorf("form %q: the files give nodes %+v partitions %+v, scontrol %+v %+v", form, files.Nodes, files.Sched.Partitions, c.Nodes, c.Sched.Partitions)
		}
	}
}
