package report

import (
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestCountingParaShardsRaised (issue #38, item 2): when the data raised
// the shards-per-GPU assumption (a job held more shards of one GPU than
// assumed), the report says the figure used is the data's and what it
// replaced, not only "8 shards per GPU were assumed".
func TestCountingParaShardsRaised(t *testing.T) {
	var s section
	countingPara(&s, analysis.Counting{ShardJobs: 3, AssumedShardJobs: 3, ShardsAssumed: 81, ShardsRaisedFrom: 8})
	if len(s.Blocks) != 1 {
		t.Fatalf("%d paragraphs, want 1", len(s.Blocks))
	}
	got := s.Blocks[0].Text
	for _, w := range []string{"81 shards per GPU were assumed", "a job held 81 shards of one GPU, more than the 8 otherwise assumed"} {
		if !strings.Contains(got, w) {
			t.Errorf("counting paragraph %q does not say %q", got, w)
		}
	}
}

// TestHeadroomJobGPUs (issue #38, the real test Slurm's month): the VRAM
// headroom's count is of job-GPUs (a GPU once per job that held it), here
// 1,500 on a 32-GPU cluster; written "1,500 GPUs" it reads as an inventory
// the cluster does not have.
func TestHeadroomJobGPUs(t *testing.T) {
	md := renderAll(t, fixture())["md"]
	for _, l := range strings.Split(md, "\n") {
		if !strings.Contains(l, "VRAM headroom") {
			continue
		}
		if !strings.Contains(l, "over 1,500 job-GPUs") || strings.Contains(l, " GPUs)") {
			t.Errorf("headroom line %q: want its count as job-GPUs, never as GPUs", l)
		}
		return
	}
	t.Fatalf("no VRAM headroom line:\n%s", md)
}
