package sacct

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// capturedFields is the --format of the 22.05 captures in testdata/sacct
// (Format when they were taken).
func capturedFields() []string {
	return strings.Split("JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS,Submit,Eligible,Start,End,"+
		"Elapsed,Timelimit,State,ExitCode,DerivedExitCode,NodeList,NNodes,NCPUS,ReqTRES,AllocTRES,Reason,Cluster", ",")
}

// readAllSacct reads every record, collecting skipped lines and problems.
func readAllSacct(t *testing.T, r *Reader) (recs []slurmext.JobRecord, lineErrs []*LineError, problems map[string][]string) {
	t.Helper()
	problems = make(map[string][]string)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs, lineErrs, problems
		}
		var le *LineError
		if errors.As(err, &le) {
			lineErrs = append(lineErrs, le)
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if p := r.Problems(); len(p) > 0 {
			problems[rec.JobID] = append([]string(nil), p...)
		}
		recs = append(recs, rec)
	}
}

func openFixture(t *testing.T, parts ...string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(append([]string{fixtures}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// fixtureBase is what the jobs of the 22.05 capture share.
func fixtureBase() slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: "gpuproftest", ArrayTaskID: -1, HetOffset: -1, User: "root", UID: 0, Account: "root",
		Partition: "gpu", QOS: "normal", CancelledBy: -1, Reason: "None", NodeList: "localhost",
		NodeCount: 1, CPUs: 1, GPUsFrom: slurmext.GPUsFromReqTRES, Source: "sacct",
	}
}

func fixtureRecord(edit func(*slurmext.JobRecord)) slurmext.JobRecord {
	r := fixtureBase()
	edit(&r)
	return r
}

// fixtureWant holds the expected records of a few jobs of the 22.05 capture.
func fixtureWant() map[string]slurmext.JobRecord {
	ts := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02T15:04:05", "2026-12-02T"+s)
		if err != nil {
			panic(err)
		}
		return tm
	}
	return map[string]slurmext.JobRecord{
		"1": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "1", "1", "ok", "COMPLETED"
			r.Submit, r.Eligible, r.Start, r.End = ts("11:26:28"), ts("11:26:28"), ts("11:26:29"), ts("11:26:31")
			r.TimeLimit, r.ReqGPUs = 10*time.Minute, 2
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,gres/gpu=2,mem=16000M,node=1", "billing=1,cpu=1,gres/gpu=2,node=1"
		}),
		"2": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "2", "2", "fail3", "FAILED"
			r.Submit, r.Eligible, r.Start, r.End = ts("11:26:28"), ts("11:26:28"), ts("11:26:29"), ts("11:26:29")
			r.TimeLimit, r.ExitStatus = 5*time.Minute, 3
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,mem=16000M,node=1", "billing=1,cpu=1,node=1"
		}),
		"3": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "3", "3", "name|with|pipes", "COMPLETED"
			r.Submit, r.Eligible, r.Start, r.End = ts("11:26:28"), ts("11:26:28"), ts("11:26:29"), ts("11:26:30")
			r.Unlimited, r.ReqShards = true, 3
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,gres/shard=3,mem=16000M,node=1", "billing=1,cpu=1,gres/shard=3,node=1"
		}),
		"9": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State, r.CancelledBy = "9", "9", "cxl", "CANCELLED", 0
			r.Submit, r.Eligible, r.Start, r.End = ts("11:26:28"), ts("11:26:28"), ts("11:26:30"), ts("11:26:30")
			r.NodeList, r.ReqTRES = "", "billing=1,cpu=1,mem=16000M,node=1" // Partition_Limit: unknown
		}),
		"10": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.ArrayJobID, r.ArrayTaskID, r.Name, r.State = "10", "6_1", "6", 1, "arr", "COMPLETED"
			r.Submit, r.Eligible, r.Start, r.End = ts("11:26:28"), ts("11:26:29"), ts("11:26:29"), ts("11:26:32")
			r.TimeLimit, r.ReqGPUs = 24*time.Hour, 1
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,gres/gpu=1,mem=16000M,node=1", "billing=1,cpu=1,gres/gpu=1,node=1"
		}),
		"13": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.HetJobID, r.HetOffset, r.Name, r.State, r.CancelledBy = "13", "12+1", "12", 1, "het", "CANCELLED", 0
			r.Submit, r.Eligible, r.End = ts("11:26:30"), ts("11:26:30"), ts("11:28:13") // Start None
			r.TimeLimit, r.ReqGPUs, r.NodeList = 3*time.Minute, 1, ""
			r.ReqTRES = "billing=1,cpu=1,gres/gpu=1,mem=16000M,node=1"
		}),
		"14": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "14", "14", "ctl[31mred", "COMPLETED"
			r.Submit, r.Eligible, r.Start, r.End = ts("11:26:30"), ts("11:26:30"), ts("11:28:13"), ts("11:28:13")
			r.Unlimited = true
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,mem=16000M,node=1", "billing=1,cpu=1,node=1"
		}),
		"24": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "24", "24", "nlx", "COMPLETED" // "nl\nx", joined, then cleaned
			r.Submit, r.Eligible, r.Start, r.End = ts("11:28:17"), ts("11:28:17"), ts("11:29:31"), ts("11:29:31")
			r.Unlimited = true
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,mem=100M,node=1", "billing=1,cpu=1,node=1"
		}),
		"27": fixtureRecord(func(r *slurmext.JobRecord) {
			r.JobID, r.DisplayID, r.Name, r.State = "27", "27", "running", "RUNNING"
			r.Submit, r.Eligible, r.Start = ts("11:33:12"), ts("11:33:12"), ts("11:33:13") // End Unknown
			r.TimeLimit, r.ReqGPUs = 30*time.Minute, 1
			r.ReqTRES, r.AllocTRES = "billing=1,cpu=1,gres/gpu=1,mem=100M,node=1", "billing=1,cpu=1,gres/gpu=1,node=1"
		}),
	}
}

