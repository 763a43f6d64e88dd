// Package groupdirtest makes the set-group-ID directories that tests of
// groupdir's rule need (the packaged /var/lib/gpuprof in miniature).
package groupdirtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns a new directory named name under t.TempDir() with mode 2770,
// skipping the test where the file system does not keep the bit.
func Dir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode()&os.ModeSetgid == 0 {
		t.Skip("this file system does not keep the set-group-ID bit on directories")
	}
	return dir
}
