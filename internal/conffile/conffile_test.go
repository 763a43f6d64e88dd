package conffile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "gres.conf")
	if err := os.WriteFile(regular, []byte("Name=gpu File=/dev/nvidia0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.conf")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.conf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		max        int64
		want       string
		err        error
	}{
		{"regular", regular, 0, "Name=gpu File=/dev/nvidia0\n", nil},
		{"link to a regular file", link, 0, "Name=gpu File=/dev/nvidia0\n", nil},
		{"FIFO", fifo, 0, "", ErrNotRegular},
		{"directory", dir, 0, "", ErrNotRegular},
		{"device", "/dev/null", 0, "", ErrNotRegular},
		{"too large", regular, 8, "", ErrTooLarge},
		{"missing", filepath.Join(dir, "none"), 0, "", fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var b []byte
			var err error
			go func() {
				b, err = Read(tt.path, tt.max)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("Read(%s) blocked", tt.path)
			}
			if string(b) != tt.want || (tt.err == nil) != (err == nil) || tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("Read = %q, %v; want %q, %v", b, err, tt.want, tt.err)
			}
			if err != nil && !strings.Contains(err.Error(), filepath.Base(tt.path)) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// TestSumIsFNV1a: Sum is FNV-1a of 64 bits in 16 hex digits, held to the
// published test vectors of the FNV reference (Fowler, Noll, Vo), which
// the thin hook and the agent must both compute alike.
func TestSumIsFNV1a(t *testing.T) {
	for in, want := range map[string]string{
		"":       "cbf29ce484222325",
		"a":      "af63dc4c8601ec8c",
		"foobar": "85944171f73967e8",
	} {
		if got := Sum([]byte(in)); got != want {
			t.Errorf("Sum(%q) = %s, want %s", in, got, want)
		}
	}
}
