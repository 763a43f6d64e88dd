package metricsrv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
	"github.com/gpuprof/gpuprof/internal/safefs"
	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// TestListenRefusesSharedDir: the agent (root) binds its metrics socket
// and makes it mode 0666 by path. In a directory another account may
// write (the packaged /var/lib/gpuprof, root:gpuprof 2770) a link planted
// on the way, or in place of the socket between bind and chmod, would
// have root make a file of its choosing world-writable: such a directory
// is refused, and the link's target is untouched.
func TestListenRefusesSharedDir(t *testing.T) {
	tests := []struct {
		name string
		path func(shared string, tg *safefstest.Targets) string
	}{
		{"socket in the shared directory", func(shared string, _ *safefstest.Targets) string {
			return filepath.Join(shared, "metrics.sock")
		}},
		{"below a planted link", func(shared string, tg *safefstest.Targets) string {
			safefstest.Plant(t, tg.Dir, filepath.Join(shared, "run"))
			return filepath.Join(shared, "run", "metrics.sock")
		}},
		{"below a directory of the shared one", func(shared string, _ *safefstest.Targets) string {
			if err := os.Mkdir(filepath.Join(shared, "run"), 0o755); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(shared, "run", "metrics.sock")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := safefstest.New(t)
			path := tt.path(groupdirtest.Dir(t, "gpuprof"), tg)
			ln, err := Listen("unix:" + path)
			if err == nil {
				ln.Close()
				t.Fatalf("Listen(%s): nil error", path)
			}
			if !errors.Is(err, safefs.ErrShared) && !errors.Is(err, safefs.ErrLink) {
				t.Errorf("Listen(%s) = %v, want ErrShared or ErrLink", path, err)
			}
			tg.Untouched(t)
		})
	}
}
