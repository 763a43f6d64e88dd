package procread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
