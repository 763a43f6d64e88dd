package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

const (
	gib = uint64(1) << 30
	mib = uint64(1) << 20

	// Limits of the whole run. The time-limit job dominates: Slurm enforces
	// a 1-minute limit 60-90 s after the start, plus KillWait.
	queueTimeout   = 4 * time.Minute
	profileTimeout = 30 * time.Second
	agentTimeout   = 30 * time.Second

	// interval is the agent's sampling interval in the test configuration.
	interval = time.Second
	// minUtilRun is how long a burn must run for its utilisation to be
	// checked: shorter ones may have too few samples.
	minUtilRun = 5 * time.Second
	// utilSlack is the tolerance, in percentage points, on utilisation.
	utilSlack = 2.0
)

// captureJob is one Slurm job of TestCaptureUnderSlurm and what its profile
// must show.
type captureJob struct {
	name   string
	sbatch []string // resources and limits
	// The job runs `gpuprof simgpu burn` with these values (one per visible
	// GPU) unless script is set. then is shell run after the burn.
	mem, util []string
	runFor    time.Duration
	then      string
	script    string

	gpus        int           // GPUs Slurm allocates
	cancelAfter time.Duration // scancel once it has run this long
	sharded     bool          // one of the jobs sharing a GPU through shards
	// busy bounds how long the program held its load when that is not
	// runFor (cancelled, timed out); it bounds the count of busy samples.
	busy [2]time.Duration

	// Expectations. wantMem and wantUtil are per visible GPU, in
	// CUDA_VISIBLE_DEVICES order; nil means not checked.
	wantMem  []uint64
	wantUtil []uint32
	wantExit *int // checked when set
	wantIdle bool
	// brief: shorter than the sampling interval; only the profile's
	// existence and GPUs are guaranteed.
	brief bool
}

func intp(v int) *int { return &v }

// captureJobs is the job mix: exclusive GPUs with different loads, an
// allocation never touched, three jobs sharing one GPU through shards, a
// job shorter than the sampling interval, a failing, a cancelled and a
// timed-out job, and plain one-GPU jobs of known memory and load.
func captureJobs() []captureJob {
	jobs := []captureJob{
		// First, so that they start at once: the time limit is the run's
		// longest wait.
		{
			name: "time-limit", sbatch: []string{"--gres=gpu:1", "--time=1"},
			mem: []string{"6GiB"}, util: []string{"60"}, runFor: 5 * time.Minute,
			// Slurm enforces limits every 30 s: the job ends 60-90 s after
			// it starts, its program a little later than that.
			busy: [2]time.Duration{50 * time.Second, 100 * time.Second},
			gpus: 1, wantMem: []uint64{6 * gib}, wantUtil: []uint32{60},
		},
		{
			name: "cancelled", sbatch: []string{"--gres=gpu:1"},
			mem: []string{"7GiB"}, util: []string{"70"}, runFor: 5 * time.Minute,
			// RUNNING starts at allocation: the program starts up to a few
			// seconds later on a loaded machine.
			busy: [2]time.Duration{3 * time.Second, 10 * time.Second},
			gpus: 1, cancelAfter: 5 * time.Second, wantMem: []uint64{7 * gib}, wantUtil: []uint32{70},
		},
		{
			name: "two-gpus", sbatch: []string{"--gres=gpu:2"},
			mem: []string{"10GiB", "4GiB"}, util: []string{"80", "20"}, runFor: 20 * time.Second,
			gpus: 2, wantMem: []uint64{10 * gib, 4 * gib}, wantUtil: []uint32{80, 20}, wantExit: intp(0),
		},
	}
	// Slurm places shards first-fit, so the three land on one GPU (8
	// shards each) and run together.
	for i, m := range []uint64{2, 3, 5} {
		jobs = append(jobs, captureJob{
			name: fmt.Sprintf("shard-%dGiB", m), sbatch: []string{"--gres=shard:2"},
			mem: []string{fmt.Sprintf("%dGiB", m)}, util: []string{strconv.Itoa(10 * (i + 1))}, runFor: 15 * time.Second,
			gpus: 1, sharded: true, wantMem: []uint64{m * gib}, wantUtil: []uint32{uint32(10 * (i + 1))}, wantExit: intp(0),
		})
	}
	jobs = append(jobs,
		captureJob{
			name: "idle-allocation", sbatch: []string{"--gres=gpu:1"}, script: "sleep 8",
			gpus: 1, wantMem: []uint64{0}, wantIdle: true, wantExit: intp(0),
		},
		captureJob{
			name: "shorter-than-interval", sbatch: []string{"--gres=gpu:1"},
			mem: []string{"1GiB"}, util: []string{"50"}, runFor: 300 * time.Millisecond,
			gpus: 1, brief: true, wantExit: intp(0),
		},
		captureJob{
			name: "fails", sbatch: []string{"--gres=gpu:1"},
			mem: []string{"3GiB"}, util: []string{"30"}, runFor: 6 * time.Second, then: "exit 3",
			gpus: 1, wantMem: []uint64{3 * gib}, wantUtil: []uint32{30}, wantExit: intp(3),
		},
	)
	for i := 1; i <= 12; i++ {
		u := uint32(10 + 6*i)
		jobs = append(jobs, captureJob{
			name: fmt.Sprintf("plain-%02d", i), sbatch: []string{"--gres=gpu:1"},
			mem: []string{fmt.Sprintf("%dMiB", 1024*i+i)}, util: []string{strconv.Itoa(int(u))}, runFor: 6 * time.Second,
			gpus: 1, wantMem: []uint64{uint64(i)*gib + uint64(i)*mib}, wantUtil: []uint32{u}, wantExit: intp(0),
		})
	}
	return jobs
}

