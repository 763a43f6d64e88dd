package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gpuprof/gpuprof/hooks"
)

// exits records the codes a hook passed to its exit function.
type exits struct {
	mu    sync.Mutex
	codes []int
}

func (e *exits) exit(code int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.codes = append(e.codes, code)
}

func (e *exits) got() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.codes...)
}

// hookTestConfig writes a configuration whose paths are all under dir and
// whose log is dir/log/gpuprof.log (a directory that does not exist yet).
func hookTestConfig(t *testing.T, dir string) (cfgPath, logPath string) {
	t.Helper()
	logPath = filepath.Join(dir, "log", "gpuprof.log")
	cfgPath = filepath.Join(dir, "gpuprof.toml")
	cfg := `db = "` + filepath.Join(dir, "gpuprof.db") + `"
spool_dir = "` + filepath.Join(dir, "spool") + `"
socket = "` + filepath.Join(dir, "agent.sock") + `"
log_file = "` + logPath + `"
`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath, logPath
}

// TestHookPanicExitsZero: a panic in the work of prolog, epilog or jobcomp
// is logged at error level with the job id and its stack, and the hook
// exits 0 through its exit function — slurmd drains a node whose prolog or
// epilog fails.
func TestHookPanicExitsZero(t *testing.T) {
	tests := []struct {
		name      string
		kind      string // prolog, epilog or jobcomp
		value     any
		wantPanic string
	}{
		{name: "prolog string", kind: "prolog", value: "injected prolog panic", wantPanic: "injected prolog panic"},
		{name: "epilog error", kind: "epilog", value: errors.New("injected epilog error"), wantPanic: "injected epilog error"},
		{name: "jobcomp string", kind: "jobcomp", value: "injected jobcomp panic", wantPanic: "injected jobcomp panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfgPath, logPath := hookTestConfig(t, t.TempDir())
			g := &globalOptions{ConfigPath: cfgPath, LogLevel: "info"}
			env := map[string]string{"SLURM_JOB_ID": "4711", "JOBID": "4711", "SLURM_JOB_UID": "1001", "SLURMD_NODENAME": "n1"}
			var ex exits
			var crashFile string
			p := hooks.Process{
				Getenv:      func(k string) string { return env[k] },
				Exit:        ex.exit,
				Syslog:      func() (io.WriteCloser, error) { return nil, errors.New("no syslog in this test") },
				CrashOutput: func(f *os.File) { crashFile = f.Name() },
			}
			rt := hookRuntime(g, p)
			rt.Before = func() { panic(tt.value) }
			hooks.Run(context.Background(), hooks.Kind(tt.kind), rt)
			if got := ex.got(); len(got) != 1 || got[0] != 0 {
				t.Errorf("exit called with %v, want [0]", got)
			}
			if crashFile != logPath {
				t.Errorf("crash output %q, want the log file %q", crashFile, logPath)
			}
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatalf("log file: %v", err)
			}
			log := string(data)
			for _, want := range []string{"level=ERROR", "hook panicked", "hook=" + tt.kind, "job=4711", tt.wantPanic,
				"hookpanic_test.go", "goroutine "} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}

// TestHookWithoutPanicDoesNotExit: the recovery only acts on a panic; a
// hook that returns exits through main as before (exit 0 there).
func TestHookWithoutPanicDoesNotExit(t *testing.T) {
	cfgPath, logPath := hookTestConfig(t, t.TempDir())
	g := &globalOptions{ConfigPath: cfgPath, LogLevel: "info"}
	var ex exits
	p := hooks.Process{Getenv: func(k string) string { return map[string]string{"SLURM_JOB_ID": "12"}[k] }, Exit: ex.exit}
	runHook(context.Background(), g, hooks.KindProlog, p)
	if got := ex.got(); len(got) != 0 {
		t.Errorf("exit called with %v, want not at all", got)
	}
	data, _ := os.ReadFile(logPath)
	if !strings.Contains(string(data), "msg=done") || strings.Contains(string(data), "panicked") {
		t.Errorf("log:\n%s\nwant one done line and no panic", data)
	}
}

// TestLogFileDirectoryCreated: the agent (newLogger with a file) creates a
// missing log directory 0750, as on a node where no package or systemd
// unit made /var/log/gpuprof.
func TestLogFileDirectoryCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var", "log", "gpuprof")
	path := filepath.Join(dir, "gpuprof.log")
	var fallback bytes.Buffer
	log, closeLog := newLogger(path, &fallback, slog.LevelInfo, "component", "agent")
	log.Info("agent marker")
	closeLog()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("log directory not created: %v", err)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("log directory mode %v, want 0750", fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "agent marker") {
		t.Errorf("log file %q (%v), want the marker", data, err)
	}
	if fallback.Len() != 0 {
		t.Errorf("fallback got %q, want nothing", fallback.String())
	}
}
