package sacct

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext"
)

// dropColumn returns sacct -P text without the column named name. A line
// with too few columns is the head of a job name with a line break: it is
// joined with the lines that follow before the cut, which counts from the
// end of the record (a name may hold '|'; nothing after it does).
func dropColumn(t *testing.T, text, name string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	header := strings.Split(lines[0], "|")
	i := slices.Index(header, name)
	if i < 0 {
		t.Fatalf("no column %s in %q", name, lines[0])
	}
	fromEnd := len(header) - 1 - i
	out := []string{strings.Join(slices.Delete(header, i, i+1), "|")}
	for k := 1; k < len(lines); k++ {
		rec := lines[k]
		for strings.Count(rec, "|")+1 < len(header) && k+1 < len(lines) {
			k++
			rec += "\n" + lines[k]
		}
		f := strings.Split(rec, "|")
		j := len(f) - 1 - fromEnd
		out = append(out, strings.Join(slices.Delete(f, j, j+1), "|"))
	}
	return strings.Join(out, "\n") + "\n"
}

// TestSacctReaderAllocTRESOnly: sacct text with AllocTRES but no ReqTRES
// (an admin's export) gives each job the GPUs and shards it was allocated,
// and says so; with both columns ReqTRES decides. The jobs are the real
// 22.05 capture's with its ReqTRES column cut out.
func TestSacctReaderAllocTRESOnly(t *testing.T) {
	text := readFixture(t, "sacct", "22.05-P-steps-iso.txt")
	both, lineErrs, _ := readAllSacct(t, NewReader(strings.NewReader(text), nil, Options{}))
	if len(lineErrs) != 0 || len(both) != 26 {
		t.Fatalf("with both columns: %d jobs, %v", len(both), lineErrs)
	}
	alloc, lineErrs, problems := readAllSacct(t, NewReader(strings.NewReader(dropColumn(t, text, "ReqTRES")), nil, Options{}))
	if len(lineErrs) != 0 || len(alloc) != len(both) {
		t.Fatalf("without ReqTRES: %d jobs, %v, %q", len(alloc), lineErrs, problems)
	}
	gpuJobs := 0
	for i, b := range both {
		a := alloc[i]
		if b.GPUsFrom != slurmext.GPUsFromReqTRES {
			t.Errorf("job %s with ReqTRES: GPUsFrom %q, want %q", b.JobID, b.GPUsFrom, slurmext.GPUsFromReqTRES)
		}
		wantFrom := slurmext.GPUsFromAllocTRES
		if b.AllocTRES == "" {
			wantFrom = "" // never allocated: neither column says anything
		}
		if a.ReqTRES != "" || a.AllocTRES != b.AllocTRES || a.GPUsFrom != wantFrom {
			t.Errorf("job %s without ReqTRES: ReqTRES %q, AllocTRES %q, GPUsFrom %q; want \"\", %q, %q",
				a.JobID, a.ReqTRES, a.AllocTRES, a.GPUsFrom, b.AllocTRES, wantFrom)
		}
		if b.AllocTRES == "" {
			if a.ReqGPUs != 0 || a.ReqShards != 0 {
				t.Errorf("job %s, never allocated: %d GPUs, %d shards from an empty AllocTRES", a.JobID, a.ReqGPUs, a.ReqShards)
			}
			continue
		}
		// Every job that started was allocated what it asked for.
		if a.ReqGPUs != b.ReqGPUs || a.ReqShards != b.ReqShards || a.ReqGPUType != b.ReqGPUType {
			t.Errorf("job %s: %d GPUs (%q), %d shards from AllocTRES; ReqTRES gives %d (%q), %d",
				a.JobID, a.ReqGPUs, a.ReqGPUType, a.ReqShards, b.ReqGPUs, b.ReqGPUType, b.ReqShards)
		}
		if a.ReqGPUs > 0 || a.ReqShards > 0 {
			gpuJobs++
		}
	}
	if gpuJobs != 7 { // 1, 3, 6_1-6_3, 15, 27
		t.Errorf("%d GPU jobs from AllocTRES, want 7", gpuJobs)
	}
}

