package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWhatIfReplaysRealQueue runs 44 sleeping jobs of 1–4 GPUs with
// different time limits on the test cluster (one node, 4 GPUs;
// priority/basic, sched/backfill with Slurm's defaults: bf_interval 30 s,
// bf_resolution 60 s, bf_window 1 day), submitted in bursts so that some
// wait and some backfill; imports them with sacct and replays the window
// with `gpuprof whatif` and no change. The replay must start the jobs in
// the same order (rank correlation ≥ 0.9), start at least 90 % of them
// within 10 s of their real start, and call its calibration good.
func TestWhatIfReplaysRealQueue(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// Its jobs start as they would on a slurmctld that has run a while:
	// after its first backfill cycle.
	waitFirstBackfill(t)
	// The node to itself: the replay sees only the jobs it imports, so
	// another test's jobs on the node would be waits it cannot explain.
	// Its jobs run in partition gpu, slurm.conf's (the replay's cluster
	// is slurm.conf's), under the scope's account, the one it imports.
	c := wholeNode(t)
	part := c.confPartition(t, "gpu")
	cfgPath := filepath.Join(work, "gpuprof.toml")
	cfg := fmt.Sprintf("db = %q\nslurm_conf = %q\nlog_file = %q\n", filepath.Join(work, "gpuprof.db"), c.Conf, filepath.Join(work, "gpuprof.log"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c.importOwnAccount(t, cfgPath, work)

	from := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	rng := rand.New(rand.NewPCG(12, 12))
	var ids []string
	const bursts, perBurst = 4, 11
	for b := range bursts {
		for range perBurst {
			gpus := 1 + rng.IntN(4)
			if rng.IntN(3) > 0 {
				gpus = 1 + rng.IntN(2)
			}
			limit := 1 + rng.IntN(3) // minutes
			sleep := 2 + rng.IntN(5) // seconds
			ids = append(ids, c.run(t, "sbatch", "--parsable", "-p", part, "-A", c.Name, "-J", "whatif", "-o", "/dev/null", "--chdir", work,
				fmt.Sprintf("--gres=gpu:%d", gpus), fmt.Sprintf("--time=%d", limit), "--wrap", fmt.Sprintf("sleep %d", sleep)))
		}
		if b < bursts-1 {
			time.Sleep(time.Duration(15+rng.IntN(10)) * time.Second)
		}
	}
	t.Logf("submitted %d jobs: %s", len(ids), strings.Join(ids, ","))
	waitQueueDrained(t, c.cluster, queueTimeout)
	until := time.Now().Add(2 * time.Second)
	// The rest reads sacct and replays: the node is no longer needed.
	c.end(t)

	// sacct may lag slurmctld a moment: import until every job is there.
	deadline := time.Now().Add(time.Minute)
	for {
		out := importSacct(t, c.cluster, bin, cfgPath)
		var read int
		fmt.Sscanf(out, "%d jobs read", &read)
		if read >= len(ids) || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}

	cmd := exec.Command(bin, "whatif", "--config", cfgPath, "--json", "--seeds", "3",
		"--since", from.Format(time.RFC3339), "--until", until.Format(time.RFC3339))
	cmd.Env = c.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gpuprof whatif: %v\n%s", err, out)
	}
	var w struct {
		ClusterSource string   `json:"cluster_source"`
		Assumed       []string `json:"assumed"`
		Jobs          struct {
			Replayed int `json:"replayed"`
		} `json:"jobs"`
		Calibration struct {
			Jobs            int      `json:"jobs"`
			StartMAE        float64  `json:"start_mae_s"`
			Within10s       float64  `json:"within_10s"`
			RankCorrelation float64  `json:"rank_correlation"`
			Reliable        bool     `json:"reliable"`
			Problems        []string `json:"problems"`
			Partitions      []struct {
				Partition    string  `json:"partition"`
				Jobs         int     `json:"jobs"`
				ObservedP50  float64 `json:"observed_p50_s"`
				ObservedP95  float64 `json:"observed_p95_s"`
				SimulatedP50 float64 `json:"simulated_p50_s"`
				SimulatedP95 float64 `json:"simulated_p95_s"`
			} `json:"partitions"`
		} `json:"calibration"`
	}
	if err := json.Unmarshal(out, &w); err != nil {
		t.Fatalf("whatif --json: %v\n%s", err, out)
	}
	text := exec.Command(bin, "whatif", "--config", cfgPath, "--seeds", "3",
		"--since", from.Format(time.RFC3339), "--until", until.Format(time.RFC3339), "--add", "4xgpu")
	text.Env = c.env()
	tout, err := text.CombinedOutput()
	t.Logf("gpuprof whatif --add 4xgpu:\n%s", tout)
	if err != nil {
		t.Errorf("gpuprof whatif --add: %v", err)
	}
	cal := w.Calibration
	t.Logf("cluster from %s; assumed %q; calibration %+v\n%s", w.ClusterSource, w.Assumed, cal, out)
	if w.ClusterSource != "slurm.conf of cluster gpuproftest" || w.Jobs.Replayed != len(ids) || cal.Jobs != len(ids) {
		t.Errorf("replayed %d jobs (%d compared) on a cluster from %q, want all %d from slurm.conf", w.Jobs.Replayed, cal.Jobs, w.ClusterSource, len(ids))
	}
	if cal.RankCorrelation < 0.9 {
		t.Errorf("start order rank correlation %.3f, want ≥ 0.9", cal.RankCorrelation)
	}
	if cal.Within10s < 0.9 {
		t.Errorf("%.0f %% of the jobs start within 10 s of their real start, want ≥ 90 %%", 100*cal.Within10s)
	}
	if !cal.Reliable {
		t.Errorf("calibration called poor: %q", cal.Problems)
	}
	waited := slices.ContainsFunc(cal.Partitions, func(p struct {
		Partition    string  `json:"partition"`
		Jobs         int     `json:"jobs"`
		ObservedP50  float64 `json:"observed_p50_s"`
		ObservedP95  float64 `json:"observed_p95_s"`
		SimulatedP50 float64 `json:"simulated_p50_s"`
		SimulatedP95 float64 `json:"simulated_p95_s"`
	}) bool {
		return p.ObservedP95 >= 30
	})
	if !waited {
		t.Errorf("no partition's p95 wait reached 30 s: the bursts did not make jobs queue, so the test shows nothing")
	}

	// The capacity plan on the same real queue, with the data minimums
	// lowered to this test's two minutes and no growth: against a 1 h
	// target nothing is to be bought; against a 20 s target, which the
	// bursts miss, the plan must meet it with free changes or a purchase
	// of the cluster's one GPU model, and say so in its verdict.
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"1h", []string{"no_change", "policy"}},
		{"20s", []string{"policy", "buy"}},
	} {
		acfg := filepath.Join(t.TempDir(), "analysis.toml")
		if err := os.WriteFile(acfg, []byte(fmt.Sprintf("[plan]\nmin_window = \"1m\"\nmin_jobs = 20\nseeds = 3\ntarget_p95_wait = %q\n", tc.target)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "plan", "--config", cfgPath, "--json", "--analysis-config", acfg, "--growth", "0%", "--horizon", "0mo",
			"--since", from.Format(time.RFC3339), "--until", until.Format(time.RFC3339))
		cmd.Env = c.env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gpuprof plan (target %s): %v\n%s", tc.target, err, out)
		}
		var p struct {
			Simulated struct {
				Simulated bool `json:"simulated"`
				Verdict   struct {
					Code string `json:"code"`
					Text string `json:"text"`
				} `json:"verdict"`
				Effects  []struct{ ID, Text string } `json:"effects"`
				Free     []string                    `json:"free"`
				Purchase []struct {
					Model string `json:"model"`
					GPUs  int    `json:"gpus"`
				} `json:"purchase"`
				Calibration struct {
					Reliable bool `json:"reliable"`
				} `json:"calibration"`
			} `json:"simulated"`
			Recommendations []struct{ ID string } `json:"recommendations"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("plan --json: %v\n%s", err, out)
		}
		sp := p.Simulated
		t.Logf("plan, target %s: %s (free %q, purchase %+v)", tc.target, sp.Verdict.Text, sp.Free, sp.Purchase)
		if !sp.Simulated || !sp.Calibration.Reliable || !slices.Contains(tc.want, sp.Verdict.Code) {
			t.Errorf("target %s: simulated %v, calibration reliable %v, verdict %s (%s); want one of %q",
				tc.target, sp.Simulated, sp.Calibration.Reliable, sp.Verdict.Code, sp.Verdict.Text, tc.want)
		}
		if sp.Verdict.Code == "buy" && (len(sp.Purchase) != 1 || sp.Purchase[0].GPUs < 1) {
			t.Errorf("target %s: buy with purchase %+v, want GPUs of the one model", tc.target, sp.Purchase)
		}
		for _, e := range sp.Effects {
			if !strings.HasPrefix(e.Text, "Expected effect") {
				t.Errorf("effect %s: %q", e.ID, e.Text)
			}
		}
	}
}
