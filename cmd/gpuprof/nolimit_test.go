package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// noLimitTrace is sacct -P text as the real test Slurm (one node, 4 GPUs,
// partitions of MaxTime=INFINITE) records it: two-minute jobs without a
// time limit, printed UNLIMITED or as 365 days, and one with a limit of
// 30 minutes.
const noLimitTrace = `JobID|JobIDRaw|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Timelimit|State|ExitCode|NodeList|NNodes|ReqTRES|AllocTRES|Cluster
201|201|burn|alice|lab|gpu|normal|1772413200|1772413200|1772413200|1772413320|UNLIMITED|COMPLETED|0:0|localhost|1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|test
202|202|burn|alice|lab|gpu|normal|1772413400|1772413400|1772413400|1772413520|365-00:00:00|COMPLETED|0:0|localhost|1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|test
203|203|burn|alice|lab|gpu|normal|1772413600|1772413600|1772413600|1772413720|UNLIMITED|COMPLETED|0:0|localhost|1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|test
204|204|burn|alice|lab|gpu|normal|1772413800|1772413800|1772413800|1772413920|00:30:00|COMPLETED|0:0|localhost|1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|billing=1,cpu=1,gres/gpu=1,mem=1G,node=1|test
`

// TestLimitRatioWithoutLimit (issue #38, the real test Slurm's month): a
// job without a time limit has no limit/run ratio — the 365-day limit of
// a two-minute run is not "262800×" — and the jobs left out are counted
// and named: the partition's ratio is the one job's with a limit, 15×.
func TestLimitRatioWithoutLimit(t *testing.T) {
	dir := t.TempDir()
	conf := "slurm_conf = \"" + filepath.Join(dir, "none", "slurm.conf") + "\"\n"
	db := filepath.Join(dir, "gpuprof.db")
	importTrace(t, conf, db, noLimitTrace)
	const since, until = "2026-03-01", "2026-04-01"
	var pj struct {
		Summary struct {
			Partitions []struct {
				Partition  string `json:"partition"`
				NoLimit    int    `json:"no_limit"`
				LimitRatio struct {
					N   int     `json:"n"`
					P95 float64 `json:"p95"`
				} `json:"limit_ratio"`
			} `json:"partitions"`
		} `json:"summary"`
	}
	out := mustRun(t, conf, "--db", db, "profiles", "--json", "--since", since, "--until", until)
	if err := json.Unmarshal([]byte(out), &pj); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if ps := pj.Summary.Partitions; len(ps) != 1 || ps[0].NoLimit != 3 || ps[0].LimitRatio.N != 1 || ps[0].LimitRatio.P95 != 15 {
		t.Errorf("partitions = %+v, want gpu: 3 jobs without a limit, the ratio over 1 job, 15×", ps)
	}
	text := mustRun(t, conf, "--db", db, "profiles", "--since", since, "--until", until)
	if want := "Limit/run leaves out 3 jobs without a time limit (UNLIMITED, or a year or more): no request to measure; 3 in gpu."; !strings.Contains(text, want) {
		t.Errorf("profiles does not say %q:\n%s", want, text)
	}
	if strings.Contains(text, "262800×") || strings.Contains(text, "262,800×") {
		t.Errorf("profiles turns a 365-day limit into a ratio:\n%s", text)
	}
}

// TestOneGPUSingular (issue #38, the real test Slurm's month: "1 GPUs"):
// profiles of one task of one-GPU runs write a count of one in the
// singular: "1 recurring task", "Asks for 1 GPU per run".
func TestOneGPUSingular(t *testing.T) {
	dir := t.TempDir()
	conf := "slurm_conf = \"" + filepath.Join(dir, "none", "slurm.conf") + "\"\n"
	db := filepath.Join(dir, "gpuprof.db")
	importTrace(t, conf, db, noLimitTrace)
	text := mustRun(t, conf, "--db", db, "profiles", "--since", "2026-03-01", "--until", "2026-04-01")
	if m := regexp.MustCompile(`(^|[^0-9.,])1(\.0)? (GPUs|recurring tasks|nodes)\b`).FindString(text); m != "" {
		t.Errorf("plural after 1: %q in\n%s", m, text)
	}
	for _, want := range []string{"in 1 recurring task,", "Asks for 1 GPU per run"} {
		if !strings.Contains(text, want) {
			t.Errorf("profiles lacks %q:\n%s", want, text)
		}
	}
}
