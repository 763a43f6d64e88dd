package jobsource

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
)

// TestBindSlurmConf is the one rule that binds a slurm.conf to a
// cluster's jobs: [clusters.NAME] slurm_conf, else slurm_conf, used only
// when its ClusterName is the cluster's; otherwise not used, and said so
// in one line (silence only for the default path on a host without it).
func TestBindSlurmConf(t *testing.T) {
	files := map[string]string{ // path → ClusterName ("" none)
		"/etc/slurm/slurm.conf": "lab2",
		"/srv/dlrm/slurm.conf":  "dlrm",
		"/srv/other/slurm.conf": "lab2",
		"/srv/noname.conf":      "",
	}
	read := func(path string) (string, error) {
		if path == "/srv/secret.conf" {
			return "", &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
		}
		c, ok := files[path]
		if !ok {
			return "", &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return c, nil
	}
	cfgWith := func(slurmConf string, clusters map[string]config.ClusterConfig) config.Config {
		c := config.Default()
		c.SlurmConf, c.Clusters = slurmConf, clusters
		return c
	}
	for _, tt := range []struct {
		name        string
		cluster     string
		cfg         config.Config
		wantPath    string
		wantNotUsed string // part of the line; "" for none
	}{
		{name: "the host's file for its own cluster", cluster: "lab2", cfg: cfgWith("/etc/slurm/slurm.conf", nil), wantPath: "/etc/slurm/slurm.conf"},
		{name: "the host's file for another cluster's jobs", cluster: "dlrm", cfg: cfgWith("/etc/slurm/slurm.conf", nil),
			wantNotUsed: "slurm.conf /etc/slurm/slurm.conf is cluster lab2's, the jobs are dlrm's: not used ([clusters.dlrm] slurm_conf names the file to use)"},
		{name: "the cluster's own section", cluster: "dlrm",
			cfg:      cfgWith("/etc/slurm/slurm.conf", map[string]config.ClusterConfig{"dlrm": {SlurmConf: "/srv/dlrm/slurm.conf"}}),
			wantPath: "/srv/dlrm/slurm.conf"},
		{name: "another cluster's section does not apply", cluster: "lab2",
			cfg:      cfgWith("/etc/slurm/slurm.conf", map[string]config.ClusterConfig{"dlrm": {SlurmConf: "/srv/dlrm/slurm.conf"}}),
			wantPath: "/etc/slurm/slurm.conf"},
		{name: "a section naming a file of another cluster", cluster: "dlrm",
			cfg:         cfgWith("", map[string]config.ClusterConfig{"dlrm": {SlurmConf: "/srv/other/slurm.conf"}}),
			wantNotUsed: "slurm.conf /srv/other/slurm.conf is cluster lab2's, the jobs are dlrm's: not used"},
		{name: "a section's gres.conf alone keeps slurm_conf", cluster: "dlrm",
			cfg:         cfgWith("/etc/slurm/slurm.conf", map[string]config.ClusterConfig{"dlrm": {GresConf: "/srv/dlrm/gres.conf"}}),
			wantNotUsed: "is cluster lab2's, the jobs are dlrm's: not used"},
		{name: "a file without ClusterName, named for the cluster", cluster: "dlrm",
			cfg:      cfgWith("/etc/slurm/slurm.conf", map[string]config.ClusterConfig{"dlrm": {SlurmConf: "/srv/noname.conf"}}),
			wantPath: "/srv/noname.conf"},
		{name: "a file without ClusterName for jobs named default", cluster: slurmext.DefaultCluster, cfg: cfgWith("/srv/noname.conf", nil), wantPath: "/srv/noname.conf"},
		{name: "a file without ClusterName for a named cluster", cluster: "dlrm", cfg: cfgWith("/srv/noname.conf", nil),
			wantNotUsed: "slurm.conf /srv/noname.conf names no cluster (no ClusterName), the jobs are dlrm's: not used"},
		{name: "no file at the default path", cluster: "dlrm", cfg: cfgWith("/etc/slurm/none.conf", nil)},
		{name: "no slurm_conf at all", cluster: "dlrm", cfg: cfgWith("", nil)},
		{name: "a missing file named for the cluster", cluster: "dlrm",
			cfg:         cfgWith("", map[string]config.ClusterConfig{"dlrm": {SlurmConf: "/srv/gone.conf"}}),
			wantNotUsed: "slurm.conf /srv/gone.conf cannot be read (file does not exist): not used"},
		{name: "an unreadable file", cluster: "dlrm", cfg: cfgWith("/srv/secret.conf", nil),
			wantNotUsed: "slurm.conf /srv/secret.conf cannot be read (permission denied): not used"},
		{name: "the default cluster and another's file", cluster: slurmext.DefaultCluster, cfg: cfgWith("/etc/slurm/slurm.conf", nil),
			wantNotUsed: "is cluster lab2's, the jobs are default's: not used"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, notUsed := BindSlurmConf(tt.cluster, tt.cfg, read)
			if path != tt.wantPath {
				t.Errorf("path = %q, want %q", path, tt.wantPath)
			}
			switch {
			case tt.wantNotUsed == "" && notUsed != "":
				t.Errorf("not used = %q, want none", notUsed)
			case tt.wantNotUsed != "" && !strings.Contains(notUsed, tt.wantNotUsed):
				t.Errorf("not used = %q, want it to contain %q", notUsed, tt.wantNotUsed)
			}
			if path != "" && notUsed != "" {
				t.Errorf("a file both used and not used: %q, %q", path, notUsed)
			}
		})
	}
}