// TestSacctReaderFixtures reads the same jobs captured three ways (-P with
// steps and ISO times and a header, -X -P epoch times without a header,
// -X -p with trailing '|') and wants the same records from each.
func TestSacctReaderFixtures(t *testing.T) {
	files := []struct {
		name  string
		steps int
	}{
		{"22.05-P-steps-iso.txt", 21},
		{"22.05-XP-epoch-noheader.txt", 0},
		{"22.05-Xp-trailing-pipe.txt", 0},
	}
	var first []slurmext.JobRecord
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			r := NewReader(openFixture(t, "sacct", f.name), capturedFields(), Options{Cluster: "unused"})
			recs, lineErrs, problems := readAllSacct(t, r)
			if len(lineErrs) != 0 {
				t.Fatalf("skipped lines: %v", lineErrs)
			}
			if len(recs) != 26 || r.StepsSkipped() != f.steps {
				t.Fatalf("%d records, %d steps skipped; want 26, %d", len(recs), r.StepsSkipped(), f.steps)
			}
			wantProblems := map[string][]string{
				"14": {"JobName: removed or replaced 1 control or invalid characters"},
				"24": {"JobName: removed or replaced 1 control or invalid characters"},
			}
			if !reflect.DeepEqual(problems, wantProblems) {
				t.Errorf("problems = %q, want %q", problems, wantProblems)
			}
			want := fixtureWant()
			seen := 0
			for _, rec := range recs {
				w, ok := want[rec.JobID]
				if !ok {
					continue
				}
				seen++
				if !reflect.DeepEqual(rec, w) {
					t.Errorf("job %s:\n got %+v\nwant %+v", rec.JobID, rec, w)
				}
			}
			if seen != len(want) {
				t.Errorf("found %d of the %d expected jobs", seen, len(want))
			}
			if first == nil {
				first = recs
			} else if !reflect.DeepEqual(recs, first) {
				t.Errorf("records differ from those of %s", files[0].name)
			}
		})
	}
}

