package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
)

// Single-host access: the database is root's alone, no collector is
// configured, and two real Unix users and an admin read their jobs
// through the running agent's query socket, which learns who they are
// from the kernel (SO_PEERCRED).

// requireTools skips (fails in CI) without the named programs.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "%s is missing: %v", tool, err)
		}
	}
}

// lastMonthAge is how long ago the middle of last month was: jobs that old
// are in `gpuprof report`'s default month whenever the test runs.
func lastMonthAge() time.Duration {
	now := time.Now()
	first := time.Date(now.Year(), now.Month(), 1, 12, 0, 0, 0, time.Local)
	return now.Sub(first.AddDate(0, 0, -14))
}

func TestLocalAccessUsersSeeOwnJobs(t *testing.T) {
	requireClusterHost(t) // creates Unix users
	requireUserTools(t)
	requireTmux(t)
	requireTools(t, "sqlite3", "curl")
	t.Parallel()
	bin := gpuprofBinary(t)
	dir := sharedTempDir(t, "gpuprof-e2e-local-")
	suffix := strconv.Itoa(os.Getpid()%100000 + 2)
	admins := "gpuprof-ladm-" + suffix
	runRoot(t, "groupadd", admins)
	t.Cleanup(func() { _ = exec.Command("groupdel", admins).Run() })
	alice := addUser(t, "gpuprof-lalice-"+suffix)
	bob := addUser(t, "gpuprof-lbob-"+suffix)
	admin := addUser(t, "gpuprof-ladmin-"+suffix, "-G", admins)

	const cluster = "single"
	age := lastMonthAge()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "state", "gpuprof.db")
	writeTUIDB(t, dbPath, cluster, []tuiJob{
		{id: "9101", name: "alice-train", user: alice.name, uid: alice.uid, state: "COMPLETED", mem: 30 << 30, util: 80, age: age},
		{id: "9102", name: "alice-eval", user: alice.name, uid: alice.uid, state: "FAILED", mem: 5 << 30, util: 20, age: age + time.Hour},
		{id: "9201", name: "bob-sweep", user: bob.name, uid: bob.uid, state: "COMPLETED", mem: 10 << 30, util: 30, age: age + 2*time.Hour},
	})
	if fi, err := os.Stat(dbPath); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm()&0o004 != 0 {
		t.Fatalf("the store made %s %v; want it closed to other users", dbPath, fi.Mode())
	}

	// One configuration file for everyone, as /etc/gpuprof/gpuprof.toml
	// on a single host: no collector, nothing about users. The paths are
	// the test's own so it runs beside other tests' agents.
	c := config.Default()
	c.Cluster = cluster
	c.DB = dbPath
	c.SpoolDir = filepath.Join(dir, "state", "spool")
	c.Socket = filepath.Join(dir, "run", "agent.sock")
	c.QuerySocket = filepath.Join(dir, "run", "query.sock")
	c.LogFile = filepath.Join(dir, "gpuprof.log")
	c.AdminGroup = admins
	c.SlurmConf = filepath.Join(dir, "no-slurm.conf")
	c.Agent.GPU = "sim"
	c.Agent.Interval = config.Duration(250 * time.Millisecond)
	c.Sim.Dir = filepath.Join(dir, "sim")
	cfgPath := writeConfigFile(t, filepath.Join(dir, "gpuprof.toml"), c)

	agentOut := filepath.Join(dir, "agent.out")
	agent := startProcess(t, agentOut, os.Environ(), bin, "agent", "--config", cfgPath)
	// The agent opens the query socket, then the hooks' socket: on a
	// loaded machine the second can come seconds later (seen: a Stat of
	// it failed, and the nil FileInfo's Mode panicked the whole package).
	waitAgent(t, agent, c.QuerySocket, agentOut)
	waitAgent(t, agent, c.Socket, agentOut)
	for _, s := range []struct {
		what, path string
		want       os.FileMode
	}{{"query socket", c.QuerySocket, 0o666}, {"hooks' socket", c.Socket, 0o600}} {
		if fi, err := os.Stat(s.path); err != nil {
			t.Fatal(err)
		} else if fi.Mode().Perm() != s.want {
			t.Errorf("%s %v, want mode %#o", s.what, fi.Mode(), s.want)
		}
	}

	everyone := []string{"9101", "9102", "9201"}
	tests := []struct {
		name   string
		user   unixUser
		own    []string // job ids
		others []string
		names  []string // job names they see
		hidden []string // job and user names they must not see
	}{
		{name: "alice", user: alice, own: []string{"9101", "9102"}, others: []string{"9201"},
			names: []string{"alice-train", "alice-eval"}, hidden: []string{"bob-sweep", bob.name}},
		{name: "bob", user: bob, own: []string{"9201"}, others: []string{"9101", "9102"},
			names: []string{"bob-sweep"}, hidden: []string{"alice-train", "alice-eval", alice.name}},
		{name: "admin", user: admin, own: everyone,
			names: []string{"alice-train", "alice-eval", "bob-sweep"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(args ...string) (string, string, error) {
				out, stderr, err := asUser(tt.user, bin, append(args, "--config", cfgPath)...)
				return string(out), stderr, err
			}
			// jobs, as JSON and as the table.
			out, stderr, err := run("jobs", "--json")
			if err != nil {
				t.Fatalf("jobs --json: %v\n%s", err, stderr)
			}
			if got := jsonJobIDs(t, out); !sameSet(got, tt.own) {
				t.Errorf("jobs --json lists %v, want %v", got, tt.own)
			}
			table, stderr, err := run("jobs")
			if err != nil {
				t.Fatalf("jobs: %v\n%s", err, stderr)
			}
			checkSees(t, "jobs", table, tt.own, tt.others)
			// Asking for someone else changes nothing.
			if tt.name != "admin" {
				other := bob.name
				if tt.user == bob {
					other = alice.name
				}
				out, stderr, err = run("jobs", "--json", "--user", other)
				if err != nil {
					t.Fatalf("jobs --user %s: %v\n%s", other, err, stderr)
				}
				if got := jsonJobIDs(t, out); len(got) != 0 {
					t.Errorf("jobs --user %s lists %v, want none", other, got)
				}
			}

			// show: own jobs, and "not found" for anyone else's.
			for _, id := range tt.own {
				out, stderr, err := run("show", id)
				if err != nil || !strings.Contains(out, id) {
					t.Errorf("show %s: %v, stdout %q, stderr %q; want the job", id, err, out, stderr)
				}
			}
			for _, id := range tt.others {
				out, stderr, err := run("show", id)
				if err == nil || !strings.Contains(stderr, "not found") {
					t.Errorf("show %s (someone else's): err %v, stdout %q, stderr %q; want not found", id, err, out, stderr)
				}
			}

			// report: last month, the caller's jobs only.
			repDir := filepath.Join(dir, "report-"+tt.name)
			if err := os.Mkdir(repDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(repDir, tt.user.uid, -1); err != nil {
				t.Fatal(err)
			}
			if _, stderr, err := run("report", "--out", repDir, "--format", "md,json"); err != nil {
				t.Fatalf("report: %v\n%s", err, stderr)
			}
			md := readReport(t, repDir, ".md")
			js := readReport(t, repDir, ".json")
			owners := []string{tt.user.name}
			if tt.name == "admin" {
				owners = []string{alice.name, bob.name} // the admin has no jobs
			}
			checkSees(t, "report", md+js, owners, tt.hidden)

			// tui, in a real terminal.
			term := startTmux(t, 110, 30, []string{"NO_COLOR=1"},
				"runuser -u "+tt.user.name+" -- "+shellQuote(bin)+" tui --config "+shellQuote(cfgPath))
			want := append(append([]string{}, tt.own...), tt.names...)
			if tt.name == "admin" {
				want = append(want, "showing everyone's")
			}
			s := term.waitFor(tt.name+"'s jobs", containsAll(want...))
			for _, no := range append(append([]string{}, tt.others...), tt.hidden...) {
				if strings.Contains(s, no) {
					t.Errorf("tui of %s shows %q:\n%s", tt.user.name, no, s)
				}
			}
			term.keys("q")
			term.waitFor("the tui to quit", containsAll("[exited 0]"))
		})
	}

	t.Run("the database is closed to users", func(t *testing.T) {
		for _, u := range []unixUser{alice, bob, admin} {
			out, stderr, err := asUser(u, "sqlite3", "-readonly", dbPath, "select count(*) from sqlite_master;")
			if err == nil {
				t.Errorf("sqlite3 as %s opened %s: %q", u.name, dbPath, out)
			} else if !strings.Contains(stderr, "unable to open") {
				t.Logf("sqlite3 as %s: %v %s", u.name, err, stderr)
			}
		}
	})

	t.Run("a forged request gets the caller's jobs only", func(t *testing.T) {
		for _, target := range []string{
			"/v1/jobs?uid=" + strconv.Itoa(bob.uid),
			"/v1/jobs?user=" + bob.name,
			"/v1/jobs?job=9201",
		} {
			out, stderr, err := asUser(alice, "curl", "-sS", "--fail-with-body", "--unix-socket", c.QuerySocket,
				"-H", "X-Remote-User: root", "-H", "Authorization: MUNGE forged",
				"-H", "X-Uid: "+strconv.Itoa(bob.uid), "http://localhost"+target)
			if err != nil {
				t.Fatalf("curl %s as alice: %v\n%s%s", target, err, out, stderr)
			}
			got := jsonJobIDs(t, string(out))
			for _, id := range got {
				if id == "9201" {
					t.Errorf("alice, forging %s, got bob's job: %v", target, got)
				}
			}
			if strings.Contains(target, "uid=") && !sameSet(got, []string{"9101", "9102"}) {
				t.Errorf("alice, forging %s: %v, want her own jobs 9101, 9102", target, got)
			}
		}
		out, _, _ := asUser(alice, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", c.QuerySocket,
			"http://localhost/v1/jobs/"+cluster+"/9201")
		if string(out) != "404" {
			t.Errorf("alice GET bob's job 9201: status %s, want 404", out)
		}
	})

	// Normal use never trips the per-uid connection share: 20 reports in
	// a row (each pages through the caller's jobs, then counts them) leave
	// gpuprof_agent_queries_refused_total{reason="conn_limit"} where it
	// was, and so nothing of it in the agent's log (issue 40: each report
	// added 8, one for each idle connection the client left behind).
	t.Run("20 reports stay within the connection share", func(t *testing.T) {
		repDir := filepath.Join(dir, "report-20")
		if err := os.Mkdir(repDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(repDir, alice.uid, -1); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if _, stderr, err := asUser(alice, bin, "report", "--out", repDir, "--format", "json", "--config", cfgPath); err != nil {
				t.Fatalf("report %d: %v\n%s", i+1, err, stderr)
			}
		}
		for _, f := range []string{agentOut, c.LogFile} {
			b, _ := os.ReadFile(f)
			for line := range strings.SplitSeq(string(b), "\n") {
				if strings.Contains(line, "reason=conn_limit") {
					t.Errorf("%s: %s", filepath.Base(f), line)
				}
			}
		}
	})

	if !agent.running() {
		b, _ := os.ReadFile(agentOut)
		t.Errorf("the agent stopped during the queries:\n%s", b)
	}
}

// jsonJobIDs reads the job ids of a JSON array of job views.
func jsonJobIDs(t *testing.T, out string) []string {
	t.Helper()
	var views []struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatalf("not a JSON array of jobs: %v\n%s", err, out)
	}
	ids := make([]string, 0, len(views))
	for _, v := range views {
		ids = append(ids, v.JobID)
	}
	return ids
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		if seen[x] == 0 {
			return false
		}
		seen[x]--
	}
	return true
}

// checkSees checks that out holds every string of see and none of hidden.
func checkSees(t *testing.T, what, out string, see, hidden []string) {
	t.Helper()
	for _, s := range see {
		if !strings.Contains(out, s) {
			t.Errorf("%s does not show %q:\n%s", what, s, out)
		}
	}
	for _, s := range hidden {
		if strings.Contains(out, s) {
			t.Errorf("%s shows %q, which is someone else's:\n%s", what, s, out)
		}
	}
}

// readReport returns the one report file in dir whose name ends in ext.
func readReport(t *testing.T, dir, ext string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil || len(files) != 1 {
		t.Fatalf("report files %s in %s: %v (%v), want one", ext, dir, files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
