// Package safefstest gives the tests of root's writes in shared
// directories what a planted link points at: a file, an empty file, a
// directory and a path that does not exist, outside the shared directory,
// standing in for /etc/ld.so.preload, /etc/security/opasswd, /etc and
// /etc/nologin. Targets.Untouched then says whether the code under test
// left them alone.
package safefstest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Targets are the three things a planted link may point at.
type Targets struct {
	File    string // a root-owned file with content, mode 0644
	Empty   string // an empty file, mode 0600 (a database opens it as empty)
	Dir     string // a directory with one file in it, mode 0755
	Missing string // a path that must not come to exist
	file    snapshot
	empty   snapshot
	dir     snapshot
	entries []string
}

type snapshot struct {
	mode     fs.FileMode
	mtime    time.Time
	uid, gid uint32
	content  string
}

// past is the modification time the targets are given, so that a write,
// even of nothing, shows.
var past = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// New makes the targets under a t.TempDir() of their own.
func New(t testing.TB) *Targets {
	t.Helper()
	base := t.TempDir()
	tg := &Targets{
		File:    filepath.Join(base, "ld.so.preload"),
		Empty:   filepath.Join(base, "opasswd"),
		Dir:     filepath.Join(base, "etc"),
		Missing: filepath.Join(base, "nologin"),
	}
	if err := os.Mkdir(tg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tg.File, filepath.Join(tg.Dir, "passwd")} {
		if err := os.WriteFile(f, []byte("root's own line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, 0o644); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(tg.Empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tg.File, tg.Empty, filepath.Join(tg.Dir, "passwd"), tg.Dir} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	tg.file = take(t, tg.File)
	tg.empty = take(t, tg.Empty)
	tg.dir = take(t, tg.Dir)
	tg.entries = list(t, tg.Dir)
	return tg
}

func take(t testing.TB, path string) snapshot {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{mode: fi.Mode(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.uid, s.gid = st.Uid, st.Gid
	}
	if fi.Mode().IsRegular() {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s.content = string(b)
	}
	return s
}

func list(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// Untouched fails t when a file's content, mode, owner or modification
// time changed, when the directory's mode, owner, time or entries changed,
// or when the missing path exists.
func (tg *Targets) Untouched(t testing.TB) {
	t.Helper()
	if got := take(t, tg.File); got != tg.file {
		t.Errorf("link target %s changed: %+v, was %+v", tg.File, got, tg.file)
	}
	if got := take(t, tg.Empty); got != tg.empty {
		t.Errorf("link target %s changed: %+v, was %+v", tg.Empty, got, tg.empty)
	}
	if got := take(t, tg.Dir); got != tg.dir {
		t.Errorf("link target %s changed: %+v, was %+v", tg.Dir, got, tg.dir)
	}
	if got := list(t, tg.Dir); !slices.Equal(got, tg.entries) {
		t.Errorf("link target %s holds %q, held %q", tg.Dir, got, tg.entries)
	}
	if _, err := os.Lstat(tg.Missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("link target %s came to exist (%v)", tg.Missing, err)
	}
}

// Plant makes link a symbolic link to target, as a member of the
// directory's group could.
func Plant(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Within runs fn and fails t when it has not returned after a while: a
// FIFO opened for writing blocks until someone reads it.
func Within(t testing.TB, what string, fn func()) {
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

// LogPlantings are the ways PlantLog plants a log file.
var LogPlantings = []string{"file", "missing", "etc", "hardlink", "fifo", "dir"}

// PlantLog puts what an account of the group could where the log file
// shared/log/gpuprof.log goes (how, one of LogPlantings): a link to each
// target, a hard link, a FIFO; "dir" replaces the log directory itself
// with a link.
func PlantLog(t testing.TB, tg *Targets, shared, how string) (logPath string) {
	t.Helper()
	logDir := filepath.Join(shared, "log")
	logPath = filepath.Join(logDir, "gpuprof.log")
	if how == "dir" {
		Plant(t, tg.Dir, logDir)
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
		Plant(t, map[string]string{"file": tg.File, "missing": tg.Missing, "etc": tg.Dir}[how], logPath)
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
