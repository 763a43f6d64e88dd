package sacct

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// The Slurm captures are slurmext's (testdata/README.md there): one home for
// what a real Slurm printed, read by every reader's tests.
const fixtures = "../testdata"

// checkRecord holds for every record the readers return.
func checkRecord(t *testing.T, r slurmext.JobRecord) {
	t.Helper()
	if err := slurmext.CheckRecord(r); err != nil {
		t.Fatal(err)
	}
}

// checkErrorMessage fails when an error message could carry raw input into
// a log.
func checkErrorMessage(t *testing.T, err error) {
	t.Helper()
	if err := slurmext.CheckMessage(err.Error()); err != nil {
		t.Fatal(err)
	}
}

func checkNotes(t *testing.T, notes []string) {
	t.Helper()
	for _, p := range notes {
		checkErrorMessage(t, &noteError{p})
	}
}

type noteError struct{ s string }

func (e *noteError) Error() string { return e.s }

func addFixtureSeeds(f *testing.F, dir string, add func(string)) {
	paths, _ := filepath.Glob(filepath.Join(fixtures, dir, "*"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 32<<10 {
			add(string(b))
		}
	}
}

func epochUTC(s int64) time.Time { return time.Unix(s, 0).UTC() }

func digits(s string) bool {
	_, ok := slurmext.ParseDigits(s, math.MaxUint64)
	return ok
}
