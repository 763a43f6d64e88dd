package slurmext

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPublicSlurmConf: slurm.conf(5)'s own example, its inventory and
// partitions worked out by hand from the man page.
func TestPublicSlurmConf(t *testing.T) {
	c, err := LoadClusterConf(filepath.Join("testdata", "conf", "slurm-man-slurmconf", "slurm.conf"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ClusterName != "" {
		t.Errorf("ClusterName %q: the example sets none", c.ClusterName)
	}
	// NodeName=dev[0-25]: 26 nodes, none with a GPU.
	if len(c.Nodes) != 26 || c.Nodes[0].Name != "dev0" || c.Nodes[25].Name != "dev25" {
		t.Fatalf("nodes %d, %v", len(c.Nodes), c.Nodes)
	}
	for _, n := range c.Nodes {
		if n.GPUs != 0 {
			t.Fatalf("%s has %d GPUs", n.Name, n.GPUs)
		}
	}
	if v, _ := c.Setting("SlurmdSpoolDir"); v != "/var/spool/slurmd.spool" {
		t.Errorf("SlurmdSpoolDir %q", v)
	}
	if v, ok := c.Setting("slurmctldhost"); v != "dev1(12.34.56.79)" || !ok {
		t.Errorf("SlurmctldHost %q (the last of two)", v)
	}
	type part struct {
		name    string
		nodes   int
		first   string
		maxTime time.Duration
		def     bool
	}
	// PartitionName=DEFAULT MaxTime=30 applies to debug and batch; long
	// sets 120 (minutes). debug: dev[0-8,18-25] = 9 + 8 nodes.
	want := []part{{"debug", 17, "dev0", 30 * time.Minute, true}, {"batch", 9, "dev9", 30 * time.Minute, false}, {"long", 9, "dev9", 120 * time.Minute, false}}
	var got []part
	for _, p := range c.Sched.Partitions {
		got = append(got, part{p.Name, len(p.Nodes), p.Nodes[0], p.MaxTime, p.Default})
		if p.State != "UP" || p.MaxTimeUnlimited {
			t.Errorf("%s: state %s unlimited %v", p.Name, p.State, p.MaxTimeUnlimited)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("partitions %+v, want %+v", got, want)
	}
	if c.Sched.SchedulerType != "sched/backfill" {
		t.Errorf("SchedulerType %q", c.Sched.SchedulerType)
	}
}

// TestPublicGresConf: gres.conf(5)'s six examples, per node, by hand.
func TestPublicGresConf(t *testing.T) {
	type dev struct{ typ, file string }
	tests := []struct {
		example, node string
		auto          string
		devs          []dev
		declared      int // Name=gpu lines that apply
	}{
		{"example1", "any", "nvml", []dev{{"gtx560", "/dev/nvidia0"}, {"tesla", "/dev/nvidia1"}}, 2},
		{"example2", "any", "", []dev{{"tesla", "/dev/nvidia0"}, {"tesla", "/dev/nvidia1"}, {"tesla", "/dev/nvidia3"}}, 2},
		{"example3", "tux0", "", []dev{{"", "/dev/nvidia0"}, {"", "/dev/nvidia1"}, {"", "/dev/nvidia2"}, {"", "/dev/nvidia3"}}, 1},
		{"example3", "tux3", "", []dev{{"", "/dev/nvidia0"}, {"", "/dev/nvidia2"}, {"", "/dev/nvidia3"}}, 1},
		{"example3", "tux15", "", []dev{{"", "/dev/nvidia0"}, {"", "/dev/nvidia1"}, {"", "/dev/nvidia2"}, {"", "/dev/nvidia3"}}, 1},
		{"example3", "tux16", "", nil, 0},
		{"example4", "tux1", "nvml", nil, 0},
		{"example4", "tux3", "off", []dev{{"", "/dev/nvidia0"}, {"", "/dev/nvidia1"}, {"", "/dev/nvidia2"}, {"", "/dev/nvidia3"}}, 1},
		{"example5", "tux7", "nvml", nil, 0},
		{"example5", "tux8", "rsmi", nil, 0},
		{"example5", "tux12", "", []dev{{"", "/dev/nvidia0"}, {"", "/dev/nvidia1"}, {"", "/dev/nvidia2"}, {"", "/dev/nvidia3"}}, 1},
		{"example6", "tux0", "", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.example+"/"+tt.node, func(t *testing.T) {
			g, err := LoadGresFile(filepath.Join("testdata", "conf", "slurm-man-gres", tt.example+".conf"), nil)
			if err != nil {
				t.Fatal(err)
			}
			gc, err := g.For(tt.node)
			if err != nil {
				t.Fatal(err)
			}
			var devs []dev
			for i, d := range gc.Devices {
				if d.Index != i {
					t.Fatalf("index %d at %d", d.Index, i)
				}
				devs = append(devs, dev{d.Type, d.File})
			}
			if gc.AutoDetect != tt.auto || !reflect.DeepEqual(devs, tt.devs) || len(gc.Declared) != tt.declared {
				t.Fatalf("AutoDetect %q devices %v declared %d; want %q %v %d", gc.AutoDetect, devs, len(gc.Declared), tt.auto, tt.devs, tt.declared)
			}
		})
	}
}

// TestClusterConfModel: DEFAULT lines, node sets (Nodes= and Feature=),
// Nodes=ALL, a partition naming a node set and a hostlist, gres.conf
// with AutoDetect and Type/Count lines, all split over Include files.
func TestClusterConfModel(t *testing.T) {
	files := map[string]string{
		"/etc/slurm/slurm.conf": "clustername=Lab\nInclude nodes.conf\nInclude partitions.conf\n",
		"/etc/slurm/nodes.conf": "NodeName=DEFAULT Gres=gpu:a100:4 Features=ampere\n" +
			"NodeName=g[01-02]\nNodeName=h01 Gres=gpu:h100:8,shard:64 Features=hopper\nNodeName=c01 Gres=(null) Features=cpu\n" +
			"NodeSet=hoppers Feature=hopper\nNodeSet=amps Nodes=g[01-02]\n",
		"/etc/slurm/partitions.conf": "PartitionName=DEFAULT MaxTime=1-00:00:00 PriorityTier=2\n" +
			"PartitionName=gpu Nodes=amps,hoppers Default=YES\nPartitionName=all Nodes=ALL MaxTime=UNLIMITED\nPartitionName=mixed Nodes=hoppers,c01 QOS=q State=DRAIN\n",
		"/etc/slurm/gres.conf": "AutoDetect=nvml\nNodeName=g[01-02] Name=gpu Type=a100\n",
	}
	c, err := LoadClusterConf("/etc/slurm/slurm.conf", mapOpener(files))
	if err != nil {
		t.Fatal(err)
	}
	if c.ClusterName != "lab" || len(c.Files) != 3 {
		t.Fatalf("cluster %q files %v", c.ClusterName, c.Files)
	}
	var inv []string
	for _, n := range c.Nodes {
		inv = append(inv, n.Name+":"+n.GPUType+":"+strings.Repeat("x", n.GPUs)+":"+strings.Repeat("s", min(n.Shards, 3)))
	}
	want := []string{"g01:a100:xxxx:", "g02:a100:xxxx:", "h01:h100:xxxxxxxx:sss", "c01:::"}
	if !reflect.DeepEqual(inv, want) {
		t.Fatalf("inventory %v, want %v", inv, want)
	}
	if !reflect.DeepEqual(c.NodeSets["hoppers"], []string{"h01"}) || !reflect.DeepEqual(c.NodeSets["amps"], []string{"g01", "g02"}) {
		t.Fatalf("node sets %v", c.NodeSets)
	}
	ps := c.Sched.Partitions
	if len(ps) != 3 || !reflect.DeepEqual(ps[0].Nodes, []string{"g01", "g02", "h01"}) || !ps[0].Default || ps[0].PriorityTier != 2 || ps[0].MaxTime != 24*time.Hour {
		t.Fatalf("gpu partition %+v", ps[0])
	}
	if !ps[1].AllNodes || !ps[1].MaxTimeUnlimited || ps[1].PriorityTier != 2 {
		t.Fatalf("all partition %+v", ps[1])
	}
	if !reflect.DeepEqual(ps[2].Nodes, []string{"h01", "c01"}) || ps[2].QOS != "q" || ps[2].State != "DRAIN" {
		t.Fatalf("mixed partition %+v", ps[2])
	}
	if err := c.LoadGres("/etc/slurm/gres.conf", mapOpener(files)); err != nil {
		t.Fatal(err)
	}
	gc, err := c.Gres.For("g01")
	if err != nil || gc.AutoDetect != "nvml" || len(gc.Devices) != 0 || len(gc.Declared) != 1 || gc.Declared[0].CountKnown || gc.Declared[0].Type != "a100" {
		t.Fatalf("gres of g01: %+v %v (AutoDetect: the count is the hardware's, unknown here)", gc, err)
	}
	// A partition naming an unknown hostlist is refused, naming the file.
	files["/etc/slurm/partitions.conf"] = "PartitionName=p Nodes=g[01-\n"
	if _, err := LoadClusterConf("/etc/slurm/slurm.conf", mapOpener(files)); err == nil || !strings.Contains(err.Error(), "partitions.conf") || !errors.Is(err, ErrBadSlurmConf) {
		t.Fatalf("bad Nodes=: %v", err)
	}
}

// TestPublicGresGuide: the GRES guide's MIG and sharding examples (Slurm's
// doc/html/gres.shtml), inventories by hand.
func TestPublicGresGuide(t *testing.T) {
	dir := filepath.Join("testdata", "conf", "slurm-gres-html")
	for _, tt := range []struct {
		file    string
		gpus    int
		typ     string
		byType  []TypeCount
		shards  int
		setting string
	}{
		// NodeName=tux[1-16] gres=gpu:a100:1,gpu:a100_3g.20gb:2: the key in
		// lowercase, two typed entries, three GPUs a node.
		{"mig-slurm.conf", 3, "a100,a100_3g.20gb", []TypeCount{{"a100", 1}, {"a100_3g.20gb", 2}}, 0, "gres/gpu,gres/gpu:a100,gres/gpu:a100_3g.20gb"},
		// NodeName=tux[1-16] Gres=gpu:2,shard:64: untyped, 64 shards a node.
		{"shard-slurm.conf", 2, "", []TypeCount{{"", 2}}, 64, "gres/gpu,gres/shard"},
	} {
		c, err := LoadClusterConf(filepath.Join(dir, tt.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Nodes) != 16 || c.Nodes[0].Name != "tux1" || c.Nodes[15].Name != "tux16" {
			t.Fatalf("%s: nodes %v", tt.file, c.Nodes)
		}
		for _, n := range c.Nodes {
			if n.GPUs != tt.gpus || n.GPUType != tt.typ || !reflect.DeepEqual(n.GPUsByType, tt.byType) || n.Shards != tt.shards {
				t.Fatalf("%s: %+v", tt.file, n)
			}
		}
		if v, _ := c.Setting("accountingstoragetres"); v != tt.setting {
			t.Errorf("%s: AccountingStorageTRES %q", tt.file, v)
		}
	}
	for _, tt := range []struct {
		file  string
		types []string
	}{
		{"mps-gres1.conf", []string{"gp100", "gp100", "p6000", "p6000"}},
		{"shard-gres1.conf", []string{"gp100", "gp100", "p6000", "p6000"}},
		{"mps-gres2.conf", []string{"gtx1080", "gtx1070", "gtx1060", "gtx1050"}},
		{"shard-gres2.conf", []string{"gtx1080", "gtx1070", "gtx1060", "gtx1050"}},
	} {
		g, err := LoadGresFile(filepath.Join(dir, tt.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		gc, err := g.For("tux1")
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i, d := range gc.Devices {
			if d.File != "/dev/nvidia"+string(rune('0'+i)) || d.Index != i {
				t.Fatalf("%s: device %d %+v", tt.file, i, d)
			}
			types = append(types, d.Type)
		}
		// The mps and shard lines are not GPUs.
		if gc.AutoDetect != "nvml" || !reflect.DeepEqual(types, tt.types) || len(gc.Declared) != 4 {
			t.Fatalf("%s: AutoDetect %q types %v declared %d", tt.file, gc.AutoDetect, types, len(gc.Declared))
		}
	}
}
