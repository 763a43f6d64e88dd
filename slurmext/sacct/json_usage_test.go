package sacct

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// textUsage reads sacct -P text (with its header) and returns each job's
// HostUsage by job id.
func textUsage(t *testing.T, text string) map[string]slurmext.HostUsage {
	t.Helper()
	recs, lineErrs, problems := readAllSacct(t, NewReader(strings.NewReader(text), nil, Options{}))
	if len(lineErrs) != 0 || len(problems) != 0 {
		t.Fatalf("text: line errors %v, problems %v", lineErrs, problems)
	}
	out := make(map[string]slurmext.HostUsage)
	for _, r := range recs {
		out[r.JobID] = r.Usage
	}
	return out
}

// jsonUsage parses a sacct --json document and returns each job's
// HostUsage by job id, failing on any problem.
func jsonUsage(t *testing.T, doc string) map[string]slurmext.HostUsage {
	t.Helper()
	recs, problems, err := ParseJSON(strings.NewReader(doc), "")
	if err != nil || len(problems) != 0 {
		t.Fatalf("JSON: err %v, problems %v", err, problems)
	}
	out := make(map[string]slurmext.HostUsage)
	for _, r := range recs {
		out[r.JobID] = r.Usage
	}
	return out
}

// sameUsage compares a JSON job's usage with the text's: TotalCPU within a
// millisecond per step (sacct -P prints milliseconds, JSON microseconds),
// the rest exactly.
func sameUsage(t *testing.T, id string, j, x slurmext.HostUsage, steps int) {
	t.Helper()
	d := j.TotalCPU - x.TotalCPU
	if j.TotalCPUValid != x.TotalCPUValid || d < -time.Duration(steps)*time.Millisecond || d > time.Duration(steps)*time.Millisecond {
		t.Errorf("job %s: TotalCPU JSON %v (%v), text %v (%v)", id, j.TotalCPU, j.TotalCPUValid, x.TotalCPU, x.TotalCPUValid)
	}
	if j.MemPeak != x.MemPeak || j.MemPeakValid != x.MemPeakValid {
		t.Errorf("job %s: MemPeak JSON %d (%v), text %d (%v)", id, j.MemPeak, j.MemPeakValid, x.MemPeak, x.MemPeakValid)
	}
	if j.ReqMem != x.ReqMem || j.ReqMemValid != x.ReqMemValid {
		t.Errorf("job %s: ReqMem JSON %d (%v), text %d (%v)", id, j.ReqMem, j.ReqMemValid, x.ReqMem, x.ReqMemValid)
	}
}

