package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlurmFacts checks, on the Slurm at hand, the behaviour gpuprof is
// built on (see the design's slurm-facts): what the prolog and epilog see of
// a job's GPUs and exit, and what accounting records. A Slurm upgrade that
// changes any of it fails here first, not in a capture test's symptoms.
// It runs on the shared cluster, in a partition and account of its own.
func TestSlurmFacts(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	c := sharedCluster(t)
	tests := []struct {
		name   string
		sbatch []string
		// Variables each hook must see, exactly; "" means absent.
		wantProlog, wantEpilog map[string]string
		wantState, wantExit    string // sacct State and ExitCode
		wantTRES               string // in sacct AllocTRES
		gpus                   int    // GPUs behind the job's GRES
	}{
		{
			name:   "two-gpus",
			sbatch: []string{"--gres=gpu:2", "--wrap", "sleep 3"}, // long enough for scontrol to show its GPUs
			wantProlog: map[string]string{
				"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_GPUS": gpusIdx, "CUDA_VISIBLE_DEVICES": gpusIdx,
				"SLURMD_NODENAME": "localhost", "SLURM_CLUSTER_NAME": "gpuproftest", "SLURM_JOB_UID": "0",
				"SLURM_JOB_ACCOUNT": c.Name, "SLURM_JOB_PARTITION": c.Name, "PATH": "", "SLURM_JOB_NAME": "",
			},
			wantEpilog: map[string]string{
				"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_GPUS": gpusIdx,
				"SLURM_JOB_EXIT_CODE": "0", "SLURM_JOB_EXIT_CODE2": "0:0", "PATH": "",
			},
			wantState: "COMPLETED", wantExit: "0:0", wantTRES: "gres/gpu=2", gpus: 2,
		},
		{
			// Shards: the hooks see the GPU behind them and no shard count,
			// so they cannot tell a shard job from a one-GPU job.
			name:   "shards-fail",
			sbatch: []string{"--gres=shard:3", "--wrap", "sleep 3; exit 3"},
			wantProlog: map[string]string{
				"SLURM_JOB_GPUS": gpusIdx, "CUDA_VISIBLE_DEVICES": gpusIdx, "SLURM_SHARDS_ON_NODE": "",
			},
			wantEpilog: map[string]string{
				"SLURM_JOB_EXIT_CODE": "768", "SLURM_JOB_EXIT_CODE2": "3:0", "SLURM_JOB_GPUS": gpusIdx,
			},
			wantState: "FAILED", wantExit: "3:0", wantTRES: "gres/shard=3", gpus: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Other tests' jobs share the node, so which GPUs a job gets
			// is slurmctld's word: its GRES index list (scontrol -d).
			id := c.sbatch(t, append([]string{"-o", "/dev/null", "-J", tt.name}, tt.sbatch...)...)
			idx := gresIndex(t, c.cluster, id)
			c.waitQueueEmpty(t, []string{id}, queueTimeout)
			if idx == "" {
				// No index list (a shard job's GRES): the GPUs the
				// prolog saw, which every hook variable must agree with.
				idx = waitHookEnv(t, filepath.Join(c.Dir, "hooks", "env", "prolog."+id))["SLURM_JOB_GPUS"]
				if !regexp.MustCompile(`^[0-3](,[0-3])*$`).MatchString(idx) || strings.Count(idx, ",")+1 != tt.gpus {
					t.Errorf("prolog: SLURM_JOB_GPUS=%q, want %d GPU indices of the node", idx, tt.gpus)
				}
			}
			for _, h := range []struct {
				kind string
				want map[string]string
			}{{"prolog", tt.wantProlog}, {"epilog", tt.wantEpilog}} {
				env := waitHookEnv(t, filepath.Join(c.Dir, "hooks", "env", h.kind+"."+id))
				for k, want := range h.want {
					if want == gpusIdx {
						want = idx
					}
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

// gpusIdx, in TestSlurmFacts' wants, stands for the job's GPU indices as
// slurmctld lists them (gresIndex).
const gpusIdx = "<the job's GPU indices>"

// gresIndex returns the node-global indices of the GPUs slurmctld gave a
// job, comma-separated as the hooks get them: `scontrol -d show job`'s
// GRES=gpu(IDX:0-1) or gpu:2(IDX:2,3), waited for while the job is
// pending; "" for a job that started without such a list.
func gresIndex(t *testing.T, c *cluster, id string) string {
	t.Helper()
	deadline := time.Now().Add(queueTimeout) // other tests' jobs may hold the GPUs
	for {
		out := c.run(t, "scontrol", "-d", "-o", "show", "job", id)
		if _, after, ok := strings.Cut(out, "(IDX:"); ok {
			list, _, _ := strings.Cut(after, ")")
			var idx []string
			for r := range strings.SplitSeq(list, ",") {
				lo, hi, isRange := strings.Cut(r, "-")
				if !isRange {
					idx = append(idx, lo)
					continue
				}
				a, err1 := strconv.Atoi(lo)
				b, err2 := strconv.Atoi(hi)
				if err1 != nil || err2 != nil {
					t.Fatalf("job %s: GRES index %q", id, list)
				}
				for i := a; i <= b; i++ {
					idx = append(idx, strconv.Itoa(i))
				}
			}
			return strings.Join(idx, ",")
		}
		if !strings.Contains(out, "JobState=PENDING") {
			return ""
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still pending after %s:\n%s", id, queueTimeout, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
