package safefs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/safefs"
	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// shared makes a directory as the packaged ones are: group-writable,
// set-group-ID (root:gpuprof 2770).
func shared(t *testing.T, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTrusted(t *testing.T) {
	me := uint32(os.Geteuid())
	other := me + 4242
	tests := []struct {
		name         string
		dirUID, mode uint32
		entryUID     uint32
		want         bool
	}{
		{"root's 0755", 0, 0o755, other, true},
		{"caller's 0700", me, 0o700, other, true},
		{"group-writable 2770", 0, 0o2770, 0, false},
		{"world-writable 0777", 0, 0o777, 0, false},
		{"another user's 0755", other, 0o755, other, false},
		{"sticky /tmp, root's link", 0, 0o1777, 0, true},
		{"sticky /tmp, another's link", 0, 0o1777, other, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.dirUID == other && me == other {
				t.Skip("uid clash")
			}
			if got := safefs.Trusted(tt.dirUID, tt.mode, tt.entryUID); got != tt.want {
				t.Errorf("Trusted(%d, %o, %d) = %v, want %v", tt.dirUID, tt.mode, tt.entryUID, got, tt.want)
			}
		})
	}
}

// TestOpenDirLinks: a link is followed where only root and the caller
// could have made it, refused (ErrLink) in a group-writable directory,
// whatever it points at.
func TestOpenDirLinks(t *testing.T) {
	base := t.TempDir() // root's (the caller's) 0700
	tg := safefstest.New(t)
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	safefstest.Plant(t, real, filepath.Join(base, "admin-link"))
	safefstest.Plant(t, "real/sub/..", filepath.Join(base, "relative-link"))
	st := shared(t, filepath.Join(base, "state"))
	safefstest.Plant(t, tg.Dir, filepath.Join(st, "spool"))
	safefstest.Plant(t, real, filepath.Join(st, "to-real"))
	tests := []struct {
		name, path, want string
		err              error
	}{
		{"plain", filepath.Join(real, "sub"), filepath.Join(real, "sub"), nil},
		{"dot-dot", filepath.Join(real, "sub", ".."), real, nil},
		{"admin's link", filepath.Join(base, "admin-link", "sub"), filepath.Join(real, "sub"), nil},
		{"relative link with dot-dot", filepath.Join(base, "relative-link"), real, nil},
		{"planted link", filepath.Join(st, "spool"), "", safefs.ErrLink},
		{"below a planted link", filepath.Join(st, "spool", "x"), "", safefs.ErrLink},
		{"planted link to a safe place", filepath.Join(st, "to-real"), "", safefs.ErrLink},
		{"missing", filepath.Join(base, "none"), "", fs.ErrNotExist},
		{"a file", tg.File, "", syscall.ENOTDIR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := safefs.OpenDir(tt.path)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("OpenDir(%s) = %v, want %v", tt.path, err, tt.err)
				}
				if d != nil {
					d.Close()
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenDir(%s): %v", tt.path, err)
			}
			defer d.Close()
			if d.Path() != tt.want {
				t.Errorf("Path() = %s, want %s", d.Path(), tt.want)
			}
		})
	}
	tg.Untouched(t)
}

// A link planted by another account in a sticky directory (/tmp) is not
// followed; root's own is.
func TestOpenDirStickyLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a link to another user")
	}
	base := t.TempDir()
	sticky := filepath.Join(base, "tmp")
	if err := os.Mkdir(sticky, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	real := t.TempDir()
	safefstest.Plant(t, real, filepath.Join(sticky, "roots"))
	safefstest.Plant(t, real, filepath.Join(sticky, "users"))
	if err := os.Lchown(filepath.Join(sticky, "users"), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if d, err := safefs.OpenDir(filepath.Join(sticky, "roots")); err != nil {
		t.Errorf("root's link in a sticky directory: %v", err)
	} else {
		d.Close()
	}
	if _, err := safefs.OpenDir(filepath.Join(sticky, "users")); !errors.Is(err, safefs.ErrLink) {
		t.Errorf("another user's link in a sticky directory: %v, want ErrLink", err)
	}
}

func TestMkdirAll(t *testing.T) {
	base := t.TempDir()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	d, err := safefs.MkdirAll(filepath.Join(base, "a", "b", "c"), 0o750)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, p := range []string{"a", "a/b", "a/b/c"} {
		fi, err := os.Stat(filepath.Join(base, p))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: %v, %v; want a directory of mode 0750", p, fi, err)
		}
	}
	// Below a planted link nothing is made.
	tg := safefstest.New(t)
	st := shared(t, filepath.Join(base, "state"))
	safefstest.Plant(t, tg.Dir, filepath.Join(st, "log"))
	safefstest.Plant(t, tg.Missing, filepath.Join(st, "gone"))
	for _, p := range []string{"log/sub", "gone/sub", "gone"} {
		if d, err := safefs.MkdirAll(filepath.Join(st, p), 0o750); !errors.Is(err, safefs.ErrLink) {
			t.Errorf("MkdirAll(%s) = %v, want ErrLink", p, err)
			if d != nil {
				d.Close()
			}
		}
	}
	tg.Untouched(t)
}

