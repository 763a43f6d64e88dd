package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// The notices test's time scale: the idle windows, the cancel action's
// grace and its wait between the signal and the cancel, shortened from
// an hour to seconds so that the whole run takes a few minutes.
const (
	noticeWindow = 20 * time.Second
	noticeGrace  = 15 * time.Second
	noticeWait   = 5 * time.Second
	// noticeRecipient is every job's address: the jobs run as root and
	// the pattern is {user}@example.org.
	noticeRecipient = "root@example.org"
)

// noticeJob is one job of TestNoticesUnderSlurm and the notices it must
// get.
type noticeJob struct {
	name      string // the sbatch job name; the key of the results
	partition string
	script    string // the job's shell script (%OUT% is the output directory)
	// wantRules are the rules of the job's notices, in any order, each
	// once; wantStatus their status by rule.
	wantStatus map[string]string
	// wantMail is how many messages must reach the stand-in sendmail.
	wantMail int
	// wantState is sacct's state of the job (its first word).
	wantState string
	// workedFor: busy this long before it idled (0: idle from the start).
	workedFor time.Duration
}

// TestNoticesUnderSlurm runs jobs on the real test cluster (the shared
// cluster's node, held alone through wholeNode until its jobs are placed;
// the partitions named gpu, exempt, cancel and dry below are its scope's)
// against an agent
// with notices on (windows of 20 s) and a stand-in sendmail that writes
// every message to a directory, and checks: an idle job gets exactly one
// notice naming its GPU and the fix, even across an agent restart; a job
// busy for a while and then idle gets one; a busy job and a job in an
// exempt partition get none; in the partition where the cancel action is
// on, an idle job is warned, signalled and cancelled after the grace (sacct
// says CANCELLED) with its evidence logged, while an idle job elsewhere is
// not; in dry-run mode (a second agent, for partition dry, beside the
// first) nothing is cancelled; a hostile job name gives one
// well-formed message to one recipient; `gpuprof notices --json` lists it
// all.
func TestNoticesUnderSlurm(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	// Its first phase holds all four GPUs at once for 50–80 s; shared
	// once phase 2's jobs are placed.
	c := wholeNode(t)
	gpu, exempt, cancel := c.Name, c.addPartition(t, "x"), c.addPartition(t, "c")
	c.hooks(t, bin, cfgPath)
	// The dry run's partition has an agent of its own, started with
	// cancel.dry_run = true beside the first: its job runs beside phase 2.
	dryWork := filepath.Join(work, "dry")
	if err := os.Mkdir(dryWork, 0o755); err != nil {
		t.Fatal(err)
	}
	dryCfg := filepath.Join(dryWork, "gpuprof.toml")
	dry := c.addPartition(t, "d")
	c.partitionHooks(t, dry, bin, dryCfg)
	c.withoutJobComp(t) // as on its own cluster before, with no JobCompType

	simDir, outDir, mailDir := filepath.Join(work, "sim"), filepath.Join(work, "out"), filepath.Join(work, "mail")
	drySim := filepath.Join(dryWork, "sim")
	for _, d := range []string{simDir, outDir, mailDir, drySim} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	sendmail := writeStandInSendmail(t, work, mailDir)
	gresConf := filepath.Join(c.Dir, "etc", "gres.conf")
	logFile := writeNoticesConfig(t, cfgPath, work, simDir, gresConf, sendmail, exempt, cancel, false)
	dryLog := writeNoticesConfig(t, dryCfg, dryWork, drySim, gresConf, sendmail, exempt, dry, true)

	agentEnv := c.env() // squeue and scancel find the cluster
	agents := 0
	startAgent := func() *process {
		agents++
		out := filepath.Join(work, fmt.Sprintf("agent%d.out", agents))
		p := startProcess(t, out, agentEnv, bin, "agent", "--config", cfgPath)
		waitAgent(t, p, filepath.Join(work, "agent.sock"), out)
		return p
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i := 1; i <= agents; i++ {
				if data, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("agent%d.out", i))); err == nil {
					t.Logf("==== agent%d.out (last 40 lines)\n%s", i, lastLines(string(data), 40))
				}
			}
			for _, f := range []string{logFile, filepath.Join(dryWork, "agent.out"), dryLog} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 80 lines)\n%s", f, lastLines(string(data), 80))
				}
			}
		}
	})
	agent := startAgent()
	dryOut := filepath.Join(dryWork, "agent.out")
	dryAgent := startProcess(t, dryOut, agentEnv, bin, "agent", "--config", dryCfg)
	waitAgent(t, dryAgent, filepath.Join(dryWork, "agent.sock"), dryOut)

	burn := func(util string, d time.Duration) string {
		return fmt.Sprintf("%s simgpu burn --mem 2GiB --util %s --for %s", shellQuote(bin), util, d)
	}
	// The cancelled job's work runs as a job step, as most batch jobs'
	// does (srun): scancel --signal reaches the steps (and, with --full or
	// --batch, the batch script too). The step records that it got the
	// signal and runs on (a program that checkpoints on SIGTERM and
	// carries on), as does the batch script, so only the cancel ends the
	// job.
	// (The script polls its step rather than waiting on it, so that its
	// own trap runs when the signal comes.)
	// Each trap adds the time it ran (the signal's, then the cancel's).
	stepTrap := `trap "date +%s.%N >> %OUT%/$SLURM_JOB_ID.batch-term" TERM; ` +
		`srun bash -c 'trap "date +%s.%N >> %OUT%/$SLURM_JOB_ID.step-term" TERM; while :; do sleep 1; done' & ` +
		`step=$!; while kill -0 $step 2>/dev/null; do sleep 1; done`
	// Slurm refuses a job name over 1,024 bytes (MAX_STR_LEN; checked
	// below): the longest hostile name a job can have is just under it.
	hostilePrefix := "evil\r\nBcc: victim@example.org\r\n\x1b[31mred\x1b[0m "
	hostileName := hostilePrefix + strings.Repeat("A", 1000-len(hostilePrefix))
	jobs := []noticeJob{
		// Phase 1: four jobs, one GPU each.
		{name: "idle", partition: gpu, script: "sleep 80",
			wantStatus: map[string]string{profile.RuleIdleJob: profile.NoticeSent}, wantMail: 1, wantState: "COMPLETED"},
		{name: "busy-then-idle", partition: gpu, script: burn("60", 30*time.Second) + "; sleep 45",
			wantStatus: map[string]string{profile.RuleIdleJob: profile.NoticeSent}, wantMail: 1, wantState: "COMPLETED",
			workedFor: 30 * time.Second},
		{name: "busy", partition: gpu, script: burn("70", 60*time.Second), wantStatus: map[string]string{}, wantState: "COMPLETED"},
		{name: "exempt", partition: exempt, script: "sleep 50", wantStatus: map[string]string{}, wantState: "COMPLETED"},
		// Phase 2: the cancel action, and a hostile name.
		{name: "cancel", partition: cancel, script: stepTrap,
			wantStatus: map[string]string{profile.RuleIdleJob: profile.NoticeSent, profile.RuleCancel: profile.NoticeCanceled},
			wantMail:   2, wantState: "CANCELLED"},
		{name: hostileName, partition: gpu, script: "sleep 45",
			wantStatus: map[string]string{profile.RuleIdleJob: profile.NoticeSent}, wantMail: 1, wantState: "COMPLETED"},
	}
	dryJob := noticeJob{name: "dry-run", partition: dry, script: "sleep 60",
		wantStatus: map[string]string{profile.RuleIdleJob: profile.NoticeSent, profile.RuleCancel: profile.NoticeDryRun},
		wantMail:   1, wantState: "COMPLETED"}

	submit := func(j noticeJob) string {
		script := strings.ReplaceAll(j.script, "%OUT%", outDir)
		cfg := cfgPath
		if j.partition == dry {
			cfg = dryCfg
		}
		return c.run(t, "sbatch", "--parsable", "-J", j.name, "-p", j.partition, "-A", c.Name, "--gres=gpu:1",
			"-o", filepath.Join(outDir, "%j.out"), "--chdir", work, "--export=ALL,GPUPROF_CONFIG="+cfg,
			"--wrap", `echo "gpuprof-e2e gpus=$SLURM_JOB_GPUS"; `+script)
	}
	// A 2,000-character name never reaches a node: sbatch refuses it.
	if out, err := c.output("sbatch", "--parsable", "-J", hostilePrefix+strings.Repeat("A", 2000), "-p", gpu, "-A", c.Name,
		"-o", "/dev/null", "--wrap", "true"); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("sbatch of a 2,000-character job name: %q, %v; want it refused as too long", out, err)
	}
	ids := map[string]string{}
	var phase1, phase2 []string
	for _, j := range jobs[:4] {
		ids[j.name] = submit(j)
		phase1 = append(phase1, ids[j.name])
	}
	t.Logf("phase 1: %v", ids)

	// The agent restarted mid-job, after the idle job's notice: the job
	// stays idle for another window and must get no second notice.
	waitNotice(t, bin, cfgPath, ids["idle"], profile.RuleIdleJob, 90*time.Second)
	stopProcess(t, agent)
	agent = startAgent()
	t.Logf("agent restarted while job %s runs", ids["idle"])

	// Phase 2, and the dry run on its own agent.
	for _, j := range append(jobs[4:], dryJob) {
		ids[j.name] = submit(j)
		phase2 = append(phase2, ids[j.name])
	}
	// Every job placed (phase 1's four at once): from here other tests'
	// jobs may run beside them, and phase 3's job may wait for a GPU.
	c.waitPlaced(t, 4*time.Minute)
	c.share(t)
	c.waitQueueEmpty(t, append(phase1, phase2...), 4*time.Minute)
	jobs = append(jobs, dryJob)

	var all []string
	for name, id := range ids {
		if name != dryJob.name {
			all = append(all, id)
		}
	}
	waitProfiles(t, bin, cfgPath, all)
	waitProfiles(t, bin, dryCfg, []string{ids[dryJob.name]})
	notices := noticesByJob(t, bin, cfgPath)
	maps.Copy(notices, noticesByJob(t, bin, dryCfg))
	mails := readMails(t, mailDir)
	logText, _ := os.ReadFile(logFile)
	dryText, _ := os.ReadFile(dryLog)

	for _, j := range jobs {
		id := ids[j.name]
		label := j.name
		if len(label) > 20 {
			label = "hostile-name"
		}
		t.Run(label, func(t *testing.T) {
			output, _ := os.ReadFile(filepath.Join(outDir, id+".out"))
			gpus := jobGPUs(t, string(output))
			got := notices[id]
			rules := map[string]string{}
			for _, n := range got {
				if _, dup := rules[n.Rule]; dup {
					t.Errorf("job %s: two %s notices: %+v", id, n.Rule, got)
				}
				rules[n.Rule] = n.Status
			}
			if !maps.Equal(rules, j.wantStatus) {
				t.Errorf("job %s: notices (rule: status) %v, want %v\n%+v", id, rules, j.wantStatus, got)
			}
			for _, n := range got {
				if !slices.Equal(n.GPUs, gpus) {
					t.Errorf("job %s: %s notice names GPUs %v, want the job's %v", id, n.Rule, n.GPUs, gpus)
				}
				if n.Evidence == "" || !strings.Contains(n.Evidence, fmt.Sprintf("GPU %d", gpus[0])) {
					t.Errorf("job %s: %s evidence %q does not name GPU %d", id, n.Rule, n.Evidence, gpus[0])
				}
			}
			if j.workedFor > 0 {
				if n := findNotice(got, profile.RuleIdleJob); n != nil {
					start := jobStart(t, bin, cfgPath, id)
					if worked := n.Since.Sub(start); worked < j.workedFor-5*time.Second {
						t.Errorf("job %s: idle since %s, %s after its start; it was busy for %s", id, n.Since, worked, j.workedFor)
					}
					if !strings.HasPrefix(n.Fix, "--time=") {
						t.Errorf("job %s: fix %q, want a shorter --time for a job that worked and then idled", id, n.Fix)
					}
				}
			}

			mine := mailsFor(mails, id)
			if len(mine) != j.wantMail {
				t.Errorf("job %s: %d messages, want %d", id, len(mine), j.wantMail)
			}
			for _, m := range mine {
				checkNoticeMail(t, m, id, gpus)
				n := findNotice(got, profile.RuleIdleJob)
				if n == nil || m.rule != profile.RuleIdleJob {
					continue
				}
				if n.Fix != "" && !strings.Contains(m.body, "#SBATCH "+n.Fix) {
					t.Errorf("job %s: message lacks the fix #SBATCH %s:\n%s", id, n.Fix, m.body)
				}
				if n.Fix == "" && !strings.Contains(m.body, "without --gres=gpu") {
					t.Errorf("job %s: message of a job idle from its start lacks its fix (no --gres=gpu):\n%s", id, m.body)
				}
			}
			if state := sacctState(t, c.cluster, id); !strings.HasPrefix(state, j.wantState) {
				t.Errorf("job %s: sacct State %q, want %s", id, state, j.wantState)
			}
		})
	}

	t.Run("cancel-action", func(t *testing.T) {
		id := ids["cancel"]
		n := findNotice(notices[id], profile.RuleCancel)
		if n == nil {
			t.Fatalf("job %s: no cancel notice", id)
		}
		warned := findNotice(notices[id], profile.RuleIdleJob)
		if warned != nil && n.Time.Sub(warned.Time) < noticeGrace-2*time.Second {
			t.Errorf("job %s cancelled %s after the idle-job notice, before the %s grace", id, n.Time.Sub(warned.Time), noticeGrace)
		}
		if !strings.Contains(n.Evidence, "after the idle-job notice") || !strings.Contains(n.Detail, "--signal=TERM") {
			t.Errorf("cancel notice evidence %q, detail %q: want the evidence and the scancel runs", n.Evidence, n.Detail)
		}
		// The signal comes first, the cancel noticeWait later (its own
		// SIGTERM, then SIGKILL): a trap that ran before n.Time + the wait
		// (less a margin for the notice's whole-second time) ran on the
		// signal.
		signalled := func(what string) (time.Duration, bool) {
			data, err := os.ReadFile(filepath.Join(outDir, id+"."+what+"-term"))
			if err != nil {
				return 0, false
			}
			var sec float64
			first, _, _ := strings.Cut(string(data), "\n")
			if _, err := fmt.Sscanf(first, "%f", &sec); err != nil {
				t.Errorf("%s trap wrote %q", what, data)
				return 0, false
			}
			at := time.Unix(0, int64(sec*1e9)).Sub(n.Time)
			return at, at < noticeWait-time.Second
		}
		at, ok := signalled("step")
		if !ok {
			t.Errorf("job %s: its step did not get SIGTERM before the cancel (trap at %s after the cancel notice, want under %s)",
				id, at, noticeWait-time.Second)
		}
		// Slurm sends a signal other than SIGKILL to the steps only unless
		// scancel has --full or --batch: a job that runs its program in the
		// batch script itself, without srun, is signalled only then. The
		// action does not pass --full: a script that traps the signal
		// would end the job COMPLETED before the cancel (seen with it).
		bat, batOK := signalled("batch")
		t.Logf("job %s: step trapped SIGTERM %s after the cancel notice; batch script %s (by the signal: %t)", id, at, bat, batOK)
		if !logHas(string(logText), "idle job: cancelled", "job="+id, "evidence=") {
			t.Errorf("the agent's log has no line cancelling job %s with its evidence", id)
		}
	})

	t.Run("dry-run-action", func(t *testing.T) {
		id := ids[dryJob.name]
		n := findNotice(notices[id], profile.RuleCancel)
		if n == nil || !strings.Contains(n.Detail, "would run") {
			t.Fatalf("job %s: dry-run notice %+v, want the scancel runs it would have made", id, n)
		}
		if !logHas(string(dryText), "dry run", "job="+id, "evidence=") {
			t.Errorf("the agent's log has no dry-run line for job %s with its evidence", id)
		}
	})

	t.Run("hostile-name-message", func(t *testing.T) {
		id := ids[hostileName]
		for _, m := range mailsFor(mails, id) {
			if strings.Contains(m.raw, "\x1b") {
				t.Errorf("an escape character reaches the message:\n%q", m.raw)
			}
			if len(m.subject) > 200 {
				t.Errorf("subject of %d bytes: the 2,000-character name was not cut: %q", len(m.subject), m.subject)
			}
			for k := range m.header {
				if k != "From" && k != "To" && k != "Subject" && k != "Date" && k != "Message-Id" && k != "Auto-Submitted" &&
					k != "Mime-Version" && k != "Content-Type" && k != "Content-Transfer-Encoding" {
					t.Errorf("unexpected header %s: %q (from the job name?)", k, m.header[k])
				}
			}
		}
	})

	t.Run("node-healthy", func(t *testing.T) {
		if !agent.running() {
			t.Errorf("the agent exited: %v", agent.err)
		}
		if !dryAgent.running() {
			t.Errorf("the dry run's agent exited: %v", dryAgent.err)
		}
		if drained := c.run(t, "sinfo", "-R", "-h"); drained != "" {
			t.Errorf("sinfo -R: %s, want no drained node", drained)
		}
	})
}

