package e2e

import (
	"context"
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
// from a one-GPU job.
func TestSqueueGresPerNode(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	tests := []struct {
		gres string
		want slurmext.JobGres
	}{
		{"shard:2", slurmext.JobGres{Known: true, Shards: 2}},
		{"gpu:1", slurmext.JobGres{Known: true, GPUs: 1}},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		ids[tt.gres] = c.run(t, "sbatch", "--parsable", "-o", "/dev/null", "--gres="+tt.gres, "--wrap", "sleep 120")
	}
	t.Cleanup(func() {
		for _, id := range ids {
			_, _ = c.output("scancel", id)
		}
	})
	// squeue as the agent runs it: the program with SLURM_CONF in its
	// environment (the agent's is slurmd's host's).
	t.Setenv("SLURM_CONF", c.Conf)
	sq := notice.Squeue{Program: "squeue", Timeout: 10 * time.Second}
	for _, tt := range tests {
		id := ids[tt.gres]
		deadline := time.Now().Add(time.Minute)
		for strings.TrimSpace(c.run(t, "squeue", "--noheader", "--jobs="+id, "--format=%T")) != "RUNNING" {
			if time.Now().After(deadline) {
				t.Fatalf("job %s (--gres=%s) not running after a minute", id, tt.gres)
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
