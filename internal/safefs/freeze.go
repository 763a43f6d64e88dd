package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBusy: Frozen waited its bound for the directory's lock (another root
// process opening a file there, or an account of the group holding the
// lock to stall root: either way nothing was opened).
var ErrBusy = errors.New("directory lock held past the wait")

// asRoot reports whether the caller is root: uid 0 in the initial user
// namespace. Uid 0 in another one (`unshare -Ur`) is an ordinary user's
// account to the files outside it, and may freeze nothing of theirs.
var asRoot = func() bool { return os.Geteuid() == 0 && InitialUserNS() }

// InitialUserNS reports whether this process runs in the initial user
// namespace (its /proc/self/uid_map maps every uid to itself); true when
// that cannot be read (no /proc: assume the strictest case).
func InitialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295"
}

// frozenMu keeps two goroutines of one process from freezing at once:
// flock(2) on one open directory does not exclude its own holder.
var frozenMu sync.Mutex

// Frozen runs fn while no account but root may create, rename or remove
// an entry of d, so that fn may hand names in d to code that opens by
// name and follows links (SQLite opens its database by path, and creates
// -wal and -shm beside whatever that path leads to).
//
// For root it holds d's lock (flock, waiting at most wait), takes the
// group's write permission off d (fchmod on the open directory, never by
// path), runs fn and gives it back. A directory root cannot freeze is
// refused with ErrShared before fn runs: one owned by another account (it
// could give the permission back), one writable by others, or one whose
// path another account could change (an ancestor not Trusted). A caller
// other than root runs fn at once: it writes only what its own account
// may, and the directory's owner may change it anyway.
//
// A root process killed inside fn leaves d without group write permission
// until an administrator (or the package's postinst) gives it back.
func (d *Dir) Frozen(wait time.Duration, fn func() error) error {
	if !asRoot() {
		return fn()
	}
	if err := d.rootOnlyPath(); err != nil {
		return err
	}
	frozenMu.Lock()
	defer frozenMu.Unlock()
	if err := d.lock(wait); err != nil {
		return err
	}
	defer d.unlock()
	var st unix.Stat_t
	if err := unix.Fstat(d.fd(), &st); err != nil {
		return d.pathErr("stat", ".", err)
	}
	if err := freezable(st); err != nil {
		return d.pathErr("freeze", ".", err)
	}
	mode := st.Mode & 0o7777
	if mode&0o020 == 0 {
		return fn() // root's alone already
	}
	if err := ignoringEINTR(func() error { return unix.Fchmod(d.fd(), mode&^0o020) }); err != nil {
		return d.pathErr("freeze", ".", err)
	}
	defer ignoringEINTR(func() error { return unix.Fchmod(d.fd(), mode) })
	return fn()
}

// freezable says why root cannot keep other accounts from changing a
// directory with this status by taking the group's write permission off.
func freezable(st unix.Stat_t) error {
	switch {
	case st.Uid != 0:
		return fmt.Errorf("%w: owned by uid %d, who may give the permission back", ErrShared, st.Uid)
	case st.Mode&0o002 != 0:
		return fmt.Errorf("%w: writable by every account (mode %#o)", ErrShared, st.Mode&0o7777)
	}
	return nil
}

// rootOnlyPath checks that no account but root may change d's path: every
// directory above d Trusted for the entry below it.
func (d *Dir) rootOnlyPath() error {
	child := d.path
	for child != "/" {
		parent := filepath.Dir(child)
		var pst, cst unix.Stat_t
		if err := unix.Lstat(parent, &pst); err != nil {
			return &fs.PathError{Op: "lstat", Path: parent, Err: err}
		}
		if err := unix.Lstat(child, &cst); err != nil {
			return &fs.PathError{Op: "lstat", Path: child, Err: err}
		}
		if !Trusted(pst.Uid, pst.Mode, cst.Uid) {
			return &fs.PathError{Op: "freeze", Path: parent, Err: fmt.Errorf("%w: another account may rename %s", ErrShared, filepath.Base(child))}
		}
		child = parent
	}
	return nil
}

// lock takes d's lock (flock), waiting at most wait.
func (d *Dir) lock(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := ignoringEINTR(func() error { return unix.Flock(d.fd(), unix.LOCK_EX|unix.LOCK_NB) })
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return d.pathErr("lock", ".", err)
		}
		if !time.Now().Before(deadline) {
			return d.pathErr("lock", ".", fmt.Errorf("%w (%v)", ErrBusy, wait))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (d *Dir) unlock() { _ = unix.Flock(d.fd(), unix.LOCK_UN) }
