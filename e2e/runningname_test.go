package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRunningJobNameElapsedClass (issue #40, "What must be shown" 3):
// under the real test cluster, a running job that holds one GPU it never
// uses shows its name (from squeue: slurmd gives the prolog none) and an
// elapsed time equal to squeue's TIME to the second, in gpuprof jobs,
// show, show --json and the TUI's list; it is idle_allocation while it runs and stays
// idle_allocation once it ended after well under classes.short_job_max
// (it was short_debug then, before one rule decided both).
func TestRunningJobNameElapsedClass(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := sharedCluster(t)
	c.hooks(t, bin, cfgPath)
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
	// gpuprof, as a user runs it: its squeue reaches the test cluster.
	gpuprof := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(args, "--config", cfgPath)...)
		cmd.Env = c.env()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpuprof %v: %v", args, err)
		}
		return string(out)
	}

	const name = "e2e-idle" // whole in jobs' 10-cell NAME column
	id := c.sbatch(t, "-J", name, "--gres=gpu:1", "-o", "/dev/null",
		"--chdir", work, "--export=ALL,GPUPROF_CONFIG="+cfgPath, "--wrap", "sleep 45")
	// The scope's cleanup cancels it.

	// Running, known to the agent, with a few readings flushed.
	deadline := time.Now().Add(queueTimeout)
	for {
		state, err := c.jobState(id)
		if err != nil {
			t.Fatal(err)
		}
		var vs []struct {
			Profiles []struct {
				LastSample string `json:"last_sample"`
			} `json:"profiles"`
		}
		out, _ := gpuprofOutput(bin, "show", id, "--config", cfgPath, "--json")
		if state == "RUNNING" && json.Unmarshal(out, &vs) == nil && len(vs) == 1 && len(vs[0].Profiles) == 1 && vs[0].Profiles[0].LastSample != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: state %q, show --json %s", id, state, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(4 * time.Second) // past the agent's flush (2 s), so the last reading lags the clock

	// squeue's TIME (%M, [D-][HH:]MM:SS) in seconds.
	squeueTime := func() time.Duration {
		out := strings.TrimSpace(c.run(t, "squeue", "--noheader", "--jobs="+id, "--format=%M"))
		var h, m, s int
		parts := strings.Split(out, ":")
		switch len(parts) {
		case 2:
			fmt.Sscanf(out, "%d:%d", &m, &s)
		case 3:
			fmt.Sscanf(out, "%d:%d:%d", &h, &m, &s)
		default:
			t.Fatalf("squeue TIME %q", out)
		}
		return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
	}
	near := func(what string, got, want time.Duration) {
		t.Helper()
		if d := got - want; d < -2*time.Second || d > 2*time.Second {
			t.Errorf("%s: elapsed %s, squeue's TIME %s", what, got, want)
		}
	}

	t.Run("jobs", func(t *testing.T) {
		want := squeueTime()
		out := gpuprof("jobs", "--format", "jobid,name,state,elapsed")
		m := regexp.MustCompile(`(?m)^` + id + ` +` + name + ` +RUNNING +(\d\d):(\d\d):(\d\d)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("gpuprof jobs: want job %s named %s RUNNING with its elapsed time:\n%s", id, name, out)
		}
		var h, mi, s int
		fmt.Sscanf(m[1]+" "+m[2]+" "+m[3], "%d %d %d", &h, &mi, &s)
		near("jobs", time.Duration(h)*time.Hour+time.Duration(mi)*time.Minute+time.Duration(s)*time.Second, want)
	})
	t.Run("json", func(t *testing.T) {
		want := squeueTime()
		var vs []struct {
			Running *struct {
				Name string `json:"name"`
			} `json:"running"`
			ElapsedSeconds *float64 `json:"elapsed_seconds"`
		}
		out := gpuprof("show", id, "--json")
		if err := json.Unmarshal([]byte(out), &vs); err != nil || len(vs) != 1 || vs[0].Running == nil || vs[0].ElapsedSeconds == nil {
			t.Fatalf("show --json: %v\n%s", err, out)
		}
		if vs[0].Running.Name != name {
			t.Errorf("show --json: running.name %q, want %q", vs[0].Running.Name, name)
		}
		near("show --json", time.Duration(*vs[0].ElapsedSeconds*float64(time.Second)), want)
	})
	t.Run("show", func(t *testing.T) {
		out := gpuprof("show", id)
		for _, want := range []string{name, "State      RUNNING", "class idle_allocation"} {
			if !strings.Contains(out, want) {
				t.Errorf("gpuprof show %s lacks %q:\n%s", id, want, out)
			}
		}
	})

	t.Run("tui", func(t *testing.T) {
		requireTmux(t)
		term := startTmux(t, 120, 24, append([]string{"NO_COLOR=1"}, "SLURM_CONF="+c.Conf),
			shellQuote(bin)+" tui --config "+shellQuote(cfgPath))
		// The job's row carries the name squeue gives it.
		term.waitFor("the running job's row with its name", func(s string) bool {
			for line := range strings.SplitSeq(s, "\n") {
				if strings.Contains(line, id) && strings.Contains(line, name) {
					return true
				}
			}
			return false
		})
		term.keys("q")
	})

	c.waitQueueEmpty(t, []string{id}, queueTimeout)
	t.Run("class kept at the end", func(t *testing.T) {
		deadline := time.Now().Add(time.Minute)
		for {
			out := gpuprof("show", id)
			if strings.Contains(out, "State      COMPLETED") && strings.Contains(out, "profile finished") {
				if !strings.Contains(out, "class idle_allocation") {
					t.Errorf("the finished job's class is not idle_allocation:\n%s", out)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: no jobcomp record or finished profile after a minute:\n%s", id, out)
			}
			time.Sleep(time.Second)
		}
	})
}
