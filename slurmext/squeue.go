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
