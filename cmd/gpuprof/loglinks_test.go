package main

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
	"time"

	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// The packaged /var/log/gpuprof and /var/lib/gpuprof/spool are
// root:gpuprof 2770: the gpuprof user and the SlurmUser may plant entries
// there, and root (the agent, the hooks) logs there. A planted link, hard
// link or FIFO where the log should be is refused: the lines go to the next
// destination, which says why, and the link's target (standing in for
// /etc/ld.so.preload, /etc, /etc/nologin) stays untouched. The tests run
// as root, whose planted links stand for the group's.

// within runs fn and fails t when it has not returned after a while: a
// FIFO opened for writing blocks until someone reads it.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still blocked after 10s", what)
	}
}

// plantLog puts what an account of the group could where the log file
// goes: a link to each target, a hard link, a FIFO; "dir" replaces the log
// directory itself with a link.
func plantLog(t *testing.T, tg *safefstest.Targets, shared, how string) (logPath string) {
	t.Helper()
	logDir := filepath.Join(shared, "log")
	logPath = filepath.Join(logDir, "gpuprof.log")
	if how == "dir" {
		safefstest.Plant(t, tg.Dir, logDir)
		return logPath
	}
	if err := os.Mkdir(logDir, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(logDir, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	switch how {
	case "file", "missing", "etc":
		safefstest.Plant(t, map[string]string{"file": tg.File, "missing": tg.Missing, "etc": tg.Dir}[how], logPath)
	case "hardlink":
		if err := os.Link(tg.File, logPath); err != nil {
			t.Skipf("cannot hard-link here: %v", err)
		}
	case "fifo":
		if err := syscall.Mkfifo(logPath, 0o660); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("plant %q?", how)
	}
	return logPath
}

var plantings = []string{"file", "missing", "etc", "hardlink", "fifo", "dir"}

// TestLoggerRefusesPlantedLog: the agent's log_file (newLogger).
func TestLoggerRefusesPlantedLog(t *testing.T) {
	for _, how := range plantings {
		t.Run(how, func(t *testing.T) {
			tg := safefstest.New(t)
			path := plantLog(t, tg, groupdirtest.Dir(t, "gpuprof"), how)
			var fallback bytes.Buffer
			within(t, "newLogger", func() {
				log, closeLog := newLogger(path, &fallback, slog.LevelInfo, "component", "agent")
				log.Info("agent marker")
				closeLog()
			})
			if s := fallback.String(); !strings.Contains(s, "log destination unavailable") || !strings.Contains(s, "agent marker") {
				t.Errorf("fallback got %q, want the warning and the marker", s)
			}
			tg.Untouched(t)
		})
	}
}

// TestHookLogRefusesPlantedLog: a hook's log_file, then its spool_dir's
// hooks.log, each planted.
func TestHookLogRefusesPlantedLog(t *testing.T) {
	noSyslog := func() (io.WriteCloser, error) { return nil, errors.New("no /dev/log") }
	for _, how := range plantings {
		t.Run(how, func(t *testing.T) {
			tg := safefstest.New(t)
			shared := groupdirtest.Dir(t, "gpuprof")
			dest := plantLog(t, tg, shared, how)
			// log_file planted: the line lands in the spool's hooks.log.
			spoolDir := filepath.Join(shared, "spool")
			var file *os.File
			within(t, "hookLog.open", func() {
				log, f, closeLog := hookLog{Dest: dest, SpoolDir: spoolDir, Level: slog.LevelInfo, Syslog: noSyslog}.open("hook", "prolog")
				file = f
				log.Info("hook marker")
				closeLog()
			})
			got, err := os.ReadFile(filepath.Join(spoolDir, hookLogName))
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
				if err := syscall.Mkfifo(filepath.Join(spool2, hookLogName), 0o660); err != nil {
					t.Fatal(err)
				}
			case "hardlink":
				if err := os.Link(tg.File, filepath.Join(spool2, hookLogName)); err != nil {
					t.Fatal(err)
				}
			default:
				safefstest.Plant(t, map[string]string{"file": tg.File, "missing": tg.Missing, "etc": tg.Dir}[how], filepath.Join(spool2, hookLogName))
			}
			within(t, "hookLog.open", func() {
				log, f, closeLog := hookLog{Dest: dest, SpoolDir: spool2, Level: slog.LevelInfo, Syslog: noSyslog}.open("hook", "epilog")
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
