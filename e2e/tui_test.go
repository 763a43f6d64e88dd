package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// `gpuprof tui` in a real terminal: tmux runs it, keys go in with
// send-keys, and capture-pane shows what a user would see.

// tuiJob is one job of a TUI test database.
type tuiJob struct {
	id, name, user string
	uid            int
	state          string
	// mem and util, when util > 0, give the job a profile with one GPU and
	// a time series; otherwise it has only its scheduler record.
	mem  uint64
	util uint32
	age  time.Duration // start = now − age
}

// writeTUIDB writes jobs into a new database at path (scheduler records
// through PutSchedJob, profiles through PutJob, as jobcomp and the agent
// would) and returns it closed.
func writeTUIDB(t *testing.T, path, cluster string, jobs []tuiJob) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().Truncate(time.Second)
	const card = 80 << 30
	for _, j := range jobs {
		start := now.Add(-j.age)
		end := start.Add(20 * time.Minute)
		r := slurmext.JobRecord{
			Cluster: cluster, JobID: j.id, Name: j.name, User: j.user, UID: j.uid, Account: "lab", Partition: "gpu",
			State: slurmext.JobState(j.state), Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start, End: end,
			TimeLimit: 2 * time.Hour, ReqGPUs: 1, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		}
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatalf("job %s: %v", j.id, err)
		}
		if j.util == 0 {
			continue
		}
		d := gpu.Device{UUID: "GPU-" + j.id, Name: "NVIDIA H100 80GB HBM3", Minor: 0, MemoryTotal: card}
		g := profile.NewGPU(d, 0, start, 10*time.Second, 240)
		for ts := start; ts.Before(end); ts = ts.Add(10 * time.Second) {
			u := j.util
			if ts.Sub(start) < 2*time.Minute {
				u = j.util / 4 // a slow start, so the sparkline has a shape
			}
			g.Observe(profile.Reading{Time: ts, MemUsed: gpu.Some(j.mem), Util: gpu.Some(u), Processes: 1,
				PowerMW: gpu.Some(uint32(300_000)), TempC: gpu.Some(uint32(61))}, 10*time.Second)
		}
		p := profile.Job{
			Key:  profile.Key{Cluster: cluster, JobID: j.id, Node: "gpu01"},
			User: j.user, UID: j.uid, GID: j.uid, Account: "lab", Partition: "gpu",
			Start: start, End: end, Status: profile.StatusFinished, Source: "agent", ExitKnown: true,
			SampleInterval: 10 * time.Second, LastSample: end, GPUs: []profile.GPU{g},
		}
		if err := db.PutJob(ctx, p); err != nil {
			t.Fatalf("profile of job %s: %v", j.id, err)
		}
	}
}

// tmuxTerm is one tmux session running a command in a terminal of a fixed
// size.
type tmuxTerm struct {
	t       *testing.T
	socket  string // tmux -S: a private server, not the user's
	session string
}

func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		skipOrFail(t, "tmux is missing (apt-get install tmux): %v", err)
	}
}

// startTmux runs command (a shell command line) in a new detached tmux
// session of cols × rows with env set.
func startTmux(t *testing.T, cols, rows int, env []string, command string) *tmuxTerm {
	t.Helper()
	term := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"), session: "gpuprof"}
	args := []string{"-S", term.socket, "-f", "/dev/null", "new-session", "-d", "-s", term.session,
		"-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows)}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	// remain-on-exit keeps the pane after the program ends, so its last
	// screen (or an error) can still be captured.
	args = append(args, command+"; echo; echo '[exited '$?']'; sleep 60")
	cmd := exec.Command("tmux", args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", term.socket, "kill-server").Run()
	})
	return term
}

