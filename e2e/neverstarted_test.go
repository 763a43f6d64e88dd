package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

// TestNeverStartedRealJobs runs, on the test cluster (one node, 4 GPUs:
// the shared cluster's node, held alone through wholeNode), GPU jobs that
// start and GPU jobs cancelled while pending in each way a job waits:
// held until later (sbatch --begin=now+1hour), held by its user (sbatch
// -H), and waiting for GPUs another job holds; and one job cancelled
// while it ran. It imports them with sacct and wants none of the
// pending ones counted as started: not in the report's jobs_started, not
// among the jobs cancelled after they started, no GPU-hours, not in the
// what-if's calibration, and show says they never started. Slurm gives
// them Start = End and NodeList "None assigned": the test checks that too.
//
// With GPUPROF_CAPTURE_DIR set it writes there the sacct text, as gpuprof
// import runs sacct (history.SacctCommand): slurmext/testdata/real/
// 22.05-cancelled-pending-P-epoch-steps.txt was made so.
func TestNeverStartedRealJobs(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// With jobcomp/script, as sites that run gpuprof's jobcomp have it.
	cfgPath := filepath.Join(work, "gpuprof.toml")
	// It holds all four GPUs (the blocker) to keep jobs pending. Its jobs
	// run in slurm.conf's partition, which the what-if replays.
	c := wholeNode(t)
	part := c.confPartition(t, "gpu")
	c.hooks(t, bin, cfgPath)
	spoolDir := filepath.Join(work, "spool")
	cfg := fmt.Sprintf("db = %q\nspool_dir = %q\nslurm_conf = %q\nlog_file = %q\n", filepath.Join(work, "gpuprof.db"), spoolDir, c.Conf, filepath.Join(work, "gpuprof.log"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c.importOwnAccount(t, cfgPath, work)
	from := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	sbatch := func(name string, args ...string) string {
		return c.run(t, "sbatch", append([]string{"--parsable", "-p", part, "-A", c.Name, "-J", name, "-o", "/dev/null", "--chdir", work}, args...)...)
	}
	waitRunning := func(id string) {
		t.Helper()
		deadline := time.Now().Add(queueTimeout)
		for {
			st, err := c.jobState(id)
			if err == nil && strings.HasPrefix(st, "RUNNING") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s not running after %s: %q, %v", id, queueTimeout, st, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	// Pending until they are cancelled.
	never := []string{
		sbatch("later", "--gres=gpu:1", "-t", "5", "--begin=now+1hour", "--wrap", "sleep 1"),
		sbatch("later", "--gres=gpu:2", "--begin=now+1hour", "--wrap", "sleep 1"), // no limit of its own
		sbatch("held", "-H", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 1"),
		sbatch("held", "-H", "--gres=gpu:1", "--wrap", "sleep 1"),
	}
	blocker := sbatch("blocker", "--gres=gpu:4", "-t", "5", "--wrap", "sleep 15")
	waitRunning(blocker)
	never = append(never, sbatch("blocked", "--gres=gpu:4", "-t", "5", "--wrap", "sleep 1"),
		sbatch("blocked", "--gres=gpu:2", "--wrap", "sleep 1"))
	time.Sleep(3 * time.Second) // every one of them has waited a while
	c.run(t, "scancel", never...)
	started := []string{blocker}
	for range 3 {
		started = append(started, sbatch("ran", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 3"))
	}
	killed := sbatch("killed", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 120")
	started = append(started, killed)
	waitRunning(killed)
	time.Sleep(2 * time.Second)
	c.run(t, "scancel", killed)
	waitQueueDrained(t, c.cluster, queueTimeout)
	until := time.Now().Add(2 * time.Second)
	t.Logf("started %v, cancelled while pending %v", started, never)

	// What Slurm recorded for them, read apart from gpuprof's reader.
	all := len(started) + len(never)
	var text string
	deadline := time.Now().Add(time.Minute)
	for {
		// What gpuprof import runs: jobs that ended in the window in a
		// final state (without --state, sacct leaves out a job that was
		// eligible only after the window, as --begin=now+1hour makes it),
		// of the test's own account.
		cmd := history.SacctCommand(context.Background(), "sacct", from, until)
		cmd.Args = append(cmd.Args, "-A", c.Name)
		cmd.Env = c.env("SLURM_TIME_FORMAT=%s")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sacct: %v", err)
		}
		text = string(out)
		jobs := 0
		for _, l := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
			if id, _, _ := strings.Cut(l, "|"); !strings.Contains(id, ".") {
				jobs++
			}
		}
		if jobs >= all || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if dir := os.Getenv("GPUPROF_CAPTURE_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "22.05-cancelled-pending-P-epoch-steps.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fields := sacct.Fields()
	col := func(name string) int {
		for i, f := range fields {
			if f == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(fields) {
			continue
		}
		for _, id := range never {
			if f[col("JobIDRaw")] == id {
				t.Logf("sacct of job %s: Start %s End %s NodeList %q State %s", id, f[col("Start")], f[col("End")], f[col("NodeList")], f[col("State")])
				if f[col("NodeList")] != "None assigned" || (f[col("Start")] != f[col("End")] && f[col("Start")] != "None" && f[col("Start")] != "Unknown") {
					t.Errorf("job %s, cancelled while pending: Start %s End %s NodeList %q; want Start = End (or none) and \"None assigned\"",
						id, f[col("Start")], f[col("End")], f[col("NodeList")])
				}
			}
		}
	}

	out := importSacct(t, c.cluster, bin, cfgPath)
	if read, _, _, _, _ := importCounts(t, out); read != all {
		t.Fatalf("imported %d jobs, want %d", read, all)
	}
	gpuprof := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--config", cfgPath)...)
		cmd.Env = c.env()
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("gpuprof %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}

	// No agent or serve runs on this controller: an ingest pass writes
	// what jobcomp (and the hooks) spooled, once jobcomp has reported
	// every job.
	for deadline := time.Now().Add(recordTimeout); ; time.Sleep(time.Second) {
		recs, _ := filepath.Glob(filepath.Join(spoolDir, "*."+hookproto.KindSchedJob+".json"))
		if len(recs) >= all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %d jobcomp records in the spool, want %d", recordTimeout, len(recs), all)
		}
	}
	gpuprof("ingest")

	// The report of the month: jobs started, cancelled after they started,
	// GPU-hours.
	repDir := filepath.Join(work, "report")
	if err := os.Mkdir(repDir, 0o755); err != nil {
		t.Fatal(err)
	}
	month := from.Local().Format("2006-01")
	gpuprof("report", "--month", month, "--out", repDir, "--format", "json")
	raw, err := os.ReadFile(filepath.Join(repDir, "gpuprof-report-"+month+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Workload struct {
			Headline struct {
				Jobs              int     `json:"jobs"`
				AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
			} `json:"headline"`
			Daily []struct {
				Started   int `json:"jobs_started"`
				Submitted int `json:"jobs_submitted"`
			} `json:"daily"`
			Cancelled struct {
				Jobs int `json:"jobs"`
			} `json:"cancelled"`
		} `json:"workload"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	w := rep.Workload
	startedN, submittedN := 0, 0
	for _, d := range w.Daily {
		startedN += d.Started
		submittedN += d.Submitted
	}
	t.Logf("report: %d jobs, %d started, %d submitted, %d cancelled after they started, %.4f GPU-hours",
		w.Headline.Jobs, startedN, submittedN, w.Cancelled.Jobs, w.Headline.AllocatedGPUHours)
	if startedN != len(started) || submittedN != all || w.Headline.Jobs != all {
		t.Errorf("report: %d jobs started of %d submitted (%d jobs); want %d of %d", startedN, submittedN, w.Headline.Jobs, len(started), all)
	}
	if w.Cancelled.Jobs != 1 {
		t.Errorf("report: %d jobs cancelled after they started, want 1 (%s)", w.Cancelled.Jobs, killed)
	}
	// The blocker's 4 GPUs × 15 s, three 3-s jobs, the killed one's ~2 s:
	// under a minute of GPU time; the pending ones add none.
	if h := w.Headline.AllocatedGPUHours; h <= 0 || h > 0.1 {
		t.Errorf("report: %.4f GPU-hours, want the few seconds the started jobs ran", h)
	}

	// The what-if's calibration compares the jobs that started, no others.
	var wi struct {
		Calibration struct {
			Jobs int `json:"jobs"`
		} `json:"calibration"`
	}
	if err := json.Unmarshal(gpuprof("whatif", "--json", "--seeds", "1",
		"--since", from.Format(time.RFC3339), "--until", until.Format(time.RFC3339)), &wi); err != nil {
		t.Fatal(err)
	}
	if wi.Calibration.Jobs > len(started) {
		t.Errorf("whatif compares %d jobs, at most the %d that started", wi.Calibration.Jobs, len(started))
	}

	for _, id := range never {
		if out := string(gpuprof("show", id)); !strings.Contains(out, "Started never") {
			t.Errorf("show %s:\n%s", id, out)
		}
	}
	// jobcomp reports such a job with START = END (the time it left the
	// queue) and no nodes; sacct with Start None. The merged record has
	// jobcomp's start: the form sacct itself gives in other captures
	// (testdata/sacct, jobs 9 and 25).
	var v []struct {
		Sched struct {
			Start    time.Time `json:"start"`
			End      time.Time `json:"end"`
			NodeList string    `json:"node_list"`
		} `json:"sched"`
	}
	if err := json.Unmarshal(gpuprof("show", never[0], "--json"), &v); err != nil || len(v) != 1 {
		t.Fatalf("show %s --json: %d jobs, %v", never[0], len(v), err)
	}
	s := v[0].Sched
	t.Logf("stored record of job %s: start %v, end %v, node list %q", never[0], s.Start, s.End, s.NodeList)
	if !s.Start.Equal(s.End) || s.NodeList != "" {
		t.Errorf("stored record of job %s: start %v, end %v, node list %q; want jobcomp's start = end, no nodes", never[0], s.Start, s.End, s.NodeList)
	}
}
