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
	"github.com/gpuprof/gpuprof/jobcomp"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
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
	panicking := func(v any) (hookFunc, jobCompFunc) {
		return func(context.Context, hooks.Deps) (hooks.Outcome, error) { panic(v) },
			func(context.Context, jobcomp.Deps, slurmext.JobRecord) (jobcomp.Outcome, error) { panic(v) }
	}
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
			p := hookProcess{
				getenv:      func(k string) string { return env[k] },
				exit:        ex.exit,
				syslog:      func() (io.WriteCloser, error) { return nil, errors.New("no syslog in this test") },
				crashOutput: func(f *os.File) { crashFile = f.Name() },
			}
			hook, record := panicking(tt.value)
			if tt.kind == "jobcomp" {
				runJobComp(context.Background(), g, p, record)
			} else {
				runHook(context.Background(), g, tt.kind, p, hook)
			}
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
	p := hookProcess{getenv: func(k string) string { return map[string]string{"SLURM_JOB_ID": "12"}[k] }, exit: ex.exit}
	runHook(context.Background(), g, "prolog", p, func(context.Context, hooks.Deps) (hooks.Outcome, error) {
		return hooks.ViaAgent, nil
	})
	if got := ex.got(); len(got) != 0 {
		t.Errorf("exit called with %v, want not at all", got)
	}
	data, _ := os.ReadFile(logPath)
	if !strings.Contains(string(data), "msg=done") || strings.Contains(string(data), "panicked") {
		t.Errorf("log:\n%s\nwant one done line and no panic", data)
	}
}

// TestHookLogFallbacks: a hook logs to log_file, else syslog; when neither
// can be opened it appends to spool_dir/hooks.log; when that fails too it
// logs nowhere. Never to stdout or stderr, which belong to Slurm.
func TestHookLogFallbacks(t *testing.T) {
	syslogUp := func(buf *bytes.Buffer) func() (io.WriteCloser, error) {
		return func() (io.WriteCloser, error) { return nopCloser{buf}, nil }
	}
	syslogDown := func(*bytes.Buffer) func() (io.WriteCloser, error) {
		return func() (io.WriteCloser, error) {
			return nil, errors.New("unix /dev/log: connect: no such file or directory")
		}
	}
	tests := []struct {
		name string
		// dest is log_file; "FILE" becomes a path under a missing directory,
		// "BLOCKED" a path under a regular file (cannot be created).
		dest      string
		spool     string // "OK", or "BLOCKED"
		syslog    func(*bytes.Buffer) func() (io.WriteCloser, error)
		wantIn    string // "file", "syslog", "spool" or "nowhere"
		wantWarns []string
	}{
		{name: "log_file", dest: "FILE", spool: "OK", syslog: syslogDown, wantIn: "file"},
		{name: "syslog", dest: "", spool: "OK", syslog: syslogUp, wantIn: "syslog"},
		{name: "syslog named", dest: "syslog", spool: "OK", syslog: syslogUp, wantIn: "syslog"},
		{name: "no syslog", dest: "", spool: "OK", syslog: syslogDown, wantIn: "spool",
			wantWarns: []string{"dest=syslog", "/dev/log"}},
		{name: "log_file unopenable", dest: "BLOCKED", spool: "OK", syslog: syslogUp, wantIn: "spool",
			wantWarns: []string{"create log directory"}},
		{name: "nothing writable", dest: "BLOCKED", spool: "BLOCKED", syslog: syslogDown, wantIn: "nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			blocker := filepath.Join(dir, "a-file")
			if err := os.WriteFile(blocker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			dest := tt.dest
			switch dest {
			case "FILE":
				dest = filepath.Join(dir, "log", "sub", "gpuprof.log")
			case "BLOCKED":
				dest = filepath.Join(blocker, "gpuprof.log")
			}
			spoolDir := filepath.Join(dir, "spool")
			if tt.spool == "BLOCKED" {
				spoolDir = filepath.Join(blocker, "spool")
			}
			var sys bytes.Buffer
			var log *slog.Logger
			var file *os.File
			stdout, stderr := captureStdio(t, func() {
				var closeLog func()
				log, file, closeLog = hookLog{Dest: dest, SpoolDir: spoolDir, Level: slog.LevelInfo, Syslog: tt.syslog(&sys)}.open("hook", "prolog")
				log.Info("marker line", "job", "5")
				closeLog()
			})
			if stdout != "" || stderr != "" {
				t.Errorf("hook wrote to stdout %q, stderr %q; want nothing", stdout, stderr)
			}
			read := func(path string) string { b, _ := os.ReadFile(path); return string(b) }
			got := map[string]string{
				"file":   read(dest),
				"syslog": sys.String(),
				"spool":  read(filepath.Join(spoolDir, hookLogName)),
			}
			for where, text := range got {
				has := strings.Contains(text, "msg=\"marker line\"")
				if has != (where == tt.wantIn) {
					t.Errorf("marker in %s: %v, want it only in %s\n%s: %q", where, has, tt.wantIn, where, text)
				}
			}
			if text := got[tt.wantIn]; tt.wantIn != "nowhere" {
				for _, w := range tt.wantWarns {
					if !strings.Contains(text, "log destination unavailable") || !strings.Contains(text, w) {
						t.Errorf("%s lacks the warning with %q:\n%s", tt.wantIn, w, text)
					}
				}
			}
			if wantFile := tt.wantIn == "file" || tt.wantIn == "spool"; (file != nil) != wantFile {
				t.Errorf("log file handed out for the crash output: %v, want %v", file != nil, wantFile)
			}
			if tt.wantIn == "spool" {
				fi, err := os.Stat(spoolDir)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("spool dir: %v %v, want created 0700 (root's)", fi, err)
				}
				// The agent's spool reader must not take the log for a record.
				if entries, err := (spool.Dir{Path: spoolDir}).List(); err != nil || len(entries) != 0 {
					t.Errorf("spool lists %v (%v) beside %s, want nothing", entries, err, hookLogName)
				}
			}
		})
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

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// captureStdio runs fn with os.Stdout and os.Stderr on pipes and returns
// what was written to each.
func captureStdio(t *testing.T, fn func()) (stdout, stderr string) {
	t.Helper()
	read := func(r *os.File, into *string, done chan<- struct{}) {
		b, _ := io.ReadAll(r)
		*into = string(b)
		close(done)
	}
	or, ow, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oDone, eDone := make(chan struct{}), make(chan struct{})
	go read(or, &stdout, oDone)
	go read(er, &stderr, eDone)
	saveOut, saveErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = ow, ew
	defer func() {
		os.Stdout, os.Stderr = saveOut, saveErr
		ow.Close()
		ew.Close()
		<-oDone
		<-eDone
	}()
	fn()
	return // the deferred restore fills stdout and stderr before the caller reads them
}

// TestEnvJobID: the job id a hook's guard and recovery log before the
// environment is parsed passes slurmext.ValidJobID, like every job id
// gpuprof reads.
func TestEnvJobID(t *testing.T) {
	for in, want := range map[string]string{
		"4711": "4711", "53_1": "53_1", "s5K1KKYAYG5D00": "s5K1KKYAYG5D00",
		"": "", "../1": "", "1;rm": "", "abc$(rm)": "", "1\nlevel=ERROR": "",
	} {
		if got := envJobID(in); got != want {
			t.Errorf("envJobID(%q) = %q, want %q", in, got, want)
		}
	}
}
