package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
)

// TestLiveSlurmSource: with slurm_source = "scontrol", `gpuprof plan
// --json` on the shared test cluster's host takes the nodes and
// partitions from its slurmctld (conf.source "scontrol", no file named)
// and finds the same nodes and inventory as the files give (the
// partitions the tests' scopes create at run time, which no file lists,
// change neither); for another cluster's jobs the live cluster is not
// used, and the answer says so. It submits nothing: no scope, no lease.
func TestLiveSlurmSource(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	c := sharedConf(t)
	bin := gpuprofBinary(t)
	dir := t.TempDir()

	plan := func(t *testing.T, cluster, source string) map[string]json.RawMessage {
		t.Helper()
		cfg := config.Default()
		cfg.Cluster, cfg.DB, cfg.SpoolDir = cluster, filepath.Join(dir, "gpuprof.db"), filepath.Join(dir, "spool")
		cfg.SlurmConf, cfg.SlurmSource = c.Conf, source
		path := writeConfigFile(t, filepath.Join(dir, cluster+"-"+source+".toml"), cfg)
		var out []byte
		for _, args := range [][]string{{"ingest", "--config", path}, {"plan", "--config", path, "--json"}} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = c.env()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			var err error
			out, err = cmd.Output()
			cancel()
			if err != nil {
				t.Fatalf("gpuprof %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
		}
		var ans map[string]json.RawMessage
		if err := json.Unmarshal(out, &ans); err != nil {
			t.Fatalf("plan --json: %v\n%s", err, out)
		}
		return ans
	}
	type conf struct {
		Cluster   string `json:"cluster"`
		SlurmConf string `json:"slurm_conf"`
		GresConf  string `json:"gres_conf"`
		Source    string `json:"source"`
		NotUsed   string `json:"not_used"`
	}
	type inv struct {
		CurrentGPUs int `json:"current_gpus"`
		Inventory   struct {
			Source string `json:"source"`
			Nodes  int    `json:"nodes"`
			GPUs   int    `json:"gpus"`
		} `json:"inventory"`
	}
	read := func(t *testing.T, ans map[string]json.RawMessage) (conf, inv) {
		t.Helper()
		var cf conf
		var p inv
		if err := json.Unmarshal(ans["conf"], &cf); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ans["plan"], &p); err != nil {
			t.Fatal(err)
		}
		return cf, p
	}

	live, files := plan(t, "gpuproftest", "scontrol"), plan(t, "gpuproftest", "files")
	lc, lp := read(t, live)
	fc, fp := read(t, files)
	if lc.Source != "scontrol" || lc.SlurmConf != "" || lc.GresConf != "" || lc.NotUsed != "" {
		t.Errorf("slurm_source=scontrol: conf %+v, want source scontrol and no file", lc)
	}
	if fc.Source != "" || fc.SlurmConf != c.Conf {
		t.Errorf("slurm_source=files: conf %+v, want the files (%s) and no source field", fc, c.Conf)
	}
	if !bytes.Equal(live["nodes"], files["nodes"]) {
		t.Errorf("nodes differ:\nscontrol %s\nfiles    %s", live["nodes"], files["nodes"])
	}
	var nodes []struct {
		Name   string `json:"name"`
		GPUs   int    `json:"gpus"`
		Shards int    `json:"shards"`
	}
	if err := json.Unmarshal(live["nodes"], &nodes); err != nil || len(nodes) != 1 || nodes[0].Name != "localhost" || nodes[0].GPUs != 4 || nodes[0].Shards != 32 {
		t.Errorf("scontrol's nodes %s (%v), want the test node localhost's 4 GPUs and 32 shards", live["nodes"], err)
	}
	if lp.CurrentGPUs != 4 || fp.CurrentGPUs != 4 || lp.Inventory.GPUs != fp.Inventory.GPUs || lp.Inventory.Nodes != fp.Inventory.Nodes {
		t.Errorf("inventory: scontrol %+v, files %+v, want the same 4 GPUs", lp, fp)
	}
	if lp.Inventory.Source != "scontrol of cluster gpuproftest" || fp.Inventory.Source != "slurm.conf of cluster gpuproftest" {
		t.Errorf("inventory sources %q and %q", lp.Inventory.Source, fp.Inventory.Source)
	}

	other, _ := read(t, plan(t, "lab2", "scontrol"))
	if other.Source == "scontrol" || !strings.Contains(other.NotUsed, "the live cluster (scontrol) is cluster gpuproftest's, the jobs are lab2's: not used") {
		t.Errorf("another cluster's jobs: conf %+v, want the live cluster not used, said", other)
	}
}
