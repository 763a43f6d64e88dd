package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Start-up budgets of the gpuprof binary (issue #41: a slurmd hook starts
// as fast as a small program). Go runs every linked package's initialisers
// before main, whatever the command, so what they allocate is paid by each
// prolog and epilog. Allocation, not time, is what is checked: it is the
// same on every run and machine of one Go version.
const (
	// ownInitBytes is the most one gpuprof package's initialisers may
	// allocate. A package-level regexp.MustCompile, template or large
	// map costs more: compile it on first use (sync.OnceValue).
	ownInitBytes = 4 << 10
	// allInitBytes is the most all initialisers together may allocate:
	// 866 KiB at commit e58f5d6 (Go 1.26), of which gonum/plot,
	// blackfriday (cobra's man pages) and Prometheus are 590 KiB. It
	// catches a new dependency that initialises eagerly.
	allInitBytes = 960 << 10
)

// initCost is one package's line of GODEBUG=inittrace=1.
type initCost struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace reads the runtime's init trace lines:
// "init PKG @T ms, C ms clock, B bytes, A allocs".
func parseInitTrace(t *testing.T, out []byte) []initCost {
	t.Helper()
	var cs []initCost
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("init trace line %q: %v %v", sc.Text(), err1, err2)
		}
		cs = append(cs, initCost{f[1], b, a})
	}
	return cs
}

// gpuprofBinary is the binary make test built (GPUPROF_BIN), else one
// built now: the test binary itself would count its test files' variables
// as main's.
func gpuprofBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("GPUPROF_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "gpuprof")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestStartupInitBudget: no gpuprof package initialises anything large at
// start-up, and all initialisers together stay within allInitBytes. Any
// command shows the same initialisers; --version runs none of its own.
func TestStartupInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cmd := exec.Command(gpuprofBinary(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gpuprof --version: %v\n%s", err, stderr.Bytes())
	}
	costs := parseInitTrace(t, stderr.Bytes())
	if len(costs) < 50 {
		t.Fatalf("%d init trace lines; the budget would check nothing:\n%s", len(costs), stderr.Bytes())
	}
	total := 0
	for _, c := range costs {
		total += c.bytes
		own := c.pkg == "main" || strings.HasPrefix(c.pkg, "github.com/gpuprof/gpuprof/")
		if own && c.bytes > ownInitBytes {
			t.Errorf("%s allocates %d bytes (%d allocations) at start-up, over %d: every hook pays for it; compile or build it on first use (sync.OnceValue)", c.pkg, c.bytes, c.allocs, ownInitBytes)
		}
	}
	if total > allInitBytes {
		t.Errorf("package initialisers allocate %d bytes in all, over %d: a dependency initialises eagerly, and every hook pays for it (GODEBUG=inittrace=1 gpuprof --version names it)", total, allInitBytes)
	}
}