func TestSacctReaderDuplicates(t *testing.T) {
	r := NewReader(openFixture(t, "sacct", "22.05-P-duplicates.txt"), capturedFields(), Options{})
	recs, lineErrs, _ := readAllSacct(t, r)
	if len(lineErrs) != 0 || len(recs) != 3 || r.StepsSkipped() != 2 {
		t.Fatalf("%d records, %v skipped, %d steps; want 3, none, 2", len(recs), lineErrs, r.StepsSkipped())
	}
	pending := recs[0]
	if pending.JobID != "25" || pending.DisplayID != "25_[1-4]" || pending.ArrayJobID != "25" ||
		pending.ArrayTaskSpec != "1-4" || pending.ArrayTaskID != -1 || pending.State != "CANCELLED" || pending.CancelledBy != 0 {
		t.Errorf("pending array = %+v", pending)
	}
	if recs[1].JobID != "26" || recs[1].State != "REQUEUED" || recs[2].JobID != "26" || recs[2].State != "COMPLETED" {
		t.Errorf("requeued job: %s %s, then %s %s; want 26 REQUEUED, then 26 COMPLETED",
			recs[1].JobID, recs[1].State, recs[2].JobID, recs[2].State)
	}
}

// sacctLine renders one -P line of the default fields for a job; changes
// replace fields by name.
func sacctLine(id string, changes map[string]string) string {
	values := map[string]string{
		"JobID": id, "JobIDRaw": id, "JobName": "train", "User": "alice", "UID": "1000",
		"Account": "vision", "Partition": "gpu", "QOS": "normal", "Submit": "1700000000",
		"Eligible": "1700000000", "Start": "1700000600", "End": "1700004200", "Elapsed": "01:00:00",
		"Timelimit": "02:00:00", "State": "COMPLETED", "ExitCode": "0:0", "DerivedExitCode": "0:0",
		"NodeList": "gpu01", "NNodes": "1", "NCPUS": "8", "ReqTRES": "billing=8,cpu=8,gres/gpu:h100=2,gres/gpu=2,mem=64G,node=1",
		"AllocTRES": "billing=8,cpu=8,gres/gpu:h100=2,gres/gpu=2,mem=64G,node=1", "Reason": "Priority", "Cluster": "lab",
	}
	for k, v := range changes {
		values[k] = v
	}
	fields := Fields()
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = values[f]
	}
	return strings.Join(out, "|")
}

func sacctWant(id string) slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: "lab", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, Name: "train",
		User: "alice", UID: 1000, Account: "vision", Partition: "gpu", QOS: "normal", State: "COMPLETED",
		CancelledBy: -1, Reason: "Priority", Submit: epochUTC(1700000000), Eligible: epochUTC(1700000000),
		Start: epochUTC(1700000600), End: epochUTC(1700004200), TimeLimit: 2 * time.Hour,
		NodeList: "gpu01", NodeCount: 1, CPUs: 8, ReqGPUs: 2, ReqGPUType: "h100",
		ReqTRES:   "billing=8,cpu=8,gres/gpu:h100=2,gres/gpu=2,mem=64G,node=1",
		AllocTRES: "billing=8,cpu=8,gres/gpu:h100=2,gres/gpu=2,mem=64G,node=1", GPUsFrom: slurmext.GPUsFromReqTRES, Source: "sacct",
	}
}

