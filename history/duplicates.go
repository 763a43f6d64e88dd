package history

import (
	"hash/maphash"
	"math"
	"strings"

	"github.com/gpuprof/gpuprof/slurmext"
)

// duplicates finds the job ids an input holds more than once with
// different content. It keeps a 64-bit hash of each job's last record, not
// the record: a month of a million jobs costs tens of megabytes, not
// hundreds.
//
// Its jobs are kept by cluster, and within a cluster a job id in plain
// decimal (Slurm's own, "123456") by its number: a map of numbers hashes
// and compares cheaper than one of pairs of strings, and keeps no string.
// Other ids (a SLUID, "0123") are kept as text, which is never the same
// id as a number, so no two ids share a key.
type duplicates struct {
	seed     maphash.Seed
	clusters map[string]*clusterJobs
	// The cluster of the record before, which is nearly always the
	// next one's too.
	lastName string
	last     *clusterJobs
}

type clusterJobs struct {
	byNumber map[uint64]seenJob
	byText   map[string]seenJob
}

type seenJob struct {
	sum      uint64
	requeued bool // the record was an earlier run of a requeued job
	reported bool
}

func newDuplicates() *duplicates {
	return &duplicates{seed: maphash.MakeSeed(), clusters: map[string]*clusterJobs{}}
}

// conflicts records rec and reports whether it is the first record of its
// job id to differ from an earlier one: each conflicting id is reported
// once. A record equal to the one before it is a repeat (the same file
// imported twice over), and a record next to a run that Slurm requeued is
// the job's next run (sacct -D, sacct --json list each), not a conflict.
func (d *duplicates) conflicts(rec *slurmext.JobRecord) bool {
	jobs := d.cluster(rec.Cluster)
	cur := seenJob{sum: maphash.Comparable(d.seed, *rec), requeued: rec.State.EndsRunByRequeue()}
	if n, ok := decimalID(rec.JobID); ok {
		prev, seen := jobs.byNumber[n]
		report := cur.merge(prev, seen)
		if !seen || cur != prev {
			jobs.byNumber[n] = cur
		}
		return report
	}
	prev, seen := jobs.byText[rec.JobID]
	report := cur.merge(prev, seen)
	switch {
	case !seen:
		// The key outlives the record: its string may be a slice of
		// the reader's whole line (sacct's text reader cuts fields out
		// of it), which the map would keep alive — a million jobs held
		// about 430 MB of lines instead of a few tens of MB of ids.
		jobs.byText[strings.Clone(rec.JobID)] = cur
	case cur != prev:
		jobs.byText[rec.JobID] = cur
	}
	return report
}

// merge makes cur what is kept of a job whose record before was prev (when
// seen), and reports whether cur is the job's first conflict.
func (cur *seenJob) merge(prev seenJob, seen bool) bool {
	report := seen && !prev.reported && prev.sum != cur.sum && !prev.requeued && !cur.requeued
	cur.reported = prev.reported || report
	return report
}

// cluster returns the jobs kept of a cluster, made on its first record.
func (d *duplicates) cluster(name string) *clusterJobs {
	if d.last != nil && name == d.lastName {
		return d.last
	}
	jobs, ok := d.clusters[name]
	if !ok {
		// Cloned, as a job id is (see conflicts).
		name = strings.Clone(name)
		jobs = &clusterJobs{byNumber: map[uint64]seenJob{}, byText: map[string]seenJob{}}
		d.clusters[name] = jobs
	}
	d.lastName, d.last = name, jobs
	return jobs
}

// decimalID returns a job id's number when it is written in plain decimal,
// as only that number is: digits without a leading zero ("0" itself
// aside), at most 19 of them (within uint64); slurmext.ParseDigits reads
// the digits.
func decimalID(id string) (uint64, bool) {
	if len(id) > 19 || len(id) > 1 && id[0] == '0' {
		return 0, false
	}
	return slurmext.ParseDigits(id, math.MaxUint64)
}
