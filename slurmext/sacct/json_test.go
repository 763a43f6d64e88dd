package sacct

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// versionJobs are the five jobs every constructed fixture
// (testdata/sacctjson/2[345].*.json) holds, as records.
func versionJobs() []slurmext.JobRecord {
	base := func(id string) slurmext.JobRecord {
		return slurmext.JobRecord{Cluster: "lab", JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, UID: -1,
			CancelledBy: -1, Source: "sacct"}
	}
	a := base("4101")
	a.Name, a.User, a.Account, a.Partition, a.QOS = "train-resnet", "alice", "vision", "gpu", "normal"
	a.State, a.Reason = "COMPLETED", "Priority"
	a.Submit, a.Eligible, a.Start, a.End = epochUTC(1793700000), epochUTC(1793700000), epochUTC(1793700600), epochUTC(1793715000)
	a.TimeLimit, a.NodeList, a.NodeCount, a.CPUs = 12*time.Hour, "gpu[01-02]", 2, 16
	a.ReqGPUs, a.ReqGPUType = 4, "h100"
	a.ReqTRES = "billing=16,cpu=16,gres/gpu=4,gres/gpu:h100=4,mem=131072M,node=2"
	a.AllocTRES = a.ReqTRES // energy -2 is left out

	b := base("4107")
	b.DisplayID, b.ArrayJobID, b.ArrayTaskID = "4104_3", "4104", 3
	b.Name, b.User, b.Account, b.Partition, b.QOS = "sweep", "bob", "nlp", "gpu", "debug"
	b.State, b.Reason = "COMPLETED", "None"
	b.Submit, b.Eligible, b.Start, b.End = epochUTC(1793700100), epochUTC(1793700100), epochUTC(1793700200), epochUTC(1793700800)
	b.TimeLimit, b.NodeList, b.NodeCount, b.CPUs, b.ReqShards = time.Hour, "gpu03", 1, 4, 3
	b.ReqTRES = "billing=4,cpu=4,gres/shard=3,mem=16384M,node=1"
	b.AllocTRES = b.ReqTRES

	c := base("4110")
	c.Name, c.User, c.Account, c.Partition, c.QOS = "prep", "bob", "nlp", "cpu", "normal"
	c.State, c.Reason = "FAILED", "None"
	c.Submit, c.Eligible, c.Start, c.End = epochUTC(1793701000), epochUTC(1793701000), epochUTC(1793701005), epochUTC(1793701065)
	c.TimeLimit, c.NodeList, c.NodeCount, c.CPUs = 30*time.Minute, "cpu07", 1, 2
	c.ExitStatus, c.DerivedStatus = 3, 3
	c.ReqTRES = "billing=2,cpu=2,mem=4096M,node=1"
	c.AllocTRES = c.ReqTRES

	d := base("4111")
	d.DisplayID, d.HetJobID, d.HetOffset = "4111+0", "4111", 0
	d.Name, d.User, d.Account, d.Partition, d.QOS = "notebook", "carol", "vision", "gpu", "normal"
	d.State, d.Reason = "CANCELLED", "Resources"
	d.Submit, d.Eligible, d.Start, d.End = epochUTC(1793702000), epochUTC(1793702000), epochUTC(1793705000), epochUTC(1793709000)
	d.Unlimited, d.NodeList, d.NodeCount, d.CPUs, d.ExitSignal, d.ReqGPUs = true, "gpu04", 1, 8, 9, 1
	d.ReqTRES = "billing=8,cpu=8,gres/gpu=1,mem=32768M,node=1"
	d.AllocTRES = d.ReqTRES

	e := base("4120")
	e.DisplayID, e.ArrayJobID, e.ArrayTaskSpec = "4120_[1-5]", "4120", "1-5" // bitmap 0x3E
	e.Name, e.User, e.Account, e.Partition, e.QOS = "queued-array", "dave", "bio", "gpu", "normal"
	e.State, e.Reason = "PENDING", "QOSMaxGRESPerUser"
	e.Submit, e.Eligible = epochUTC(1793710000), epochUTC(1793710000)
	e.NodeCount, e.CPUs, e.ReqGPUs = 1, 1, 1 // as requested: not started
	e.ReqTRES = "billing=1,cpu=1,gres/gpu=1,mem=8192M,node=1"
	jobs := []slurmext.JobRecord{a, b, c, d, e}
	// ReqMem is tres.requested's mem (what sacct's ReqMem prints), not
	// required.memory_per_node: the fixtures have no steps, so no CPU time
	// or memory peak.
	for i, mib := range []uint64{131072, 16384, 4096, 32768, 8192} {
		jobs[i].Usage.ReqMem, jobs[i].Usage.ReqMemValid = mib<<20, true
		jobs[i].GPUsFrom = slurmext.GPUsFromReqTRES
	}
	return jobs
}

