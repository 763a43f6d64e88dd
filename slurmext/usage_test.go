package slurmext

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestGPUUsageFromTRES(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		mem       uint64
		memFound  bool
		memErr    bool
		util      float64
		utilFound bool
		utilErr   bool
	}{
		{name: "published 23.02+ output, bytes", in: "cpu=00:56:24,energy=0,fs/disk=350130624578,gres/gpumem=40777023488,gres/gpuutil=100,mem=10621726720,pages=3465,vmem=10439041024",
			mem: 40777023488, memFound: true, util: 100, utilFound: true},
		{name: "extern step at zero", in: "cpu=00:00:00,gres/gpumem=0,gres/gpuutil=0,mem=262144", memFound: true, utilFound: true},
		{name: "sacct's units", in: "gres/gpumem=2562M,gres/gpuutil=57", mem: 2562 << 20, memFound: true, util: 57, utilFound: true},
		{name: "a fraction of a unit", in: "gres/gpumem=1.50G", mem: 3 << 29, memFound: true},
		{name: "kibibytes", in: "gres/gpumem=63040K", mem: 63040 << 10, memFound: true},
		{name: "no GPU items (22.05 without gpu/nvml)", in: "cpu=00:00:00,energy=0,fs/disk=28489,mem=10724K,pages=0,vmem=219452K"},
		{name: "empty", in: ""},
		{name: "NO_VAL64 is no reading", in: "gres/gpumem=18446744073709551614,gres/gpuutil=18446744073709551615", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "not numbers", in: "gres/gpumem=lots,gres/gpuutil=high", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "negative and signs", in: "gres/gpumem=-1,gres/gpuutil=+5", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "unit without number", in: "gres/gpumem=G,gres/gpuutil=.5", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "a fraction of a percent", in: "gres/gpuutil=57.5", util: 57.5, utilFound: true},
		{name: "past any real GPU count", in: "gres/gpuutil=1000000", utilFound: true, utilErr: true},
		{name: "spaces around items", in: " gres/gpumem = 1M , gres/gpuutil = 3 ", mem: 1 << 20, memFound: true, util: 3, utilFound: true},
		{name: "a similar name is not the item", in: "gres/gpumemx=5,gres/gpuutilization=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, found, err := GPUMemFromUsage(tt.in)
			if mem != tt.mem || found != tt.memFound || (err != nil) != tt.memErr {
				t.Errorf("GPUMemFromUsage = %d, %v, %v; want %d, %v, error %v", mem, found, err, tt.mem, tt.memFound, tt.memErr)
			}
			if err != nil && (!errors.Is(err, ErrBadTRES) || len(err.Error()) > maxMessage) {
				t.Errorf("error %v does not wrap ErrBadTRES or is unbounded", err)
			}
			util, found, err := GPUUtilFromUsage(tt.in)
			if util != tt.util || found != tt.utilFound || (err != nil) != tt.utilErr {
				t.Errorf("GPUUtilFromUsage = %v, %v, %v; want %v, %v, error %v", util, found, err, tt.util, tt.utilFound, tt.utilErr)
			}
		})
	}
}

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
		r := NewSacctReader(strings.NewReader(in), fields, SacctOptions{})
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
	r := NewSacctReader(openFixture(t, "real", "22.05-jobidraw-P-steps.txt"), nil, SacctOptions{})
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
	recs, problems, err := ParseSacctJSON(strings.NewReader(doc), "c")
	if err != nil || len(recs) != 3 {
		t.Fatalf("ParseSacctJSON: %d records, %v", len(recs), err)
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
	recs, _, err = ParseSacctJSON(openFixture(t, "real", "22.05-steps-usage.json"), "c")
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
