package slurmext

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
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
		return JobIDParts{}, fmt.Errorf("job id %s: %s: %w", QuoteShort(s), why, ErrBadJobID)
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
			if !ok || !ValidArraySpec(spec) {
				return bad("array task list is not [<digits , - % :>]")
			}
			p.ArrayTaskSpec = spec
			break
		}
		n, ok := ParseDigits(task, math.MaxInt32)
		if !ok {
			return bad("array task is not a number")
		}
		p.ArrayTaskID = int(n)
	case strings.Contains(job, "+"):
		base, off, _ := strings.Cut(job, "+")
		p.Base = base
		n, ok := ParseDigits(off, math.MaxInt32)
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

// ValidArraySpec accepts a task list such as "1-5%2", "1,3,5", "0-15:4".
func ValidArraySpec(spec string) bool {
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

// JobRef is a job as a user names it to gpuprof (`gpuprof show 53_1`), in
// the forms `scontrol show job` and `sacct -j` accept and print:
//
//	"58"          a raw job id (SLURM_JOB_ID), or an array job id or a
//	              heterogeneous job id, which in Slurm is also the raw id of
//	              one of its tasks or components: Slurm then means all of
//	              them (`sacct -j 53` lists every task of array 53)
//	"53_1"        array task 1 of array job 53
//	"53_[1-5%2]"  the record of array 53's tasks that never split off, as
//	              sacct lists it while they are pending
//	"60+1"        component 1 of heterogeneous job 60
//	"s0C8F3K2M1A0ZX"  a SLUID (Slurm 25.11+): a raw job id
//
// A step ("53_1.batch") is not a job: gpuprof profiles whole allocations.
type JobRef struct {
	// Base is the leading id: the raw id of a plain reference, else the
	// array or heterogeneous job id.
	Base string
	// ArrayTaskID is the task of "53_1", else -1.
	ArrayTaskID int
	// ArrayTaskSpec is the task list of "53_[1-5%2]", else "".
	ArrayTaskSpec string
	// HetOffset is the component of "60+1", else -1.
	HetOffset int
}

// Plain reports whether r is a bare id ("53"): a raw id, an array job id
// or a heterogeneous job id, whichever the cluster has.
func (r JobRef) Plain() bool {
	return r.ArrayTaskID < 0 && r.ArrayTaskSpec == "" && r.HetOffset < 0
}

// String is r as Slurm prints it, and as ParseJobRef reads it back.
func (r JobRef) String() string {
	switch {
	case r.ArrayTaskID >= 0:
		return r.Base + "_" + strconv.Itoa(r.ArrayTaskID)
	case r.ArrayTaskSpec != "":
		return r.Base + "_[" + r.ArrayTaskSpec + "]"
	case r.HetOffset >= 0:
		return r.Base + "+" + strconv.Itoa(r.HetOffset)
	}
	return r.Base
}

// maxRawJobID is the largest job id Slurm hands out: job ids are 32-bit,
// and 0xfffffffe / 0xffffffff are NO_VAL and INFINITE.
const maxRawJobID = math.MaxUint32 - 2

// jobRefForms is what ParseJobRef's errors say it wants.
const jobRefForms = "want a job id such as 58, an array task 53_1, a heterogeneous job component 60+1, or a SLUID"

// ParseJobRef reads a job id as a user types it (see JobRef). Anything
// else, "abc" or a step such as "53_1.batch", is an error wrapping
// ErrBadJobID that says what was wanted. Numbers lose their leading zeros
// ("058" is 58, as Slurm reads it) and a SLUID is put in the case Slurm
// prints, so that the reference compares equal to the stored id.
func ParseJobRef(s string) (JobRef, error) {
	p, err := ParseJobID(s)
	if err != nil {
		return JobRef{}, fmt.Errorf("%s is not a job id (%s): %w", QuoteShort(strings.TrimSpace(s)), jobRefForms, ErrBadJobID)
	}
	if p.IsStep() {
		return JobRef{}, fmt.Errorf("%s is a job step: gpuprof profiles whole jobs, use %s: %w", QuoteShort(strings.TrimSpace(s)), p.Job, ErrBadJobID)
	}
	base, ok := canonicalJobID(p.Base)
	if !ok {
		return JobRef{}, fmt.Errorf("%s is not a job id (%s): %w", QuoteShort(strings.TrimSpace(s)), jobRefForms, ErrBadJobID)
	}
	if !isDigits(base) && (p.ArrayTaskID >= 0 || p.ArrayTaskSpec != "" || p.HetOffset >= 0) {
		// Array and heterogeneous job ids are numbers even where a SLUID
		// names the job.
		return JobRef{}, fmt.Errorf("%s: an array or heterogeneous job id is a number (%s): %w", QuoteShort(strings.TrimSpace(s)), jobRefForms, ErrBadJobID)
	}
	return JobRef{Base: base, ArrayTaskID: p.ArrayTaskID, ArrayTaskSpec: p.ArrayTaskSpec, HetOffset: p.HetOffset}, nil
}

// sluidDigits is the Crockford base32 alphabet of a SLUID after its 's'
// (Slurm's src/common/sluid.c: sluid2str prints 's' and 13 of these).
const sluidDigits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// canonicalJobID returns a raw job id as Slurm prints it: a number from 1
// to maxRawJobID without leading zeros, or a SLUID as sluid2str prints it
// ('s', then 13 upper-case digits; str2sluid also reads lower case and
// I, L as 1 and O as 0). ok is false for anything else.
func canonicalJobID(b string) (string, bool) {
	if n, ok := ParseDigits(b, maxRawJobID); ok {
		if n == 0 {
			return "", false
		}
		return strconv.FormatUint(n, 10), true
	}
	if len(b) != 14 || (b[0] != 's' && b[0] != 'S') {
		return "", false
	}
	out := []byte(strings.ToUpper(b))
	out[0] = 's'
	for i := 1; i < len(out); i++ {
		switch out[i] {
		case 'I', 'L':
			out[i] = '1'
		case 'O':
			out[i] = '0'
		}
		if strings.IndexByte(sluidDigits, out[i]) < 0 {
			return "", false
		}
	}
	return string(out), true
}

func isDigits(s string) bool {
	_, ok := ParseDigits(s, math.MaxUint64)
	return ok
}

// SlurmID is the job's id as Slurm prints it ("53_1", "53_[1-5%2]",
// "60+1", "58"): DisplayID when the report carried it, else built from the
// array or heterogeneous job fields, else the raw id. Every place that
// names a job to a person uses it; the raw id stays the key.
func (r JobRecord) SlurmID() string {
	switch {
	case r.DisplayID != "":
		return r.DisplayID
	case r.ArrayJobID != "" && r.ArrayTaskID >= 0:
		return r.ArrayJobID + "_" + strconv.Itoa(r.ArrayTaskID)
	case r.ArrayJobID != "" && r.ArrayTaskSpec != "":
		return r.ArrayJobID + "_[" + r.ArrayTaskSpec + "]"
	case r.HetJobID != "" && r.HetOffset >= 0:
		return r.HetJobID + "+" + strconv.Itoa(r.HetOffset)
	}
	return r.JobID
}

// Compare orders references as a person reads a list of jobs: by the
// leading id (numbers by value, before SLUIDs), then the plain id, then
// the array tasks by index, the unsplit task list, and the heterogeneous
// components by offset. It returns -1, 0 or +1.
func (r JobRef) Compare(o JobRef) int {
	if c := compareJobIDs(r.Base, o.Base); c != 0 {
		return c
	}
	rank := func(x JobRef) (int, int, string) {
		switch {
		case x.ArrayTaskID >= 0:
			return 1, x.ArrayTaskID, ""
		case x.ArrayTaskSpec != "":
			return 2, 0, x.ArrayTaskSpec
		case x.HetOffset >= 0:
			return 3, x.HetOffset, ""
		}
		return 0, 0, ""
	}
	rk, rn, rs := rank(r)
	ok, on, os := rank(o)
	return cmp.Or(cmp.Compare(rk, ok), cmp.Compare(rn, on), strings.Compare(rs, os))
}

// CompareJobIDs orders two job ids as Slurm prints them ("53_1",
// "53_10", "60+1", "58") the way Slurm lists jobs (JobRef.Compare): -1,
// 0 or +1. It is 0 when either is no job id (ParseJobRef refuses it),
// leaving the order to the caller's next key.
func CompareJobIDs(a, b string) int {
	ra, err := ParseJobRef(a)
	if err != nil {
		return 0
	}
	rb, err := ParseJobRef(b)
	if err != nil {
		return 0
	}
	return ra.Compare(rb)
}

// compareJobIDs orders raw ids: numbers by value (canonical ones have no
// leading zeros, so by length first), then anything else byte by byte.
func compareJobIDs(a, b string) int {
	an, bn := isDigits(a), isDigits(b)
	switch {
	case an && bn:
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}