func TestParseSacctJSONVersions(t *testing.T) {
	for _, tt := range []struct {
		file     string
		restarts int // of job 4101: restart_cnt exists from 25.05's layout on
	}{
		{file: "23.02-v0.0.39.json"},
		{file: "23.11-v0.0.40.json"},
		{file: "24.05-v0.0.41.json"},
		{file: "25.05-v0.0.43.json", restarts: 1},
	} {
		t.Run(tt.file, func(t *testing.T) {
			recs, problems, err := ParseJSON(openFixture(t, "sacctjson", tt.file), "default")
			if err != nil || len(problems) != 0 {
				t.Fatalf("err %v, problems %v", err, problems)
			}
			want := versionJobs()
			want[0].Restarts = tt.restarts
			if len(recs) != len(want) {
				t.Fatalf("%d records, want %d", len(recs), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(recs[i], want[i]) {
					t.Errorf("job %s:\n got %+v\nwant %+v", want[i].JobID, recs[i], want[i])
				}
			}
		})
	}
}

// TestParseSacctJSONAgreesWithText reads the same 22.05 jobs from sacct
// --json and sacct -P and wants the same records, apart from what dbv0.0.38
// does not carry or gets wrong.
func TestParseSacctJSONAgreesWithText(t *testing.T) {
	jsonRecs, problems, err := ParseJSON(openFixture(t, "sacctjson", "22.05-dbv0.0.38.json"), "default")
	if err != nil {
		t.Fatal(err)
	}
	wantProblems := []string{`job "14": name: removed or replaced 1`, `job "24": name: removed or replaced 1`}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems = %v, want %q", problems, wantProblems)
	}
	for i, p := range problems {
		if !strings.Contains(p.Error(), wantProblems[i]) || !errors.Is(p, ErrMalformed) {
			t.Errorf("problem %d = %v, want %q wrapping ErrMalformed", i, p, wantProblems[i])
		}
	}
	if len(jsonRecs) != 27 {
		t.Fatalf("%d records from JSON, want 27", len(jsonRecs))
	}
	text := make(map[string]slurmext.JobRecord)
	textRecs, _, _ := readAllSacct(t, NewReader(openFixture(t, "sacct", "22.05-XP-epoch-noheader.txt"), capturedFields(), Options{}))
	for _, r := range textRecs {
		text[r.JobID] = r
	}
	// sacct --json of 22.05 also lists the earlier runs of a requeued job,
	// as sacct -P does only with -D.
	dupRecs, _, _ := readAllSacct(t, NewReader(openFixture(t, "sacct", "22.05-P-duplicates.txt"), capturedFields(), Options{}))
	requeued := dupRecs[1]
	compared := 0
	for _, j := range jsonRecs {
		tr, ok := text[j.JobID]
		if j.State == "REQUEUED" {
			tr, ok = requeued, j.JobID == requeued.JobID
		}
		if !ok {
			t.Errorf("job %s (%s) only in JSON", j.JobID, j.State)
			continue
		}
		compared++
		// What dbv0.0.38 lacks: uids, the canceller, UNLIMITED versus a
		// partition limit (both null), sacct's unit for memory.
		tr.UID, tr.CancelledBy = -1, -1
		if j.TimeLimit == 0 && !j.Unlimited {
			tr.TimeLimit, tr.Unlimited = 0, false
		}
		if j.JobID == "15" {
			tr.ReqTRES = strings.Replace(tr.ReqTRES, "mem=1G", "mem=1024M", 1)
		}
		if j.JobID == "2" {
			// dbv0.0.38 reports exit 3 as SUCCESS/0; sacct -P has 3:0.
			if j.ExitStatus != 0 || tr.ExitStatus != 3 {
				t.Errorf("job 2: JSON exit %d, text exit %d; the capture has 0 and 3", j.ExitStatus, tr.ExitStatus)
			}
			tr.ExitStatus = 0
		}
		// The capture has no ReqMem column: the text's request is ReqTRES'
		// mem, as docs/sacct.md says (MemFromTRES).
		tr.Usage.ReqMem, tr.Usage.ReqMemValid = slurmext.MemFromTRES(tr.ReqTRES)
		if !reflect.DeepEqual(j, tr) {
			t.Errorf("job %s:\nJSON %+v\ntext %+v", j.JobID, j, tr)
		}
	}
	if compared != 27 {
		t.Errorf("compared %d records, want 27", compared)
	}
}

