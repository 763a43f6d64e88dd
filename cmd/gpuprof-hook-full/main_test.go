package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin/hookbintest"
	"github.com/gpuprof/gpuprof/hooks"
)

// TestRunArguments: gpuprof-hook-full treats every command line of
// hookbintest.ArgumentCases as the other hook binary does: the hook's name
// (or slurmd's SLURM_SCRIPT_CONTEXT without one) and --config, --db,
// --log-level; a bad flag is on stderr and exits 0, as gpuprof's hooks
// do; no hook name is a usage error.
func TestRunArguments(t *testing.T) {
	for _, tt := range hookbintest.ArgumentCases {
		t.Run(tt.Name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			p := hooks.Process{Getenv: func(k string) string {
				if k == "SLURM_SCRIPT_CONTEXT" {
					return tt.Context
				}
				return ""
			}, Exit: func(c int) { t.Fatalf("exit %d", c) }}
			code := run(context.Background(), tt.Args, p, &stdout, &stderr)
			if code != tt.WantCode || !strings.Contains(stderr.String(), tt.WantStderr) || !strings.Contains(stdout.String(), tt.WantStdout) {
				t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, stdout with %q, stderr with %q",
					tt.Args, code, stdout.String(), stderr.String(), tt.WantCode, tt.WantStdout, tt.WantStderr)
			}
		})
	}
}
