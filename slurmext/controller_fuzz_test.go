package slurmext

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for the controller-side parsers (jobcomp, sacct). Each holds
// the invariants that make the parsers safe on hostile input: no panic,
// bounded output, errors wrapping the package's sentinels with escaped
// messages, and text fields that cannot forge log lines.

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"00:10:00", "1-00:00:00", "5:30", "D-HH", "3-12", "1-02:30", "120", "01:02.345",
		"UNLIMITED", "INFINITE", "Partition_Limit", "", "106751-23:47:16.854775807", "1-24:00:00", "-5", "00:00:60",
		"1796210788", "2026-12-02T11:26:28", "Unknown", "2026-12-02T11:26:28+01:00", "1.5e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, unlimited, err := ParseDuration(s)
		if err != nil {
			if !errors.Is(err, ErrBadDuration) || d != 0 || unlimited {
				t.Fatalf("ParseDuration(%q) = %v, %v, %v", s, d, unlimited, err)
			}
			checkErrorMessage(t, err)
		} else {
			if d < 0 || unlimited && d != 0 {
				t.Fatalf("ParseDuration(%q) = %v, %v", s, d, unlimited)
			}
			back, u2, err := ParseDuration(FormatDuration(d, unlimited))
			if err != nil || u2 != unlimited || back != d.Truncate(time.Second) {
				t.Fatalf("round trip of ParseDuration(%q) = %v via %q gives %v, %v, %v",
					s, d, FormatDuration(d, unlimited), back, u2, err)
			}
		}
		// The same text as a time stamp.
		tm, err := ParseSlurmTime(s, time.FixedZone("X", -5*3600))
		if err != nil {
			if !errors.Is(err, ErrBadTime) || !tm.IsZero() {
				t.Fatalf("ParseSlurmTime(%q) = %v, %v", s, tm, err)
			}
			checkErrorMessage(t, err)
		} else if !tm.IsZero() && (tm.Unix() < 0 || tm.Unix() > MaxUnixSeconds || tm.Location() != time.UTC) {
			t.Fatalf("ParseSlurmTime(%q) = %v", s, tm)
		}
	})
}

func FuzzParseState(f *testing.F) {
	for _, s := range []string{"COMPLETED", "CANCELLED by 1000", "CANCELLED+", "OUT_OF_ME+", "RE+", "cd", "PD",
		"CANCELLED by 10+", "FAILED by 1", "CANCELLED by 4294967295", "+", "", "REQUEUE_HOLD", "ÇANCELLED"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		state, by, err := ParseState(s)
		if err != nil {
			if !errors.Is(err, ErrBadState) || state != "" || by != -1 {
				t.Fatalf("ParseState(%q) = %q, %d, %v", s, state, by, err)
			}
			checkErrorMessage(t, err)
			return
		}
		if !state.Known() || by < -1 || by > math.MaxUint32-1 || by >= 0 && state != "CANCELLED" {
			t.Fatalf("ParseState(%q) = %q, %d", s, state, by)
		}
		if again, _, err := ParseState(string(state)); err != nil || again != state {
			t.Fatalf("ParseState(%q) = %q, %v; not a fixed point", state, again, err)
		}
	})
}

func FuzzParseTRES(f *testing.F) {
	for _, s := range []string{"billing=4,cpu=4,gres/gpu=2,mem=16G,node=1", "gres/gpu:h100=2", "gres/gpu=2,gres/gpu:h100=2",
		"gres/shard=3", "gres/mps=50", "cpu=1,cpu=2", "=", ",", "gres/gpu:a\x1b=1", "gres/gpu=99999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseTRES(s)
		cerr := CheckTRES(s)
		if err != nil {
			if !errors.Is(err, ErrBadTRES) || m != nil {
				t.Fatalf("ParseTRES(%q) = %v, %v", s, m, err)
			}
			checkErrorMessage(t, err)
		} else {
			if cerr != nil {
				t.Fatalf("CheckTRES(%q) = %v but ParseTRES accepts it", s, cerr)
			}
			if len(m) > MaxTRESItems {
				t.Fatalf("ParseTRES(%q) has %d items", s, len(m))
			}
			for k, v := range m {
				if k == "" || v == "" || strings.TrimSpace(k) != k || strings.TrimSpace(v) != v {
					t.Fatalf("ParseTRES(%q) has item %q=%q", s, k, v)
				}
			}
		}
		if cerr != nil {
			checkErrorMessage(t, cerr)
		}
		gpus, typ, shards := GPUsFromTRES(s)
		if gpus < 0 || shards < 0 || gpus > math.MaxInt32 || shards > math.MaxInt32 {
			t.Fatalf("GPUsFromTRES(%q) = %d, %q, %d", s, gpus, typ, shards)
		}
		for t1 := range strings.SplitSeq(typ, ",") {
			if typ != "" && !validGresType(t1) {
				t.Fatalf("GPUsFromTRES(%q) type %q", s, typ)
			}
		}
	})
}

