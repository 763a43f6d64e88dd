package collect

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// mungedOnce starts the host's munged at most once per test binary.
var mungedOnce struct {
	sync.Once
	err error
}

// requireMunged makes sure the munged at path answers. Where it does not,
// in CI (CI=true, root) it is started through the e2e harness
// (contrib/slurm/testcluster.sh munge), so the real-munge tests never skip
// there just because the e2e package had not started it yet; elsewhere
// the test is skipped.
func requireMunged(t *testing.T, path string) {
	t.Helper()
	answers := func() bool {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	if answers() {
		return
	}
	if os.Getenv("CI") != "true" || path != "/run/munge/munge.socket.2" {
		t.Skipf("munged not running at %s", path)
	}
	mungedOnce.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(self), "..", "contrib", "slurm", "testcluster.sh")
		out, err := exec.Command(script, "munge", t.TempDir()).CombinedOutput()
		if err != nil {
			mungedOnce.err = err
			t.Logf("testcluster.sh munge: %s", out)
		}
	})
	if mungedOnce.err != nil || !answers() {
		t.Fatalf("CI=true and munged does not answer at %s (testcluster.sh munge: %v)", path, mungedOnce.err)
	}
}
