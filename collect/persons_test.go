package collect

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestParseSubuid(t *testing.T) {
	lookup := func(name string) (string, bool) {
		if name == "alice" {
			return "1001", true
		}
		return "", false
	}
	rs := parseSubuid([]byte(`# comment
alice:100000:65536
1002:165536:65536
ghost:231072:10
bad line
carol:x:5
dave:300000:0
1003:100010:5
`), lookup)
	p := &Persons{path: "set", ranges: rs, checked: time.Now().Add(time.Hour)}
	for uid, want := range map[int]string{
		1001: "1001", 99999: "99999", 100000: "1001", 165535: "1001", 165536: "1002",
		231071: "1002", 231072: "user:ghost", 231081: "user:ghost", 231082: "231082",
		100012: "1001", // overlapped by a later line: the range that starts first keeps it
		300000: "300000", 0: "0",
	} {
		if got := p.Key(uid); got != want {
			t.Errorf("Key(%d) = %q, want %q", uid, got, want)
		}
	}
	var nilP *Persons
	if got := nilP.Key(100000); got != "100000" {
		t.Errorf("nil Persons: Key = %q, want the uid", got)
	}
}

// TestPersonsRereadsChangedFile: useradd adds a range; the next look
// (after personsRecheck) sees it.
func TestPersonsRereadsChangedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "subuid")
	if err := os.WriteFile(path, []byte("1001:100000:65536\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := NewPersons(path)
	if got := p.Key(100005); got != "1001" {
		t.Fatalf("Key = %q, want 1001", got)
	}
	if err := os.WriteFile(path, []byte("1001:100000:65536\n1002:165536:65536\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.checked = time.Now().Add(-2 * personsRecheck)
	p.mu.Unlock()
	if got := p.Key(165540); got != "1002" {
		t.Errorf("after the change Key = %q, want 1002", got)
	}
}

// holderSocketEnv names the socket TestHelperHoldConnections holds.
const holderSocketEnv = "GPUPROF_TEST_HOLD_SOCKET"

// TestHelperHoldConnections is one uid of the attacker of
// TestSubordinateUIDsShareOnePersonsShare, run in a process of its own:
// it keeps 8 connections open (half a request each, redialled when
// closed) until killed.
func TestHelperHoldConnections(t *testing.T) {
	path := os.Getenv(holderSocketEnv)
	if path == "" {
		t.Skip("an attacker of TestSubordinateUIDsShareOnePersonsShare")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				c, err := net.Dial("unix", path)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if _, err := c.Write([]byte("GET /v1/jobs HTTP/1.1\r\nHost: x\r\n")); err == nil {
					_, _ = io.Copy(io.Discard, c)
				}
				c.Close()
			}
		})
	}
	wg.Wait()
}

// TestSubordinateUIDsShareOnePersonsShare (issue 39, finding 4): a user
// owns 65,536 subordinate uids (/etc/subuid) and can run processes as any
// of them. Nine of one user's uids each holding 8 connections took every
// one of the 64 before, and other users' queries timed out; counted as one
// person, they hold one share, and another user (nobody) is answered each
// time.
func TestSubordinateUIDsShareOnePersonsShare(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attacker and the victim run as other uids")
	}
	if testing.Short() {
		t.Skip("a load test of several seconds")
	}
	dir, err := os.MkdirTemp("", "gpuprof-subuid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := copyExecutable(t, dir)
	subuid := filepath.Join(dir, "subuid")
	if err := os.WriteFile(subuid, []byte("1001:200000:65536\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openStore(t)
	path := filepath.Join(dir, "query.sock")
	ln, err := ListenLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- ServeLocal(sctx, ln, db, LocalOptions{IsAdmin: func(int) bool { return false }, Persons: NewPersons(subuid)},
			testLogger(t).With("test", "subuid"))
	}()
	t.Cleanup(func() { stop(); <-served })

	var attackers []*exec.Cmd
	for i := range 9 {
		cmd := exec.Command(bin, "-test.run=^TestHelperHoldConnections$")
		cmd.Env = append(os.Environ(), holderSocketEnv+"="+path)
		uid := uint32(200000 + i*1000)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		attackers = append(attackers, cmd)
	}
	t.Cleanup(func() {
		for _, c := range attackers {
			c.Process.Kill()
			c.Wait()
		}
	})
	time.Sleep(time.Second) // every attacker's connections open

	cmd := exec.Command(bin, "-test.run=^TestHelperQueryVictim$", "-test.v")
	cmd.Env = append(os.Environ(), victimSocketEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the victim failed: %v\n%s", err, out)
	}
	answered := 0
	var ms []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "victim" {
			continue
		}
		d, _ := strconv.Atoi(f[1])
		ms = append(ms, f[1])
		if errText := strings.Join(f[2:], " "); errText != "<nil>" {
			t.Errorf("the other user's query failed after %d ms: %s", d, errText)
		} else if d <= 2000 {
			answered++
		}
	}
	t.Logf("the other user's queries took %s ms while 9 uids of one person held 8 connections each", strings.Join(ms, ", "))
	if answered != 5 {
		t.Errorf("%d of the other user's 5 queries answered within 2 s, want 5 (goal ≤ 1 s; per uid they took 4-5 s)", answered)
	}
}
