// Package nodefaults holds process-level fault tests of gpuprof's node
// capture path: the real gpuprof binary run as agent, prolog, epilog and
// simulated CUDA program (`simgpu burn`) on a simulated GPU node, facing the
// faults a GPU node meets in production — the agent killed or absent, the
// database write-locked by another process, an unwritable disk, no NVML
// library, malformed hook environments and a burst of epilogs.
//
// The hooks run with the environment slurmd gives them (and nothing else),
// so no Slurm and no root are needed. Every test checks what ends up in the
// database and the log, not only that nothing crashed; hooks must also exit
// 0, within the deadline, and print nothing.
//
// It has no code of its own and must not be imported. Set GPUPROF_BIN to
// test a prebuilt binary; otherwise TestMain builds ./cmd/gpuprof once per
// run. It builds ./cmd/gpuprof-hook too, which some tests run the hooks
// with as well: its hooks must behave as gpuprof's.
package nodefaults

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // the locker helper's own SQLite connection
)

// The test binary doubles as the database-locking process of
// TestDatabaseLocked: started with lockerDBEnv set, it holds a write lock on
// that database for lockerForEnv, then exits.
const (
	lockerDBEnv  = "GPUPROF_NODEFAULTS_LOCK_DB"
	lockerForEnv = "GPUPROF_NODEFAULTS_LOCK_FOR"
	// lockerReady is the line the locker prints once it holds the lock.
	lockerReady = "locked"
)

// gpuprofBin is the binary under test and hookBin gpuprof-hook beside it
// (the thin hook, which forwards to the agent and hands the rest to
// gpuprof-hook-full: the hooks must record as gpuprof's do), set once by
// TestMain before any test runs and only read afterwards.
var gpuprofBin, hookBin string

func TestMain(m *testing.M) {
	if db := os.Getenv(lockerDBEnv); db != "" {
		os.Exit(runLocker(db, os.Getenv(lockerForEnv)))
	}
	bin, hook, cleanup, err := buildBinaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodefaults:", err)
		os.Exit(1)
	}
	gpuprofBin, hookBin = bin, hook
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// buildBinary returns $GPUPROF_BIN, or builds gpuprof from this tree into a
// temporary directory that cleanup removes.
// buildBinaries builds gpuprof (unless GPUPROF_BIN names one) and
// gpuprof-hook in a temporary directory; gpuprof-hook finds the gpuprof
// beside it (a link to GPUPROF_BIN), which its prolog starts as the agent.
func buildBinaries() (gpuprof, hook string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "nodefaults-bin-")
	if err != nil {
		return "", "", nil, fmt.Errorf("build gpuprof: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	gpuprof, hook = filepath.Join(dir, "gpuprof"), filepath.Join(dir, "gpuprof-hook")
	pkgs := []string{"github.com/gpuprof/gpuprof/cmd/gpuprof", "github.com/gpuprof/gpuprof/cmd/gpuprof-hook"}
	if p := os.Getenv("GPUPROF_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err == nil {
			err = os.Symlink(abs, gpuprof)
		}
		if fi, serr := os.Stat(abs); err != nil || serr != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			cleanup()
			return "", "", nil, fmt.Errorf("GPUPROF_BIN=%s is not an executable file (%v %v)", p, err, serr)
		}
		gpuprof, pkgs = abs, pkgs[1:]
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", "", nil, fmt.Errorf("build gpuprof: %w\n%s", err, out)
	}
	return gpuprof, hook, cleanup, nil
}

// runLocker holds SQLite's write lock (BEGIN IMMEDIATE) on db for the given
// duration from its own process and connection, as a backup tool or a
// stuck sqlite3 shell would, then releases it. It prints lockerReady once
// the lock is held.
func runLocker(db, holdFor string) int {
	hold, err := time.ParseDuration(holdFor)
	if err != nil {
		fmt.Fprintf(os.Stderr, "locker: %s=%q: %v\n", lockerForEnv, holdFor, err)
		return 2
	}
	ctx := context.Background()
	h, err := sql.Open("sqlite3", "file:"+db+"?_busy_timeout=10000")
	if err != nil {
		fmt.Fprintln(os.Stderr, "locker:", err)
		return 1
	}
	defer h.Close()
	conn, err := h.Conn(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "locker:", err)
		return 1
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		fmt.Fprintln(os.Stderr, "locker: begin:", err)
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, lockerReady)
	if err := w.Flush(); err != nil {
		return 1
	}
	time.Sleep(hold)
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		fmt.Fprintln(os.Stderr, "locker: rollback:", err)
		return 1
	}
	return 0
}

// startLocker starts the locker process on db and returns once it holds
// the write lock; wait waits for it to release the lock and exit.
func startLocker(t *testing.T, db string, hold time.Duration) (wait func()) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("locker: %v", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), lockerDBEnv+"="+db, lockerForEnv+"="+hold.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("locker: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("locker: %v", err)
	}
	done := make(chan error, 1)
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := sc.Scan() && sc.Text() == lockerReady
		ready <- ok
		for sc.Scan() { // drain until exit
		}
		done <- cmd.Wait()
	}()
	// Kill after a normal exit is a harmless ErrProcessDone.
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case ok := <-ready:
		if !ok {
			err := <-done
			t.Fatalf("locker did not take the lock: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("locker did not take the lock within 15s\n%s", stderr.String())
	}
	return func() {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("locker: %v\n%s", err, stderr.String())
			}
		case <-time.After(hold + 15*time.Second):
			t.Fatalf("locker still running %s after it should have released the lock", hold+15*time.Second)
		}
	}
}
