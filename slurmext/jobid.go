package slurmext

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrBadJobID means a job or step id as sacct prints it is malformed.
var ErrBadJobID = errors.New("malformed job id")

// maxArraySpecBytes bounds the task list of a pending array ("1-5%2",
// "1,3,5,…"); sacct prints it compressed, so even large arrays stay short.
const maxArraySpecBytes = 1024

// JobIDParts is a job or step id as sacct, squeue and scontrol print it
// (sacct's JobID column), split into its parts.
//
//	"123"          Base 123
//	"123_4"        array task: Base 123 (the array job id), ArrayTaskID 4
//	"123_[1-5%2]"  array tasks not yet split off: ArrayTaskSpec "1-5%2"
//	"123+1"        heterogeneous component: Base 123, HetOffset 1
//	"123.batch"    step "batch" of job 123 (also "extern", "interactive",
//	               "0", "4294967292"; "123_4.0", "123+1.0", "123.0+1")
//
// Base may be non-numeric ("sC8F3K2M1A0Z"): Slurm 25.11 can identify jobs by
// SLUID.
type JobIDParts struct {
	// Job is the id without its step part: "123_4" for "123_4.batch".
	Job string
	// Base is the leading id: the array job id of an array task, the het
	// job id of a component, else the job id itself.
	Base string
	// ArrayTaskID is the task index of "123_4", else -1.
	ArrayTaskID int
	// ArrayTaskSpec is the task list of "123_[1-5%2]" ("1-5%2"), else "".
	ArrayTaskSpec string
	// HetOffset is the component of "123+1", else -1.
	HetOffset int
	// Step is the step name or number after the '.', "" for a job.
	Step string
}

// IsStep reports whether the id names a job step rather than a job; sacct
// without -X prints a line for each step, which history import skips.
func (p JobIDParts) IsStep() bool { return p.Step != "" }

// ParseJobID splits a job or step id as described for JobIDParts. Spaces
// around the id are ignored. Errors wrap ErrBadJobID.
func ParseJobID(s string) (JobIDParts, error) {
	t := strings.TrimSpace(s)
	p := JobIDParts{ArrayTaskID: -1, HetOffset: -1}
	bad := func(why string) (JobIDParts, error) {
		return JobIDParts{}, fmt.Errorf("job id %s: %s: %w", quoteShort(s), why, ErrBadJobID)
	}
	if t == "" {
		return bad("empty")
	}
	if len(t) > maxJobIDLen+maxArraySpecBytes {
		return bad("too long")
	}
	// The step starts at the first '.' outside brackets; array specs have
	// no '.', so the first '.' anywhere will do.
	job, step, hasStep := strings.Cut(t, ".")
	if hasStep {
		if !validStep(step) {
			return bad("step is not 1-64 characters of [A-Za-z0-9_+-]")
		}
		p.Step = step
	}
	p.Job = job
	switch {
	case strings.Contains(job, "_"):
		base, task, _ := strings.Cut(job, "_")
		p.Base = base
		if strings.HasPrefix(task, "[") {
			spec, ok := strings.CutSuffix(task[1:], "]")
			if !ok || !validArraySpec(spec) {
				return bad("array task list is not [<digits , - % :>]")
			}
			p.ArrayTaskSpec = spec
			break
		}
		n, ok := parseDigits(task, math.MaxInt32)
		if !ok {
			return bad("array task is not a number")
		}
		p.ArrayTaskID = int(n)
	case strings.Contains(job, "+"):
		base, off, _ := strings.Cut(job, "+")
		p.Base = base
		n, ok := parseDigits(off, math.MaxInt32)
		if !ok {
			return bad("heterogeneous job offset is not a number")
		}
		p.HetOffset = int(n)
	default:
		p.Base = job
	}
	if !validBaseID(p.Base) {
		return bad("job id is not 1-64 characters of [A-Za-z0-9-]")
	}
	return p, nil
}

// validBaseID accepts a numeric job id or a non-numeric one (SLUID).
func validBaseID(b string) bool {
	if b == "" || len(b) > maxJobIDLen {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validStep accepts "batch", "extern", "interactive", "0", "0+1".
func validStep(st string) bool {
	if st == "" || len(st) > maxJobIDLen {
		return false
	}
	for i := 0; i < len(st); i++ {
		c := st[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// validArraySpec accepts a task list such as "1-5%2", "1,3,5", "0-15:4".
func validArraySpec(spec string) bool {
	if spec == "" || len(spec) > maxArraySpecBytes {
		return false
	}
	for i := 0; i < len(spec); i++ {
		if c := spec[i]; !(c >= '0' && c <= '9' || c == ',' || c == '-' || c == '%' || c == ':') {
			return false
		}
	}
	return true
}
