package report

import "github.com/gpuprof/gpuprof/analysis"

// countingPara says how the GPU time on the page was counted: jobs
// without an end and the shard assumption, so that no number rests on an
// unstated assumption.
func countingPara(s *section, c analysis.Counting) {
	const layout = "2006-01-02 15:04 MST"
	if c.OpenJobs > 0 {
		s.para("%s %s still running (or without a recorded end) %s counted up to %s: %s GPU-hours.",
			count(c.OpenJobs), plural(c.OpenJobs, "job", "jobs"), plural(c.OpenJobs, "is", "are"),
			c.End.Format(layout), hours(c.OpenGPUHours))
	}
	if c.ShardJobs > 0 {
		if c.AssumedShardJobs > 0 {
			s.para("%s shard %s count their share of a GPU (shards held ÷ shards on the GPU); for %s of them the node's shard count is not in slurm.conf, and %d shards per GPU were assumed.",
				count(c.ShardJobs), plural(c.ShardJobs, "job", "jobs"), count(c.AssumedShardJobs), c.ShardsAssumed)
		} else {
			s.para("%s shard %s count their share of a GPU (shards held ÷ shards configured on the GPU).",
				count(c.ShardJobs), plural(c.ShardJobs, "job", "jobs"))
		}
	}
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// counted prints n with the word for n: "1 job", "2,000 jobs".
func counted(n int, one, many string) string {
	return count(n) + " " + plural(n, one, many)
}