// TestBindConfReadsOnlyTheBoundFiles: the nodes, scheduler settings and
// gres.conf types come from the cluster's own files; another cluster's
// slurm.conf gives nothing, and its gres.conf beside it is not read.
func TestBindConfReadsOnlyTheBoundFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	host := write("host/slurm.conf", "ClusterName=lab2\nPriorityType=priority/multifactor\nNodeName=localhost CPUs=16 Gres=gpu:4,shard:8\n") // another cluster's
	write("host/gres.conf", "NodeName=localhost Name=gpu Type=h100 File=/dev/nvidia[0-3]\n")
	own := write("dlrm/slurm.conf", "ClusterName=dlrm\nPriorityType=priority/multifactor\nNodeName=hn[01-02] Gres=gpu:8\nPartitionName=hn Nodes=hn[01-02] MaxTime=2-00:00:00\n")
	write("dlrm/gres.conf", "NodeName=hn[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-7]\n")
	cfg := config.Default()
	cfg.SlurmConf = host

	c, err := BindConf("dlrm", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Nodes != nil || c.SchedKnown || c.Use.SlurmConf != "" || c.Use.GresConf != "" || !strings.Contains(c.Use.NotUsed, "cluster lab2's, the jobs are dlrm's") {
		t.Errorf("dlrm's jobs with lab2's slurm.conf: %+v, want nothing of it and the line that says so", c)
	}
	if wp := c.WhatIf(); wp.SlurmNodes != nil || wp.SchedKnown {
		t.Errorf("replay parameters %+v, want none from lab2's file", wp)
	}

	cfg.Clusters = map[string]config.ClusterConfig{"dlrm": {SlurmConf: own}}
	if c, err = BindConf("dlrm", cfg); err != nil {
		t.Fatal(err)
	}
	if c.Use.SlurmConf != own || c.Use.NotUsed != "" || !c.SchedKnown || c.Sched.PriorityType != "priority/multifactor" ||
		len(c.Nodes) != 2 || c.Nodes[0].GPUs != 8 || c.Nodes[0].GPUType != "a100" || c.Use.GresConf != filepath.Join(dir, "dlrm", "gres.conf") {
		t.Errorf("dlrm's own files: %+v", c)
	}

	// A slurm.conf that is used and cannot be read is refused, not guessed.
	bad := write("bad/slurm.conf", "ClusterName=bad\nPriorityWeightAge=lots\nNodeName=x Gres=gpu:4\n")
	cfg.Clusters = map[string]config.ClusterConfig{"bad": {SlurmConf: bad}}
	if _, err := BindConf("bad", cfg); !errors.Is(err, slurmext.ErrBadSlurmConf) {
		t.Errorf("a malformed slurm.conf of the cluster: %v, want ErrBadSlurmConf", err)
	}
}