// TestParseSacctJSONUsageReal reads Slurm 22.05.8's own sacct --json of jobs
// 2 and 11 (testdata/real/22.05-steps-usage.json) and checks the usage
// against sacct -P of the same jobs from the same cluster
// (22.05-jobidraw-P-steps.txt, whose TRESUsageInMax holds the memory peak
// and ReqTRES the request; it has no TotalCPU column, so the CPU time is
// checked against the steps' own user and system times of the file and
// the sum worked out by hand from it).
func TestParseSacctJSONUsageReal(t *testing.T) {
	recs, problems, err := ParseJSON(openFixture(t, "real", "22.05-steps-usage.json"), "")
	if err != nil || len(problems) != 0 || len(recs) != 2 {
		t.Fatalf("%d records, problems %v, err %v; want 2, none, nil", len(recs), problems, err)
	}
	textRecs, _, _ := readAllSacct(t, NewReader(openFixture(t, "real", "22.05-jobidraw-P-steps.txt"), nil, Options{}))
	text := make(map[string]slurmext.JobRecord)
	for _, r := range textRecs {
		text[r.JobID] = r
	}

	// user + system of each step, read independently of time.total.
	var raw struct {
		Jobs []struct {
			JobID int `json:"job_id"`
			Steps []struct {
				Time struct {
					User, System struct{ Seconds, Microseconds int64 }
				} `json:"time"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	f := openFixture(t, "real", "22.05-steps-usage.json")
	if err := json.NewDecoder(f).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	userSys := make(map[int]time.Duration)
	for _, j := range raw.Jobs {
		for _, s := range j.Steps {
			for _, p := range []struct{ Seconds, Microseconds int64 }{s.Time.User, s.Time.System} {
				userSys[j.JobID] += time.Duration(p.Seconds)*time.Second + time.Duration(p.Microseconds)*time.Microsecond
			}
		}
	}

	wantCPU := map[string]time.Duration{
		"2":  (27730 + 3081 + 2501) * time.Microsecond, // batch, 2.0, 2.1
		"11": (15738 + 419904) * time.Microsecond,      // batch, 11.0
	}
	for _, r := range recs {
		u, tr := r.Usage, text[r.JobID]
		if !u.TotalCPUValid || u.TotalCPU != wantCPU[r.JobID] {
			t.Errorf("job %s: TotalCPU %v (%v), want %v", r.JobID, u.TotalCPU, u.TotalCPUValid, wantCPU[r.JobID])
		}
		id := 2
		if r.JobID == "11" {
			id = 11
		}
		if u.TotalCPU != userSys[id] {
			t.Errorf("job %s: TotalCPU %v, the steps' user + system %v", r.JobID, u.TotalCPU, userSys[id])
		}
		// The text's job usage: TRESUsageInMax mem of its steps, and
		// ReqTRES' mem where the layout has no ReqMem (docs/sacct.md).
		want := tr.Usage
		want.ReqMem, want.ReqMemValid = slurmext.MemFromTRES(tr.ReqTRES)
		want.TotalCPU, want.TotalCPUValid = u.TotalCPU, u.TotalCPUValid
		sameUsage(t, r.JobID, u, want, 0)
	}
	// What the capture holds, so that a reader that drops both sides
	// cannot pass: 11.0's mem=63040K, the 16000M default request, and job
	// 2's steps too short for any sample.
	if u := recs[1].Usage; recs[1].JobID != "11" || !u.MemPeakValid || u.MemPeak != 63040<<10 || u.ReqMem != 16000<<20 {
		t.Errorf("job 11: %+v; want MemPeak 63040K, ReqMem 16000M", u)
	}
	if u := recs[0].Usage; u.MemPeakValid {
		t.Errorf("job 2: MemPeak %d known; its steps report no mem", u.MemPeak)
	}
}

// usageP is the -P capture of testdata/real/22.05-usage-P-steps.txt, cut to
// the columns the text reader's usage needs: jobs 1 (2 × 10 s of CPU), 2
// (300 MiB held), 3 (short), 4 (--mem-per-cpu=100M, -n 2) and 5 (--mem=1G).
const usageP = `JobID|JobIDRaw|JobName|State|NNodes|AllocCPUS|TotalCPU|MaxRSS|ReqMem|ReqTRES
1|1|burn|COMPLETED|1|2|00:19.384||16000M|billing=2,cpu=2,mem=16000M,node=1
1.batch|1.batch|batch|COMPLETED|1|2|00:00.033|||
1.0|1.0|bash|COMPLETED|1|2|00:19.347|6292K||
1.1|1.1|sleep|COMPLETED|1|2|00:00.003|||
2|2|mem|COMPLETED|1|1|00:00.289||512M|billing=1,cpu=1,mem=512M,node=1
2.batch|2.batch|batch|COMPLETED|1|1|00:00.017|12064K||
2.0|2.0|python3|COMPLETED|1|1|00:00.272|315292K||
3|3|short|COMPLETED|1|1|00:00.002||100M|billing=1,cpu=1,mem=100M,node=1
3.batch|3.batch|batch|COMPLETED|1|1|00:00.002|||
4|4|percpu|COMPLETED|1|2|00:00.015||200M|billing=2,cpu=2,mem=200M,node=1
4.batch|4.batch|batch|COMPLETED|1|2|00:00.011|||
4.0|4.0|sleep|COMPLETED|1|2|00:00.004|||
5|5|pernode|COMPLETED|1|1|00:00.002||1G|billing=1,cpu=1,mem=1G,node=1
5.batch|5.batch|batch|COMPLETED|1|1|00:00.002|||
`

// jStep is one step in dbv0.0.38's shape (as in 22.05-steps-usage.json):
// time.total and, when mem > 0, tres.requested.max's mem item.
func jStep(sec, usec int64, mem int64) string {
	max := `[]`
	if mem > 0 {
		max = `[{"type": "cpu", "name": null, "id": 1, "count": 10, "task": 0, "node": "localhost"}, {"type": "mem", "name": null, "id": 2, "count": ` +
			itoa(mem) + `, "task": 0, "node": "localhost"}]`
	}
	return `{"time": {"elapsed": 1, "system": {"seconds": 0, "microseconds": 0}, "total": {"seconds": ` + itoa(sec) +
		`, "microseconds": ` + itoa(usec) + `}, "user": {"seconds": 0, "microseconds": 0}}, "tres": {"requested": {"max": ` + max +
		`, "average": []}, "allocated": [{"type": "mem", "name": null, "id": 2, "count": 0}]}}`
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

// jJob is a job in dbv0.0.38's shape with a CPU count, a requested mem in
// megabytes and steps; the job's own time.total is 0, as 22.05 prints it.
func jJob(id, cpus, memMB int64, steps ...string) string {
	return `{"job_id": ` + itoa(id) + `, "allocation_nodes": 1, "required": {"CPUs": ` + itoa(cpus) + `, "memory": 0},
		"time": {"total": {"seconds": 0, "microseconds": 0}},
		"tres": {"allocated": [{"type": "cpu", "name": null, "id": 1, "count": ` + itoa(cpus) + `}],
		"requested": [{"type": "cpu", "name": null, "id": 1, "count": ` + itoa(cpus) + `}, {"type": "mem", "name": null, "id": 2, "count": ` + itoa(memMB) + `}]},
		"steps": [` + strings.Join(steps, ",") + `]}`
}

// TestParseSacctJSONUsageAgreesWithText writes the jobs of the -P capture
// in --json's shape (times to the microsecond, memory in bytes, the
// request in megabytes) and wants what the text reader makes of the
// capture.
func TestParseSacctJSONUsageAgreesWithText(t *testing.T) {
	text := textUsage(t, usageP)
	const k = 1 << 10
	doc := jsonDoc(
		jJob(1, 2, 16000, jStep(0, 33412, 0), jStep(19, 347108, 6292*k), jStep(0, 3497, 0)),
		jJob(2, 1, 512, jStep(0, 17250, 12064*k), jStep(0, 272401, 315292*k)),
		jJob(3, 1, 100, jStep(0, 2001, 0)),
		jJob(4, 2, 200, jStep(0, 11300, 0), jStep(0, 4092, 0)),
		jJob(5, 1, 1024, jStep(0, 2499, 0)),
	)
	js := jsonUsage(t, doc)
	steps := map[string]int{"1": 3, "2": 2, "3": 1, "4": 2, "5": 1}
	for id, n := range steps {
		if _, ok := text[id]; !ok {
			t.Fatalf("text has no job %s", id)
		}
		sameUsage(t, id, js[id], text[id], n)
	}
	// The capture's own numbers: 2 × 10 s burnt (RLIMIT_CPU), 300 MiB held.
	if u := js["1"]; u.TotalCPU < 19*time.Second || u.TotalCPU > 20*time.Second {
		t.Errorf("job 1: TotalCPU %v, want the 19.384 s of the capture", u.TotalCPU)
	}
	if u := js["2"]; u.MemPeak < 300<<20 {
		t.Errorf("job 2: MemPeak %d, want ≥ 300 MiB", u.MemPeak)
	}

	// 23.02+ (v0.0.39) without a mem item in tres.requested: the request
	// comes from required, per CPU × CPUs or per node × nodes.
	newer := jsonDoc(
		`{"job_id": 4, "allocation_nodes": 1, "required": {"CPUs": 2, "memory_per_cpu": {"set": true, "infinite": false, "number": 100},
			"memory_per_node": {"set": false, "infinite": false, "number": 0}}, "tres": {"allocated": [{"type": "cpu", "count": 2}], "requested": []}}`,
		`{"job_id": 5, "allocation_nodes": 1, "required": {"CPUs": 1, "memory_per_cpu": {"set": false, "infinite": false, "number": 0},
			"memory_per_node": {"set": true, "infinite": false, "number": 1024}}, "tres": {"allocated": [{"type": "cpu", "count": 1}], "requested": []}}`,
	)
	nj := jsonUsage(t, newer)
	for _, id := range []string{"4", "5"} {
		if u, x := nj[id], text[id]; u.ReqMem != x.ReqMem || !u.ReqMemValid || !x.ReqMemValid {
			t.Errorf("job %s: ReqMem JSON %d (%v), text %d (%v)", id, u.ReqMem, u.ReqMemValid, x.ReqMem, x.ReqMemValid)
		}
	}
}

// TestParseSacctJSONUsageUnknown checks that what --json does not report
// stays unknown, never 0, and that a malformed value leaves its value
// unknown with a note while the others are kept.
func TestParseSacctJSONUsageUnknown(t *testing.T) {
	const okStep = `{"time": {"total": {"seconds": 1, "microseconds": 500000}}, "tres": {"requested": {"max": [{"type": "mem", "name": null, "count": 1048576}]}}}`
	tests := []struct {
		name              string
		job               string
		cpu, peak, req    bool // which values are known
		wantCPU           time.Duration
		wantPeak, wantReq uint64
		problems          []string // substrings
	}{
		{name: "no steps, no request", job: `{"job_id": 7, "time": {"total": {"seconds": 0, "microseconds": 0}}, "required": {"CPUs": 1, "memory": 0}}`},
		{name: "steps without time or tres", job: `{"job_id": 7, "steps": [{}, {"time": {}, "tres": {"requested": {"max": []}}}]}`},
		{name: "mem never sampled (0), request --mem=0", job: `{"job_id": 7, "tres": {"requested": [{"type": "mem", "count": 0}]},
			"steps": [{"tres": {"requested": {"max": [{"type": "mem", "count": 0}]}}}]}`},
		{name: "mem null, request null", job: `{"job_id": 7, "tres": {"requested": [{"type": "mem", "count": null}]},
			"steps": [{"tres": {"requested": {"max": [{"type": "mem", "count": null}]}}}]}`},
		{name: "required infinite or unset", job: `{"job_id": 7, "allocation_nodes": 1, "required": {"CPUs": 2,
			"memory_per_node": {"set": true, "infinite": true, "number": 0}}}`},
		{name: "per-CPU request without CPUs", job: `{"job_id": 7, "required": {"memory_per_cpu": {"set": true, "infinite": false, "number": 100}}}`},
		{name: "a good step", job: `{"job_id": 7, "steps": [` + okStep + `]}`,
			cpu: true, peak: true, wantCPU: 1500 * time.Millisecond, wantPeak: 1 << 20},
		{name: "zero CPU time is a value", job: `{"job_id": 7, "steps": [{"time": {"total": {"seconds": 0, "microseconds": 0}}}]}`,
			cpu: true},
		{name: "total not a number", job: `{"job_id": 7, "steps": [` + okStep + `, {"time": {"total": {"seconds": "lots", "microseconds": 0}}}]}`,
			peak: true, wantPeak: 1 << 20, problems: []string{"steps.time.total: step 2: not a number"}},
		{name: "microseconds out of range", job: `{"job_id": 7, "steps": [{"time": {"total": {"seconds": 1, "microseconds": 1000000}}}, ` + okStep + `]}`,
			peak: true, wantPeak: 1 << 20, problems: []string{"steps.time.total: step 1:", "out of range"}},
		{name: "negative seconds", job: `{"job_id": 7, "steps": [{"time": {"total": {"seconds": -1, "microseconds": 0}}}]}`,
			problems: []string{"steps.time.total"}},
		{name: "half a total", job: `{"job_id": 7, "steps": [{"time": {"total": {"seconds": 3}}}]}`,
			problems: []string{"steps.time.total: step 1: seconds or microseconds missing"}},
		{name: "sum overflows", job: `{"job_id": 7, "steps": [{"time": {"total": {"seconds": 9223372035, "microseconds": 0}}}, {"time": {"total": {"seconds": 9223372035, "microseconds": 0}}}]}`,
			problems: []string{"steps.time.total: the sum over the steps overflows"}},
		{name: "mem NO_VAL64", job: `{"job_id": 7, "steps": [` + okStep + `, {"tres": {"requested": {"max": [{"type": "mem", "count": 18446744073709551614}]}}}]}`,
			cpu: true, wantCPU: 1500 * time.Millisecond, problems: []string{"steps.tres.requested.max: step 2: mem is not a memory size"}},
		{name: "mem negative", job: `{"job_id": 7, "steps": [{"tres": {"requested": {"max": [{"type": "mem", "count": -5}]}}}]}`,
			problems: []string{"steps.tres.requested.max"}},
		{name: "request not a number", job: `{"job_id": 7, "tres": {"requested": [{"type": "mem", "count": "16G"}]}}`,
			problems: []string{"tres.requested: not a number of megabytes"}},
		{name: "per-CPU request overflows", job: `{"job_id": 7, "tres": {"allocated": [{"type": "cpu", "count": 4}]},
			"required": {"memory_per_cpu": {"set": true, "infinite": false, "number": 9223372036854775807}}}`,
			problems: []string{"required.memory_per_cpu:", "out of range"}},
		{name: "per-node request", job: `{"job_id": 7, "allocation_nodes": 2, "required": {"memory_per_node": {"set": true, "infinite": false, "number": 4000}}}`,
			req: true, wantReq: 2 * 4000 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, problems, err := ParseJSON(strings.NewReader(jsonDoc(tt.job)), "")
			if err != nil || len(recs) != 1 {
				t.Fatalf("%d records, err %v", len(recs), err)
			}
			u := recs[0].Usage
			if u.TotalCPUValid != tt.cpu || u.TotalCPU != tt.wantCPU {
				t.Errorf("TotalCPU %v (%v), want %v (%v)", u.TotalCPU, u.TotalCPUValid, tt.wantCPU, tt.cpu)
			}
			if u.MemPeakValid != tt.peak || u.MemPeak != tt.wantPeak {
				t.Errorf("MemPeak %d (%v), want %d (%v)", u.MemPeak, u.MemPeakValid, tt.wantPeak, tt.peak)
			}
			if u.ReqMemValid != tt.req || u.ReqMem != tt.wantReq {
				t.Errorf("ReqMem %d (%v), want %d (%v)", u.ReqMem, u.ReqMemValid, tt.wantReq, tt.req)
			}
			if len(problems) != min(len(tt.problems), 1) {
				t.Fatalf("problems %v, want %q", problems, tt.problems)
			}
			for _, p := range problems {
				if !errors.Is(p, ErrMalformed) {
					t.Errorf("problem %v does not wrap ErrMalformed", p)
				}
				for _, want := range tt.problems {
					if !strings.Contains(p.Error(), want) {
						t.Errorf("problem %q, want %q in it", p, want)
					}
				}
			}
		})
	}
}
