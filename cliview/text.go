package cliview

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
)

// WriteJSON writes v as indented JSON, as every command's --json does.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Counting says how GPU time was counted, after any table of
// GPU-hours: the window, the jobs without an end and what was assumed for
// shard jobs, so that no number rests on an unstated assumption.
func Counting(w io.Writer, c analysis.Counting) {
	if c.Window.From.IsZero() && c.Window.To.IsZero() {
		return
	}
	// The data window in the report's words (Counting.PeriodWords).
	printf(w, "\nData window: %s", c.PeriodWords(nil))
	if c.OpenJobs > 0 {
		printf(w, "; %d %s without an end counted up to %s (%s GPU-hours)", c.OpenJobs, present.Plural(c.OpenJobs, "job", "jobs"),
			slurmext.FormatTime(c.End, nil), present.GPUHours(c.OpenGPUHours))
	}
	if c.ShardJobs > 0 {
		printf(w, "; %d shard %s counted by their share of a GPU", c.ShardJobs, present.Plural(c.ShardJobs, "job", "jobs"))
		if c.AssumedShardJobs > 0 {
			printf(w, " (%d shards per GPU assumed for %d of them: their node's shard count is not in slurm.conf", c.ShardsAssumed, c.AssumedShardJobs)
			if c.ShardsRaisedFrom > 0 {
				printf(w, "; raised from %d, as a job held %d shards of one GPU", c.ShardsRaisedFrom, c.ShardsAssumed)
			}
			printf(w, ")")
		}
	}
	printf(w, ".\n")
}

func printf(w io.Writer, format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
