package sacct

import (
	"io"
	"strings"
	"testing"
)

// TestSacctReaderFoldsGPUUsage reads the hand-made 23.02+ text (see
// testdata/handmade/README.md): the readings of the step lines go to their
// job, the highest of each; a malformed one makes the job's unknown.
func TestSacctReaderFoldsGPUUsage(t *testing.T) {
	type reading struct {
		mem             uint64
		memOK           bool
		util            float64
		utilOK          bool
		problemContains string
	}
	want := map[string]reading{
		"100": {mem: 40777023488, memOK: true, util: 100, utilOK: true},
		"101": {mem: 2562 << 20, memOK: true, util: 91, utilOK: true},
		"102": {},
		"103": {util: 55, utilOK: true, problemContains: "TRESUsageInMax: gres/gpumem"},
	}
	for _, noheader := range []bool{false, true} {
		in := readFixture(t, "handmade", "23.02-gpu-usage-P.txt")
		var fields []string
		if noheader {
			header, rest, _ := strings.Cut(in, "\n")
			in, fields = rest, strings.Split(header, "|")
		}
		r := NewReader(strings.NewReader(in), fields, Options{})
		recs, lineErrs, problems := readAllSacct(t, r)
		if len(lineErrs) != 0 || len(recs) != len(want) || r.StepsSkipped() != 8 {
			t.Fatalf("noheader %v: %d records, %v skipped, %d steps; want %d, none, 8", noheader, len(recs), lineErrs, r.StepsSkipped(), len(want))
		}
		for _, rec := range recs {
			w := want[rec.JobID]
			got := reading{rec.SlurmGPUMem, rec.SlurmGPUMemValid, rec.SlurmGPUUtil, rec.SlurmGPUUtilValid, w.problemContains}
			if got != w {
				t.Errorf("job %s: %+v, want %+v", rec.JobID, got, w)
			}
			p := strings.Join(problems[rec.JobID], "; ")
			if (w.problemContains == "") != (p == "") || !strings.Contains(p, w.problemContains) {
				t.Errorf("job %s: problems %q, want one containing %q", rec.JobID, p, w.problemContains)
			}
			if rec.Name == "batch" || rec.State != "COMPLETED" {
				t.Errorf("job %s taken from a step line: %+v", rec.JobID, rec)
			}
		}
	}
}

// TestSacctReaderUsageOfRealSteps: 22.05's step lines carry usage without
// GPU items; jobs get no Slurm readings, and the steps are read past.
func TestSacctReaderUsageOfRealSteps(t *testing.T) {
	r := NewReader(openFixture(t, "real", "22.05-jobidraw-P-steps.txt"), nil, Options{})
	recs, lineErrs, problems := readAllSacct(t, r)
	if len(lineErrs) != 0 || len(recs) != 12 || r.StepsSkipped() != 15 || len(problems) != 0 {
		t.Fatalf("%d records, %v skipped, %d steps, problems %q; want 12, none, 15, none", len(recs), lineErrs, r.StepsSkipped(), problems)
	}
	for _, rec := range recs {
		if rec.SlurmGPUMemValid || rec.SlurmGPUUtilValid {
			t.Errorf("job %s has Slurm GPU readings from a Slurm without GPU accounting: %+v", rec.JobID, rec)
		}
	}
}

// TestSacctJSONGPUUsage: steps[].tres.requested.max/average gres items
// become the job's readings, the highest of each step; NO_VAL64 in a step
// leaves it unknown.
func TestSacctJSONGPUUsage(t *testing.T) {
	step := func(mem, util string) string {
		return `{"tres": {"requested": {"max": [{"type": "cpu", "name": null, "count": 10}, {"type": "gres", "name": "gpumem", "count": ` + mem +
			`}], "average": [{"type": "gres", "name": "gpuutil", "count": ` + util + `}]}}}`
	}
	doc := jsonDoc(`{"job_id": 7, "steps": [`+step("0", "0")+`, `+step("2686451712", "83")+`, `+step("1610612736", "91")+`]}`,
		`{"job_id": 8, "steps": [`+step("1073741824", "40")+`, `+step("18446744073709551614", "55")+`]}`,
		`{"job_id": 9, "steps": [{"tres": {"requested": {"max": [{"type": "mem", "name": null, "count": 10981376}], "average": []}}}]}`)
	recs, problems, err := ParseJSON(strings.NewReader(doc), "c")
	if err != nil || len(recs) != 3 {
		t.Fatalf("ParseJSON: %d records, %v", len(recs), err)
	}
	type reading struct {
		mem    uint64
		memOK  bool
		util   float64
		utilOK bool
	}
	want := []reading{{2686451712, true, 91, true}, {0, false, 55, true}, {}}
	for i, rec := range recs {
		if got := (reading{rec.SlurmGPUMem, rec.SlurmGPUMemValid, rec.SlurmGPUUtil, rec.SlurmGPUUtilValid}); got != want[i] {
			t.Errorf("job %s: %+v, want %+v", rec.JobID, got, want[i])
		}
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "job \"8\"") || !strings.Contains(problems[0].Error(), "gpumem") {
		t.Errorf("problems %v, want one on job 8's gpumem", problems)
	}

	// The real 22.05 steps (no GPU accounting) give no readings.
	recs, _, err = ParseJSON(openFixture(t, "real", "22.05-steps-usage.json"), "c")
	if err != nil || len(recs) != 2 {
		t.Fatalf("real steps: %d records, %v", len(recs), err)
	}
	for _, rec := range recs {
		if rec.SlurmGPUMemValid || rec.SlurmGPUUtilValid {
			t.Errorf("job %s: readings %+v from a Slurm without GPU accounting", rec.JobID, rec)
		}
	}
}

func readFixture(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := io.ReadAll(openFixture(t, parts...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