func TestParseSacctJSON2205Specials(t *testing.T) {
	t.Run("steps are read past", func(t *testing.T) {
		recs, problems, err := ParseJSON(openFixture(t, "sacctjson", "22.05-dbv0.0.38-steps.json"), "")
		if err != nil || len(problems) != 0 || len(recs) != 2 {
			t.Fatalf("%d records, problems %v, err %v; want 2, none, nil", len(recs), problems, err)
		}
		if recs[0].JobID != "1" || recs[0].ReqGPUs != 2 || recs[1].JobID != "4" || recs[1].ExitSignal != 9 || recs[1].State != "FAILED" {
			t.Errorf("records = %+v", recs)
		}
	})
	t.Run("pending array bitmap", func(t *testing.T) {
		recs, problems, err := ParseJSON(openFixture(t, "sacctjson", "22.05-dbv0.0.38-array-pending.json"), "")
		if err != nil || len(problems) != 0 || len(recs) != 1 {
			t.Fatalf("%d records, problems %v, err %v", len(recs), problems, err)
		}
		textRecs, _, _ := readAllSacct(t, NewReader(openFixture(t, "sacct", "22.05-P-duplicates.txt"), capturedFields(), Options{}))
		tr := textRecs[0]
		tr.UID, tr.CancelledBy = -1, -1
		tr.Usage.ReqMem, tr.Usage.ReqMemValid = slurmext.MemFromTRES(tr.ReqTRES) // no ReqMem column
		if !reflect.DeepEqual(recs[0], tr) {
			t.Errorf("JSON %+v\ntext %+v", recs[0], tr)
		}
	})
}

// jsonJob wraps job objects in a minimal sacct --json document.
func jsonDoc(jobs ...string) string {
	return `{"meta": {"plugin": {"type": "openapi/dbv0.0.38"}}, "errors": [], "jobs": [` + strings.Join(jobs, ",") + `]}`
}

