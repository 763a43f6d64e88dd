package collect

import (
	"bufio"
	"context"
	"fmt"
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

	"github.com/gpuprof/gpuprof/store"
)

// victimSocketEnv names the socket TestHelperQueryVictim queries; it runs
// only in the child process TestLocalSocketFairUnderAttack starts.
const victimSocketEnv = "GPUPROF_TEST_VICTIM_SOCKET"

// TestHelperQueryVictim is the other user of TestLocalSocketFairUnderAttack,
// run in a process of its own under another uid: it asks for its jobs five
// times and prints how long each answer took.
func TestHelperQueryVictim(t *testing.T) {
	path := os.Getenv(victimSocketEnv)
	if path == "" {
		t.Skip("the victim of TestLocalSocketFairUnderAttack, run by it as another uid")
	}
	c := Client{Socket: path}
	for range 5 {
		start := time.Now()
		_, err := c.Jobs(context.Background(), store.ViewFilter{})
		fmt.Printf("victim %d %v\n", time.Since(start).Milliseconds(), err)
		time.Sleep(300 * time.Millisecond)
	}
}

// copyExecutable copies this test binary into dir, mode 0755, so that
// another uid can run it (go test's build directory is private).
func copyExecutable(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(dir, "collect.test")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLocalSocketFairUnderAttack is issue 25's reproduction 3: one user
// holding the query socket's connections with slow clients made other
// users' `gpuprof jobs` fail after 60 s. Here this process (root) holds
// 150 connections that send half a request and stall, 8 that ask for a
// megabyte answer and never read it, and 4 that pipeline bad requests;
// meanwhile another uid (nobody, a process of its own: the kernel names
// the caller) asks for its jobs five times, and must be answered each
// time. The goal is 2 s; the test fails only past 5 s (machines are
// noisy) and logs what it measured.
func TestLocalSocketFairUnderAttack(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but not root: the victim must run as another uid")
		}
		t.Skip("needs root: the victim runs as another uid")
	}
	if testing.Short() {
		t.Skip("a load test of several seconds")
	}
	dir, err := os.MkdirTemp("", "gpuprof-fair-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := copyExecutable(t, dir)

	db := openStore(t)
	ctx := context.Background()
	// The attacker's own jobs: an answer of about a megabyte, more than
	// the socket's buffers hold.
	if err := db.WithTx(ctx, func(tx *store.Tx) error {
		for i := range 400 {
			if err := tx.PutJob(ctx, testJob(strconv.Itoa(1000+i), "gpu01", 0, true)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "query.sock")
	ln, err := ListenLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- ServeLocal(sctx, ln, db, LocalOptions{IsAdmin: func(int) bool { return false }},
			testLogger(t).With("test", "fairness"))
	}()
	t.Cleanup(func() { stop(); <-served })

	attack, endAttack := context.WithCancel(ctx)
	var wg sync.WaitGroup
	loop := func(fn func(c net.Conn)) {
		wg.Go(func() {
			for attack.Err() == nil {
				c, err := net.Dial("unix", path)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				go func() { <-attack.Done(); c.Close() }()
				fn(c)
				c.Close()
			}
		})
	}
	waitClosed := func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }
	for range 150 { // half a request, then nothing
		loop(func(c net.Conn) {
			if _, err := c.Write([]byte("GET /v1/jobs HTTP/1.1\r\nHost: x\r\n")); err == nil {
				waitClosed(c)
			}
		})
	}
	for range 8 { // a big answer, never read
		loop(func(c net.Conn) {
			if _, err := c.Write([]byte("GET /v1/jobs?limit=10000 HTTP/1.1\r\nHost: x\r\n\r\n")); err == nil {
				<-attack.Done()
			}
		})
	}
	for range 4 { // bad requests, pipelined
		loop(func(c net.Conn) {
			go func() { _, _ = io.Copy(io.Discard, c) }()
			req := []byte(strings.Repeat("GET /v1/jobs?sort=bogus HTTP/1.1\r\nHost: x\r\n\r\n", 16))
			for attack.Err() == nil {
				if _, err := c.Write(req); err != nil {
					return
				}
			}
		})
	}
	t.Cleanup(func() { endAttack(); wg.Wait() })
	time.Sleep(time.Second) // the attack in full swing

	cmd := exec.Command(bin, "-test.run=^TestHelperQueryVictim$", "-test.v")
	cmd.Env = append(os.Environ(), victimSocketEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	endAttack()
	if err != nil {
		t.Errorf("the victim failed: %v\n%s", err, out)
	}
	answered := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "victim" {
			continue
		}
		ms, _ := strconv.Atoi(f[1])
		errText := strings.Join(f[2:], " ")
		t.Logf("the other user's query took %d ms (err %s)", ms, errText)
		switch {
		case errText != "<nil>":
			t.Errorf("the other user's query failed after %d ms: %s", ms, errText)
		case ms > 5000:
			t.Errorf("the other user's query took %d ms while one user attacks, want ≤ 2 s (fails past 5 s)", ms)
		default:
			answered++
		}
	}
	if answered != 5 {
		t.Errorf("%d of the other user's 5 queries answered in time", answered)
	}
}
