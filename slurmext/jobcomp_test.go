package slurmext

import (
	"bufio"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// readEnvFile reads a captured jobcomp environment: KEY=VALUE lines.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := make(map[string]string)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return env
}

func epochUTC(s int64) time.Time { return time.Unix(s, 0).UTC() }

// jobcompBase is what every 22.05 fixture job shares.
func jobcompBase() JobRecord {
	return JobRecord{
		Cluster: "gpuproftest", User: "root", UID: 0, Account: "root", Partition: "gpu", QOS: "normal",
		ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1, NodeList: "localhost", NodeCount: 1, CPUs: 1,
		Reason: "None", Source: "jobcomp",
	}
}

func TestParseJobCompEnvFixtures(t *testing.T) {
	tests := []struct {
		file string
		edit func(*JobRecord)
	}{
		{"job1-completed-gpu.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "1", "1", "ok", "COMPLETED"
			r.Submit, r.Start, r.End = epochUTC(1796210788), epochUTC(1796210789), epochUTC(1796210791)
			r.TimeLimit = 10 * time.Minute
		}},
		{"job2-failed-exit3.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "2", "2", "fail3", "FAILED"
			r.Submit, r.Start, r.End = epochUTC(1796210788), epochUTC(1796210789), epochUTC(1796210789)
			r.TimeLimit, r.ExitStatus = 5*time.Minute, 3
		}},
		{"job4-failed-signal9.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "4", "4", "sig", "FAILED"
			r.Submit, r.Start, r.End = epochUTC(1796210788), epochUTC(1796210789), epochUTC(1796210789)
			r.Unlimited, r.ExitSignal = true, 9
		}},
		{"job5-timeout.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "5", "5", "tmo", "TIMEOUT"
			r.Submit, r.Start, r.End = epochUTC(1796210788), epochUTC(1796210789), epochUTC(1796210866)
			r.TimeLimit = time.Minute
		}},
		{"job9-cancelled-pending.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "9", "9", "cxl", "CANCELLED"
			r.Submit, r.Start, r.End = epochUTC(1796210788), epochUTC(1796210790), epochUTC(1796210790)
			r.Unlimited, r.NodeList, r.NodeCount, r.CPUs = true, "", 0, 0 // PROCS=0: never allocated
		}},
		{"job10-array-task-6_1.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "10", "6_1", "arr", "COMPLETED"
			r.ArrayJobID, r.ArrayTaskID = "6", 1
			r.Submit, r.Start, r.End = epochUTC(1796210788), epochUTC(1796210789), epochUTC(1796210792)
			r.TimeLimit = 24 * time.Hour
		}},
		{"job13-het-component-12+1.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "13", "12+1", "het", "CANCELLED"
			r.HetJobID, r.HetOffset = "12", 1
			r.Submit, r.Start, r.End = epochUTC(1796210790), epochUTC(1796210893), epochUTC(1796210893)
			r.TimeLimit, r.NodeList, r.NodeCount = 3*time.Minute, "", 0
		}},
		{"job14-escape-in-name.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "14", "14", "ctl[31mred", "COMPLETED"
			r.Submit, r.Start, r.End = epochUTC(1796210790), epochUTC(1796210893), epochUTC(1796210893)
			r.Unlimited = true
		}},
		{"job15-utf8-name.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "15", "15", "unicodé", "COMPLETED"
			r.Submit, r.Start, r.End = epochUTC(1796210790), epochUTC(1796210893), epochUTC(1796210893)
			r.Unlimited = true
		}},
		{"job25-array-cancelled-pending.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "25", "25", "pendcxl", "CANCELLED"
			r.ArrayJobID = "25" // the array's own record: no task index
			r.Submit, r.Start, r.End = epochUTC(1796210897), epochUTC(1796210898), epochUTC(1796210898)
			r.Unlimited, r.NodeList, r.NodeCount, r.CPUs = true, "", 0, 0
		}},
		{"job26-requeued-first-run.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "26", "26", "rq3", "PENDING"
			r.Submit, r.Start, r.End = epochUTC(1796210971), epochUTC(1796210971), epochUTC(1796210976)
			r.Unlimited = true
		}},
		{"job26-requeued-final-run.env", func(r *JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State, r.Reason = "26", "26", "rq3", "COMPLETED", "BeginTime"
			r.Submit, r.Start, r.End = epochUTC(1796210976), epochUTC(1796211136), epochUTC(1796211151)
			r.Unlimited = true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			env := readEnvFile(t, filepath.Join("testdata", "jobcomp", "22.05", tt.file))
			got, problems, err := ParseJobCompEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			want := jobcompBase()
			tt.edit(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("record:\n got %+v\nwant %+v", got, want)
			}
			wantProblems := 0
			if strings.Contains(tt.file, "escape") {
				wantProblems = 1 // the ESC removed from JOBNAME
			}
			if len(problems) != wantProblems {
				t.Errorf("problems = %q, want %d", problems, wantProblems)
			}
		})
	}
}