func (m *tmuxTerm) tmux(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", m.socket}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends keys as tmux key names ("j", "Enter", "Escape", "/").
func (m *tmuxTerm) keys(keys ...string) {
	m.t.Helper()
	m.tmux(append([]string{"send-keys", "-t", m.session}, keys...)...)
}

// escape sends Escape alone: a key that follows within the terminal's
// escape timeout would be read as Alt+key, as on any terminal.
func (m *tmuxTerm) escape() {
	m.t.Helper()
	m.keys("Escape")
	time.Sleep(300 * time.Millisecond)
}

// text types s literally.
func (m *tmuxTerm) text(s string) {
	m.t.Helper()
	m.tmux("send-keys", "-t", m.session, "-l", s)
}

// screen is the pane as the user sees it, without colours.
func (m *tmuxTerm) screen() string {
	m.t.Helper()
	return m.tmux("capture-pane", "-p", "-t", m.session)
}

// rawScreen is the pane with its escape sequences (-e).
func (m *tmuxTerm) rawScreen() string {
	m.t.Helper()
	return m.tmux("capture-pane", "-p", "-e", "-t", m.session)
}

// waitFor waits until every one of want is on the screen, and returns it.
func (m *tmuxTerm) waitFor(what string, ok func(screen string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := m.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("waiting for %s; the screen is:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func containsAll(want ...string) func(string) bool {
	return func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}
}

func TestTUIInTmux(t *testing.T) {
	requireTmux(t)
	t.Parallel()
	bin := gpuprofBinary(t)
	dir := t.TempDir()
	const cluster = "tui"
	uid := os.Getuid()
	user := userName(t, uid)
	jobs := []tuiJob{
		{id: "9001", name: "resnet-train", user: user, uid: uid, state: "COMPLETED", mem: 61 << 30, util: 92, age: time.Hour},
		{id: "9002", name: "tokenize-shards", user: user, uid: uid, state: "COMPLETED", mem: 4 << 30, util: 12, age: 2 * time.Hour},
		{id: "9003", name: "\x1b[31mred\x1b[0m\x1b]0;pwned\a 作业名称很长🚀🔥" + strings.Repeat("x", 2000), user: user, uid: uid, state: "FAILED", mem: 20 << 30, util: 40, age: 3 * time.Hour},
		{id: "9004", name: "sacct-only", user: user, uid: uid, state: "TIMEOUT", age: 4 * time.Hour},
	}
	for i := range 120 { // more than a page of the oldest jobs
		jobs = append(jobs, tuiJob{id: strconv.Itoa(7000 + i), name: fmt.Sprintf("sweep-%03d", i), user: user, uid: uid,
			state: "COMPLETED", mem: 8 << 30, util: 55, age: 5*time.Hour + time.Duration(i)*time.Minute})
	}
	dbPath := filepath.Join(dir, "gpuprof.db")
	writeTUIDB(t, dbPath, cluster, jobs)
	cfg := config.Default()
	cfg.Cluster = cluster
	cfg.DB = dbPath
	cfg.LogFile = filepath.Join(dir, "gpuprof.log")
	cfgPath := writeConfigFile(t, filepath.Join(dir, "gpuprof.toml"), cfg)

	term := startTmux(t, 80, 24, []string{"NO_COLOR=1"}, shellQuote(bin)+" tui --page-size 50 --config "+shellQuote(cfgPath))
	s := term.waitFor("the job list", containsAll("9001", "resnet-train", "9002", "tokenize-shards"))
	if strings.Contains(s, "pwned") && strings.Contains(s, "]0;") {
		t.Errorf("an OSC sequence from a job name reached the screen:\n%s", s)
	}
	if raw := term.rawScreen(); strings.Contains(raw, "\x1b[31m") {
		t.Errorf("NO_COLOR=1, yet the pane has a red escape (from the hostile name?):\n%q", raw)
	}
	// Every line fits the 80 columns, with the CJK and emoji name among them.
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if w := displayWidth(line); w > 80 {
			t.Errorf("line wider than the terminal (%d columns): %q", w, line)
		}
	}

	// Detail of the newest job: its per-GPU line and its hints.
	term.keys("Enter")
	term.waitFor("the detail of job 9001", containsAll("9001", "resnet-train", "gpu01"))
	term.escape()
	term.waitFor("the list again", containsAll("9002", "tokenize-shards"))

	// Filter by text.
	term.keys("/")
	term.text("tokenize")
	term.keys("Enter")
	term.waitFor("the filtered list", func(s string) bool {
		return strings.Contains(s, "tokenize-shards") && !strings.Contains(s, "resnet-train")
	})
	// Paging to the end loads the oldest page.
	term.keys("/")
	term.keys("C-u") // an emptied filter shows everything again
	term.keys("Enter")
	// G moves within the list on screen: wait until the whole list is back
	// (on a loaded machine the reload can come after the key).
	term.waitFor("every job again", func(s string) bool {
		return strings.Contains(s, "resnet-train") && strings.Contains(s, "tokenize-shards")
	})
	term.keys("G")
	term.waitFor("the oldest job after G", containsAll("sweep-119"))

	term.keys("q")
	term.waitFor("the program to quit", containsAll("[exited 0]"))
}

// displayWidth counts terminal columns roughly: wide East Asian characters
// and emoji take two.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case r >= 0x1100 && (r <= 0x115f || (r >= 0x2e80 && r <= 0xa4cf) || (r >= 0xac00 && r <= 0xd7a3) ||
			(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
			(r >= 0xffe0 && r <= 0xffe6) || (r >= 0x1f300 && r <= 0x1faff) || (r >= 0x20000 && r <= 0x3fffd)):
			w += 2
		default:
			w++
		}
	}
	return w
}