func TestParseSacctJSONForms(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		edit     func(*slurmext.JobRecord) // applied to a record of job 7 on cluster "default"
		problems []string                  // substrings
	}{
		{name: "minimal job", doc: jsonDoc(`{"job_id": 7}`)},
		{name: "job id as string", doc: jsonDoc(`{"job_id": "7"}`)},
		{name: "job id as set object", doc: jsonDoc(`{"job_id": {"set": true, "infinite": false, "number": 7}}`)},
		{
			name: "time.limit plain minutes, INFINITE, NO_VAL, infinite object, unset object",
			doc: jsonDoc(`{"job_id": 7, "time": {"limit": 90}}`, `{"job_id": 7, "time": {"limit": 4294967295}}`,
				`{"job_id": 7, "time": {"limit": 4294967294}}`, `{"job_id": 7, "time": {"limit": {"set": false, "infinite": true, "number": 0}}}`,
				`{"job_id": 7, "time": {"limit": {"set": false, "infinite": false, "number": 0}}}`),
		},
		{
			name:     "state flags after the base state",
			doc:      jsonDoc(`{"job_id": 7, "state": {"current": ["REQUEUED", "COMPLETED"], "reason": "None"}}`),
			edit:     func(r *slurmext.JobRecord) { r.State, r.Reason = "COMPLETED", "None" },
			problems: nil,
		},
		{
			name:     "state only flags",
			doc:      jsonDoc(`{"job_id": 7, "state": {"current": ["BOGUS", "REQUEUED"]}}`),
			edit:     func(r *slurmext.JobRecord) { r.State = "REQUEUED" },
			problems: []string{"state.current: job state"},
		},
		{
			name:     "state of a wrong shape",
			doc:      jsonDoc(`{"job_id": 7, "state": {"current": 5}}`),
			problems: []string{"state.current: neither a string nor a list"},
		},
		{
			name: "signal in the 23.11 shape",
			doc: jsonDoc(`{"job_id": 7, "exit_code": {"status": ["SIGNALED"], "return_code": {"set": false, "infinite": false, "number": 0},
				"signal": {"id": {"set": true, "infinite": false, "number": 15}, "name": "TERM"}}}`),
			edit: func(r *slurmext.JobRecord) { r.ExitSignal = 15 },
		},
		{
			name:     "exit code out of range",
			doc:      jsonDoc(`{"job_id": 7, "exit_code": {"return_code": 300, "signal": {"signal_id": 200}}}`),
			problems: []string{"exit_code: return_code 300 outside 0-255", "exit_code: signal 200 outside 0-127"},
		},
		{
			name:     "field of an unexpected type costs only that field",
			doc:      jsonDoc(`{"job_id": 7, "name": 42, "partition": "gpu", "tres": {"requested": {"x": 1}}}`),
			edit:     func(r *slurmext.JobRecord) { r.Partition = "gpu" },
			problems: []string{`job 1 in the list: "name" has JSON type number`},
		},
		{
			name:     "bad numbers noted",
			doc:      jsonDoc(`{"job_id": 7, "time": {"start": "soon", "end": -5, "limit": "x"}, "allocation_nodes": -1, "restart_cnt": true}`),
			problems: []string{"restart_cnt: not a number", "time.start: not a time", "time.end: -5 is before 1970", "time.limit: not a number of minutes", "allocation_nodes: -1 out of range"},
		},
		{
			name: "array task ids of every shape",
			doc:  jsonDoc(`{"job_id": 7, "array": {"job_id": 5, "task_id": {"set": true, "infinite": false, "number": 2}}}`),
			edit: func(r *slurmext.JobRecord) { r.DisplayID, r.ArrayJobID, r.ArrayTaskID = "5_2", "5", 2 },
		},
		{
			name: "array task list already in text form",
			doc:  jsonDoc(`{"job_id": 7, "array": {"job_id": 7, "task_id": null, "task": "1-3,7"}}`),
			edit: func(r *slurmext.JobRecord) { r.DisplayID, r.ArrayJobID, r.ArrayTaskSpec = "7_[1-3,7]", "7", "1-3,7" },
		},
		{
			name:     "array task bitmap too large",
			doc:      jsonDoc(`{"job_id": 7, "array": {"job_id": 7, "task": "0x` + strings.Repeat("f", 2000) + `"}}`),
			edit:     func(r *slurmext.JobRecord) { r.ArrayJobID = "7" },
			problems: []string{"array.task: task bitmap"},
		},
		{
			name:     "array task bad",
			doc:      jsonDoc(`{"job_id": 7, "array": {"job_id": 7, "task_id": -3, "task": ""}}`),
			edit:     func(r *slurmext.JobRecord) { r.ArrayJobID = "7" },
			problems: []string{"array.task_id: array index -3 out of range"},
		},
		{
			name: "het offset 0 as plain number",
			doc:  jsonDoc(`{"job_id": 7, "het": {"job_id": 7, "job_offset": 0}}`),
			edit: func(r *slurmext.JobRecord) { r.DisplayID, r.HetJobID, r.HetOffset = "7+0", "7", 0 },
		},
		{
			name: "tres names, null and negative counts",
			doc: jsonDoc(`{"job_id": 7, "tres": {"requested": [{"type": "mem", "name": null, "count": 100}, {"type": "gres", "name": "gpu:a100", "count": 2},
				{"type": "energy", "count": null}, {"type": "fs", "name": "disk", "count": -2}, {"type": "cpu", "name": "", "count": 4}]}}`),
			edit: func(r *slurmext.JobRecord) {
				r.ReqTRES, r.ReqGPUs, r.ReqGPUType, r.CPUs = "cpu=4,gres/gpu:a100=2,mem=100M", 2, "a100", 0
				r.GPUsFrom = slurmext.GPUsFromReqTRES
				r.Usage.ReqMem, r.Usage.ReqMemValid = 100<<20, true
			},
		},
		{
			name:     "hostile text sanitised",
			doc:      jsonDoc(`{"job_id": 7, "name": "a\u001b[2Jb\u202e", "cluster": "c\nx", "nodes": "gpu[01-"}`),
			edit:     func(r *slurmext.JobRecord) { r.Name, r.Cluster, r.NodeList = "a[2Jb", "cx", "gpu[01-" },
			problems: []string{"cluster: removed", "name: removed", "nodes: hostlist"},
		},
		{
			name:     "sacct's own errors reported",
			doc:      `{"errors": [{"error": "Unable to connect", "error_number": 1}, {"description": "x\u001b"}], "jobs": [{"job_id": 7}]}`,
			problems: []string{`sacct reported: "Unable to connect"`, `sacct reported: "x\x1b"`},
		},
		{
			name:     "job without id skipped",
			doc:      jsonDoc(`{"name": "x"}`, `{"job_id": 0}`, `{"job_id": 7}`),
			problems: []string{"job_id: missing", "job_id: missing"},
		},
		{
			name: "unknown top-level keys and jobs after meta",
			doc:  `{"warnings": [{"a": [1, {"b": null}]}], "meta": {"x": 1}, "jobs": [{"job_id": 7}], "extra": "y"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, problems, err := ParseJSON(strings.NewReader(tt.doc), "default")
			if err != nil {
				t.Fatal(err)
			}
			want := slurmext.JobRecord{Cluster: "default", JobID: "7", DisplayID: "7", ArrayTaskID: -1, HetOffset: -1, UID: -1, CancelledBy: -1, Source: "sacct"}
			if tt.edit != nil {
				tt.edit(&want)
			}
			if len(recs) == 0 {
				t.Fatal("no records")
			}
			for i, r := range recs {
				w := want
				if strings.Contains(tt.name, "time.limit") {
					w.TimeLimit, w.Unlimited = []time.Duration{90 * time.Minute, 0, 0, 0, 0}[i], []bool{false, true, false, true, false}[i]
				}
				if !reflect.DeepEqual(r, w) {
					t.Errorf("record %d:\n got %+v\nwant %+v", i, r, w)
				}
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems = %v, want %d matching %q", problems, len(tt.problems), tt.problems)
			}
			for i, p := range problems {
				if !strings.Contains(p.Error(), tt.problems[i]) || !errors.Is(p, ErrMalformed) {
					t.Errorf("problem %d = %v, want %q wrapping ErrMalformed", i, p, tt.problems[i])
				}
				checkErrorMessage(t, p)
			}
		})
	}
}

func TestParseSacctJSONFatal(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		limit   int64
		is      error
		records int // returned before the failure
	}{
		{name: "empty input", doc: "", is: ErrMalformed},
		{name: "not an object", doc: `[]`, is: ErrMalformed},
		{name: "jobs not a list", doc: `{"jobs": {}}`, is: ErrMalformed},
		{name: "truncated after a job", doc: `{"jobs": [{"job_id": 7}, {"job_id": 8, "na`, is: ErrMalformed, records: 1},
		{name: "garbage after a job", doc: `{"jobs": [{"job_id": 7}] x`, is: ErrMalformed, records: 1},
		{name: "unclosed document", doc: `{"jobs": [{"job_id": 7}]`, is: ErrMalformed, records: 1},
		{name: "job over the bound", doc: jsonDoc(`{"job_id": 7}`, `{"job_id": 8, "name": "`+strings.Repeat("x", 4000)+`"}`), limit: 1000, is: slurmext.ErrTooLarge, records: 1},
		{name: "other value over the bound", doc: `{"meta": "` + strings.Repeat("x", 4000) + `", "jobs": []}`, limit: 1000, is: slurmext.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = MaxJSONValue
			}
			// One byte at a time, so the bound is met as it would be on a pipe.
			recs, _, err := parseJSON(iotest.OneByteReader(strings.NewReader(tt.doc)), "", limit)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			checkErrorMessage(t, err)
			if len(recs) != tt.records {
				t.Fatalf("%d records with the error, want %d", len(recs), tt.records)
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		boom := errors.New("disk on fire")
		_, _, err := ParseJSON(io.MultiReader(strings.NewReader(`{"jobs": [`), iotest.ErrReader(boom)), "")
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the read error", err)
		}
	})
}

func TestArrayTaskSpec(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0x1E", "1-4"},
		{"0x3e", "1-5"},
		{"0x1", "0"},
		{"0x155", "0,2,4,6,8"},
		{"0xF0F", "0-3,8-11"},
		{"1-5%2", "1-5%2"},
		{" 3,7 ", "3,7"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := arrayTaskSpec(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("arrayTaskSpec(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "0x", "0x0", "0xZZ", "abc", "0x" + strings.Repeat("1", slurmext.MaxIndexList/4+1)} {
		if got, err := arrayTaskSpec(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("arrayTaskSpec(%q) = %q, %v; want ErrMalformed", bad, got, err)
		}
	}
}
