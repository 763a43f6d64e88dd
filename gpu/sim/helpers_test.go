package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
)

const gib = 1 << 30

// newTestNode creates a default node in a temporary directory and an empty
// fake procfs beside it.
func newTestNode(t *testing.T) (dir, procfs string, devs []gpu.Device) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "sim")
	procfs = filepath.Join(t.TempDir(), "proc")
	devs, err := Init(dir, DefaultSpec())
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if err := os.MkdirAll(procfs, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, procfs, devs
}

// fakeProc makes procfs/PID/stat say the process runs in state with the
// given start time. Its comm holds a space and parentheses, as real ones may.
func fakeProc(t *testing.T, procfs string, pid int, state byte, start uint64) {
	t.Helper()
	d := filepath.Join(procfs, strconv.Itoa(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (py (thon) x) %c 1 %d %d 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 %d 3133440 390 18446744073709551615 0 0 0\n",
		pid, state, pid, pid, start)
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeProc(t *testing.T, dir string, pf procFile) {
	t.Helper()
	if err := writeProcFile(dir, pf); err != nil {
		t.Fatalf("writeProcFile: %v", err)
	}
}

func writeRaw(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, procsDirName, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
