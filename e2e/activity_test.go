package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// TestSMActivityUnderSlurm runs, under the real test cluster, a job that
// keeps a simulated H100 nominally busy (duty cycle 90 %) with kernels
// that use 0.02 % of its SMs, then, on a simulated A100 (no GPM), a job at
// the same duty cycle. The first gets the low_sm_activity finding and its
// SM activity in show, the TUI's detail (in show's words and figures) and
// the report (effective GPU-hours); the second's activity is unknown
// everywhere, never 0 (issue #28). It runs on the shared cluster, its
// agents and its partition's hooks recording into its own gpuprof.
func TestSMActivityUnderSlurm(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	c := sharedCluster(t)
	c.hooks(t, bin, cfgPath)
	outDir := filepath.Join(work, "out")
	mkdirAll777(t, outDir)
	gresConf := filepath.Join(c.Dir, "etc", "gres.conf")

	gpuprof := func(args ...string) string {
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
		return string(out)
	}

	// run starts an agent on a simulated node of model, runs one job of
	// burn's arguments under Slurm, waits for its profile and stops the
	// agent: one node model per agent, as on a real node.
	run := func(name, model, burn string) string {
		t.Helper()
		simDir := filepath.Join(work, "sim-"+name)
		mkdirAll777(t, simDir)
		writeCaptureConfig(t, cfgPath, work, simDir, gresConf)
		if model != "" {
			data, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Replace(string(data), `model = "NVIDIA H100 80GB HBM3"`, `model = "`+model+`"`, 1)
			if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		agentOut := filepath.Join(work, "agent-"+name+".out")
		agent := startProcess(t, agentOut, os.Environ(), bin, "agent", "--config", cfgPath)
		waitAgent(t, agent, filepath.Join(work, "agent.sock"), agentOut)
		cmd := `echo "gpuprof-e2e gpus=$SLURM_JOB_GPUS"; ` + shellQuote(bin) + " simgpu burn --mem 2GiB " + burn + " --for 12s"
		id := c.sbatch(t, "-J", "e2e-"+name, "-o", filepath.Join(outDir, "%j.out"), "--chdir", work,
			"--export=ALL,GPUPROF_CONFIG="+cfgPath, "--gres=gpu:1", "--wrap", cmd)
		c.waitQueueEmpty(t, []string{id}, queueTimeout)
		waitProfiles(t, bin, cfgPath, []string{id})
		// jobcomp's record names the job, which the TUI filters by; it
		// may reach the agent after the epilog's.
		waitSched(t, bin, cfgPath, id)
		_ = agent.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-agent.done:
		case <-time.After(15 * time.Second):
			t.Fatalf("the %s agent ignored SIGTERM", name)
		}
		// The next agent is waited for by its socket: none may be left.
		if err := os.Remove(filepath.Join(work, "agent.sock")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return id
	}
	tiny := run("tiny-kernels", "", "--util 90 --sm 0.02")
	noGPM := run("no-gpm", "NVIDIA A100-SXM4-80GB", "--util 90")

	t.Run("show", func(t *testing.T) {
		p := showJob(t, bin, cfgPath, tiny)
		if len(p) != 1 || len(p[0].GPUs) != 1 {
			t.Fatalf("job %s: %d profiles", tiny, len(p))
		}
		a := p[0].GPUs[0].Activity
		if a == nil {
			t.Fatalf("job %s on the H100: no activity", tiny)
		}
		// 0.01 or 0.02 (see below); the bound holds the float mean of a
		// 0.01 (seen: 0.009999999999999998, which failed a bound of 0.01).
		if sm, ok := a.SM.Mean(); !ok || math.Abs(sm-0.02) > 0.01+1e-9 || a.Scope != "gpu" {
			t.Errorf("job %s: SM activity %v (%v), scope %q; want 0.02 %%, gpu", tiny, sm, ok, a.Scope)
		}
		// The mean counts the samples before the burn starts and after it
		// ends (0 %) beside its 0.02 %: 0.01 or 0.02 by the machine's
		// load. show must print the recorded mean, in the presenter's form.
		sm, _ := a.SM.Mean()
		smText := present.Activity(sm)
		text := gpuprof("show", tiny)
		for _, want := range []string{
			"SM     mean " + smText + " %",
			"bottleneck low_sm_activity: mean util ",
			"kernels keep the GPU nominally busy but use " + smText + " % of its SMs: small batches, launch-bound or CPU-bound input",
			// A 12-second job is short debugging whatever its load; its
			// GPU is unused by its SMs.
			"bottleneck underused: unused GPUs 1 ≥ 1; 1 of 1 GPU unused (mean SM activity < 5 % or never touched)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("show %s lacks %q:\n%s", tiny, want, text)
			}
		}

		p = showJob(t, bin, cfgPath, noGPM)
		if len(p) != 1 || len(p[0].GPUs) != 1 {
			t.Fatalf("job %s: %d profiles", noGPM, len(p))
		}
		if a := p[0].GPUs[0].Activity; a != nil {
			t.Errorf("job %s on the A100 (no GPM) has activity: %+v", noGPM, a)
		}
		text = gpuprof("show", noGPM)
		if !strings.Contains(text, "SM     unknown (no GPM reading") {
			t.Errorf("show %s does not say the activity is unknown:\n%s", noGPM, text)
		}
		if strings.Contains(text, "low_sm_activity") || strings.Contains(text, "SM activity 0") {
			t.Errorf("show %s judges SM activity it has not:\n%s", noGPM, text)
		}
	})

	// The TUI's detail of each job says what show says: the finding in
	// the same words and the same SM activity; the A100's activity is
	// unknown there too, never 0.
	t.Run("tui", func(t *testing.T) {
		requireTmux(t)
		text := gpuprof("show", tiny)
		finding := lineStarting(text, "bottleneck low_sm_activity: ")
		sm := smActivityShow.FindStringSubmatch(text)
		if finding == "" || sm == nil {
			t.Fatalf("show %s has no low_sm_activity finding or SM activity to compare:\n%s", tiny, text)
		}
		term := startTmux(t, 200, 60, []string{"NO_COLOR=1", "SLURM_CONF=" + c.Conf},
			shellQuote(bin)+" tui --config "+shellQuote(cfgPath))
		term.waitFor("the job list", containsAll("JOBID", "short_debug"))

		detail := openTUIDetail(term, tiny, "tiny-kernels", noGPM)
		if flat := flatten(detail); !strings.Contains(flat, flatten(finding)) {
			t.Errorf("the TUI's detail of job %s lacks show's finding %q:\n%s", tiny, finding, detail)
		}
		if got := smActivityTUI.FindStringSubmatch(detail); got == nil || got[1] != sm[1] || got[2] != sm[2] {
			t.Errorf("the TUI's detail of job %s: SM activity %q, show's mean %s %%, p95 %s %%:\n%s", tiny, got, sm[1], sm[2], detail)
		}
		term.escape()
		term.waitFor("the list again", containsAll("JOBID"))

		detail = openTUIDetail(term, noGPM, "no-gpm", tiny)
		if !strings.Contains(detail, "sm   - no GPM reading: util is the duty cycle only") {
			t.Errorf("the TUI's detail of job %s (A100, no GPM) does not say the activity is unknown:\n%s", noGPM, detail)
		}
		if strings.Contains(detail, "low_sm_activity") || smActivityTUI.MatchString(detail) {
			t.Errorf("the TUI's detail of job %s shows SM activity it has not:\n%s", noGPM, detail)
		}
		term.escape()
		term.keys("q")
		term.waitFor("the program to quit", containsAll("[exited 0]"))
	})

	t.Run("report", func(t *testing.T) {
		repDir := filepath.Join(work, "report")
		mkdirAll777(t, repDir)
		month := time.Now().Format("2006-01")
		gpuprof("report", "--month", month, "--out", repDir, "--format", "json,md")
		raw, err := os.ReadFile(filepath.Join(repDir, "gpuprof-report-"+month+".json"))
		if err != nil {
			t.Fatal(err)
		}
		type effective struct {
			GPUHours         float64 `json:"gpu_hours"`
			MeasuredGPUHours float64 `json:"measured_gpu_hours"`
			Coverage         float64 `json:"coverage"`
		}
		var rep struct {
			Workload struct {
				Headline struct {
					Allocated float64   `json:"allocated_gpu_hours"`
					Effective effective `json:"effective"`
				} `json:"headline"`
				Models []struct {
					Model     string    `json:"model"`
					GPUHours  float64   `json:"gpu_hours"`
					Effective effective `json:"effective"`
				} `json:"models"`
			} `json:"workload"`
			Summary struct {
				BySMActivity int `json:"by_sm_activity"`
				ByDutyCycle  int `json:"by_duty_cycle"`
				ByBottleneck []struct {
					Kind string `json:"kind"`
					Jobs int    `json:"jobs"`
				} `json:"by_bottleneck"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		w := rep.Workload
		var h100, a100 float64
		for _, m := range w.Models {
			switch {
			case strings.Contains(m.Model, "H100"):
				h100 = m.GPUHours
				// 0.02 % of the SMs: effective = GPU-hours × 0.0002, half
				// that at a mean of 0.01 % (show's check says why).
				if e := m.Effective; e.MeasuredGPUHours <= 0 || math.Abs(e.GPUHours-m.GPUHours*0.0002) > m.GPUHours*(0.0001+1e-9) || math.Abs(e.Coverage-1) > 0.05 {
					t.Errorf("H100 effective = %+v of %v GPU-hours, want 0.02 %% of them, coverage 1", e, m.GPUHours)
				}
			case strings.Contains(m.Model, "A100"):
				a100 = m.GPUHours
				if m.Effective.MeasuredGPUHours != 0 || m.Effective.GPUHours != 0 {
					t.Errorf("A100 (no GPM) effective = %+v, want unknown (none measured)", m.Effective)
				}
			}
		}
		if h100 <= 0 || a100 <= 0 {
			t.Fatalf("models: %+v", w.Models)
		}
		if e := w.Headline.Effective; math.Abs(e.MeasuredGPUHours-h100) > 1e-6 || math.Abs(e.Coverage-h100/w.Headline.Allocated) > 0.01 {
			t.Errorf("headline effective = %+v, want measured %v of %v", e, h100, w.Headline.Allocated)
		}
		s := rep.Summary
		if s.BySMActivity != 1 || s.ByDutyCycle != 1 {
			t.Errorf("by SM activity %d, by duty cycle %d; want 1, 1", s.BySMActivity, s.ByDutyCycle)
		}
		low := 0
		for _, b := range s.ByBottleneck {
			if b.Kind == "low_sm_activity" {
				low = b.Jobs
			}
		}
		if low != 1 {
			t.Errorf("low_sm_activity jobs = %d, want 1", low)
		}
		md, err := os.ReadFile(filepath.Join(repDir, "gpuprof-report-"+month+".md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Effective GPU-hours (SM activity)", "The idle and compute rules read SM activity for 1 job and the duty cycle alone for 1 job."} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report lacks %q", want)
			}
		}
	})
}

// waitSched waits until gpuprof shows job id with its scheduler record
// (jobcomp's).
func waitSched(t *testing.T, bin, cfgPath, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := gpuprofOutput(bin, "show", id, "--config", cfgPath, "--json")
		var vs []jobJSON
		if err == nil && json.Unmarshal(out, &vs) == nil && len(vs) == 1 && vs[0].Sched != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: no scheduler record (jobcomp's) after 30 s: %v\n%s", id, err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func mkdirAll777(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
}

// show's SM line ("SM     mean 0.02 %, p95 0.02 %") and the TUI
// detail's ("sm   ▁▁▁ mean 0.02 %, p95 0.02 %", the presenter's form):
// mean and p95 as printed.
var (
	smActivityShow = regexp.MustCompile(`(?m)^\s*SM\s+mean ([0-9.]+) %, p95 ([0-9.]+) %`)
	smActivityTUI  = regexp.MustCompile(`(?m)^\s*sm\s.*?mean ([0-9.]+) %, p95 ([0-9.]+) %`)
)

// openTUIDetail filters the TUI's list to job id by text, which only that
// job's row holds (other, a job that must leave the list), opens its
// detail and returns the screen once the detail of job id and its GPU are
// on it. The filter matches ids, names, users, accounts and partitions
// within: on the shared cluster an id can be part of another id (2, 12)
// or of the partition and account (e2e2), a job's name is the test's own.
func openTUIDetail(term *tmuxTerm, id, text, other string) string {
	term.t.Helper()
	row := func(id string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ ›]+` + regexp.QuoteMeta(id) + `\s`)
	}
	term.keys("/", "C-u")
	term.text(text)
	term.keys("Enter")
	term.waitFor("the list filtered to job "+id, func(s string) bool {
		return row(id).MatchString(s) && !row(other).MatchString(s)
	})
	term.keys("Enter")
	return term.waitFor("the detail of job "+id, containsAll("job "+id+" · ", "GPUs (1)", "Hints"))
}

// lineStarting is the first line of text that starts with prefix once
// trimmed, trimmed; "" if none.
func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// flatten joins a screen's lines and its runs of spaces into single
// spaces, so a sentence the TUI wrapped reads as show printed it.
func flatten(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
