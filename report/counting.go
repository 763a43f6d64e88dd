package report

import (
	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// countingPara says how the GPU time on the page was counted: the data
// window (the same line as the CLI's, cliview.Counting), jobs
// without an end and the shard assumption, so that no number rests on an
// unstated assumption.
func countingPara(s *section, c analysis.Counting) {
	const layout = "2006-01-02 15:04 MST"
	// The data window in gpuprof plan's words (Counting.PeriodWords).
	if p := c.Period(); !p.From.IsZero() || !p.To.IsZero() {
		s.para("Data window: %s.", c.PeriodWords(nil))
	}
	if c.OpenJobs > 0 {
		s.para("%s %s still running (or without a recorded end) %s counted up to %s: %s GPU-hours.",
			present.Int(c.OpenJobs), present.Plural(c.OpenJobs, "job", "jobs"), present.Plural(c.OpenJobs, "is", "are"),
			c.End.Format(layout), present.GPUHours(c.OpenGPUHours))
	}
	if c.ShardJobs > 0 {
		switch {
		case c.AssumedShardJobs > 0 && c.ShardsRaisedFrom > 0:
			s.para("%s shard %s count their share of a GPU (shards held ÷ shards on the GPU); for %s of them the node's shard count is not in slurm.conf, and %d shards per GPU were assumed: the data's own, as a job held %d shards of one GPU, more than the %d otherwise assumed.",
				present.Int(c.ShardJobs), present.Plural(c.ShardJobs, "job", "jobs"), present.Int(c.AssumedShardJobs), c.ShardsAssumed, c.ShardsAssumed, c.ShardsRaisedFrom)
		case c.AssumedShardJobs > 0:
			s.para("%s shard %s count their share of a GPU (shards held ÷ shards on the GPU); for %s of them the node's shard count is not in slurm.conf, and %d shards per GPU were assumed.",
				present.Int(c.ShardJobs), present.Plural(c.ShardJobs, "job", "jobs"), present.Int(c.AssumedShardJobs), c.ShardsAssumed)
		default:
			s.para("%s shard %s count their share of a GPU (shards held ÷ shards configured on the GPU).",
				present.Int(c.ShardJobs), present.Plural(c.ShardJobs, "job", "jobs"))
		}
	}
}
