package hooks

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
	"github.com/gpuprof/gpuprof/spool"
)

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
				log, file, closeLog = LogDest{Dest: dest, SpoolDir: spoolDir, Level: slog.LevelInfo, Syslog: tt.syslog(&sys)}.Open("hook", "prolog")
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
				"spool":  read(filepath.Join(spoolDir, LogFileName)),
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
					t.Errorf("spool lists %v (%v) beside %s, want nothing", entries, err, LogFileName)
				}
			}
		})
	}
}

// TestHookLogRefusesPlantedLog: a hook's log_file, then its spool_dir's
// hooks.log, each planted.
func TestHookLogRefusesPlantedLog(t *testing.T) {
	noSyslog := func() (io.WriteCloser, error) { return nil, errors.New("no /dev/log") }
	for _, how := range safefstest.LogPlantings {
		t.Run(how, func(t *testing.T) {
			tg := safefstest.New(t)
			shared := groupdirtest.Dir(t, "gpuprof")
			dest := safefstest.PlantLog(t, tg, shared, how)
			// log_file planted: the line lands in the spool's hooks.log.
			spoolDir := filepath.Join(shared, "spool")
			var file *os.File
			safefstest.Within(t, "LogDest.Open", func() {
				log, f, closeLog := LogDest{Dest: dest, SpoolDir: spoolDir, Level: slog.LevelInfo, Syslog: noSyslog}.Open("hook", "prolog")
				file = f
				log.Info("hook marker")
				closeLog()
			})
			got, err := os.ReadFile(filepath.Join(spoolDir, LogFileName))
			if err != nil || !strings.Contains(string(got), "hook marker") || !strings.Contains(string(got), "log destination unavailable") {
				t.Errorf("spool's hooks.log = %q, %v; want the warning and the marker", got, err)
			}
			if file == nil {
				t.Errorf("no file for the crash output")
			}

			// The spool's hooks.log planted too: nowhere, and nothing written.
			spool2 := filepath.Join(shared, "spool2")
			if err := os.Mkdir(spool2, 0o770); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(spool2, 0o770|os.ModeSetgid); err != nil { // as packaged, whatever the umask
				t.Fatal(err)
			}
			switch how {
			case "dir":
				if err := os.Remove(spool2); err != nil {
					t.Fatal(err)
				}
				safefstest.Plant(t, tg.Dir, spool2)
			case "fifo":
				if err := syscall.Mkfifo(filepath.Join(spool2, LogFileName), 0o660); err != nil {
					t.Fatal(err)
				}
			case "hardlink":
				if err := os.Link(tg.File, filepath.Join(spool2, LogFileName)); err != nil {
					t.Fatal(err)
				}
			default:
				safefstest.Plant(t, map[string]string{"file": tg.File, "missing": tg.Missing, "etc": tg.Dir}[how], filepath.Join(spool2, LogFileName))
			}
			safefstest.Within(t, "LogDest.Open", func() {
				log, f, closeLog := LogDest{Dest: dest, SpoolDir: spool2, Level: slog.LevelInfo, Syslog: noSyslog}.Open("hook", "epilog")
				file = f
				log.Info("hook marker")
				closeLog()
			})
			if file != nil {
				t.Errorf("crash output handed %s, want no file", file.Name())
			}
			tg.Untouched(t)
		})
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