// jobcompEnv is a complete jobcomp environment of an array task on a
// cluster with accounting, in the shape of the 22.05 fixtures.
func jobcompEnv() map[string]string {
	return map[string]string{
		"JOBID": "4242", "ARRAYJOBID": "4240", "ARRAYTASKID": "2", "UID": "1000", "GID": "100",
		"USERNAME": "alice", "GROUPNAME": "users", "JOBNAME": "train", "JOBSTATE": "COMPLETED",
		"PARTITION": "gpu", "QOS": "normal", "ACCOUNT": "vision", "CLUSTER": "lab",
		"NODES": "gpu[01-02]", "NODECNT": "2", "PROCS": "16", "SUBMIT": "1700000000",
		"START": "1700000600", "END": "1700004200", "ELIGIBLE": "1700000100", "LIMIT": "1-00:00:00",
		"EXITCODE": "0:0", "DERIVED_EC": "0:0", "BATCH": "yes", "WORK_DIR": "/home/alice",
		"RESERVATION": "", "DEPENDENCY": "", "CONSTRAINTS": "h100", "STATEREASONPREV": "Resources",
		"DB_FLAGS": "SchedBackfill", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
	}
}

func jobcompWant() JobRecord {
	return JobRecord{
		Cluster: "lab", JobID: "4242", DisplayID: "4240_2", ArrayJobID: "4240", ArrayTaskID: 2,
		HetOffset: -1, Name: "train", User: "alice", UID: 1000, Account: "vision", Partition: "gpu",
		QOS: "normal", State: "COMPLETED", CancelledBy: -1, Reason: "Resources",
		Submit: epochUTC(1700000000), Eligible: epochUTC(1700000100), Start: epochUTC(1700000600), End: epochUTC(1700004200),
		TimeLimit: 24 * time.Hour, NodeList: "gpu[01-02]", NodeCount: 2, CPUs: 16, Source: "jobcomp",
	}
}

