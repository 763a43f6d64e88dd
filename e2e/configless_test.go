package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestConfiglessNode: on a configless node (slurmd started with
// --conf-server, no slurm.conf on the node) the agent and the hooks find
// the configuration where slurmd keeps it — the hooks through the
// SLURM_CONF slurmd hands them (its conf-cache), the agent and the
// commands through /run/slurm/conf, the link slurmd makes to that cache —
// and say which file they read. The jobs are recorded as on a node with
// its own files: the GPUs Slurm gave each job, mapped through the cached
// gres.conf, are the ones it used.
func TestConfiglessNode(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := startCluster(t, clusterOptions{GPUProfBin: bin, GPUProfConfig: cfgPath, Configless: true})
	cache := filepath.Join(c.Dir, "spool", "slurmd", slurmext.ConfCacheDir)
	if _, err := os.Stat(filepath.Join(cache, "slurm.conf")); err != nil {
		t.Fatalf("slurmd kept no configless copy: %v", err)
	}
	// slurmd runs in a mount namespace of its own (testcluster.sh), so its
	// /run/slurm/conf is seen by no other test: the agent and the
	// commands here enter it, as on a real node they share the host's.
	pidText, err := os.ReadFile(filepath.Join(c.Dir, "run", "slurmd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	onNode := []string{"nsenter", "--mount=/proc/" + strings.TrimSpace(string(pidText)) + "/ns/mnt", "--"}
	if dst, err := exec.Command(onNode[0], append(onNode[1:], "readlink", slurmext.ConfiglessRunDir)...).Output(); err != nil ||
		strings.TrimSpace(string(dst)) != cache {
		t.Fatalf("%s -> %q (%v), want slurmd's link to its cache %s", slurmext.ConfiglessRunDir, dst, err, cache)
	}

	simDir := filepath.Join(work, "sim")
	outDir := filepath.Join(work, "out")
	for _, d := range []string{simDir, outDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// The node's gpuprof.toml names /etc/slurm/slurm.conf, as the
	// example does, and no gres.conf: neither exists on a configless node.
	absent := filepath.Join(work, "etc-slurm", "slurm.conf")
	logFile := filepath.Join(work, "gpuprof.log")
	socket := filepath.Join(work, "agent.sock")
	text := fmt.Sprintf(`cluster = "gpuproftest"
node = "localhost"
slurm_conf = %q
db = %q
spool_dir = %q
socket = %q
query_socket = %q
log_file = %q

[agent]
gpu = "sim"
interval = %q
flush_interval = "2s"

[hooks]
deadline = "2s"

[sim]
dir = %q
gpus = 4
model = "NVIDIA H100 80GB HBM3"
memory = "80GiB"
`, absent, filepath.Join(work, "gpuprof.db"), filepath.Join(work, "spool"), socket, filepath.Join(work, "run", "query.sock"),
		logFile, interval.String(), simDir)
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}

	// The agent's environment is a service's: no SLURM_CONF.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_CONF=") {
			env = append(env, kv)
		}
	}
	agentOut := filepath.Join(work, "agent.out")
	agent := startProcess(t, agentOut, env, onNode[0], append(onNode[1:], bin, "agent", "--config", cfgPath)...)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{agentOut, logFile, filepath.Join(c.Dir, "hooks", "hooks.log")} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 60 lines)\n%s", f, lastLines(string(data), 60))
				}
			}
		}
	})
	waitAgent(t, agent, socket, agentOut)
	uuidByMinor := simUUIDs(t, simDir)

	var jobs []captureJob
	for _, j := range captureJobs() {
		switch j.name {
		case "two-gpus", "idle-allocation", "plain-01", "plain-02":
			jobs = append(jobs, j)
		}
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		args := append([]string{"--parsable", "-J", "e2e-cl-" + j.name, "-o", filepath.Join(outDir, "%j.out"),
			"--chdir", work, "--export=ALL,GPUPROF_CONFIG=" + cfgPath}, j.sbatch...)
		args = append(args, "--wrap", j.command(bin))
		ids[i] = c.run(t, "sbatch", args...)
	}
	c.waitQueueEmpty(t, ids, queueTimeout)
	waitProfiles(t, bin, cfgPath, ids)
	for i, j := range jobs {
		t.Run(j.name, func(t *testing.T) {
			output, _ := os.ReadFile(filepath.Join(outDir, ids[i]+".out"))
			got := showJob(t, bin, cfgPath, ids[i])
			if len(got) != 1 {
				t.Fatalf("job %s: show returned %d profiles, want 1", ids[i], len(got))
			}
			checkProfile(t, j, &got[0], jobGPUs(t, string(output)), uuidByMinor)
		})
	}

	t.Run("which-file", func(t *testing.T) {
		cached := filepath.Join(cache, "slurm.conf")
		run := filepath.Join(slurmext.ConfiglessRunDir, "slurm.conf")
		deadline := time.Now().Add(10 * time.Second)
		var logs string
		for {
			a, _ := os.ReadFile(agentOut)
			l, _ := os.ReadFile(logFile)
			logs = string(a) + string(l)
			if strings.Contains(logs, cached) && strings.Contains(logs, run) || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		// The agent: /run/slurm/conf (it has no SLURM_CONF).
		if !logLineWith(logs, "slurm.conf", "file="+run) {
			t.Errorf("no log line of the agent's names %s as the slurm.conf it read", run)
		}
		// The hooks: slurmd's SLURM_CONF, its cache.
		if !logLineWith(logs, "slurm.conf", "file="+cached, "source=SLURM_CONF") {
			t.Errorf("no hook's log line names %s (slurmd's SLURM_CONF) as the slurm.conf it read", cached)
		}
		// The commands: the answer names the cached file it used.
		cmd := exec.Command(onNode[0], append(onNode[1:], bin, "profiles", "--config", cfgPath, "--json")...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpuprof profiles --json on the node: %v", err)
		}
		var ans struct {
			Conf struct {
				Cluster   string `json:"cluster"`
				SlurmConf string `json:"slurm_conf"`
				NotUsed   string `json:"not_used"`
			} `json:"conf"`
		}
		if err := json.Unmarshal(out, &ans); err != nil {
			t.Fatalf("profiles --json: %v\n%s", err, out)
		}
		if ans.Conf.SlurmConf != run || ans.Conf.NotUsed != "" || ans.Conf.Cluster != "gpuproftest" {
			t.Errorf("profiles --json conf = %+v, want slurm_conf %s used for cluster gpuproftest", ans.Conf, run)
		}
	})

	// The notices take the cluster's slurm.conf bound as the analysis
	// binds it: a second agent, its notices on, whose slurm_conf names
	// another cluster's file (a foreign slurm.conf on the host), says at
	// its start that it does not use it, as the commands' conf.not_used.
	t.Run("notices-refuse-foreign-conf", func(t *testing.T) {
		dir := t.TempDir()
		foreign := filepath.Join(dir, "slurm.conf")
		if err := os.WriteFile(foreign, []byte("ClusterName=othercluster\nNodeName=localhost Gres=gpu:8,shard:64\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sim2 := filepath.Join(dir, "sim")
		if err := os.Mkdir(sim2, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg2 := filepath.Join(dir, "gpuprof.toml")
		log2 := filepath.Join(dir, "gpuprof.log")
		sock2 := filepath.Join(dir, "agent.sock")
		text := fmt.Sprintf(`cluster = "gpuproftest"
node = "localhost"
slurm_conf = %q
db = %q
spool_dir = %q
socket = %q
query_socket = %q
log_file = %q

[agent]
gpu = "sim"
interval = "1s"

[sim]
dir = %q
gpus = 4

[notices]
enabled = true
from = "gpuprof <gpuprof@example.org>"
address = "{user}@example.org"
sendmail = "/bin/true"
squeue = "/usr/bin/squeue"
`, foreign, filepath.Join(dir, "gpuprof.db"), filepath.Join(dir, "spool"), sock2, filepath.Join(dir, "run", "query.sock"), log2, sim2)
		if err := os.WriteFile(cfg2, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out2 := filepath.Join(dir, "agent.out")
		a2 := startProcess(t, out2, env, onNode[0], append(onNode[1:], bin, "agent", "--config", cfg2)...)
		waitAgent(t, a2, sock2, out2)
		var logs string
		for deadline := time.Now().Add(10 * time.Second); ; {
			a, _ := os.ReadFile(out2)
			l, _ := os.ReadFile(log2)
			logs = string(a) + string(l)
			if strings.Contains(logs, "othercluster") || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !logLineWith(logs, "notices:", foreign, "othercluster", "not used") {
			t.Errorf("the agent's notices took another cluster's slurm.conf without a word; its log:\n%s", lastLines(logs, 30))
		}
	})

	t.Run("node-healthy", func(t *testing.T) {
		if !agent.running() {
			t.Errorf("the agent exited during the run: %v", agent.err)
		}
		if drained := c.run(t, "sinfo", "-R", "-h"); drained != "" {
			t.Errorf("sinfo -R: %s, want no drained node", drained)
		}
	})
}

// logLineWith reports whether one line of logs holds every one of parts.
func logLineWith(logs string, parts ...string) bool {
	for line := range strings.SplitSeq(logs, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
