package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRunningJobShownWhileItRuns (issue #30, "What must be shown" 2):
// under the real test cluster, a job that holds one GPU is shown while it
// runs as RUNNING with its GPU — in gpuprof jobs, show and the TUI (in
// tmux) — from what Slurm's prolog gave the node, before any scheduler
// record exists (jobcomp writes it at the end). Its name, which comes
// from squeue at read time, is TestRunningJobNameElapsedClass's.
func TestRunningJobShownWhileItRuns(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	requireTmux(t)
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := sharedCluster(t)
	c.hooks(t, bin, cfgPath)
	checkExampleHooks(t, c.cluster)
	simDir := filepath.Join(work, "sim")
	if err := os.Mkdir(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(simDir, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := writeCaptureConfig(t, cfgPath, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"))
	agent := startProcess(t, filepath.Join(work, "agent.out"), os.Environ(), bin, "agent", "--config", cfgPath)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{filepath.Join(work, "agent.out"), cfg.LogFile} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 60 lines)\n%s", f, lastLines(string(data), 60))
				}
			}
		}
	})
	waitAgent(t, agent, cfg.Socket, filepath.Join(work, "agent.out"))

	id := c.sbatch(t, "-J", "e2e-running", "--gres=gpu:1", "-o", "/dev/null",
		"--chdir", work, "--export=ALL,GPUPROF_CONFIG="+cfgPath, "--wrap", "sleep 600")
	// The scope's cleanup cancels it.

	// Running, and the agent has the prolog's record of it.
	deadline := time.Now().Add(queueTimeout)
	for {
		state, err := c.jobState(id)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := gpuprofOutput(bin, "show", id, "--config", cfgPath, "--json")
		var vs []struct {
			State *string `json:"state"`
			Sched any     `json:"sched"`
		}
		if state == "RUNNING" && json.Unmarshal(out, &vs) == nil && len(vs) == 1 && vs[0].State != nil {
			if vs[0].Sched != nil {
				t.Fatalf("job %s has a scheduler record while it runs; this test wants the prolog's view alone", id)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: state %q, show --json %s; want it RUNNING and known to the agent", id, state, out)
		}
		time.Sleep(300 * time.Millisecond)
	}

	t.Run("jobs", func(t *testing.T) {
		out, err := gpuprofOutput(bin, "jobs", "--config", cfgPath, "--format", "jobid,state,partition,gpus")
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^` + id + ` +RUNNING +` + c.Name + ` +1/\S+$`).Match(out) {
			t.Errorf("gpuprof jobs: want job %s RUNNING in partition %s with GPUS 1/…:\n%s", id, c.Name, out)
		}
	})
	t.Run("show", func(t *testing.T) {
		out, err := gpuprofOutput(bin, "show", id, "--config", cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"State      RUNNING", "Partition " + c.Name, "GPUs allocated 1 (SLURM_JOB_GPUS)", "GPUs 1/"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("gpuprof show %s lacks %q:\n%s", id, want, out)
			}
		}
	})
	t.Run("tui", func(t *testing.T) {
		term := startTmux(t, 120, 30, []string{"NO_COLOR=1"}, bin+" tui --config "+cfgPath)
		row := regexp.MustCompile(`(?m)^[›> ]*` + id + `\b.*RUNNING.* 1/\S+ `)
		term.waitFor("job "+id+" RUNNING with 1 GPU in the list", func(s string) bool { return row.MatchString(s) })
		term.keys("Enter")
		term.waitFor("the detail of job "+id, containsAll("job "+id, "state RUNNING", "partition "+c.Name, "GPUs 1 requested"))
	})
}

// checkExampleHooks: the test cluster runs gpuprof's hooks as the
// package's own example slurm.conf says (contrib/slurm/slurm.conf.example,
// /usr/share/doc/gpuprof/examples/slurm.conf in the package): each of its
// Prolog=, Epilog=, PrologFlags= and PrologEpilogTimeout= lines is in the
// cluster's slurm.conf, the package's /usr/lib/gpuprof/<hook>.sh there
// the same wrapper generated in DIR/hooks/<hook> (testcluster.sh).
func checkExampleHooks(t *testing.T, c *cluster) {
	t.Helper()
	conf, err := os.ReadFile(filepath.Join(c.Dir, "etc", "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(conf), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	f, err := os.Open(filepath.Join(moduleRoot(t), "contrib", "slurm", "slurm.conf.example"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		key, value, ok := strings.Cut(line, "=")
		if !ok || (key != "Prolog" && key != "Epilog" && key != "PrologFlags" && key != "PrologEpilogTimeout") {
			continue
		}
		if hook, ok := strings.CutPrefix(value, "/usr/lib/gpuprof/"); ok {
			line = key + "=" + filepath.Join(c.Dir, "hooks", strings.TrimSuffix(hook, ".sh"))
		}
		n++
		if !have[line] {
			t.Errorf("the test cluster's slurm.conf lacks the example's %q:\n%s", line, conf)
		}
	}
	if n < 4 {
		t.Errorf("the example slurm.conf has %d of gpuprof's hook lines, want Prolog, Epilog, PrologFlags, PrologEpilogTimeout", n)
	}
}