func TestParseJobCompEnv(t *testing.T) {
	tests := []struct {
		name         string
		changes      map[string]string // "" deletes
		edit         func(*JobRecord)
		wantProblems []string // substrings, in order
	}{
		{name: "complete array task"},
		{
			name:    "not an array job",
			changes: map[string]string{"ARRAYJOBID": "0", "ARRAYTASKID": "4294967294"},
			edit:    func(r *JobRecord) { r.DisplayID, r.ArrayJobID, r.ArrayTaskID = "4242", "", -1 },
		},
		{
			name:    "array variables absent",
			changes: map[string]string{"ARRAYJOBID": "", "ARRAYTASKID": ""},
			edit:    func(r *JobRecord) { r.DisplayID, r.ArrayJobID, r.ArrayTaskID = "4242", "", -1 },
		},
		{
			name:    "leading zeros normalised",
			changes: map[string]string{"ARRAYJOBID": "04240", "ARRAYTASKID": "002"},
		},
		{
			name:    "het component",
			changes: map[string]string{"ARRAYJOBID": "0", "ARRAYTASKID": "4294967294", "HETJOBID": "4241", "HETJOBOFFSET": "1"},
			edit: func(r *JobRecord) {
				r.DisplayID, r.ArrayJobID, r.ArrayTaskID, r.HetJobID, r.HetOffset = "4241+1", "", -1, "4241", 1
			},
		},
		{
			name:    "het by the old PACK names",
			changes: map[string]string{"ARRAYJOBID": "0", "ARRAYTASKID": "4294967294", "PACKJOBID": "4241", "PACKJOBOFFSET": "0"},
			edit: func(r *JobRecord) {
				r.DisplayID, r.ArrayJobID, r.ArrayTaskID, r.HetJobID, r.HetOffset = "4241+0", "", -1, "4241", 0
			},
		},
		{
			name:         "het offset malformed",
			changes:      map[string]string{"ARRAYJOBID": "0", "HETJOBID": "4241", "HETJOBOFFSET": "x"},
			edit:         func(r *JobRecord) { r.DisplayID, r.ArrayJobID, r.ArrayTaskID, r.HetJobID = "4242", "", -1, "4241" },
			wantProblems: []string{"HETJOBOFFSET: not a component offset"},
		},
		{
			name:    "unlimited, failed with signal, derived exit",
			changes: map[string]string{"LIMIT": "UNLIMITED", "JOBSTATE": "FAILED", "EXITCODE": "0:9", "DERIVED_EC": "3:0"},
			edit: func(r *JobRecord) {
				r.TimeLimit, r.Unlimited, r.State, r.ExitSignal, r.DerivedStatus = 0, true, "FAILED", 9, 3
			},
		},
		{
			name:    "old jobcomp LIMIT in minutes",
			changes: map[string]string{"LIMIT": "90"},
			edit:    func(r *JobRecord) { r.TimeLimit = 90 * time.Minute },
		},
		{
			name:    "no accounting: empty CLUSTER and QOS, no ELIGIBLE (22.05)",
			changes: map[string]string{"CLUSTER": "", "QOS": "", "ELIGIBLE": ""},
			edit:    func(r *JobRecord) { r.Cluster, r.QOS, r.Eligible = "", "", time.Time{} },
		},
		{
			name:    "cancelled while pending",
			changes: map[string]string{"JOBSTATE": "CANCELLED", "START": "0", "NODES": "", "NODECNT": "0"},
			edit: func(r *JobRecord) {
				r.State, r.Start, r.NodeList, r.NodeCount = "CANCELLED", time.Time{}, "", 0
			},
		},
		{
			name:    "hostile name sanitised",
			changes: map[string]string{"JOBNAME": "x\x1b[2J\ny\u202e" + strings.Repeat("z", 5000)},
			edit:    func(r *JobRecord) { r.Name = "x[2Jy" + strings.Repeat("z", MaxFieldBytes-5) },
			wantProblems: []string{
				"JOBNAME: removed or replaced 3 control or invalid characters",
				"JOBNAME: truncated from 5010 to 4096 bytes",
			},
		},
		{
			name: "every malformed value noted, fields unknown",
			changes: map[string]string{
				"UID": "alice", "JOBSTATE": "EXPLODED", "LIMIT": "soon", "EXITCODE": "3", "DERIVED_EC": "x:y",
				"SUBMIT": "yesterday", "START": "-1", "END": "99999999999999", "ELIGIBLE": "1.5",
				"NODECNT": "two", "PROCS": "-16", "NODES": "gpu[01-", "ARRAYJOBID": "abc",
			},
			edit: func(r *JobRecord) {
				r.UID, r.State, r.TimeLimit, r.NodeCount, r.CPUs = -1, "", 0, 0, 0
				r.Submit, r.Start, r.End, r.Eligible = time.Time{}, time.Time{}, time.Time{}, time.Time{}
				r.NodeList, r.DisplayID, r.ArrayJobID, r.ArrayTaskID = "gpu[01-", "4242", "", -1
			},
			wantProblems: []string{
				"UID: not a user or group id", "SUBMIT: not a time", "ELIGIBLE: not a time",
				"START: not a time", "END: not a time", "NODECNT: not a non-negative number",
				"PROCS: not a non-negative number", "NODES: hostlist", "JOBSTATE: job state",
				"LIMIT: duration", "EXITCODE: exit code", "DERIVED_EC: exit code", "ARRAYJOBID: not a job id",
			},
		},
		{
			name:         "array task index NO_VAL+1 and out of int range",
			changes:      map[string]string{"ARRAYTASKID": "3000000000"},
			edit:         func(r *JobRecord) { r.DisplayID, r.ArrayTaskID = "4242", -1 },
			wantProblems: []string{"ARRAYTASKID: array index 3000000000 out of range"},
		},
		{
			name:    "array task INFINITE treated as none",
			changes: map[string]string{"ARRAYTASKID": "4294967295"},
			edit:    func(r *JobRecord) { r.DisplayID, r.ArrayTaskID = "4242", -1 },
		},
		{
			name:    "SLUID job id (25.11)",
			changes: map[string]string{"JOBID": "sC8F3K2M1A0Z", "ARRAYJOBID": "0"},
			edit: func(r *JobRecord) {
				r.JobID, r.DisplayID, r.ArrayJobID, r.ArrayTaskID = "sC8F3K2M1A0Z", "sC8F3K2M1A0Z", "", -1
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems, err := ParseJobCompEnv(with(jobcompEnv(), tt.changes))
			if err != nil {
				t.Fatal(err)
			}
			want := jobcompWant()
			if tt.edit != nil {
				tt.edit(&want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("record:\n got %+v\nwant %+v", got, want)
			}
			if len(problems) != len(tt.wantProblems) {
				t.Fatalf("problems = %q, want %d matching %q", problems, len(tt.wantProblems), tt.wantProblems)
			}
			for i, p := range problems {
				if !strings.Contains(p, tt.wantProblems[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, p, tt.wantProblems[i])
				}
				if CheckMessage(p) != nil {
					t.Errorf("problem %d unbounded or unescaped: %q", i, p)
				}
			}
		})
	}
}

func TestParseJobCompEnvBadJobID(t *testing.T) {
	for _, tt := range []struct{ name, id string }{
		{name: "missing", id: ""},
		{name: "shell characters", id: "1;reboot"},
		{name: "newline", id: "1\n2"},
		{name: "too long", id: strings.Repeat("1", 65)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := maps.Clone(jobcompEnv())
			env["JOBID"] = tt.id
			got, problems, err := ParseJobCompEnv(func(k string) string { return env[k] })
			if !errors.Is(err, ErrBadEnv) {
				t.Fatalf("err = %v, want ErrBadEnv", err)
			}
			checkErrorMessage(t, err)
			if !reflect.DeepEqual(got, JobRecord{}) || problems != nil {
				t.Fatalf("got %+v, %q with an error", got, problems)
			}
		})
	}
}
