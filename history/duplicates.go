package history

import (
	"hash/maphash"
	"strings"

	"github.com/gpuprof/gpuprof/slurmext"
)

// duplicates finds the job ids an input holds more than once with
// different content. It keeps a 64-bit hash of each job's last record, not
// the record: a month of a million jobs costs tens of megabytes, not
// hundreds.
type duplicates struct {
	seed maphash.Seed
	jobs map[jobKey]seenJob
}

type jobKey struct{ cluster, jobID string }

type seenJob struct {
	sum      uint64
	requeued bool // the record was an earlier run of a requeued job
	reported bool
}

func newDuplicates() *duplicates {
	return &duplicates{seed: maphash.MakeSeed(), jobs: map[jobKey]seenJob{}}
}

// conflicts records rec and reports whether it is the first record of its
// job id to differ from an earlier one: each conflicting id is reported
// once. A record equal to the one before it is a repeat (the same file
// imported twice over), and a record next to a run that Slurm requeued is
// the job's next run (sacct -D, sacct --json list each), not a conflict.
func (d *duplicates) conflicts(rec *slurmext.JobRecord) bool {
	k := jobKey{rec.Cluster, rec.JobID}
	cur := seenJob{sum: maphash.Comparable(d.seed, *rec), requeued: rec.State.EndsRunByRequeue()}
	prev, seen := d.jobs[k]
	if !seen {
		// The key outlives the record: its strings may be slices of the
		// reader's whole line (sacct's text reader cuts fields out of
		// it), which the map would keep alive — a million jobs held
		// about 430 MB of lines instead of a few tens of MB of ids.
		k = jobKey{strings.Clone(k.cluster), strings.Clone(k.jobID)}
	}
	cur.reported = prev.reported
	report := seen && !prev.reported && prev.sum != cur.sum && !prev.requeued && !cur.requeued
	cur.reported = cur.reported || report
	d.jobs[k] = cur
	return report
}
