package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/slurmext"
)

// TestSqueueGresPerNode (issue #38): what the agent asks slurmctld for a
// running job's allocation (notice.Squeue.Allocation: squeue's %b) is, on
// the real Slurm, 2 shards for a --gres=shard:2 job and 1 whole GPU for
// a --gres=gpu:1 job: the prolog sees the same GPU for both
// (TestHookEnvironment's shards-fail), so this is how a shard job is told
// from a one-GPU job. It runs on the shared cluster.
func TestSqueueGresPerNode(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	c := sharedCluster(t)
	tests := []struct {
		gres string
		want slurmext.JobGres
	}{
		{"shard:2", slurmext.JobGres{Known: true, Shards: 2}},
		{"gpu:1", slurmext.JobGres{Known: true, GPUs: 1}},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		ids[tt.gres] = c.sbatch(t, "-o", "/dev/null", "--gres="+tt.gres, "--wrap", "sleep 120")
	}
	// The scope's cleanup cancels them.
	// squeue as the agent runs it: the program with SLURM_CONF in its
	// environment (the agent's is slurmd's host's), here set by a script
	// around squeue, since the tests beside this one have other clusters.
	squeue, err := exec.LookPath("squeue")
	if err != nil {
		t.Fatal(err)
	}
	program := filepath.Join(t.TempDir(), "squeue")
	writeFile(t, program, fmt.Sprintf("#!/bin/sh\nSLURM_CONF=%s exec %s \"$@\"\n", shellQuote(c.Conf), shellQuote(squeue)))
	if err := os.Chmod(program, 0o755); err != nil {
		t.Fatal(err)
	}
	sq := notice.Squeue{Program: program, Timeout: 10 * time.Second}
	for _, tt := range tests {
		id := ids[tt.gres]
		// Other tests' jobs may hold the shared node's GPUs a while.
		deadline := time.Now().Add(queueTimeout)
		for strings.TrimSpace(c.run(t, "squeue", "--noheader", "--jobs="+id, "--format=%T")) != "RUNNING" {
			if time.Now().After(deadline) {
				t.Fatalf("job %s (--gres=%s) not running after %s", id, tt.gres, queueTimeout)
			}
			time.Sleep(time.Second)
		}
		raw := c.run(t, "squeue", "--noheader", "--jobs="+id, "--format="+slurmext.SqueueTRESPerNode)
		got, err := sq.Allocation(context.Background(), id)
		if err != nil || got != tt.want {
			t.Errorf("--gres=%s: squeue %%b printed %q, read as %+v (%v); want %+v", tt.gres, raw, got, err, tt.want)
		} else {
			t.Logf("--gres=%s: squeue %%b printed %q", tt.gres, strings.TrimSpace(raw))
		}
	}
}
