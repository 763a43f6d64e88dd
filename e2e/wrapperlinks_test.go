package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// TestHookWrappersRefusePlantedLog: the wrappers run as root (prolog,
// epilog) and as the SlurmUser (jobcomp) and log to the packaged
// /var/log/gpuprof/hooks.log, a directory (root:gpuprof 2770) where the
// group's accounts may plant entries. A link (to a file, a directory, a
// missing path), a hard link or a FIFO planted as hooks.log is refused:
// the wrapper still runs gpuprof, exits 0 within its limit with nothing on
// stdout or stderr, and the link's target (standing in for
// /etc/ld.so.preload, /etc, /etc/nologin) stays untouched. The stand-in
// binary fails and writes to stderr, so that the wrapper has a complaint
// and a crash's text to log.
func TestHookWrappersRefusePlantedLog(t *testing.T) {
	// A hard link is not among them: dd cannot refuse one, and the kernel
	// refuses the group's accounts a hard link to a file of root's they
	// cannot write (fs.protected_hardlinks); root, which plants these
	// links here, is let through.
	plantings := []string{"file", "etc", "missing", "fifo"}
	slots := newTimedSlots()
	for _, w := range wrappers {
		for _, how := range plantings {
			t.Run(w.kind+"/"+how, func(t *testing.T) {
				t.Parallel()
				slots.hold(t)
				tg := safefstest.New(t)
				dir := t.TempDir()
				log := filepath.Join(dir, "hooks.log")
				switch how {
				case "file":
					safefstest.Plant(t, tg.File, log)
				case "etc":
					safefstest.Plant(t, tg.Dir, log)
				case "missing":
					safefstest.Plant(t, tg.Missing, log)
				case "fifo":
					if err := syscall.Mkfifo(log, 0o660); err != nil {
						t.Fatal(err)
					}
				}
				record := filepath.Join(dir, "ran")
				bin := filepath.Join(dir, "gpuprof")
				body := "#!/bin/sh\necho ran >" + record + "\necho 'fatal error: a crash' >&2\nexit 2\n"
				if err := os.WriteFile(bin, []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
				began := time.Now()
				out, err := runWrapper(t, w, dir, bin, []string{"GPUPROF_HOOK_LIMIT=2"})
				if err != nil || len(out) > 0 {
					t.Errorf("%s with a planted %s log: %v, output %q; want exit 0 and no output", w.file, how, err, out)
				}
				if took := time.Since(began); took > 4*time.Second {
					t.Errorf("%s took %s with a planted %s log", w.file, took.Round(time.Millisecond), how)
				}
				if _, err := os.Stat(record); err != nil {
					t.Errorf("%s did not run gpuprof: %v", w.file, err)
				}
				tg.Untouched(t)
			})
		}
	}
}

// TestHookWrappersLogStderr: what gpuprof writes to stderr (a crash the Go
// runtime reports there, before gpuprof has its own log) reaches the
// wrapper's log beside the wrapper's complaint, as before the log was
// opened without following links.
func TestHookWrappersLogStderr(t *testing.T) {
	for _, w := range wrappers {
		t.Run(w.kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := filepath.Join(dir, "gpuprof")
			body := "#!/bin/sh\necho 'fatal error: a crash' >&2\necho '  status 0' >&2\necho 'goroutine 1 [running]:' >&2\nexit 2\n"
			if err := os.WriteFile(bin, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := runWrapper(t, w, dir, bin, nil)
			if err != nil || len(out) > 0 {
				t.Errorf("%s: %v, output %q; want exit 0 and no output", w.file, err, out)
			}
			logged, _ := os.ReadFile(filepath.Join(dir, "hooks.log"))
			for _, want := range []string{"fatal error: a crash", "goroutine 1 [running]:", "exited with status 2"} {
				if !strings.Contains(string(logged), want) {
					t.Errorf("hooks.log lacks %q:\n%s", want, logged)
				}
			}
			fi, err := os.Stat(filepath.Join(dir, "hooks.log"))
			if err != nil || fi.Mode().Perm() != 0o660 {
				t.Errorf("hooks.log: %v, %v; want mode 0660 (umask 007)", fi, err)
			}
		})
	}
}