// command is the job's shell script. The first line of its output records
// the GPUs Slurm gave it.
func (j captureJob) command(bin string) string {
	body := j.script
	if body == "" {
		body = fmt.Sprintf("%s simgpu burn --mem %s --util %s --for %s",
			shellQuote(bin), strings.Join(j.mem, ","), strings.Join(j.util, ","), j.runFor)
	}
	if j.then != "" {
		body += "; " + j.then
	}
	return `echo "gpuprof-e2e gpus=$SLURM_JOB_GPUS"; ` + body
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestCaptureUnderSlurm runs a mix of jobs on a real Slurm whose hooks are
// gpuprof's (the shared cluster's node, held alone through wholeNode), against an agent sampling the simulated GPU node, and checks
// every job's profile: memory peaks, utilisation, GPU identity, exit status,
// idle allocations and shared GPUs. The node must not be drained and no
// hook may fail.
func TestCaptureUnderSlurm(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	// Jobs (root here, but any user on a real node) and slurmd's hooks
	// reach the configuration, the simulated node and their output here.
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	// The node to itself: Slurm places the shard jobs first-fit on one
	// GPU only with the node's GPUs free. Shared once they are placed.
	c := wholeNode(t)
	c.hooks(t, bin, cfgPath)
	c.withoutJobComp(t) // as on its own cluster before, with no JobCompType
	// slurmd.log is the shared cluster's: this test reads what comes
	// after this point.
	slurmdLog := filepath.Join(c.Dir, "log", "slurmd.log")
	var slurmdFrom int64
	if fi, err := os.Stat(slurmdLog); err == nil {
		slurmdFrom = fi.Size()
	}

	simDir := filepath.Join(work, "sim")
	outDir := filepath.Join(work, "out")
	for _, d := range []string{simDir, outDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	cfg := writeCaptureConfig(t, cfgPath, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"))

	agent := startProcess(t, filepath.Join(work, "agent.out"), os.Environ(), bin, "agent", "--config", cfgPath)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{filepath.Join(work, "agent.out"), cfg.LogFile} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 60 lines)\n%s", f, lastLines(string(data), 60))
				}
			}
		}
	})
	waitAgent(t, agent, cfg.Socket, filepath.Join(work, "agent.out"))
	uuidByMinor := simUUIDs(t, simDir)

	jobs := captureJobs()
	ids := make([]string, len(jobs))
	env := "--export=ALL,GPUPROF_CONFIG=" + cfgPath
	for i, j := range jobs {
		args := append([]string{"-J", "e2e-" + j.name, "-o", filepath.Join(outDir, "%j.out"),
			"--chdir", work, env}, j.sbatch...)
		args = append(args, "--wrap", j.command(bin))
		ids[i] = c.sbatch(t, args...)
	}
	t.Logf("submitted %d jobs: %s", len(ids), strings.Join(ids, ","))

	cancelErrs := make(chan error, len(jobs))
	cancels := 0
	for i, j := range jobs {
		if j.cancelAfter > 0 {
			cancels++
			go func() {
				cancelErrs <- cancelWhenRunning(c.cluster, ids[i], j.cancelAfter, func() bool { return programSeen(bin, cfgPath, ids[i]) })
			}()
		}
	}
	// The shards placed, first-fit on one GPU of a free node: what runs
	// beside them from now on changes nothing this test checks (its other
	// jobs may wait longer for a GPU, no more).
	var shards []string
	for i, j := range jobs {
		if j.sharded {
			shards = append(shards, ids[i])
		}
	}
	c.waitPlaced(t, queueTimeout, shards...)
	c.share(t)
	c.waitQueueEmpty(t, ids, queueTimeout)
	for range cancels {
		if err := <-cancelErrs; err != nil {
			t.Error(err)
		}
	}

	profiles := waitProfiles(t, bin, cfgPath, ids)
	shardUUIDs := map[string][]*profile.Job{}
	for i, j := range jobs {
		t.Run(j.name, func(t *testing.T) {
			output, _ := os.ReadFile(filepath.Join(outDir, ids[i]+".out"))
			defer func() {
				if t.Failed() {
					t.Logf("job %s output:\n%s", ids[i], output)
				}
			}()
			got := showJob(t, bin, cfgPath, ids[i])
			if len(got) != 1 {
				t.Fatalf("job %s: show returned %d profiles, want 1 (one node): %+v", ids[i], len(got), got)
			}
			p := &got[0]
			if p.Status != profiles[ids[i]].Status || len(p.GPUs) != len(profiles[ids[i]].GPUs) {
				t.Errorf("show and jobs disagree: show %s with %d GPUs, jobs %s with %d",
					p.Status, len(p.GPUs), profiles[ids[i]].Status, len(profiles[ids[i]].GPUs))
			}
			for _, g := range p.GPUs {
				t.Logf("job %s GPU %d: mem_peak=%d util_max=%d samples=%d idle=%t shared=%t exit=%d/%d",
					ids[i], g.SlurmIndex, g.MemPeak, g.UtilMax, g.Samples, g.IdleAllocation, g.Shared, p.ExitStatus, p.ExitSignal)
			}
			checkProfile(t, j, p, jobGPUs(t, string(output)), uuidByMinor)
			if j.sharded && len(p.GPUs) == 1 {
				shardUUIDs[p.GPUs[0].UUID] = append(shardUUIDs[p.GPUs[0].UUID], p)
			}
		})
	}

	t.Run("shards-share-one-gpu", func(t *testing.T) {
		if len(shardUUIDs) != 1 {
			t.Fatalf("the sharded jobs ran on %d GPUs, want 1 (Slurm places shards first-fit): %v", len(shardUUIDs), keys(shardUUIDs))
		}
		for uuid, ps := range shardUUIDs {
			if len(ps) != 3 {
				t.Fatalf("%d sharded profiles on %s, want 3", len(ps), uuid)
			}
			for _, p := range ps {
				if !p.GPUs[0].Shared {
					t.Errorf("job %s on %s: shared = false, want true (the three shard jobs overlapped)", p.JobID, uuid)
				}
			}
		}
	})

	// gpuprof-hook forwards each prolog and epilog to the agent, which
	// takes it when it loaded the same configuration and writes the
	// hook's done line (hooks.Forwarder): under slurmd's own environment,
	// every job's two hooks reached the agent, none spooled.
	t.Run("hooks-forwarded", func(t *testing.T) {
		log, err := os.ReadFile(cfg.LogFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			for _, kind := range []string{"prolog", "epilog"} {
				want := "msg=done hook=" + kind + " job=" + id + " via=agent err=<nil>"
				if !strings.Contains(string(log), want) {
					t.Errorf("log_file lacks %q", want)
				}
			}
		}
		if t.Failed() {
			t.Logf("log_file (last 60 lines):\n%s", lastLines(string(log), 60))
		}
	})

	t.Run("node-healthy", func(t *testing.T) {
		if !agent.running() {
			t.Errorf("the agent exited during the run: %v", agent.err)
		}
		if drained := c.run(t, "sinfo", "-R", "-h"); drained != "" {
			t.Errorf("sinfo -R: %s, want no drained node", drained)
		}
		log, err := os.ReadFile(slurmdLog)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(log[min(slurmdFrom, int64(len(log))):]), "\n") {
			if strings.Contains(line, "prolog failed") || strings.Contains(line, "epilog failed") {
				t.Errorf("slurmd.log: %s", line)
			}
		}
	})
}