func TestSacctReader(t *testing.T) {
	header := strings.Join(Fields(), "|")
	type lineErr struct {
		line int
		is   error
	}
	tests := []struct {
		name     string
		input    string
		fields   []string // nil: Fields()
		opts     Options
		want     []slurmext.JobRecord
		lineErrs []lineErr
		problems map[string][]string // job id → substrings
		steps    int
	}{
		{
			name:  "header and one job",
			input: header + "\n" + sacctLine("100", nil) + "\n",
			want:  []slurmext.JobRecord{sacctWant("100")},
		},
		{
			name:  "no header, no final newline",
			input: sacctLine("100", nil),
			want:  []slurmext.JobRecord{sacctWant("100")},
		},
		{
			name:  "header in other case, CRLF, blank lines",
			input: strings.ToUpper(header) + "\r\n\r\n" + sacctLine("100", nil) + "\r\n\n",
			want:  []slurmext.JobRecord{sacctWant("100")},
		},
		{
			name:  "concatenated outputs, a header each",
			input: header + "\n" + sacctLine("100", nil) + "\n" + header + "\n" + sacctLine("101", nil) + "\n",
			want:  []slurmext.JobRecord{sacctWant("100"), sacctWant("101")},
		},
		{
			name:  "-p: trailing pipe",
			input: header + "|\n" + sacctLine("100", nil) + "|\n" + sacctLine("101", map[string]string{"Cluster": ""}) + "|\n",
			want: []slurmext.JobRecord{sacctWant("100"), func() slurmext.JobRecord {
				r := sacctWant("101")
				r.Cluster = ""
				return r
			}()},
		},
		{
			name:  "steps skipped",
			input: sacctLine("100", nil) + "\n" + sacctLine("100.batch", map[string]string{"JobIDRaw": "100.batch"}) + "\n" + sacctLine("100.extern", nil) + "\n" + sacctLine("100.0", nil) + "\n",
			// The steps were read, with TotalCPU and MaxRSS empty: sacct
			// has none of either for the job.
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.Usage.TotalCPURead, r.Usage.MemPeakRead = true, true
				return r
			}()},
			steps: 3,
		},
		{
			name:  "one pipe in the name",
			input: sacctLine("100", map[string]string{"JobName": "a|b"}) + "\n" + sacctLine("101", nil) + "\n",
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.Name = "a|b"
				return r
			}(), sacctWant("101")},
		},
		{
			name:  "pipes only in the name",
			input: sacctLine("100", map[string]string{"JobName": "||"}) + "\n" + sacctLine("101", nil) + "\n",
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.Name = "||"
				return r
			}(), sacctWant("101")},
		},
		{
			name:  "newline in the name",
			input: header + "\n" + sacctLine("100", map[string]string{"JobName": "a\nb"}) + "\n" + sacctLine("101", nil) + "\n",
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.Name = "ab"
				return r
			}(), sacctWant("101")},
			problems: map[string][]string{"100": {"JobName: removed or replaced 1 control"}},
		},
		{
			name:  "two newlines and a pipe in the name",
			input: sacctLine("100", map[string]string{"JobName": "a\n|b\nc"}) + "\n" + sacctLine("101", nil) + "\n",
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.Name = "a|bc"
				return r
			}(), sacctWant("101")},
			problems: map[string][]string{"100": {"JobName: removed or replaced 2 control"}},
		},
		{
			name:     "truncated last line",
			input:    sacctLine("100", nil) + "\n" + sacctLine("101", nil)[:40],
			want:     []slurmext.JobRecord{sacctWant("100")},
			lineErrs: []lineErr{{2, ErrMalformed}},
		},
		{
			name:     "short line before the JobName column is not joined",
			input:    "100|100\n" + sacctLine("101", nil) + "\n",
			want:     []slurmext.JobRecord{sacctWant("101")},
			lineErrs: []lineErr{{1, ErrMalformed}},
		},
		{
			name:     "short line is not joined with a complete one",
			input:    sacctLine("100", nil)[:60] + "\n" + sacctLine("101", nil) + "\n",
			want:     []slurmext.JobRecord{sacctWant("101")},
			lineErrs: []lineErr{{1, ErrMalformed}},
		},
		{
			name:     "line too long is skipped, the rest read",
			input:    sacctLine("100", map[string]string{"JobName": strings.Repeat("x", 3000)}) + "\n" + sacctLine("101", nil) + "\n",
			opts:     Options{MaxLineBytes: 1000},
			want:     []slurmext.JobRecord{sacctWant("101")},
			lineErrs: []lineErr{{1, slurmext.ErrTooLarge}},
		},
		{
			name:     "overlong line met while joining is reported after",
			input:    sacctLine("100", nil)[:60] + "\n" + strings.Repeat("y|", 600) + "\n" + sacctLine("102", nil) + "\n" + sacctLine("103", nil) + "\n",
			opts:     Options{MaxLineBytes: 1000},
			want:     []slurmext.JobRecord{sacctWant("102"), sacctWant("103")},
			lineErrs: []lineErr{{1, ErrMalformed}, {2, slurmext.ErrTooLarge}},
		},
		{
			name:     "bad job id",
			input:    sacctLine("1;reboot", nil) + "\n" + sacctLine("101", nil) + "\n",
			want:     []slurmext.JobRecord{sacctWant("101")},
			lineErrs: []lineErr{{1, slurmext.ErrBadJobID}},
		},
		{
			name:     "bad JobIDRaw",
			input:    sacctLine("100", map[string]string{"JobIDRaw": "x y"}) + "\n" + sacctLine("101", nil) + "\n",
			want:     []slurmext.JobRecord{sacctWant("101")},
			lineErrs: []lineErr{{1, slurmext.ErrBadJobID}},
		},
		{
			name:     "surplus columns without a JobName column",
			fields:   []string{"JobIDRaw", "State"},
			input:    "100|COMPLETED|x\n101|FAILED\n",
			want:     []slurmext.JobRecord{{JobID: "101", ArrayTaskID: -1, HetOffset: -1, UID: -1, State: "FAILED", CancelledBy: -1, ExitUnknown: true, Source: "sacct"}},
			lineErrs: []lineErr{{1, ErrMalformed}},
		},
		{
			name:   "array, het and pending array ids",
			fields: []string{"JobID", "JobIDRaw", "State"},
			input:  "6_1|10|COMPLETED\n12+1|13|CANCELLED by 1000\n25_[1-4%2]|25|PENDING\n",
			want: []slurmext.JobRecord{
				{JobID: "10", DisplayID: "6_1", ArrayJobID: "6", ArrayTaskID: 1, HetOffset: -1, UID: -1, State: "COMPLETED", CancelledBy: -1, ExitUnknown: true, Source: "sacct"},
				{JobID: "13", DisplayID: "12+1", ArrayTaskID: -1, HetJobID: "12", HetOffset: 1, UID: -1, State: "CANCELLED", CancelledBy: 1000, ExitUnknown: true, Source: "sacct"},
				{JobID: "25", DisplayID: "25_[1-4%2]", ArrayJobID: "25", ArrayTaskID: -1, ArrayTaskSpec: "1-4%2", HetOffset: -1, UID: -1, State: "PENDING", CancelledBy: -1, ExitUnknown: true, Source: "sacct"},
			},
		},
		{
			name:     "array task without JobIDRaw",
			fields:   []string{"JobID", "State"},
			input:    "6_1|COMPLETED\n7|FAILED\n",
			want:     []slurmext.JobRecord{{JobID: "7", DisplayID: "7", ArrayTaskID: -1, HetOffset: -1, UID: -1, State: "FAILED", CancelledBy: -1, ExitUnknown: true, Source: "sacct"}},
			lineErrs: []lineErr{{1, ErrMalformed}},
		},
		{
			name:   "JobIDRaw alone, widths, unknown fields, other names",
			fields: []string{"JobIDRaw", "JobName%30", "Comment", "AllocCPUS", "TimelimitRaw", "State%20"},
			input:  "7|x|hello|4|90|CD\n",
			opts:   Options{Cluster: "default"},
			want: []slurmext.JobRecord{{Cluster: "default", JobID: "7", ArrayTaskID: -1, HetOffset: -1, Name: "x", UID: -1,
				CPUs: 4, TimeLimit: 90 * time.Minute, State: "COMPLETED", CancelledBy: -1, ExitUnknown: true, Source: "sacct"}},
		},
		{
			name:   "ISO times read in the given zone",
			fields: []string{"JobIDRaw", "Start", "End"},
			input:  "7|2026-11-03T14:05:01|Unknown\n",
			opts:   Options{Location: time.FixedZone("CET", 3600)},
			want: []slurmext.JobRecord{{JobID: "7", ArrayTaskID: -1, HetOffset: -1, UID: -1, CancelledBy: -1,
				Start: time.Date(2026, 11, 3, 13, 5, 1, 0, time.UTC), ExitUnknown: true, Source: "sacct"}},
		},
		{
			name: "malformed values noted, fields unknown",
			input: sacctLine("100", map[string]string{
				"UID": "x", "Submit": "yesterday", "Timelimit": "soon", "State": "EXPLODED", "ExitCode": "3",
				"NNodes": "-1", "NodeList": "gpu[01-", "ReqTRES": "gres/gpu=2,junk", "AllocTRES": "cpu=",
			}) + "\n" + sacctLine("101", nil) + "\n",
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.UID, r.Submit, r.TimeLimit, r.State, r.NodeCount = -1, time.Time{}, 0, "", 0
				r.ExitUnknown = true // "3" is no exit code
				r.NodeList, r.ReqTRES, r.AllocTRES, r.ReqGPUType = "gpu[01-", "gres/gpu=2,junk", "cpu=", ""
				return r
			}(), sacctWant("101")},
			problems: map[string][]string{"100": {
				"UID: not a user or group id", "Submit: time", "State: job state", "Timelimit: duration",
				"ExitCode: exit code", "NNodes: not a non-negative number", "NodeList: hostlist",
				"ReqTRES: TRES", "AllocTRES: TRES",
			}},
		},
		{
			name:  "None assigned is no node list",
			input: sacctLine("100", map[string]string{"NodeList": "None assigned", "State": "PENDING", "Start": "Unknown", "End": "Unknown"}) + "\n",
			want: []slurmext.JobRecord{func() slurmext.JobRecord {
				r := sacctWant("100")
				r.NodeList, r.State, r.Start, r.End = "", "PENDING", time.Time{}, time.Time{}
				return r
			}()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := tt.fields
			if fields == nil {
				fields = Fields()
			}
			r := NewReader(strings.NewReader(tt.input), fields, tt.opts)
			var got []slurmext.JobRecord
			var gotErrs []*LineError
			problems := make(map[string][]string)
			for {
				rec, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				var le *LineError
				if errors.As(err, &le) {
					gotErrs = append(gotErrs, le)
					checkErrorMessage(t, le)
					continue
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				if p := r.Problems(); len(p) > 0 {
					problems[rec.JobID] = append([]string(nil), p...)
				}
				got = append(got, rec)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("records:\n got %+v\nwant %+v", got, tt.want)
			}
			if len(gotErrs) != len(tt.lineErrs) {
				t.Fatalf("line errors = %v, want %v", gotErrs, tt.lineErrs)
			}
			for i, le := range gotErrs {
				if le.Line != tt.lineErrs[i].line || !errors.Is(le, tt.lineErrs[i].is) {
					t.Errorf("line error %d = %v (line %d), want line %d wrapping %v", i, le, le.Line, tt.lineErrs[i].line, tt.lineErrs[i].is)
				}
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems = %q, want %q", problems, tt.problems)
			}
			for id, want := range tt.problems {
				got := problems[id]
				if len(got) != len(want) {
					t.Fatalf("problems of %s = %q, want %d matching %q", id, got, len(want), want)
				}
				for i := range want {
					if !strings.Contains(got[i], want[i]) || slurmext.CheckMessage(got[i]) != nil {
						t.Errorf("problem %d of %s = %q, want it to contain %q", i, id, got[i], want[i])
					}
				}
			}
			if r.StepsSkipped() != tt.steps {
				t.Errorf("StepsSkipped = %d, want %d", r.StepsSkipped(), tt.steps)
			}
		})
	}
}

