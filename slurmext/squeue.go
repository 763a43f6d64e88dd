package slurmext

import (
	"errors"
	"fmt"
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
		return "", "", fmt.Errorf("squeue: unexpected output %s (want %s)", quoteShort(line), SqueueQOSName)
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