func writeCaptureConfig(t *testing.T, path, work, simDir, gresConf string) config.Config {
	t.Helper()
	// cluster and node as the hooks see them (SLURM_CLUSTER_NAME,
	// SLURMD_NODENAME), so the agent and the hooks key profiles alike;
	// slurm_conf the test cluster's, beside its gres.conf, as a site's
	// names its own: the agent reads SlurmdSpoolDir from it, without
	// which it cannot tell a requeued run (no prolog on 22.05) from a
	// process claiming a finished job.
	text := fmt.Sprintf(`cluster = "gpuproftest"
node = "localhost"
slurm_conf = %q
db = %q
spool_dir = %q
socket = %q
query_socket = %q
log_file = %q

[agent]
gpu = "sim"
interval = %q
flush_interval = "2s"

[hooks]
deadline = "2s"
gres_conf = %q

[sim]
dir = %q
gpus = 4
model = "NVIDIA H100 80GB HBM3"
memory = "80GiB"
`, filepath.Join(filepath.Dir(gresConf), "slurm.conf"), filepath.Join(work, "gpuprof.db"), filepath.Join(work, "spool"), filepath.Join(work, "agent.sock"), filepath.Join(work, "run", "query.sock"),
		filepath.Join(work, "gpuprof.log"), interval.String(), gresConf, simDir)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, true)
	if err != nil {
		t.Fatalf("the test's own configuration: %v", err)
	}
	return cfg
}

