package slurmext

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NoValTask is Slurm's NO_VAL (0xfffffffe): the ARRAYTASKID of a job that
// is not an array task.
const NoValTask = math.MaxUint32 - 1

// ParseJobCompEnv parses the environment jobcomp/script gives its program
// (slurm.conf JobCompType=jobcomp/script, JobCompLoc=<program>), read through
// getenv (os.Getenv in production), into a JobRecord with Source "jobcomp".
//
// The variables, as src/plugins/jobcomp/script/jobcomp_script.c sets them
// (checked against the 22.05.8 plugin):
//
//	JOBID                the job id (the raw id of an array task or het
//	                     component)
//	ARRAYJOBID           array job id, 0 when not an array job
//	ARRAYTASKID          task index, 4294967294 (NO_VAL) when not a task
//	HETJOBID HETJOBOFFSET  only for het components (also the older names
//	                     PACKJOBID PACKJOBOFFSET)
//	UID GID USERNAME GROUPNAME JOBNAME PARTITION QOS ACCOUNT CLUSTER
//	JOBSTATE             job_state_string of the base state: COMPLETED,
//	                     FAILED, TIMEOUT, CANCELLED (never "by <uid>"),
//	                     OUT_OF_MEMORY, …, RESIZING, or PENDING when the job
//	                     was requeued (the script runs again when it ends)
//	NODES NODECNT PROCS
//	SUBMIT START END     seconds since 1970; START is 0 or END for a job
//	                     cancelled while pending
//	ELIGIBLE             seconds since 1970; newer releases only, read when
//	                     present
//	LIMIT                "[D-]HH:MM:SS" or "UNLIMITED" (a bare number of
//	                     minutes before 17.11)
//	EXITCODE DERIVED_EC  "exit:signal"
//	STATEREASONPREV      why the job last waited ("Priority", "None")
//	BATCH WORK_DIR RESERVATION DEPENDENCY CONSTRAINTS DB_FLAGS STDIN
//	STDOUT STDERR        not kept in the record
//
// There are no GRES or TRES variables, so the GPU fields stay 0, and no
// restart count. CLUSTER and QOS are empty without accounting.
//
// It fails, with an error wrapping ErrBadEnv, only when JOBID is missing or
// not a valid job id (ValidJobID). Every other malformed value becomes a
// note in problems and its field keeps its "unknown" value (see JobRecord);
// text values are sanitised (no control characters, valid UTF-8, bounded
// length) so that a hostile job name cannot forge a log line.
func ParseJobCompEnv(getenv func(string) string) (JobRecord, []string, error) {
	id := getenv("JOBID")
	switch {
	case id == "":
		return JobRecord{}, nil, fmt.Errorf("JOBID: missing: %w", ErrBadEnv)
	case !ValidJobID(id):
		return JobRecord{}, nil, fmt.Errorf("JOBID %s: not 1-%d characters of [A-Za-z0-9_.+-]: %w",
			QuoteShort(id), maxJobIDLen, ErrBadEnv)
	}
	var n Notes
	r := JobRecord{
		JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		Source: "jobcomp",
	}
	r.Cluster = n.Text("CLUSTER", getenv("CLUSTER"), MaxFieldBytes)
	r.Name = n.Text("JOBNAME", getenv("JOBNAME"), MaxFieldBytes)
	r.User = n.Text("USERNAME", getenv("USERNAME"), MaxFieldBytes)
	r.UID = n.ID("UID", getenv("UID"))
	r.Account = n.Text("ACCOUNT", getenv("ACCOUNT"), MaxFieldBytes)
	r.Partition = n.Text("PARTITION", getenv("PARTITION"), MaxFieldBytes)
	r.QOS = n.Text("QOS", getenv("QOS"), MaxFieldBytes)
	r.Reason = n.Text("STATEREASONPREV", getenv("STATEREASONPREV"), MaxFieldBytes)
	r.Submit = n.Epoch("SUBMIT", getenv("SUBMIT"))
	r.Eligible = n.Epoch("ELIGIBLE", getenv("ELIGIBLE"))
	r.Start = n.Epoch("START", getenv("START"))
	r.End = n.Epoch("END", getenv("END"))
	r.NodeCount = n.Count("NODECNT", getenv("NODECNT"))
	r.CPUs = n.Count("PROCS", getenv("PROCS"))
	r.NodeList = n.Text("NODES", getenv("NODES"), MaxFieldBytes)
	if r.NodeList != "" {
		if _, err := parseHostlist(r.NodeList); err != nil {
			n.Add("NODES", "%v", err)
		}
	}

	if v := getenv("JOBSTATE"); v != "" {
		state, _, err := ParseState(v)
		if err != nil {
			n.Add("JOBSTATE", "%v", err)
		}
		r.State = state
	}
	if v := getenv("LIMIT"); v != "" {
		d, unlimited, err := ParseDuration(v)
		if err != nil {
			n.Add("LIMIT", "%v", err)
		}
		r.TimeLimit, r.Unlimited = d, unlimited
	}
	r.ExitStatus, r.ExitSignal = n.ExitCode("EXITCODE", getenv("EXITCODE"))
	r.DerivedStatus, r.DerivedSignal = n.ExitCode("DERIVED_EC", getenv("DERIVED_EC"))
	r.parseJobCompArray(getenv, &n)
	r.parseJobCompHet(getenv, &n)
	return r, n, nil
}

