package jobsource

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
)

// fakeScontrol puts on PATH a scontrol that prints the answers the real
// test Slurm (22.05.8) gave (slurmext/testdata/scontrol), with ClusterName
// changed to cluster, or that fails or hangs, and records each call in
// DIR/calls.
func fakeScontrol(t *testing.T, cluster, mode string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "slurmext", "testdata", "scontrol")
	for name, file := range map[string]string{"config": "gpuproftest-22.05.8-config.txt", "nodes": "gpuproftest-22.05.8-nodes-o.txt", "partitions": "gpuproftest-22.05.8-partitions-o.txt"} {
		b, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		if name == "config" {
			b = []byte(strings.Replace(string(b), "= gpuproftest", "= "+cluster, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body := map[string]string{
		"ok":    `case "$2" in config) cat "$D/config";; nodes) cat "$D/nodes";; partitions) cat "$D/partitions";; *) exit 1;; esac`,
		"fail":  `echo "slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)" >&2; exit 1`,
		"hang":  `exec sleep 30`,
		"nodes": `case "$2" in config) cat "$D/config";; *) echo "slurm_load_node error: Socket timed out" >&2; exit 1;; esac`,
	}[mode]
	script := "#!/bin/sh\nD=" + dir + "\necho \"$*\" >> \"$D/calls\"\n" + body + "\n"
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "scontrol"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// filesConf writes a slurm.conf of cluster gpuproftest whose node and
// partition differ from the live cluster's, so a blend would show.
func filesConf(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "slurm.conf")
	conf := "ClusterName=gpuproftest\nPriorityType=priority/multifactor\nNodeName=filenode Gres=gpu:a100:2\nPartitionName=files Nodes=filenode MaxTime=1:00:00\n"
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBindConfLiveSource(t *testing.T) {
	liveNodes := []slurmext.NodeGres{{Name: "localhost", GPUs: 4, GPUsByType: []slurmext.TypeCount{{Type: "", Count: 4}}, Shards: 32}}
	fileNodes := []slurmext.NodeGres{{Name: "filenode", GPUs: 2, GPUType: "a100", GPUsByType: []slurmext.TypeCount{{Type: "a100", Count: 2}}}}
	for _, tt := range []struct {
		name, source, liveCluster, mode string
		noScontrol                      bool
		wantSource                      string
		wantNodes                       []slurmext.NodeGres
		wantPart                        string
		wantNote                        string // part of NotUsed; "" none
		wantCalls                       string // the calls made, one a line
	}{
		{name: "files by default: scontrol is not asked", source: "", liveCluster: "gpuproftest", mode: "ok",
			wantSource: "", wantNodes: fileNodes, wantPart: "files", wantCalls: ""},
		{name: "scontrol of the same cluster: all from it", source: "scontrol", liveCluster: "gpuproftest", mode: "ok",
			wantSource: "scontrol", wantNodes: liveNodes, wantPart: "gpu",
			wantCalls: "show config\nshow nodes -o\nshow partitions -o\n"},
		{name: "auto, same cluster", source: "auto", liveCluster: "gpuproftest", mode: "ok",
			wantSource: "scontrol", wantNodes: liveNodes, wantPart: "gpu",
			wantCalls: "show config\nshow nodes -o\nshow partitions -o\n"},
		{name: "another cluster's slurmctld: the files, said", source: "scontrol", liveCluster: "lab2", mode: "ok",
			wantSource: "files", wantNodes: fileNodes, wantPart: "files",
			wantNote:  "the live cluster (scontrol) is cluster lab2's, the jobs are gpuproftest's: not used, the files are",
			wantCalls: "show config\n"},
		{name: "scontrol fails: the files, said", source: "scontrol", liveCluster: "gpuproftest", mode: "fail",
			wantSource: "files", wantNodes: fileNodes, wantPart: "files",
			wantNote:  "scontrol show config) failed: exit status 1: slurm_load_ctl_conf error: Unable to contact slurm controller",
			wantCalls: "show config\n"},
		{name: "show nodes fails after config: nothing of it kept", source: "auto", liveCluster: "gpuproftest", mode: "nodes",
			wantSource: "files", wantNodes: fileNodes, wantPart: "files",
			wantNote:  "scontrol show nodes) failed",
			wantCalls: "show config\nshow nodes -o\n"},
		{name: "scontrol hangs: bounded, the files", source: "scontrol", liveCluster: "gpuproftest", mode: "hang",
			wantSource: "files", wantNodes: fileNodes, wantPart: "files",
			wantNote:  "no answer within 300ms",
			wantCalls: "show config\n"},
		{name: "auto without scontrol: the files, quietly", source: "auto", noScontrol: true,
			wantSource: "files", wantNodes: fileNodes, wantPart: "files"},
		{name: "scontrol asked for and absent: said", source: "scontrol", noScontrol: true,
			wantSource: "files", wantNodes: fileNodes, wantPart: "files", wantNote: "the live cluster (scontrol show config) failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			old := ScontrolTimeout
			if tt.mode == "hang" {
				ScontrolTimeout = 300 * time.Millisecond
			}
			defer func() { ScontrolTimeout = old }()
			dir := ""
			if tt.noScontrol {
				t.Setenv("PATH", t.TempDir())
			} else {
				dir = fakeScontrol(t, tt.liveCluster, tt.mode)
			}
			cfg := config.Default()
			cfg.SlurmConf, cfg.SlurmSource = filesConf(t), tt.source
			start := time.Now()
			c, err := BindConf("gpuproftest", cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
			if c.Use.Source != tt.wantSource {
				t.Errorf("source %q, want %q", c.Use.Source, tt.wantSource)
			}
			if !reflect.DeepEqual(c.Nodes, tt.wantNodes) {
				t.Errorf("nodes %+v, want %+v", c.Nodes, tt.wantNodes)
			}
			if len(c.Sched.Partitions) != 1 || c.Sched.Partitions[0].Name != tt.wantPart {
				t.Errorf("partitions %+v, want only %s", c.Sched.Partitions, tt.wantPart)
			}
			if tt.wantSource == "scontrol" {
				if c.Use.SlurmConf != "" || c.Use.GresConf != "" || c.Sched.PriorityType != "priority/basic" {
					t.Errorf("blended: use %+v, PriorityType %s (the files' is multifactor)", c.Use, c.Sched.PriorityType)
				}
			} else if c.Use.SlurmConf != cfg.SlurmConf {
				t.Errorf("slurm_conf %q", c.Use.SlurmConf)
			}
			if tt.wantNote == "" && c.Use.NotUsed != "" || !strings.Contains(c.Use.NotUsed, tt.wantNote) {
				t.Errorf("not used %q, want %q", c.Use.NotUsed, tt.wantNote)
			}
			if dir != "" {
				calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
				if string(calls) != tt.wantCalls {
					t.Errorf("calls %q, want %q", calls, tt.wantCalls)
				}
			}
		})
	}
}
