package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFrozen: root freezes a directory of its own that its group may
// write (no group write while fn runs, given back after), and refuses one
// it cannot freeze: another account's, one every account may write, one
// whose path another account may change.
func TestFrozen(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the freeze is root's")
	}
	base := t.TempDir()
	mk := func(path string, mode os.FileMode, uid int) string {
		t.Helper()
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, uid, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	shared := mk(filepath.Join(base, "shared"), 0o770|os.ModeSetgid, 0)
	d, err := OpenDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	var during os.FileMode
	if err := d.Frozen(time.Second, func() error {
		fi, err := os.Stat(shared)
		during = fi.Mode()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(shared)
	if during.Perm() != 0o750 || fi.Mode().Perm() != 0o770 || fi.Mode()&os.ModeSetgid == 0 {
		t.Errorf("mode while frozen %v, after %v; want 2750 then 2770", during, fi.Mode())
	}
	// A second holder of the lock (another root process) waits; past the
	// bound, nothing runs.
	d2, err := OpenDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	err = d.Frozen(time.Second, func() error {
		done := make(chan error, 1)
		go func() {
			// frozenMu is this process's: the other holder is d2's lock,
			// taken directly as another process would.
			done <- lockedBy(d2)
		}()
		if err := <-done; !errors.Is(err, ErrBusy) {
			t.Errorf("a second lock while frozen: %v, want ErrBusy", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()

	for _, tt := range []struct {
		name string
		path string
	}{
		{"another account's", mk(filepath.Join(base, "theirs"), 0o770, 1234)},
		{"every account's", mk(filepath.Join(base, "world"), 0o777, 0)},
		{"in a directory the group may write", mk(filepath.Join(shared, "inner"), 0o755, 0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := OpenDir(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ran := false
			err = d.Frozen(time.Second, func() error { ran = true; return nil })
			if !errors.Is(err, ErrShared) || ran {
				t.Errorf("Frozen: %v, ran %v; want ErrShared, not run", err, ran)
			}
		})
	}
}

// lockedBy tries d's lock once, as another root process's Frozen would
// after its wait: ErrBusy when held.
func lockedBy(d *Dir) error {
	err := d.lock(50 * time.Millisecond)
	if err == nil {
		d.unlock()
	}
	return err
}
