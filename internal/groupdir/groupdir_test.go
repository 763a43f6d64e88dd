package groupdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileMode(t *testing.T) {
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	plain := filepath.Join(base, "plain")
	for _, d := range []string{shared, plain} {
		if err := os.Mkdir(d, 0o770); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(shared, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(shared)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSetgid == 0 {
		t.Skip("this file system does not keep the set-group-ID bit on directories")
	}
	tests := []struct {
		name, dir string
		want      os.FileMode
	}{
		{"set-group-ID directory", shared, Shared},
		{"plain directory", plain, Private},
		{"missing directory", filepath.Join(base, "none"), Private},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FileMode(tt.dir); got != tt.want {
				t.Errorf("FileMode(%s) = %o, want %o", tt.dir, got, tt.want)
			}
		})
	}
}