// writeStandInSendmail writes a sendmail-compatible program that stores
// each message (stdin) as DIR/<time>-<pid>.eml and its arguments, one a
// line, beside it as .args.
func writeStandInSendmail(t *testing.T, work, dir string) string {
	t.Helper()
	path := filepath.Join(work, "sendmail")
	script := `#!/bin/sh
f=` + shellQuote(dir) + `/$(date +%s%N)-$$
printf '%s\n' "$@" > "$f.args"
cat > "$f.tmp" && mv "$f.tmp" "$f.eml"
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeNoticesConfig writes the agent's configuration with notices on,
// jobs in partition exempt exempt from them and the cancel action on in
// partition cancel, and returns its log file.
func writeNoticesConfig(t *testing.T, path, work, simDir, gresConf, sendmail, exempt, cancel string, dryRun bool) string {
	t.Helper()
	logFile := filepath.Join(work, "gpuprof.log")
	text := fmt.Sprintf(`cluster = "gpuproftest"
node = "localhost"
db = %q
spool_dir = %q
socket = %q
query_socket = %q
log_file = %q

[agent]
gpu = "sim"
interval = "1s"
flush_interval = "2s"

[hooks]
deadline = "2s"
gres_conf = %q

[sim]
dir = %q
gpus = 4
model = "NVIDIA H100 80GB HBM3"
memory = "80GiB"

[notices]
enabled = true
from = "gpuprof <gpuprof@example.org>"
address = "{user}@example.org"
sendmail = %q
squeue = "/usr/bin/squeue"
daily_cap = 0
home_opt_out = ""
exempt_partitions = [%q]

[notices.idle_gpu]
window = %q

[notices.idle_job]
window = %q

[notices.oversized]
enabled = false

[notices.cancel]
enabled = true
partitions = [%q]
grace = %q
signal = "TERM"
wait = %q
scancel = "/usr/bin/scancel"
dry_run = %t
`, filepath.Join(work, "gpuprof.db"), filepath.Join(work, "spool"), filepath.Join(work, "agent.sock"), filepath.Join(work, "run", "query.sock"), logFile,
		gresConf, simDir, sendmail, exempt, noticeWindow.String(), noticeWindow.String(), cancel, noticeGrace.String(), noticeWait.String(), dryRun)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return logFile
}

// stopProcess stops a process started by startProcess and waits for it.
func stopProcess(t *testing.T, p *process) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the agent ignored SIGTERM for 20 s")
	}
}

// noticeRow is the part of an element of `gpuprof notices --json` the
// test reads (docs/notices.md).
type noticeRow struct {
	JobID string `json:"job_id"`
	Node  string `json:"node"`
	User  string `json:"user"`
	profile.Notice
}

func listNotices(t *testing.T, bin, cfgPath string) []noticeRow {
	t.Helper()
	out, err := gpuprofOutput(bin, "notices", "--config", cfgPath, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []noticeRow
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("gpuprof notices --json: %v\n%s", err, out)
	}
	return rows
}

func noticesByJob(t *testing.T, bin, cfgPath string) map[string][]profile.Notice {
	t.Helper()
	m := map[string][]profile.Notice{}
	for _, r := range listNotices(t, bin, cfgPath) {
		m[r.JobID] = append(m[r.JobID], r.Notice)
	}
	return m
}

// waitNotice waits until job id has a notice of rule with an outcome.
func waitNotice(t *testing.T, bin, cfgPath, id, rule string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, r := range listNotices(t, bin, cfgPath) {
			if r.JobID == id && r.Rule == rule && r.Status != profile.NoticePending {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s notice for job %s after %s", rule, id, timeout)
		}
		time.Sleep(time.Second)
	}
}

func findNotice(ns []profile.Notice, rule string) *profile.Notice {
	for i := range ns {
		if ns[i].Rule == rule {
			return &ns[i]
		}
	}
	return nil
}

func jobStart(t *testing.T, bin, cfgPath, id string) time.Time {
	t.Helper()
	ps := showJob(t, bin, cfgPath, id)
	if len(ps) == 0 {
		t.Fatalf("job %s: no profile", id)
	}
	return ps[0].Start
}

// noticeMail is one message the stand-in sendmail received.
type noticeMail struct {
	file    string
	args    []string
	raw     string
	header  mail.Header
	subject string // decoded
	body    string // decoded
	rule    string // from the subject's words
}

var subjectJob = regexp.MustCompile(`^\[gpuprof\] job ([0-9]+) `)

func readMails(t *testing.T, dir string) []noticeMail {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []noticeMail
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		args, _ := os.ReadFile(strings.TrimSuffix(f, ".eml") + ".args")
		m := noticeMail{file: f, raw: string(raw), args: strings.Split(strings.TrimSpace(string(args)), "\n")}
		msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
		if err != nil {
			t.Errorf("%s is not a well-formed message: %v\n%q", f, err, raw)
			continue
		}
		m.header = msg.Header
		if m.subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
			t.Errorf("%s: subject: %v", f, err)
		}
		var body io.Reader = msg.Body
		if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(msg.Body)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Errorf("%s: body: %v", f, err)
		}
		m.body = string(b)
		switch {
		case strings.Contains(m.subject, "idle job cancelled"):
			m.rule = profile.RuleCancel
		case strings.Contains(m.subject, "its GPUs are idle"):
			m.rule = profile.RuleIdleJob
		}
		out = append(out, m)
	}
	return out
}

func mailsFor(ms []noticeMail, id string) []noticeMail {
	var out []noticeMail
	for _, m := range ms {
		if sm := subjectJob.FindStringSubmatch(m.subject); sm != nil && sm[1] == id {
			out = append(out, m)
		}
	}
	return out
}

// checkNoticeMail checks one message: one recipient (the argument and the
// To header, no Cc or Bcc), the job and its GPU named, and a body free of
// control characters.
func checkNoticeMail(t *testing.T, m noticeMail, id string, gpus []int) {
	t.Helper()
	if !slices.Equal(m.args, []string{"-i", "--", noticeRecipient}) {
		t.Errorf("%s: sendmail run with %q, want -i -- %s", m.file, m.args, noticeRecipient)
	}
	to, err := m.header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != noticeRecipient {
		t.Errorf("%s: To %v (%v), want only %s", m.file, to, err, noticeRecipient)
	}
	for _, h := range []string{"Cc", "Bcc"} {
		if v, ok := m.header[h]; ok {
			t.Errorf("%s: header %s: %q", m.file, h, v)
		}
	}
	if !strings.Contains(m.body, "job "+id) || !strings.Contains(m.body, fmt.Sprintf("GPU %d", gpus[0])) {
		t.Errorf("%s: the body names neither job %s nor GPU %d:\n%s", m.file, id, gpus[0], m.body)
	}
	if strings.ContainsAny(strings.ReplaceAll(m.body, "\r\n", "\n"), "\x1b\r\x00") {
		t.Errorf("%s: control characters in the body: %q", m.file, m.body)
	}
}

func sacctState(t *testing.T, c *cluster, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := c.output("sacct", "-n", "-X", "-P", "-j", id, "-o", "State")
		if err == nil && strings.TrimSpace(out) != "" && !strings.HasPrefix(out, "RUNNING") {
			return strings.TrimSpace(out)
		}
		if time.Now().After(deadline) {
			t.Errorf("sacct -j %s: %q, %v", id, out, err)
			return out
		}
		time.Sleep(time.Second)
	}
}

// logHas reports whether one line of the log holds every part.
func logHas(log string, parts ...string) bool {
	for line := range strings.SplitSeq(log, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
