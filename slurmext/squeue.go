package slurmext

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// SqueueQOSName is the --format that ParseSqueueQOSName reads: the QOS
// first, so that a job name holding '|' cannot change it, and no field
// width, so that squeue prints the name whole (an unsized %j is not cut).
const SqueueQOSName = "%q|%j"

// ErrNoSqueueLine means squeue printed no line for the job: it no longer
// knows it (the job ended and left slurmctld's memory).
var ErrNoSqueueLine = errors.New("squeue printed no line for the job")

// ParseSqueueQOSName reads the first line of `squeue --noheader
// --format=%q|%j` for one job and returns its QOS and name (the name raw:
// callers sanitise it). A line without the separator is an error.
func ParseSqueueQOSName(out string) (qos, name string, err error) {
	line, _, _ := strings.Cut(out, "\n")
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return "", "", ErrNoSqueueLine
	}
	q, n, ok := strings.Cut(line, "|")
	if !ok {
		return "", "", fmt.Errorf("squeue: unexpected output %s (want %s)", QuoteShort(line), SqueueQOSName)
	}
	return strings.TrimSpace(q), n, nil
}

// SqueueIDUserName is the --format that ParseSqueueIDUserName reads: the
// raw job id (%A: an array task's own id, as SLURM_JOB_ID), the user, then
// the name last and unsized, so that a name holding '|' changes neither
// field before it.
const SqueueIDUserName = "%A|%u|%j"

// SqueueJob is one job as `squeue --format=%A|%u|%j` prints it.
type SqueueJob struct {
	User string
	Name string // raw: callers sanitise it
}

// ParseSqueueIDUserName reads `squeue --noheader --format=%A|%u|%j`, one
// line per job, into the jobs by raw id. A line that is not one (a job
// name's own line break starts a line of its own) is skipped: its job
// keeps the name up to the break.
func ParseSqueueIDUserName(out string) map[string]SqueueJob {
	jobs := map[string]SqueueJob{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		id, rest, ok := strings.Cut(line, "|")
		if !ok || !isDigits(strings.TrimSpace(id)) {
			continue
		}
		user, name, ok := strings.Cut(rest, "|")
		if !ok {
			continue
		}
		jobs[strings.TrimSpace(id)] = SqueueJob{User: strings.TrimSpace(user), Name: name}
	}
	return jobs
}

// SqueueTRESPerNode is the --format that ParseSqueueTRESPerNode reads:
// the job's TRES per node (%b), the GRES it holds on each of its nodes,
// which slurmd's prolog does not give ("gres:shard:2" in 22.05, seen in
// e2e TestSqueueGresPerNode; the "gres/shard:2" form of TRES names is
// read too, for versions that print it, not yet seen on a real Slurm).
const SqueueTRESPerNode = "%b"

// JobGres is what a job holds on each of its nodes, as squeue's %b says:
// whole GPUs or shards of a GPU. Known is false when %b names neither
// (N/A: GPUs asked per job or per task, which %b does not show): the
// allocation is then not known, not whole.
type JobGres struct {
	Known  bool
	GPUs   int
	Shards int
}

// ParseSqueueTRESPerNode reads the first line of `squeue --noheader
// --format=%b` for one job. ErrNoSqueueLine when squeue printed none (the
// job ended); a malformed count is an error, never a count of 0.
func ParseSqueueTRESPerNode(out string) (JobGres, error) {
	line, _, _ := strings.Cut(out, "\n")
	line = strings.TrimSpace(strings.TrimRight(line, "\r"))
	if line == "" {
		return JobGres{}, ErrNoSqueueLine
	}
	var g JobGres
	for item := range strings.SplitSeq(line, ",") {
		item = strings.TrimSpace(item)
		item = strings.TrimPrefix(strings.TrimPrefix(item, "gres:"), "gres/")
		parts := strings.Split(item, ":")
		name := parts[0]
		if name != "gpu" && name != "shard" {
			continue // N/A, (null), cpu=…, mps, another GRES
		}
		n := 1 // "gres:gpu" alone asks for one
		if len(parts) > 1 {
			v, ok := ParseDigits(parts[len(parts)-1], math.MaxInt32)
			switch {
			case ok:
				n = int(v)
			case len(parts) == 2:
				// "gpu:h100": a type and no count, one.
			default:
				return JobGres{}, fmt.Errorf("squeue %%b: %s has no count", QuoteShort(item))
			}
		}
		g.Known = true
		if name == "gpu" {
			g.GPUs += n
		} else {
			g.Shards += n
		}
	}
	return g, nil
}