func userName(t *testing.T, uid int) string {
	t.Helper()
	out, err := exec.Command("id", "-un", strconv.Itoa(uid)).Output()
	if err != nil {
		t.Fatalf("id -un %d: %v", uid, err)
	}
	return strings.TrimSpace(string(out))
}

// TestTUIUsersSeeOwnJobs: two real Unix users and an admin run `gpuprof
// tui` against the collector (munge identifies them); the database file is
// root's alone, so the collector is the only way in.
func TestTUIUsersSeeOwnJobs(t *testing.T) {
	requireClusterHost(t) // creates Unix users
	requireTmux(t)
	t.Parallel()
	ensureMunge(t)
	requireUserTools(t)
	bin := gpuprofBinary(t)
	dir := sharedTempDir(t, "gpuprof-e2e-tui-")
	suffix := strconv.Itoa(os.Getpid()%100000 + 1)
	admins := "gpuprof-tadm-" + suffix
	runRoot(t, "groupadd", admins)
	t.Cleanup(func() { _ = exec.Command("groupdel", admins).Run() })
	alice := addUser(t, "gpuprof-talice-"+suffix)
	bob := addUser(t, "gpuprof-tbob-"+suffix)
	admin := addUser(t, "gpuprof-tadmin-"+suffix, "-G", admins)

	const cluster = "tuiauth"
	dbPath := filepath.Join(dir, "central.db")
	writeTUIDB(t, dbPath, cluster, []tuiJob{
		{id: "8101", name: "alice-train", user: alice.name, uid: alice.uid, state: "COMPLETED", mem: 30 << 30, util: 80, age: time.Hour},
		{id: "8102", name: "alice-eval", user: alice.name, uid: alice.uid, state: "FAILED", age: 2 * time.Hour},
		{id: "8201", name: "bob-sweep", user: bob.name, uid: bob.uid, state: "COMPLETED", mem: 10 << 30, util: 30, age: 3 * time.Hour},
	})
	if err := os.Chmod(dbPath, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cc := config.Default()
	cc.Cluster = cluster
	cc.DB = dbPath
	cc.SpoolDir = filepath.Join(dir, "spool")
	cc.LogFile = filepath.Join(dir, "gpuprof.log")
	cc.AdminGroup = admins
	cc.Serve.Listen = addr
	cc.Serve.SlurmUser = "root"
	centralCfg := writeConfigFile(t, filepath.Join(dir, "central.toml"), cc)
	startServe(t, bin, centralCfg, addr, filepath.Join(dir, "serve.out"))

	tests := []struct {
		name    string
		user    unixUser
		see     []string
		notSee  []string
		switchU bool
	}{
		{name: "alice", user: alice, see: []string{"8101", "alice-train", "8102"}, notSee: []string{"8201", "bob-sweep"}},
		{name: "bob", user: bob, see: []string{"8201", "bob-sweep"}, notSee: []string{"8101", "8102", "alice-"}},
		// An admin without jobs of their own starts on everyone's.
		{name: "admin", user: admin, see: []string{"8101", "8102", "8201", "showing everyone's"}, switchU: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			c.Collector = "http://" + addr
			c.AdminGroup = admins
			c.DB = filepath.Join(dir, tt.user.name+".db") // never opened: the collector answers
			cfgPath := writeConfigFile(t, filepath.Join(dir, tt.user.name+".toml"), c)
			term := startTmux(t, 100, 30, []string{"NO_COLOR=1"},
				"runuser -u "+tt.user.name+" -- "+shellQuote(bin)+" tui --config "+shellQuote(cfgPath))
			s := term.waitFor(tt.name+"'s jobs", containsAll(tt.see...))
			for _, no := range tt.notSee {
				if strings.Contains(s, no) {
					t.Errorf("%s sees %q:\n%s", tt.user.name, no, s)
				}
			}
			// The UI refuses to switch user; the collector would answer
			// with the caller's own jobs anyway (collect's tests).
			if !tt.switchU {
				term.keys("u")
				s = term.waitFor("the refusal to switch user", containsAll("only admins can switch user"))
				for _, no := range tt.notSee {
					if strings.Contains(s, no) {
						t.Errorf("%s pressed u and sees %q:\n%s", tt.user.name, no, s)
					}
				}
			} else {
				term.keys("u", "C-u")
				term.text(bob.name)
				term.keys("Enter")
				term.waitFor("bob's jobs only, as the admin", func(s string) bool {
					return strings.Contains(s, "bob-sweep") && !strings.Contains(s, "alice-train")
				})
			}
			term.escape()
			term.keys("q")
			term.waitFor("the program to quit", containsAll("[exited 0]"))
		})
	}
	// And the file itself is closed to them.
	if _, _, err := asUser(alice, "cat", dbPath); err == nil {
		t.Errorf("alice can read %s directly; the test meant it to be root's alone", dbPath)
	}
}
