package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildFaultyGpuprof builds gpuprof with the gpuprof_faults tag: its hooks
// fail on purpose in the way GPUPROF_FAULT names (cmd/gpuprof/
// hookfault_faults.go). A production build has no such switch.
func buildFaultyGpuprof(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gpuprof")
	cmd := exec.Command("go", "build", "-tags", "gpuprof_faults", "-o", bin, "./cmd/gpuprof")
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build gpuprof with -tags gpuprof_faults: %v\n%s", err, out)
	}
	return bin
}

// TestHookCrashes makes a real gpuprof fail inside each hook — a panic, a
// nil dereference, a panic on a goroutine of its own, a segfault in C, a
// SIGKILL — and checks what Slurm would see: gpuprof itself exits 0 where a
// recover can act (and 2 or 137 where none can), the contrib wrapper exits
// 0 every time with nothing on stdout/stderr, and the stack is in the log
// file (log_file for what gpuprof logs or its crash output, the wrapper's
// hooks.log for the status).
func TestHookCrashes(t *testing.T) {
	bin := buildFaultyGpuprof(t)
	faults := []struct {
		fault string
		// direct is gpuprof's own exit status; the wrapper's is always 0.
		direct int
		// inLog must all be in log_file after the run.
		inLog []string
		// wrapperLog, when set, must be in the wrapper's hooks.log.
		wrapperLog string
	}{
		{fault: "panic", direct: 0, inLog: []string{"level=ERROR", "hook panicked", "job=7", "injected fault: panic in a hook", "hookcmd.injectFault"}},
		{fault: "nil", direct: 0, inLog: []string{"level=ERROR", "hook panicked", "job=7", "nil pointer dereference", "hookcmd.injectFault"}},
		{fault: "goroutine", direct: 2, inLog: []string{"panic: injected fault: panic in a goroutine", "hookcmd.injectFault"},
			wrapperLog: "exited with status 2"},
		{fault: "segv", direct: 2, inLog: []string{"SIGSEGV", "signal arrived during cgo execution", "hookcmd.injectFault"},
			wrapperLog: "exited with status 2"},
		{fault: "kill", direct: 137, wrapperLog: "exited with status 137"},
	}
	for _, w := range wrappers {
		for _, f := range faults {
			t.Run(w.kind+"/"+f.fault, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				logFile := filepath.Join(dir, "log", "gpuprof.log")
				cfg := filepath.Join(dir, "gpuprof.toml")
				writeFile(t, cfg, `db = "`+filepath.Join(dir, "gpuprof.db")+`"
spool_dir = "`+filepath.Join(dir, "spool")+`"
socket = "`+filepath.Join(dir, "agent.sock")+`"
query_socket = "`+filepath.Join(dir, "run", "query.sock")+`"
log_file = "`+logFile+`"
[agent]
gpu = "sim"
[sim]
dir = "`+filepath.Join(dir, "sim")+`"
`)
				env := []string{w.jobVar + "=7", "SLURM_JOB_UID=1001", "SLURM_JOB_USER=alice", "SLURMD_NODENAME=n1",
					"SLURM_SCRIPT_CONTEXT=" + w.kind + "_slurmd", "GPUPROF_FAULT=" + f.fault}

				// gpuprof alone, as slurmd would run it without the wrapper.
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, w.kind, "--config", cfg)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				code := 0
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					code = ee.ExitCode()
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						code = 128 + int(ws.Signal()) // as a shell reports it
					}
				case err != nil:
					t.Fatalf("run gpuprof %s: %v", w.kind, err)
				}
				if code != f.direct {
					t.Errorf("gpuprof %s with fault %s: exit %d, want %d\n%s", w.kind, f.fault, code, f.direct, out)
				}
				if f.direct == 0 && len(out) > 0 {
					t.Errorf("gpuprof %s wrote %q to stdout/stderr, want nothing", w.kind, out)
				}
				logged, _ := os.ReadFile(logFile)
				for _, want := range f.inLog {
					if !strings.Contains(string(logged), want) {
						t.Errorf("log_file lacks %q:\n%s", want, logged)
					}
				}

				// The same under the contrib wrapper: always exit 0.
				wout, werr := runWrapper(t, w, dir, bin, append(env, "GPUPROF_CONFIG="+cfg))
				if werr != nil || len(wout) > 0 {
					t.Errorf("%s over gpuprof with fault %s: %v, output %q; want exit 0, no output", w.file, f.fault, werr, wout)
				}
				hooksLog, _ := os.ReadFile(filepath.Join(dir, "hooks.log"))
				if f.wrapperLog != "" && !strings.Contains(string(hooksLog), f.wrapperLog) {
					t.Errorf("wrapper's hooks.log lacks %q:\n%s", f.wrapperLog, hooksLog)
				}
				if f.wrapperLog == "" && strings.Contains(string(hooksLog), "level=ERROR") {
					t.Errorf("wrapper logged a failure for a hook that exited 0:\n%s", hooksLog)
				}
			})
		}
	}
}
