package procread

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("some avg10=0.00 total=42\nfull total=7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf [16]byte
	got, err := Head(path, buf[:])
	if err != nil || string(got) != "some avg10=0.00 " {
		t.Errorf("Head of a longer file = %q, %v; want its first 16 bytes", got, err)
	}
	big := make([]byte, 4096)
	if got, err := Head(path, big); err != nil || !strings.HasSuffix(string(got), "full total=7\n") {
		t.Errorf("Head of a shorter file = %q, %v; want it whole", got, err)
	}
	if _, err := Head(filepath.Join(dir, "none"), big); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "none") {
		t.Errorf("missing file: %v; want ErrNotExist naming the path", err)
	}
	// A real kernel file, read as the agent reads it.
	if got, err := Head("/proc/self/stat", big); err == nil && !strings.Contains(string(got), ") ") {
		t.Errorf("/proc/self/stat = %q", got)
	}
}

// TestFileFollowsItsProcess: a kept /proc/PID/stat shows the process's
// state as it changes and fails with ESRCH once the process is reaped —
// what the simulated node's liveness check relies on.
func TestFileFollowsItsProcess(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	pid := cmd.Process.Pid
	f, err := Open(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	defer f.Close()
	if !f.InProcfs() {
		t.Errorf("/proc/%d/stat: InProcfs() = false", pid)
	}
	buf := make([]byte, 1024)
	state := func() (byte, error) {
		b, err := f.Head(buf)
		if err != nil {
			return 0, err
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			t.Fatalf("stat line %q", s)
		}
		return s[i+2], nil
	}
	if st, err := state(); err != nil || (st != 'S' && st != 'R') {
		t.Errorf("running sleep: state %q, %v", st, err)
	}
	cmd.Process.Kill()
	// Killed but not reaped: a zombie, read through the same descriptor.
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := state()
		if err != nil {
			t.Fatalf("zombie: %v", err)
		}
		if st == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %q 5 s after the kill; want Z", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Wait()
	if _, err := f.Head(buf); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("reaped process: %v; want ESRCH", err)
	}
}

func TestFilePlain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.InProcfs() {
		t.Error("a file in a temporary directory: InProcfs() = true")
	}
	buf := make([]byte, 8)
	for range 2 { // read again from the start
		if b, err := f.Head(buf); err != nil || string(b) != "one" {
			t.Errorf("Head = %q, %v", b, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	if _, err := Open(path + ".none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