func TestSacctReaderFatal(t *testing.T) {
	t.Run("no job id column", func(t *testing.T) {
		r := NewReader(strings.NewReader("x\n"), []string{"JobName", "State"}, Options{})
		for range 2 {
			if _, err := r.Next(); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Next = %v, want ErrMalformed every time", err)
			}
		}
	})
	t.Run("read error is sticky", func(t *testing.T) {
		boom := errors.New("disk on fire")
		in := io.MultiReader(strings.NewReader(sacctLine("100", nil)+"\n"), iotest.ErrReader(boom))
		r := NewReader(in, Fields(), Options{})
		if rec, err := r.Next(); err != nil || rec.JobID != "100" {
			t.Fatalf("first Next = %v, %v", rec.JobID, err)
		}
		for range 2 {
			_, err := r.Next()
			var le *LineError
			if !errors.Is(err, boom) || errors.As(err, &le) {
				t.Fatalf("Next = %v, want the read error, not a LineError", err)
			}
		}
	})
	t.Run("read error while joining", func(t *testing.T) {
		boom := errors.New("disk on fire")
		good := sacctLine("98", nil) + "\n" + sacctLine("99", nil) + "\n"
		in := io.MultiReader(strings.NewReader(good+sacctLine("100", nil)[:60]+"\n"), iotest.ErrReader(boom))
		r := NewReader(in, Fields(), Options{})
		// With usage columns a job is held until its steps have passed, so
		// the short line's error may come before job 99.
		var ids []string
		var lineErrs int
		for range 3 {
			rec, err := r.Next()
			var le *LineError
			switch {
			case errors.As(err, &le):
				lineErrs++
			case err != nil:
				t.Fatalf("Next = %v, want records and the short line's LineError first", err)
			default:
				ids = append(ids, rec.JobID)
			}
		}
		if !reflect.DeepEqual(ids, []string{"98", "99"}) || lineErrs != 1 {
			t.Fatalf("jobs %v and %d line errors, want 98, 99 and 1", ids, lineErrs)
		}
		if _, err := r.Next(); !errors.Is(err, boom) {
			t.Fatalf("last Next = %v, want the read error", err)
		}
	})
}

