package tui

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

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// The built binary in a real terminal: tmux runs `gpuprof tui --db FILE`
// against a database written through the real store, keys go in with
// send-keys and capture-pane shows what a user would see. No Slurm is
// needed; it is skipped only where tmux is missing, and never in CI.

// requireTmuxHere skips when tmux is missing, except under CI=true (CI
// installs tmux, so its absence there is a failure).
func requireTmuxHere(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is missing in CI: %v", err)
		}
		t.Skipf("tmux is missing (apt-get install tmux): %v", err)
	}
}

// gpuprofBin returns $GPUPROF_BIN or a binary built from ../cmd/gpuprof.
func gpuprofBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("GPUPROF_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "gpuprof")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/gpuprof").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// fixtureJob is one job of the tmux tests' database.
type fixtureJob struct {
	id, name, user string
	uid            int
	util           uint32 // 0: no profile, only the scheduler record
	age            time.Duration
}

// writeFixtureDB writes jobs the way jobcomp (PutSchedJob) and the agent
// (PutJob) do.
func writeFixtureDB(t *testing.T, path string, jobs []fixtureJob) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const cluster, card = "fixture", 80 << 30
	now := time.Now().Truncate(time.Second)
	for _, j := range jobs {
		start := now.Add(-j.age)
		end := start.Add(30 * time.Minute)
		r := slurmext.JobRecord{
			Cluster: cluster, JobID: j.id, Name: j.name, User: j.user, UID: j.uid, Account: "lab", Partition: "gpu",
			State: "COMPLETED", Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start, End: end,
			TimeLimit: 4 * time.Hour, ReqGPUs: 1, ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
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
			g.Observe(profile.Reading{Time: ts, MemUsed: gpu.Some(uint64(30 << 30)), Util: gpu.Some(j.util), Processes: 1,
				PowerMW: gpu.Some(uint32(300_000)), TempC: gpu.Some(uint32(60))}, 10*time.Second)
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

// pane is a private tmux server running one command in a terminal of a
// fixed size.
type pane struct {
	t      *testing.T
	socket string
}

func startPane(t *testing.T, cols, rows int, command string) *pane {
	t.Helper()
	p := &pane{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := exec.Command("tmux", "-S", p.socket, "-f", "/dev/null", "new-session", "-d", "-s", "tui",
		"-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-e", "NO_COLOR=1",
		command+"; echo '[exited '$?']'; sleep 60")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names; literal types text as it is.
func (p *pane) keys(k ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", "tui"}, k...)...)
}
func (p *pane) literal(s string) { p.t.Helper(); p.tmux("send-keys", "-t", "tui", "-l", s) }
func (p *pane) screen() string   { p.t.Helper(); return p.tmux("capture-pane", "-p", "-t", "tui") }
func (p *pane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s; the screen is:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasAll(want ...string) func(string) bool {
	return func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}
}

// TestTmux runs the binary at 80×24 and 120×40: 4-digit ids take 5
// columns and the name what the others leave (a 27-character name whole
// at 120, cut at the column's width at 80), the help lists every key of the list's
// key table, and the / filter narrows the list to a user's jobs.
func TestTmux(t *testing.T) {
	requireTmuxHere(t)
	bin := gpuprofBin(t)
	db := filepath.Join(t.TempDir(), "fixture.db")
	jobs := []fixtureJob{
		{id: "4101", name: "train_resnet50_lr3e-4_seed7", user: "alice", uid: 50001, util: 90, age: time.Hour},
		{id: "4102", name: "tokenize_wiki_shards", user: "bob", uid: 50002, util: 15, age: 2 * time.Hour},
		{id: "4103", name: "eval_checkpoint_best", user: "alice", uid: 50001, age: 3 * time.Hour},
	}
	for i := range 30 {
		jobs = append(jobs, fixtureJob{id: strconv.Itoa(4200 + i), name: fmt.Sprintf("sweep_%02d", i),
			user: "carol", uid: 50003, util: 50, age: 4*time.Hour + time.Duration(i)*time.Minute})
	}
	writeFixtureDB(t, db, jobs)

	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			p := startPane(t, size[0], size[1], bin+" tui --db "+db)
			// The database's owner is an admin with no jobs of their own:
			// everyone's jobs, with a USER column.
			s := p.waitFor("the job list", hasAll("4101", "4102", "USER"))
			lines := strings.Split(s, "\n")
			var header string
			for _, l := range lines {
				if strings.Contains(l, "JOBID") {
					header = l
					break
				}
			}
			// JOBID is as wide as its header (the ids are 4 digits): NAME
			// starts 6 columns after it, and takes what the other columns
			// leave: at least 18 at 80 columns (with USER), 40 at 120.
			iID, iName, iUser := strings.Index(header, "JOBID"), strings.Index(header, "NAME"), strings.Index(header, "USER")
			if iName-iID != 6 {
				t.Errorf("NAME starts %d columns after JOBID, want 6:\n%s", iName-iID, header)
			}
			nameW := iUser - iName - 1
			if want := map[int]int{80: 18, 120: 40}[size[0]]; nameW < want {
				t.Errorf("NAME is %d columns at %d, want at least %d:\n%s", nameW, size[0], want, header)
			}
			// Every name that fits the column is shown whole; a longer one
			// is cut with "…" at the column's width.
			for _, j := range jobs[:3] {
				switch {
				case len(j.name) <= nameW && !strings.Contains(s, " "+j.name+" "):
					t.Errorf("%q (%d) not shown whole in a %d-column name:\n%s", j.name, len(j.name), nameW, s)
				case len(j.name) > nameW && !strings.Contains(s, j.name[:nameW-1]+"…"):
					t.Errorf("%q not cut at %d columns:\n%s", j.name, nameW, s)
				}
			}
			for _, l := range lines {
				if width(l) > size[0] {
					t.Errorf("line wider than %d: %q", size[0], l)
				}
			}

			// The help lists every key of the list's table.
			p.keys("?")
			help := p.waitFor("the help", hasAll("Keys"))
			for _, b := range viewKeys(screenList) {
				if !strings.Contains(help, b.helpKeys()+" ") || !strings.Contains(help, strings.Fields(b.help)[0]) {
					t.Errorf("help lacks %q (%s):\n%s", b.helpKeys(), b.help, help)
				}
			}
			p.keys("Escape")
			time.Sleep(300 * time.Millisecond) // so the next key is not read as alt+key
			p.waitFor("the list again", hasAll("4101", "JOBID"))

			// The / filter, by user: bob's one job.
			p.keys("/")
			p.literal("bob")
			p.keys("Enter")
			p.waitFor("the filtered list", func(s string) bool {
				return strings.Contains(s, "4102") && !strings.Contains(s, "4101") &&
					strings.Contains(s, "row 1 of 1")
			})
			p.keys("q")
			p.waitFor("the program to quit", hasAll("[exited 0]"))
		})
	}
}