func FuzzParseJobID(f *testing.F) {
	for _, s := range []string{"123", "123_4", "123_[1-5%2]", "123_[1,3,5]", "123+0", "123.batch", "123.0", "123.extern",
		"6_1.batch", "12+1.0", "12.0+1", "sC8F3K2M1A0Z", "_", "123_", "1;reboot", "123_4+0", "123.", "  7  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseJobID(s)
		if err != nil {
			if !errors.Is(err, ErrBadJobID) || p != (JobIDParts{}) {
				t.Fatalf("ParseJobID(%q) = %+v, %v", s, p, err)
			}
			checkErrorMessage(t, err)
			return
		}
		if !validBaseID(p.Base) || p.ArrayTaskID < -1 || p.HetOffset < -1 ||
			p.ArrayTaskID >= 0 && p.HetOffset >= 0 || p.ArrayTaskSpec != "" && p.ArrayTaskID >= 0 {
			t.Fatalf("ParseJobID(%q) = %+v", s, p)
		}
		whole := p.Job
		if p.IsStep() {
			whole += "." + p.Step
		}
		if whole != strings.TrimSpace(s) || !strings.HasPrefix(p.Job, p.Base) {
			t.Fatalf("ParseJobID(%q) = %+v does not reassemble", s, p)
		}
		if !p.IsStep() && p.ArrayTaskSpec == "" && !ValidJobID(p.Job) {
			t.Fatalf("ParseJobID(%q) accepted job %q that ValidJobID refuses", s, p.Job)
		}
	})
}

// checkRecord holds for every record any parser returns.
func checkRecord(t *testing.T, r JobRecord) {
	t.Helper()
	if err := CheckRecord(r); err != nil {
		t.Fatal(err)
	}
}

func checkNotes(t *testing.T, notes []string) {
	t.Helper()
	for _, p := range notes {
		if err := CheckMessage(p); err != nil {
			t.Fatal(err)
		}
	}
}

func addFixtureSeeds(f *testing.F, dir string, add func(string)) {
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 32<<10 {
			add(string(b))
		}
	}
}

func FuzzParseJobCompEnv(f *testing.F) {
	f.Add("4242", "4240", "2", "1000", "train", "COMPLETED", "1-00:00:00", "3:0", "1700000000", "gpu[01-02]", "4241", "1")
	f.Add("", "0", "4294967294", "", "", "", "", "", "", "", "", "")
	f.Add("1;x", "abc", "x", "-1", "\x1b[2J\u202e", "CANCELLED by 5", "soon", "3", "-1", "gpu[01-", "0", "x")
	f.Add("sC8F3K2M1A0Z", "99999999999", "4294967295", "4294967295", strings.Repeat("n", 5000), "CANCELLED+", "UNLIMITED", "255:127", "253402300800", "n[0-4294967295]", "1", "2147483648")
	f.Fuzz(func(t *testing.T, jobID, arrayJob, arrayTask, uid, name, state, limit, exit, start, nodes, het, hetOff string) {
		env := map[string]string{
			"JOBID": jobID, "ARRAYJOBID": arrayJob, "ARRAYTASKID": arrayTask, "UID": uid, "JOBNAME": name,
			"USERNAME": name, "JOBSTATE": state, "LIMIT": limit, "EXITCODE": exit, "DERIVED_EC": exit,
			"SUBMIT": start, "START": start, "END": start, "ELIGIBLE": start, "NODES": nodes, "NODECNT": arrayTask,
			"PROCS": uid, "HETJOBID": het, "HETJOBOFFSET": hetOff, "STATEREASONPREV": name, "CLUSTER": nodes,
		}
		r, problems, err := ParseJobCompEnv(func(k string) string { return env[k] })
		if err != nil {
			if !errors.Is(err, ErrBadEnv) || ValidJobID(jobID) || problems != nil {
				t.Fatalf("ParseJobCompEnv: %v (job id %q valid: %v), problems %q", err, jobID, ValidJobID(jobID), problems)
			}
			checkErrorMessage(t, err)
			return
		}
		if r.JobID != jobID {
			t.Fatalf("JobID = %q from %q", r.JobID, jobID)
		}
		checkRecord(t, r)
		checkNotes(t, problems)
		if r.Source != "jobcomp" || r.ReqGPUs != 0 || r.ReqTRES != "" {
			t.Fatalf("jobcomp record with sacct-only fields: %+v", r)
		}
	})
}