// TestBindModel: the agent's notices take slurm.conf only when it is the
// agent's cluster's, as the analysis does; an Include'd nodes file is read.
func TestBindModel(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conf := write("slurm.conf", "ClusterName=lab2\nInclude nodes.conf\n")
	write("nodes.conf", "NodeName=g1 Gres=gpu:h100:4,shard:16\n")
	cfg := config.Default()
	cfg.SlurmConf = conf
	m, notUsed := BindModel("lab2", cfg)
	if m == nil || notUsed != "" || len(m.Nodes) != 1 || m.Nodes[0].Shards != 16 || m.Nodes[0].GPUType != "h100" {
		t.Fatalf("own cluster: %+v %q", m, notUsed)
	}
	if m, notUsed = BindModel("dlrm", cfg); m != nil || !strings.Contains(notUsed, "is cluster lab2's, the jobs are dlrm's: not used") {
		t.Fatalf("another cluster's slurm.conf: %+v %q, want refused", m, notUsed)
	}
	write("nodes.conf", "NodeName=g1 Gres=gpu:h100:x\n")
	if m, notUsed = BindModel("lab2", cfg); m != nil || !strings.Contains(notUsed, "cannot be read") || !strings.Contains(notUsed, "nodes.conf") {
		t.Fatalf("unparsable nodes.conf: %+v %q", m, notUsed)
	}
}

// TestBindConfAutoDetectTypes: gres.conf with AutoDetect and a Type line
// without File= types the node's GPUs; the count stays slurm.conf's.
func TestBindConfAutoDetectTypes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte("ClusterName=c\nNodeName=n[1-2] Gres=gpu:4\nNodeName=n3 Gres=gpu:2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gres.conf"), []byte("AutoDetect=nvml\nNodeName=n[1-2] Name=gpu Type=a100\nNodeName=n3 Name=gpu Type=l4 Count=1\n"), 0o644)
	cfg := config.Default()
	cfg.SlurmConf = filepath.Join(dir, "slurm.conf")
	c, err := BindConf("c", cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, n := range c.Nodes {
		got = append(got, fmt.Sprintf("%s:%s:%d", n.Name, n.GPUType, n.GPUs))
	}
	// n3: gres.conf counts 1 l4, slurm.conf 2 GPUs: its type is not decided.
	if want := "n1:a100:4 n2:a100:4 n3::2"; strings.Join(got, " ") != want {
		t.Fatalf("nodes %v, want %s", got, want)
	}
}

// TestBindConfConfigless: on a configless node (slurm_conf absent), the
// analysis reads slurmd's cached copy and names it.
func TestBindConfConfigless(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, "spool", "conf-cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cache, "slurm.conf"), []byte("ClusterName=lab\nInclude nodes.conf\n"), 0o644)
	os.WriteFile(filepath.Join(cache, "nodes.conf"), []byte("NodeName=g[1-2] Gres=gpu:l40s:2\n"), 0o644)
	old := ConfRoots
	ConfRoots = slurmext.ConfRoots{RunDir: filepath.Join(root, "run"), SpoolDirs: []string{filepath.Join(root, "spool")}}
	t.Cleanup(func() { ConfRoots = old })
	cfg := config.Default()
	cfg.SlurmConf = filepath.Join(root, "etc", "slurm.conf")
	c, err := BindConf("lab", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Use.SlurmConf != filepath.Join(cache, "slurm.conf") || len(c.Nodes) != 2 || c.Nodes[1].GPUType != "l40s" {
		t.Fatalf("configless: %+v", c)
	}
}
