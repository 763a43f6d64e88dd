package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlurmFacts checks, on the Slurm at hand, the behaviour gpuprof is
// built on (see the design's slurm-facts): what the prolog and epilog see of
// a job's GPUs and exit, and what accounting records. A Slurm upgrade that
// changes any of it fails here first, not in a capture test's symptoms.
func TestSlurmFacts(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	c := startCluster(t, clusterOptions{Accounting: true, HookEnv: true})
	tests := []struct {
		name   string
		sbatch []string
		// Variables each hook must see, exactly; "" means absent.
		wantProlog, wantEpilog map[string]string
		wantState, wantExit    string // sacct State and ExitCode
		wantTRES               string // in sacct AllocTRES
	}{
		{
			name:   "two-gpus",
			sbatch: []string{"--gres=gpu:2", "--wrap", "true"},
			wantProlog: map[string]string{
				"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1",
				"SLURMD_NODENAME": "localhost", "SLURM_CLUSTER_NAME": "gpuproftest", "SLURM_JOB_UID": "0",
				"SLURM_JOB_ACCOUNT": "root", "SLURM_JOB_PARTITION": "gpu", "PATH": "", "SLURM_JOB_NAME": "",
			},
			wantEpilog: map[string]string{
				"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_GPUS": "0,1",
				"SLURM_JOB_EXIT_CODE": "0", "SLURM_JOB_EXIT_CODE2": "0:0", "PATH": "",
			},
			wantState: "COMPLETED", wantExit: "0:0", wantTRES: "gres/gpu=2",
		},
		{
			// Shards: the hooks see the GPU behind them and no shard count,
			// so they cannot tell a shard job from a one-GPU job.
			name:   "shards-fail",
			sbatch: []string{"--gres=shard:3", "--wrap", "exit 3"},
			wantProlog: map[string]string{
				"SLURM_JOB_GPUS": "0", "CUDA_VISIBLE_DEVICES": "0", "SLURM_SHARDS_ON_NODE": "",
			},
			wantEpilog: map[string]string{
				"SLURM_JOB_EXIT_CODE": "768", "SLURM_JOB_EXIT_CODE2": "3:0", "SLURM_JOB_GPUS": "0",
			},
			wantState: "FAILED", wantExit: "3:0", wantTRES: "gres/shard=3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One at a time, so that each job gets the first GPUs.
			id := c.run(t, "sbatch", append([]string{"--parsable", "-o", "/dev/null", "-J", tt.name}, tt.sbatch...)...)
			c.waitQueueEmpty(t, []string{id}, time.Minute)
			for _, h := range []struct {
				kind string
				want map[string]string
			}{{"prolog", tt.wantProlog}, {"epilog", tt.wantEpilog}} {
				env := waitHookEnv(t, filepath.Join(c.Dir, "hooks", "env", h.kind+"."+id))
				for k, want := range h.want {
					if got := env[k]; got != want {
						t.Errorf("%s: %s=%q, want %q", h.kind, k, got, want)
					}
				}
			}
			// The job reaches slurmdbd shortly after it ends.
			deadline := time.Now().Add(30 * time.Second)
			for {
				out := c.run(t, "sacct", "-n", "-P", "-X", "-j", id, "-o", "State,ExitCode,AllocTRES")
				f := strings.Split(out, "|")
				if len(f) == 3 && f[0] == tt.wantState && f[1] == tt.wantExit && strings.Contains(f[2], tt.wantTRES) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("sacct -j %s: %q, want %s|%s|...%s...", id, out, tt.wantState, tt.wantExit, tt.wantTRES)
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	}
}

// waitHookEnv reads an environment saved by a hook; the epilog may finish
// a moment after the job leaves the queue.
func waitHookEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			env := map[string]string{}
			for line := range strings.SplitSeq(string(data), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					env[k] = v
				}
			}
			return env
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook environment %s: %v", path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