// TestRequestedGPUs: the one rule for where a job's GPUs come from.
func TestRequestedGPUs(t *testing.T) {
	tests := []struct {
		name, req, alloc string
		gpus, shards     int
		gpuType, from    string
	}{
		{name: "both: the request decides", req: "cpu=8,gres/gpu:h100=2,gres/gpu=2", alloc: "cpu=8,gres/gpu:h100=2,gres/gpu=2",
			gpus: 2, gpuType: "h100", from: slurmext.GPUsFromReqTRES},
		{name: "request without GPUs is not overridden by the allocation", req: "cpu=1,mem=1G,node=1", alloc: "cpu=1,gres/gpu=1,node=1",
			from: slurmext.GPUsFromReqTRES},
		{name: "allocation only", alloc: "billing=1,cpu=1,gres/gpu=4,node=1", gpus: 4, from: slurmext.GPUsFromAllocTRES},
		{name: "allocation only, shards", alloc: "cpu=1,gres/shard=3,node=1", shards: 3, from: slurmext.GPUsFromAllocTRES},
		{name: "allocation only, no GPUs", alloc: "cpu=1,node=1", from: slurmext.GPUsFromAllocTRES},
		{name: "neither", from: ""},
		{name: "blank request", req: "  ", alloc: "gres/gpu=1", gpus: 1, from: slurmext.GPUsFromAllocTRES},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus, gpuType, shards, from := slurmext.RequestedGPUs(tt.req, tt.alloc)
			if gpus != tt.gpus || gpuType != tt.gpuType || shards != tt.shards || from != tt.from {
				t.Errorf("RequestedGPUs(%q, %q) = %d, %q, %d, %q; want %d, %q, %d, %q",
					tt.req, tt.alloc, gpus, gpuType, shards, from, tt.gpus, tt.gpuType, tt.shards, tt.from)
			}
		})
	}
}

// TestParseSacctJSONAllocOnly: sacct --json whose requested TRES list is
// empty takes the GPUs from the allocated one, and says so.
func TestParseSacctJSONAllocOnly(t *testing.T) {
	doc := jsonDoc(`{"job_id": 7, "tres": {"requested": [], "allocated": [{"type": "cpu", "count": 4},
		{"type": "gres", "name": "gpu", "count": 2}, {"type": "gres", "name": "gpu:a100", "count": 2}]}}`,
		`{"job_id": 8, "tres": {"requested": [{"type": "cpu", "count": 1}], "allocated": [{"type": "gres", "name": "gpu", "count": 2}]}}`)
	recs, problems, err := ParseJSON(strings.NewReader(doc), "default")
	if err != nil || len(problems) != 0 || len(recs) != 2 {
		t.Fatalf("%d records, %v, %v", len(recs), problems, err)
	}
	if r := recs[0]; r.ReqGPUs != 2 || r.ReqGPUType != "a100" || r.GPUsFrom != slurmext.GPUsFromAllocTRES {
		t.Errorf("job 7: %d GPUs (%q) from %q; want 2 (a100) from AllocTRES", r.ReqGPUs, r.ReqGPUType, r.GPUsFrom)
	}
	if r := recs[1]; r.ReqGPUs != 0 || r.GPUsFrom != slurmext.GPUsFromReqTRES {
		t.Errorf("job 8: %d GPUs from %q; want 0 from ReqTRES", r.ReqGPUs, r.GPUsFrom)
	}
}

// TestSacctReaderBOM: a UTF-8 byte order mark (what Windows tools put at the
// head of a file, and at the head of each file concatenated) is not part of
// the first line: the real captures read the same with one, with or
// without a header.
func TestSacctReaderBOM(t *testing.T) {
	withHeader := readFixture(t, "sacct", "22.05-P-steps-iso.txt")
	noHeader := readFixture(t, "sacct", "22.05-XP-epoch-noheader.txt")
	tests := []struct {
		name, text string
		fields     []string
		want       int
	}{
		{name: "header", text: utf8BOM + withHeader, want: 26},
		{name: "no header, gpuprof's earlier columns", text: utf8BOM + noHeader, want: 26},
		{name: "no header, the columns given", text: utf8BOM + noHeader, fields: capturedFields(), want: 26},
		{name: "two files, each with its mark", text: utf8BOM + withHeader + utf8BOM + withHeader, want: 52},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := strings.ReplaceAll(tt.text, utf8BOM, "")
			want, _, _ := readAllSacct(t, NewReader(strings.NewReader(plain), tt.fields, Options{}))
			got, lineErrs, problems := readAllSacct(t, NewReader(strings.NewReader(tt.text), tt.fields, Options{}))
			if len(lineErrs) != 0 || len(problems) != len(map[string]bool{"14": true, "24": true}) || len(got) != tt.want {
				t.Fatalf("%d jobs, skipped %v, problems %q; want %d, none, the two names", len(got), lineErrs, problems, tt.want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("records differ from those of the text without the mark")
			}
		})
	}
}

// TestParseSacctJSONBOM: sacct --json output saved with a byte order mark
// reads as without.
func TestParseSacctJSONBOM(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtures, "sacctjson", "22.05-dbv0.0.38.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := ParseJSON(bytes.NewReader(b), "default")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ParseJSON(strings.NewReader(utf8BOM+string(b)), "default")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("with a byte order mark: %d records, %v; want the %d without", len(got), err, len(want))
	}
}