// writeSacctRows writes n generated -P rows (with a header) to w: array
// tasks, het components and plain jobs in turn.
func writeSacctRows(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintln(bw, strings.Join(capturedFields(), "|"))
	for i := range n {
		id := 1000000 + i
		disp := fmt.Sprint(id)
		switch i % 3 {
		case 1:
			disp = fmt.Sprintf("%d_%d", id-1, i%1000)
		case 2:
			disp = fmt.Sprintf("%d+1", id-2)
		}
		fmt.Fprintf(bw, "%s|%d|job-%d|user%d|%d|acct%d|gpu|normal|%d|%d|%d|%d|01:00:00|1-00:00:00|COMPLETED|0:0|0:0|gpu[%02d-%02d]|2|16|billing=16,cpu=16,gres/gpu=%d,mem=64G,node=2|billing=16,cpu=16,gres/gpu=%d,mem=64G,node=2|Priority|lab\n",
			disp, id, i, i%50, 1000+i%50, i%7, 1700000000+i, 1700000000+i, 1700000600+i, 1700004200+i, i%16, i%16+1, i%8, i%8)
	}
	return bw.Flush()
}

func TestSacctReaderMillionRows(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000 rows: skipped with -short")
	}
	const n = 1_000_000
	path := filepath.Join(t.TempDir(), "sacct.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSacctRows(f, n); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	start := time.Now()
	r := NewReader(f, capturedFields(), Options{})
	count := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", count+1, err)
		}
		if p := r.Problems(); len(p) > 0 {
			t.Fatalf("row %d: problems %q", count+1, p)
		}
		switch count {
		case 0:
			if rec.JobID != "1000000" || rec.DisplayID != "1000000" || rec.ReqGPUs != 0 || rec.NodeList != "gpu[00-01]" {
				t.Fatalf("row 1 = %+v", rec)
			}
		case 500_002: // i%3 == 1: an array task
			if rec.JobID != "1500002" || rec.DisplayID != "1500001_2" || rec.ArrayJobID != "1500001" ||
				rec.ArrayTaskID != 2 || rec.ReqGPUs != 2 {
				t.Fatalf("row 500003 = %+v", rec)
			}
		case n - 1:
			if rec.JobID != "1999999" || rec.DisplayID != "1999999" || rec.Name != "job-999999" ||
				!rec.End.Equal(epochUTC(1700004200+n-1)) || rec.ReqGPUs != 7 {
				t.Fatalf("last row = %+v", rec)
			}
		}
		if count%3 == 2 && (rec.HetOffset != 1 || rec.HetJobID == "") {
			t.Fatalf("row %d: het component not recognised: %+v", count+1, rec)
		}
		count++
	}
	elapsed := time.Since(start)
	if count != n {
		t.Fatalf("read %d rows, want %d", count, n)
	}
	t.Logf("%d rows in %v: %.0f rows/s", n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
}

func BenchmarkSacctText(b *testing.B) {
	const rows = 10000
	var sb strings.Builder
	if err := writeSacctRows(&sb, rows); err != nil {
		b.Fatal(err)
	}
	input := sb.String()
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := NewReader(strings.NewReader(input), capturedFields(), Options{})
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func TestSacctFields(t *testing.T) {
	fields := Fields()
	if strings.Join(fields, ",") != Format {
		t.Fatalf("Fields() = %q, want the names of %q", fields, Format)
	}
	for _, f := range fields {
		if _, ok := sacctColumnOf(strings.ToLower(f)); !ok && f != "Elapsed" {
			t.Errorf("field %q of Format is not read", f)
		}
	}
	fields[0] = "changed"
	if Fields()[0] == "changed" {
		t.Fatal("Fields returns a shared slice")
	}
}
