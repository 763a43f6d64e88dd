package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownCluster: every command taking --cluster refuses a cluster the
// database holds no job of, names the clusters it holds, and exits 2 (a
// usage error) instead of answering "No jobs recorded in this period.".
func TestUnknownCluster(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "gpuprof.db")
	// Slurm 22.05.8's own sacct output: jobs of cluster gpuproftest.
	if _, err := runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-own-P-epoch-steps.txt")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"profiles", "--since", "2026-01-01"},
		{"recommend", "--since", "2026-01-01"},
		{"whatif", "--since", "2026-01-01"},
		{"plan", "--since", "2026-01-01"},
		{"report", "--month", "2026-12", "--out", filepath.Join(dir, "r"), "--format", "json"},
		{"tui"},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, err := runCLI(t, append([]string{"--db", db}, append(args, "--cluster", "nosuch")...)...)
			if err == nil || exitCode(err) != exitUsage {
				t.Fatalf("exit %d, err %v, out %q; want a usage error", exitCode(err), err, out)
			}
			if !strings.Contains(err.Error(), "nosuch") || !strings.Contains(err.Error(), "gpuproftest") {
				t.Errorf("error %q: want the cluster asked and the one held", err)
			}
		})
	}
	// The cluster it holds is answered.
	if _, err := runCLI(t, "--db", db, "profiles", "--since", "2026-01-01", "--cluster", "gpuproftest"); err != nil {
		t.Errorf("--cluster gpuproftest: %v", err)
	}
}
