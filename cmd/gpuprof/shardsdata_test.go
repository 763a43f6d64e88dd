package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shardsTrace is sacct -P text in the shape of the Alibaba openb trace
// converted: jobs of a fraction of one GPU as gres/shard=N on one node
// (openb's gpu_milli), one of them holding 81 shards of its GPU, and one
// of a whole GPU. Each runs one hour.
const shardsTrace = `JobID|JobIDRaw|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Timelimit|State|ExitCode|NodeList|NNodes|ReqTRES|AllocTRES|Cluster
101|101|pod-a|u01|acct0|ls|normal|1772413200|1772413200|1772413200|1772416800|08:00:00|COMPLETED|0:0|openb-node-0001|1|billing=1,cpu=4,gres/shard=81,mem=16G,node=1|billing=1,cpu=4,gres/shard=81,mem=16G,node=1|openb
102|102|pod-b|u02|acct0|ls|normal|1772413200|1772413200|1772413200|1772416800|08:00:00|COMPLETED|0:0|openb-node-0002|1|billing=1,cpu=4,gres/shard=27,mem=16G,node=1|billing=1,cpu=4,gres/shard=27,mem=16G,node=1|openb
103|103|pod-c|u03|acct0|ls|normal|1772413200|1772413200|1772413200|1772416800|08:00:00|COMPLETED|0:0|openb-node-0003|1|billing=1,cpu=4,gres/shard=5,mem=16G,node=1|billing=1,cpu=4,gres/shard=5,mem=16G,node=1|openb
104|104|pod-d|u04|acct0|ls|normal|1772413200|1772413200|1772413200|1772416800|08:00:00|COMPLETED|0:0|openb-node-0004|1|billing=1,cpu=4,gres/gpu=1,mem=16G,node=1|billing=1,cpu=4,gres/gpu=1,mem=16G,node=1|openb
`

// TestShardsPerGPUFromData (issue #38, item 2): without a slurm.conf, a
// job that held 81 shards of one GPU contradicts the default of 8 shards
// per GPU; the data overrides it — a GPU has at least 81 — so the shard
// jobs count 81, 27 and 5 81ths of a GPU (1.4 GPU-hours with the whole
// GPU's hour: 2.4 in all), not a whole GPU each (4 GPU-hours) — and
// profiles, as every output counting them, says the assumption and that
// the data raised it.
func TestShardsPerGPUFromData(t *testing.T) {
	dir := t.TempDir()
	conf := "slurm_conf = \"" + filepath.Join(dir, "none", "slurm.conf") + "\"\n"
	db := filepath.Join(dir, "gpuprof.db")
	importTrace(t, conf, db, shardsTrace)
	const since, until = "2026-03-01", "2026-04-01"
	want := 1 + (81.0+27+5)/81

	var pj struct {
		Summary struct {
			GPUHours float64 `json:"gpu_hours"`
		} `json:"summary"`
		Counting struct {
			ShardsAssumed    int `json:"shards_assumed"`
			AssumedShardJobs int `json:"assumed_shard_jobs"`
			ShardsRaisedFrom int `json:"shards_raised_from"`
		} `json:"counting"`
	}
	out := mustRun(t, conf, "--db", db, "profiles", "--json", "--since", since, "--until", until)
	if err := json.Unmarshal([]byte(out), &pj); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d := pj.Summary.GPUHours - want; d > 0.01 || d < -0.01 {
		t.Errorf("profiles: %.3f GPU-hours, want %.3f (shards counted at 81 per GPU, as the data shows)", pj.Summary.GPUHours, want)
	}
	if c := pj.Counting; c.ShardsAssumed != 81 || c.AssumedShardJobs != 3 || c.ShardsRaisedFrom != 8 {
		t.Errorf("profiles counting = %+v, want 81 shards per GPU assumed for 3 jobs, raised from 8", c)
	}
	text := mustRun(t, conf, "--db", db, "profiles", "--since", since, "--until", until)
	for _, s := range []string{"81 shards per GPU assumed for 3 of them", "raised from 8, as a job held 81 shards of one GPU"} {
		if !strings.Contains(text, s) {
			t.Errorf("profiles does not say %q:\n%s", s, text)
		}
	}
	rec := mustRun(t, conf, "--db", db, "recommend", "--since", since, "--until", until)
	if !strings.Contains(rec, "raised from 8, as a job held 81 shards of one GPU") {
		t.Errorf("recommend does not say the assumption was raised:\n%s", rec)
	}
}

// TestWhatIfShardsAsPlan (issue #38, item 2): whatif assumes the shards
// per GPU that plan, recommend and the report assume — [counting]
// shards_per_gpu of --analysis-config, raised by the data — where before it
// took no analysis configuration and always started from the default 8.
func TestWhatIfShardsAsPlan(t *testing.T) {
	dir := t.TempDir()
	conf := "slurm_conf = \"" + filepath.Join(dir, "none", "slurm.conf") + "\"\n"
	db := filepath.Join(dir, "gpuprof.db")
	importTrace(t, conf, db, shardsTrace)
	acfg := filepath.Join(dir, "analysis.toml")
	if err := os.WriteFile(acfg, []byte("[counting]\nshards_per_gpu = 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const since, until = "2026-03-01", "2026-04-01"
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "81 shards per GPU assumed"},
		{[]string{"--analysis-config", acfg}, "100 shards per GPU assumed"},
	} {
		out := mustRun(t, conf, append([]string{"--db", db, "whatif", "--since", since, "--until", until, "--seeds", "1",
			"--node", "openb-node-000[1-4]:1xg2:ls"}, c.args...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("whatif %v does not say %q:\n%s", c.args, c.want, out)
		}
	}
}