// waitAgent waits until the agent listens on its socket.
func waitAgent(t *testing.T, agent *process, socket, outPath string) {
	t.Helper()
	deadline := time.Now().Add(agentTimeout)
	for {
		if fi, err := os.Stat(socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
		if !agent.running() {
			out, _ := os.ReadFile(outPath)
			t.Fatalf("gpuprof agent exited (%v) before listening:\n%s", agent.err, out)
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(outPath)
			t.Fatalf("gpuprof agent not listening on %s after %s:\n%s", socket, agentTimeout, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// simUUIDs maps each simulated GPU's /dev/nvidiaN minor to its UUID: the
// test cluster's gres.conf lists nvidia0..3, so Slurm index i is minor i.
func simUUIDs(t *testing.T, simDir string) map[int]string {
	t.Helper()
	devs, err := sim.LoadNode(simDir)
	if err != nil {
		t.Fatalf("simulated node: %v", err)
	}
	m := map[int]string{}
	for _, d := range devs {
		m[d.Minor] = d.UUID
	}
	return m
}

// cancelWhenRunning cancels a job once its program has run for d. RUNNING
// starts at allocation, and on a loaded machine the batch script can take
// many seconds more to start its program: seen says when the agent has
// seen the program on its GPU.
func cancelWhenRunning(c *cluster, id string, d time.Duration, seen func() bool) error {
	deadline := time.Now().Add(queueTimeout)
	for {
		state, err := c.jobState(id)
		if err != nil {
			return err
		}
		if state == "RUNNING" && seen() {
			break
		}
		if state == "" || time.Now().After(deadline) {
			return fmt.Errorf("job %s never ran its program (state %q); not cancelled", id, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(d)
	_, err := c.output("scancel", id)
	return err
}

// waitProfiles waits until every job has a finished profile and returns the
// profiles by job id, as `gpuprof jobs --json` prints them.
func waitProfiles(t *testing.T, bin, cfgPath string, ids []string) map[string]profile.Job {
	t.Helper()
	deadline := time.Now().Add(profileTimeout)
	for {
		out, err := gpuprofOutput(bin, "jobs", "--config", cfgPath, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var all []jobJSON
		if err := json.Unmarshal(out, &all); err != nil {
			t.Fatalf("gpuprof jobs --json: %v\n%s", err, out)
		}
		got := map[string]profile.Job{}
		for _, v := range all {
			for _, p := range v.Profiles {
				got[p.JobID] = p
			}
		}
		var missing []string
		for _, id := range ids {
			if p, ok := got[id]; !ok || p.Status != profile.StatusFinished {
				missing = append(missing, fmt.Sprintf("%s (%s)", id, p.Status))
			}
		}
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after the queue emptied, jobs without a finished profile: %s", profileTimeout, strings.Join(missing, ", "))
		}
		time.Sleep(time.Second)
	}
}

func showJob(t *testing.T, bin, cfgPath, id string) []profile.Job {
	t.Helper()
	out, err := gpuprofOutput(bin, "show", id, "--config", cfgPath, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []jobJSON
	if err := json.Unmarshal(out, &vs); err != nil {
		t.Fatalf("gpuprof show %s --json: %v\n%s", id, err, out)
	}
	var ps []profile.Job
	for _, v := range vs {
		ps = append(ps, v.Profiles...)
	}
	return ps
}

// jobJSON is the part of an element of `gpuprof jobs --json` these tests
// read (docs/json.md).
type jobJSON struct {
	Cluster  string              `json:"cluster"`
	JobID    string              `json:"job_id"`
	Sched    *slurmext.JobRecord `json:"sched"`
	Profiles []profile.Job       `json:"profiles"`
	GPUsReq  *int                `json:"gpus_requested"`
	Missing  []string            `json:"missing"`
}

// jobGPUs returns the Slurm GPU indices a job printed, in
// CUDA_VISIBLE_DEVICES order.
func jobGPUs(t *testing.T, output string) []int {
	t.Helper()
	for line := range strings.SplitSeq(output, "\n") {
		v, ok := strings.CutPrefix(line, "gpuprof-e2e gpus=")
		if !ok {
			continue
		}
		var idx []int
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("job output %q: %v", line, err)
			}
			idx = append(idx, n)
		}
		return idx
	}
	t.Fatalf("the job did not print its GPUs (did it run?)")
	return nil
}

func checkProfile(t *testing.T, j captureJob, p *profile.Job, slurmGPUs []int, uuidByMinor map[int]string) {
	t.Helper()
	if p.Status != profile.StatusFinished {
		t.Errorf("status = %q, want %q", p.Status, profile.StatusFinished)
	}
	if p.Cluster != "gpuproftest" || p.Node != "localhost" {
		t.Errorf("key = %s/%s, want gpuproftest/localhost", p.Cluster, p.Node)
	}
	if !j.brief && p.Partial {
		t.Errorf("partial = true (%v), want a complete profile: the agent ran throughout", p.PartialReasons)
	}
	if j.wantExit != nil && (!p.ExitKnown || p.ExitStatus != *j.wantExit) {
		t.Errorf("exit = %d (known %t), want %d", p.ExitStatus, p.ExitKnown, *j.wantExit)
	}
	if len(slurmGPUs) != j.gpus {
		t.Fatalf("Slurm gave the job GPUs %v, want %d", slurmGPUs, j.gpus)
	}
	if len(p.GPUs) != j.gpus {
		t.Fatalf("profile has %d GPUs, want %d", len(p.GPUs), j.gpus)
	}
	for _, g := range p.GPUs {
		pos := slices.Index(slurmGPUs, g.SlurmIndex)
		if pos < 0 {
			t.Errorf("GPU %s: slurm_index %d, want one of %v", g.UUID, g.SlurmIndex, slurmGPUs)
			continue
		}
		if want := uuidByMinor[g.SlurmIndex]; g.UUID != want {
			t.Errorf("GPU at Slurm index %d: uuid %s, want %s (/dev/nvidia%d)", g.SlurmIndex, g.UUID, want, g.SlurmIndex)
		}
		if j.brief {
			continue
		}
		if j.wantMem != nil {
			if diff := math.Abs(float64(g.MemPeak) - float64(j.wantMem[pos])); diff > float64(mib) {
				t.Errorf("GPU %d: mem_peak = %d, want %d (±1 MiB)", g.SlurmIndex, g.MemPeak, j.wantMem[pos])
			}
		}
		if g.IdleAllocation != j.wantIdle {
			t.Errorf("GPU %d: idle_allocation = %t, want %t", g.SlurmIndex, g.IdleAllocation, j.wantIdle)
		}
		if j.wantUtil != nil && (j.runFor >= minUtilRun || j.cancelAfter >= minUtilRun) {
			busy := j.busy
			if busy == [2]time.Duration{} {
				busy = [2]time.Duration{j.runFor, j.runFor}
			}
			checkUtil(t, g, float64(j.wantUtil[pos]), busy)
		}
	}
}

// checkUtil checks a GPU's utilisation against the constant load its burn
// caused for a time within busy: the peak and the mean of the busy samples
// must match the load, and the busy samples must span the program's run.
//
// The mean over all samples is not checked against the load: it rightly
// counts the allocation's idle edges, and the time from the prolog (at
// allocation) to the program's start grows from 0.1 s to several seconds
// when the machine is loaded.
func checkUtil(t *testing.T, g profile.GPU, want float64, busy [2]time.Duration) {
	t.Helper()
	var n, sum, busyN, busySum uint64
	for v, c := range g.UtilHist {
		n += uint64(c)
		sum += uint64(v) * uint64(c)
		if v > profile.IdleUtil {
			busyN += uint64(c)
			busySum += uint64(v) * uint64(c)
		}
	}
	if n != uint64(g.Samples) || sum != g.UtilSum {
		t.Errorf("GPU %d: util_hist holds %d samples summing to %d, but samples = %d and util_sum = %d",
			g.SlurmIndex, n, sum, g.Samples, g.UtilSum)
	}
	if d := math.Abs(float64(g.UtilMax) - want); d > utilSlack {
		t.Errorf("GPU %d: util_max = %d, want %.0f ±%.0f", g.SlurmIndex, g.UtilMax, want, utilSlack)
	}
	if busyN == 0 {
		t.Errorf("GPU %d: no busy samples, want load %.0f", g.SlurmIndex, want)
		return
	}
	if busyMean := float64(busySum) / float64(busyN); math.Abs(busyMean-want) > utilSlack {
		t.Errorf("GPU %d: mean of busy samples = %.1f, want %.0f ±%.0f", g.SlurmIndex, busyMean, want, utilSlack)
	}
	// A sample may fall either side of each end of the run; a loaded
	// machine may delay some ticks.
	lo := int(0.7*float64(busy[0]/interval)) - 1
	hi := int(busy[1]/interval) + 2
	if busyN < uint64(max(lo, 1)) || busyN > uint64(hi) {
		t.Errorf("GPU %d: %d busy samples, want %d..%d for a program busy %s..%s at %s intervals",
			g.SlurmIndex, busyN, max(lo, 1), hi, busy[0], busy[1], interval)
	}
}

// programSeen reports whether the agent has recorded memory of job id on a
// GPU (its running profile is flushed every 2 s).
func programSeen(bin, cfgPath, id string) bool {
	out, err := gpuprofOutput(bin, "show", id, "--config", cfgPath, "--json")
	if err != nil {
		return false
	}
	var vs []jobJSON
	if json.Unmarshal(out, &vs) != nil {
		return false
	}
	for _, v := range vs {
		for _, p := range v.Profiles {
			for _, g := range p.GPUs {
				if g.MemPeak > 0 {
					return true
				}
			}
		}
	}
	return false
}

func gpuprofOutput(bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("gpuprof %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