// TestFiles: what root does inside a shared directory, against what its
// group may plant there.
func TestFiles(t *testing.T) {
	tg := safefstest.New(t)
	st := shared(t, filepath.Join(t.TempDir(), "state"))
	safefstest.Plant(t, tg.File, filepath.Join(st, "file-link"))
	safefstest.Plant(t, tg.Missing, filepath.Join(st, "dangling"))
	safefstest.Plant(t, tg.Dir, filepath.Join(st, "dir-link"))
	if err := os.Link(tg.File, filepath.Join(st, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(st, "fifo"), 0o660); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st, "log"), []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st, "big"), make([]byte, 11), 0o640); err != nil {
		t.Fatal(err)
	}
	d, err := safefs.OpenDir(st)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, name := range []string{"file-link", "dangling", "dir-link", "hard", "fifo"} {
			if f, err := d.OpenAppend(name, 0o660); err == nil {
				f.Close()
				t.Errorf("OpenAppend(%s): nil error", name)
			}
			if f, err := d.Create(name, 0o660); !errors.Is(err, fs.ErrExist) {
				t.Errorf("Create(%s) = %v, want fs.ErrExist", name, err)
				if f != nil {
					f.Close()
				}
			}
			if _, err := d.ReadFile(name, 100); err == nil {
				t.Errorf("ReadFile(%s): nil error", name)
			}
			if sub, _, err := d.Sub(name, 0o700); err == nil {
				sub.Close()
				t.Errorf("Sub(%s): nil error", name)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("blocked on the FIFO")
	}
	if _, err := d.OpenAppend("hard", 0o660); !errors.Is(err, safefs.ErrHardLinked) {
		t.Errorf("OpenAppend(hard) = %v, want ErrHardLinked", err)
	}
	if _, err := d.ReadFile("fifo", 100); !errors.Is(err, safefs.ErrNotRegular) {
		t.Errorf("ReadFile(fifo) = %v, want ErrNotRegular", err)
	}
	if _, err := d.ReadFile("big", 10); !errors.Is(err, safefs.ErrTooLarge) {
		t.Errorf("ReadFile(big, 10) = %v, want ErrTooLarge", err)
	}
	if b, err := d.ReadFile("big", 11); err != nil || len(b) != 11 {
		t.Errorf("ReadFile(big, 11) = %d bytes, %v", len(b), err)
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := d.Create(name, 0o600); !errors.Is(err, safefs.ErrName) {
			t.Errorf("Create(%q) = %v, want ErrName", name, err)
		}
	}

	// A file of its own is appended to; a new one gets its mode whatever
	// the umask.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, name := range []string{"log", "new"} {
		f, err := d.OpenAppend(name, 0o660)
		if err != nil {
			t.Fatalf("OpenAppend(%s): %v", name, err)
		}
		if _, err := f.WriteString("line\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if b, _ := os.ReadFile(filepath.Join(st, "log")); string(b) != "old\nline\n" {
		t.Errorf("log = %q", b)
	}
	if fi, err := os.Stat(filepath.Join(st, "log")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("an existing file's mode changed: %v, %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(st, "new")); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("new file: %v, %v; want mode 0660", fi, err)
	}

	// Rename replaces a link at the new name, never writing through it;
	// Remove removes a link, not its target.
	f, tmp, err := d.CreateTemp(".tmp-", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("mine\n")
	f.Close()
	if !strings.HasPrefix(tmp, ".tmp-") {
		t.Errorf("CreateTemp name %q", tmp)
	}
	if err := d.Rename(tmp, d, "file-link"); err != nil {
		t.Fatal(err)
	}
	if fi, err := d.Lstat("file-link"); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("after Rename: %v, %v; want a regular file", fi, err)
	}
	if err := d.Remove("dir-link"); err != nil {
		t.Fatal(err)
	}
	if fi, err := d.Lstat("dangling"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(dangling) = %v, %v; want the link itself", fi, err)
	}
	tg.Untouched(t)
}

// Sub makes a subdirectory and says so, so that its caller re-modes only
// what it made.
func TestSub(t *testing.T) {
	d, err := safefs.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sub, created, err := d.Sub("bad", 0o700)
	if err != nil || !created {
		t.Fatalf("Sub(bad) = %v, created %v", err, created)
	}
	sub.Close()
	sub, created, err = d.Sub("bad", 0o700)
	if err != nil || created {
		t.Fatalf("second Sub(bad) = %v, created %v; want the existing one", err, created)
	}
	if want := filepath.Join(d.Path(), "bad"); sub.Path() != want {
		t.Errorf("Path() = %s, want %s", sub.Path(), want)
	}
	sub.Close()
	if _, _, err := d.Sub("none", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Sub(none, 0) = %v, want fs.ErrNotExist", err)
	}
}

// OpenFileDir follows a file's link only where root or the caller alone
// could have made it (an admin's, a user's in a home of their own).
func TestOpenFileDir(t *testing.T) {
	base := t.TempDir()
	tg := safefstest.New(t)
	data := filepath.Join(base, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	safefstest.Plant(t, "data/real.db", filepath.Join(base, "mine.db"))
	safefstest.Plant(t, filepath.Join(base, "mine.db"), filepath.Join(base, "twice.db"))
	st := shared(t, filepath.Join(base, "state"))
	safefstest.Plant(t, tg.File, filepath.Join(st, "gpuprof.db"))
	tests := []struct {
		name, path, wantDir, wantName string
		err                           error
	}{
		{"no link", filepath.Join(base, "plain.db"), base, "plain.db", nil},
		{"own link", filepath.Join(base, "mine.db"), data, "real.db", nil},
		{"link to a link", filepath.Join(base, "twice.db"), data, "real.db", nil},
		{"planted link", filepath.Join(st, "gpuprof.db"), "", "", safefs.ErrLink},
		{"made missing", filepath.Join(base, "new", "x.log"), filepath.Join(base, "new"), "x.log", nil},
		{"a directory's name", base + "/..", "", "", safefs.ErrName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, name, err := safefs.OpenFileDir(tt.path, 0o700)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("OpenFileDir(%s) = %v, want %v", tt.path, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenFileDir(%s): %v", tt.path, err)
			}
			defer d.Close()
			if d.Path() != tt.wantDir || name != tt.wantName {
				t.Errorf("OpenFileDir(%s) = %s, %s; want %s, %s", tt.path, d.Path(), name, tt.wantDir, tt.wantName)
			}
		})
	}
	tg.Untouched(t)
}

// MkdirPrivate refuses a path with any directory on the way that another
// account may change: a name in it could be swapped between two calls by
// path.
func TestMkdirPrivate(t *testing.T) {
	base := t.TempDir()
	st := shared(t, filepath.Join(base, "state"))
	if err := os.Mkdir(filepath.Join(st, "own"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		err        error
	}{
		{"private", filepath.Join(base, "run", "gpuprof"), nil},
		{"the shared directory", st, safefs.ErrShared},
		{"in the shared directory", filepath.Join(st, "own"), safefs.ErrShared},
		{"made in the shared directory", filepath.Join(st, "new"), safefs.ErrShared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := safefs.MkdirPrivate(tt.path, 0o755)
			if d != nil {
				d.Close()
			}
			if !errors.Is(err, tt.err) && (err != nil || tt.err != nil) {
				t.Errorf("MkdirPrivate(%s) = %v, want %v", tt.path, err, tt.err)
			}
			if _, serr := os.Stat(tt.path); tt.err != nil && tt.path == filepath.Join(st, "new") && serr == nil {
				t.Errorf("MkdirPrivate made %s before refusing it", tt.path)
			}
		})
	}
}

// TestOpenAppendSharedLog is the agent and a hook sharing one log file:
// the agent creates it, a hook appends a line, then the agent writes
// again. The creator must append too, not write at its own offset over
// the hook's line (TestSpoolUnwritable's missing hook lines).
func TestOpenAppendSharedLog(t *testing.T) {
	d, err := safefs.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	creator, err := d.OpenAppend("gpuprof.log", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer creator.Close()
	write := func(f *os.File, line string) {
		t.Helper()
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	write(creator, "agent started\n")
	hook, err := d.OpenAppend("gpuprof.log", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	write(hook, "hook=epilog done\n")
	hook.Close()
	write(creator, "agent flushed\n")
	b, err := d.ReadFile("gpuprof.log", 1<<10)
	if want := "agent started\nhook=epilog done\nagent flushed\n"; err != nil || string(b) != want {
		t.Errorf("log = %q, %v; want %q", b, err, want)
	}
}
