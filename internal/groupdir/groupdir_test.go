package groupdir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/internal/groupdir"
	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
)

func TestFileMode(t *testing.T) {
	shared := groupdirtest.Dir(t, "shared")
	base := t.TempDir()
	plain := filepath.Join(base, "plain")
	if err := os.Mkdir(plain, 0o770); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		want      os.FileMode
	}{
		{"set-group-ID directory", shared, groupdir.Shared},
		{"plain directory", plain, groupdir.Private},
		{"missing directory", filepath.Join(base, "none"), groupdir.Private},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groupdir.FileMode(tt.dir); got != tt.want {
				t.Errorf("FileMode(%s) = %o, want %o", tt.dir, got, tt.want)
			}
		})
	}
}
