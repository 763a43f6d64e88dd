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