// ExitCode parses an "exit:signal" variable; malformed gives 0, 0 and a note.
func (n *Notes) ExitCode(name, v string) (status, signal int) {
	if v == "" {
		return 0, 0
	}
	status, signal, err := ParseExitCode2(v)
	if err != nil {
		n.Add(name, "%v", err)
	}
	return status, signal
}

// parseJobCompArray fills the array fields. The record of an array whose
// tasks never split off (cancelled while pending) has ARRAYJOBID == JOBID and
// no task id; it keeps ArrayTaskID -1.
func (r *JobRecord) parseJobCompArray(getenv func(string) string, n *Notes) {
	arrayJob := strings.TrimSpace(getenv("ARRAYJOBID"))
	if arrayJob == "" {
		return
	}
	aj, ok := ParseDigits(arrayJob, math.MaxUint32)
	if !ok {
		n.Add("ARRAYJOBID", "not a job id: %s", QuoteShort(arrayJob))
		return
	}
	if aj == 0 {
		return
	}
	arrayJob = strconv.FormatUint(aj, 10)
	r.ArrayJobID = arrayJob
	task := strings.TrimSpace(getenv("ARRAYTASKID"))
	t, ok2 := ParseDigits(task, math.MaxUint32)
	switch {
	case task == "":
	case !ok2:
		n.Add("ARRAYTASKID", "not an array index: %s", QuoteShort(task))
	case t >= NoValTask:
	case t > math.MaxInt32:
		n.Add("ARRAYTASKID", "array index %d out of range", t)
	default:
		r.ArrayTaskID = int(t)
		r.DisplayID = arrayJob + "_" + strconv.Itoa(r.ArrayTaskID)
	}
}

// parseJobCompHet fills the heterogeneous job fields from HETJOBID (20.02+)
// or PACKJOBID.
func (r *JobRecord) parseJobCompHet(getenv func(string) string, n *Notes) {
	idVar, offVar := "HETJOBID", "HETJOBOFFSET"
	het := strings.TrimSpace(getenv(idVar))
	if het == "" {
		idVar, offVar = "PACKJOBID", "PACKJOBOFFSET"
		het = strings.TrimSpace(getenv(idVar))
	}
	if het == "" {
		return
	}
	hj, ok := ParseDigits(het, math.MaxUint32)
	if !ok {
		n.Add(idVar, "not a job id: %s", QuoteShort(het))
		return
	}
	if hj == 0 {
		return
	}
	het = strconv.FormatUint(hj, 10)
	r.HetJobID = het
	off := strings.TrimSpace(getenv(offVar))
	o, ok := ParseDigits(off, math.MaxInt32)
	if !ok {
		n.Add(offVar, "not a component offset: %s", QuoteShort(off))
		return
	}
	r.HetOffset = int(o)
	r.DisplayID = het + "+" + strconv.Itoa(r.HetOffset)
}
