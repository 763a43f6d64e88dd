package safefs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestFrozenKilledHolder is docs/security.md's residual of the freeze: a
// root process killed while it holds the freeze leaves the directory 2750
// (its group may no longer create, rename or remove names) until someone
// gives the write back; the lock dies with the process, so root's next
// freeze runs at once, and leaves the directory as it found it, 2750.
func TestFrozenKilledHolder(t *testing.T) {
	if dir := os.Getenv("SAFEFS_FREEZE_HOLDER"); dir != "" {
		d, err := OpenDir(dir)
		if err != nil {
			os.Exit(3)
		}
		_ = d.Frozen(time.Second, func() error {
			os.Stdout.WriteString("frozen\n")
			time.Sleep(time.Hour)
			return nil
		})
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("the freeze is root's")
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFrozenKilledHolder$")
	cmd.Env = append(os.Environ(), "SAFEFS_FREEZE_HOLDER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "frozen\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the holder did not freeze: %q", line)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	mode := func() os.FileMode {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}
	if m := mode(); m.Perm() != 0o750 || m&os.ModeSetgid == 0 {
		t.Errorf("after the holder was killed: %v, want 2750 (the residual)", m)
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Now()
	if err := d.Frozen(time.Second, func() error { return nil }); err != nil {
		t.Fatalf("root's next freeze: %v", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("root's next freeze waited %v for a dead holder's lock", took)
	}
	if m := mode(); m.Perm() != 0o750 {
		t.Errorf("after root's next freeze: %v, want 2750 still", m)
	}
}
