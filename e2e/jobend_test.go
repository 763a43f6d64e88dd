package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mailRecipient is the --mail-user of the job-end tests' jobs.
const mailRecipient = "root@example.org"

// TestJobEndMailAndAdminComment (issue #40, "What must be shown" 1 and
// 2): under the real test cluster, with the package example's MailProg=
// (contrib/slurm/mailprog.sh around this gpuprof) and a stand-in mailer
// that keeps each mail's arguments and body:
//
//   - a GPU job's END mail, sent by slurmctld itself, reaches the mailer
//     with Slurm's own three arguments (-s SUBJECT RECIPIENT) and the job's
//     GPU summary as its body; its name holds a line break and a "Bcc:"
//     line, which stay inside the subject argument and add no recipient
//     and no body line;
//   - with jobcomp.admin_comment on, sacct -o AdminComment of that job
//     shows gpuprof's summary (gpuprof:v1:…), while a job whose
//     AdminComment another tool set as it ran keeps that one;
//   - with gpuprof unable to answer (its collector accepts and never
//     replies), the next job's END mail arrives unchanged (Slurm's empty
//     body) within mail_prog.deadline, the reason in gpuprof's log; and
//     with admin_comment off that job's AdminComment stays empty.
func TestJobEndMailAndAdminComment(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, "gpuprof.toml")
	// The shared cluster's MailProg= is the example's line; testcluster.sh
	// --by-partition hands each job's mail to its partition's wrapper by
	// SLURM_JOB_PARTITION, which slurmctld sets for MailProg as for its
	// other scripts (job_common_env_vars). This scope's partition runs
	// contrib/slurm/mailprog.sh around this test's gpuprof.
	c := sharedCluster(t)
	c.hooks(t, bin, cfgPath)
	simDir, mailDir := filepath.Join(work, "sim"), filepath.Join(work, "mail")
	for _, d := range []string{simDir, mailDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if conf, err := os.ReadFile(c.Conf); err != nil || !strings.Contains(string(conf), "MailProg="+filepath.Join(c.Dir, "hooks", "mailprog")+"\n") {
		t.Fatalf("the cluster's slurm.conf does not name the example's MailProg wrapper (%v):\n%s", err, conf)
	}
	if w, err := os.ReadFile(filepath.Join(c.Dir, "hooks", "p", c.Name, "mailprog")); err != nil || !strings.Contains(string(w), "contrib/slurm/mailprog.sh") {
		t.Fatalf("partition %s's MailProg is not the example's wrapper (%v):\n%s", c.Name, err, w)
	}

	// slurmctld gives its scripts an environment of its own: sacct and
	// sacctmgr find the test cluster's slurm.conf through these.
	slurmTool := func(name string) string {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(work, name)
		script := fmt.Sprintf("#!/bin/sh\nSLURM_CONF=%s exec %s \"$@\"\n", shellQuote(c.Conf), shellQuote(real))
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sacct, sacctmgr := slurmTool("sacct"), slurmTool("sacctmgr")
	// The stand-in mailer: each mail as JOBID.N.argv (NUL-separated) and
	// JOBID.N.body, then JOBID.N.done holding the time it ran.
	mailer := filepath.Join(work, "mailer")
	mailerScript := `#!/bin/sh
n=$(/bin/date +%s%N)
f=` + shellQuote(mailDir) + `/${SLURM_JOB_ID:-none}.$n
for a in "$@"; do printf '%s\0' "$a"; done >"$f.argv"
/bin/cat >"$f.body"
/bin/date +%s.%N >"$f.done"
`
	if err := os.WriteFile(mailer, []byte(mailerScript), 0o755); err != nil {
		t.Fatal(err)
	}

	base := writeCaptureConfig(t, cfgPath, work, simDir, filepath.Join(c.Dir, "etc", "gres.conf"))
	baseText, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// writeConfig writes the test's configuration: top (top-level keys),
	// the capture configuration, then the sections under test and extra.
	writeConfig := func(top, extra string) {
		t.Helper()
		text := top + string(baseText) + fmt.Sprintf(`
[import]
sacct = %q

[mail_prog]
mailer = %q
deadline = "5s"
`, sacct, mailer) + extra
		tmp := cfgPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("", fmt.Sprintf("\n[jobcomp]\nadmin_comment = true\nadmin_comment_wait = \"30s\"\nsacctmgr = %q\n", sacctmgr))

	agent := startProcess(t, filepath.Join(work, "agent.out"), os.Environ(), bin, "agent", "--config", cfgPath)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{filepath.Join(work, "agent.out"), base.LogFile, c.HooksLog()} {
				if data, err := os.ReadFile(f); err == nil {
					t.Logf("==== %s (last 60 lines)\n%s", f, lastLines(string(data), 60))
				}
			}
			t.Logf("==== slurmctld.log\n%s", c.logTail("slurmctld.log", 40))
		}
	})
	waitAgent(t, agent, base.Socket, filepath.Join(work, "agent.out"))

	submit := func(name string) string {
		t.Helper()
		burn := shellQuote(bin) + " simgpu burn --mem 6GiB --util 40 --for 8s"
		id := c.sbatch(t, "-J", name, "--gres=gpu:1", "-o", "/dev/null",
			"--mail-type=END", "--mail-user="+mailRecipient,
			"--chdir", work, "--export=ALL,GPUPROF_CONFIG="+cfgPath, "--wrap", burn)
		return strings.TrimSpace(id)
	}

	hostile := "e2e-mail\nBcc: victim@example.org"
	id := submit(hostile)
	// Another tool's AdminComment, set while the job runs, stays.
	foreign := submit("e2e-foreign")
	for {
		if state, err := c.jobState(foreign); err != nil || state == "RUNNING" {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	const theirs = "checked-by-admin" // lowercase: 22.05's sacctmgr lowercases
	setDeadline := time.Now().Add(30 * time.Second)
	for {
		c.run(t, "sacctmgr", "-i", "modify", "job", "where", "jobid="+foreign, "set", "AdminComment="+theirs)
		got, _ := c.output("sacct", "-n", "-X", "-P", "-j", foreign, "-o", "AdminComment")
		if strings.TrimSpace(got) == theirs {
			break
		}
		if time.Now().After(setDeadline) {
			t.Fatalf("could not set job %s's AdminComment as another tool would: %q", foreign, got)
		}
		time.Sleep(time.Second)
	}
	c.waitQueueEmpty(t, []string{id, foreign}, queueTimeout)
	argv, body, _ := waitMail(t, mailDir, id, 90*time.Second)

	t.Run("summary", func(t *testing.T) {
		if len(argv) != 3 || argv[0] != "-s" || argv[2] != mailRecipient {
			t.Fatalf("mailer's arguments %q, want Slurm's -s SUBJECT %s", argv, mailRecipient)
		}
		if !strings.HasPrefix(argv[1], "Slurm Job_id="+id+" Name=") || !strings.Contains(argv[1], "Ended") {
			t.Errorf("subject %q is not Slurm's END subject", argv[1])
		}
		for _, want := range []string{"GPU summary by gpuprof for job " + id, "GPUs held/used:  1/", "VRAM peak:", "Utilisation:", "SM activity:", "Idle:", "Class:", "More: gpuprof show " + id} {
			if !strings.Contains(body, want) {
				t.Errorf("the mail's body lacks %q:\n%s", want, body)
			}
		}
	})
	t.Run("hostile name", func(t *testing.T) {
		// The name stays in the one subject argument Slurm made of it;
		// the body is gpuprof's and holds no header-like line of it.
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(strings.ToLower(l), "bcc:") || strings.Contains(l, "victim@") {
				t.Errorf("the body carries the job name's line %q:\n%s", l, body)
			}
		}
		if strings.Contains(argv[2], "victim") {
			t.Errorf("recipient %q", argv[2])
		}
	})
	t.Run("AdminComment", func(t *testing.T) {
		comment := waitAdminComment(t, c.cluster, id, 90*time.Second, func(s string) bool { return s != "" })
		if !regexp.MustCompile(`^gpuprof:v1:gpus=1,.*class=[a-z_]+`).MatchString(comment) || len(comment) > 300 {
			t.Errorf("sacct -o AdminComment of job %s: %q, want gpuprof's summary", id, comment)
		}
	})

	t.Run("another tool's AdminComment stays", func(t *testing.T) {
		deadline := time.Now().Add(90 * time.Second)
		for {
			log, _ := os.ReadFile(base.LogFile)
			if regexp.MustCompile(`AdminComment left as it is.*job=` + foreign + `\b|job=` + foreign + `\b.*AdminComment left as it is`).Match(log) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("gpuprof's log does not say it left job %s's AdminComment:\n%s", foreign, lastLines(string(log), 20))
			}
			time.Sleep(time.Second)
		}
		if got := strings.TrimSpace(c.run(t, "sacct", "-n", "-X", "-P", "-j", foreign, "-o", "AdminComment")); got != theirs {
			t.Errorf("job %s's AdminComment %q, want the other tool's %q", foreign, got, theirs)
		}
	})

	// gpuprof cannot answer: its collector accepts connections and never
	// replies; AdminComment off.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, conn) // never answered
		}
	}()
	writeConfig(fmt.Sprintf("collector = %q\n", "http://"+ln.Addr().String()), "")
	id2 := submit("e2e-mail-unanswered")
	c.waitQueueEmpty(t, []string{id2}, queueTimeout)
	argv2, body2, _ := waitMail(t, mailDir, id2, 90*time.Second)
	t.Run("unchanged when gpuprof cannot answer", func(t *testing.T) {
		if len(argv2) != 3 || argv2[0] != "-s" || !strings.HasPrefix(argv2[1], "Slurm Job_id="+id2+" ") || argv2[2] != mailRecipient {
			t.Errorf("mailer's arguments %q, want Slurm's", argv2)
		}
		if body2 != "" {
			t.Errorf("body %q, want Slurm's own (empty)", body2)
		}
		// gpuprof held the mail no longer than mail_prog.deadline (5 s):
		// its log says why and how long.
		log, _ := os.ReadFile(base.LogFile)
		var line string
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "mail sent without the GPU summary") && strings.Contains(l, "job="+id2+" ") {
				line = l
			}
		}
		m := regexp.MustCompile(`took=(\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("gpuprof's log does not say why job %s's mail went without the summary:\n%s", id2, lastLines(string(log), 20))
		}
		if d, err := time.ParseDuration(m[1]); err != nil || d > 6*time.Second || d < 4*time.Second {
			t.Errorf("gpuprof held job %s's mail %s (%v); want the deadline, 5 s: %s", id2, m[1], err, line)
		}
		if !strings.Contains(line, "no summary within 5s") {
			t.Errorf("the reason logged: %s", line)
		}
	})
	t.Run("no AdminComment when off", func(t *testing.T) {
		time.Sleep(10 * time.Second) // what a detached writer would have needed
		if got := strings.TrimSpace(c.run(t, "sacct", "-n", "-X", "-P", "-j", id2, "-o", "AdminComment")); got != "" {
			t.Errorf("sacct -o AdminComment of job %s: %q, want none with jobcomp.admin_comment off", id2, got)
		}
	})
}

// waitMail waits for the stand-in mailer's mail of job id and returns
// its arguments, its body and when the mailer ran.
func waitMail(t *testing.T, dir, id string, timeout time.Duration) ([]string, string, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, _ := filepath.Glob(filepath.Join(dir, id+".*.done"))
		if len(done) > 0 {
			f := strings.TrimSuffix(done[0], ".done")
			argv, _ := os.ReadFile(f + ".argv")
			body, _ := os.ReadFile(f + ".body")
			at, _ := os.ReadFile(done[0])
			var sec, nsec int64
			fmt.Sscanf(strings.TrimSpace(string(at)), "%d.%d", &sec, &nsec)
			return strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00"), string(body), time.Unix(sec, nsec)
		}
		if time.Now().After(deadline) {
			all, _ := filepath.Glob(filepath.Join(dir, "*"))
			t.Fatalf("no mail of job %s within %s (mail dir: %v)", id, timeout, all)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// waitAdminComment polls sacct -o AdminComment of job id until ok says
// so, and returns it.
func waitAdminComment(t *testing.T, c *cluster, id string, timeout time.Duration, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, err := c.output("sacct", "-n", "-X", "-P", "-j", id, "-o", "AdminComment")
		got = strings.TrimSpace(got)
		if err == nil && ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("sacct -o AdminComment of job %s: %q (%v) after %s", id, got, err, timeout)
		}
		time.Sleep(time.Second)
	}
}
