// Package safefs opens, creates, renames and removes files in directories
// that another account may write, without following anything that account
// could plant there.
//
// The packaged /var/lib/gpuprof, its spool/ and /var/log/gpuprof are
// root:gpuprof 2770: the gpuprof user (serve, import) and the SlurmUser
// (jobcomp) may rename, remove and create entries in them, and root (the
// agent, the prolog and epilog) writes there too. Were root to open
// "spool/bad/N.reason" by path, a group member could make any component a
// link to /etc and have root write, truncate or re-mode a file of its
// choosing. So every operation here is relative to an open directory
// (openat and friends), every name is one component opened with
// O_NOFOLLOW, files are created with O_EXCL, modes are set on the open
// file (fchmod), and an existing file is used only when it is a regular
// file with no other hard link (not a FIFO, which would block an open for
// writing, nor another name of a file elsewhere). A directory path is
// resolved one component at a time from "/": a symbolic link is followed
// only where no account but root and the caller may have planted it (see
// Trusted); elsewhere it is refused with ErrLink.
//
// It must not follow a link in a directory another account may write, nor
// change the mode of anything it did not create; it keeps no state beyond
// the *Dir it returns.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Errors, wrapped in *fs.PathError.
var (
	// ErrLink: a symbolic link in a directory another account may write.
	ErrLink = errors.New("symbolic link in a directory other accounts may write: not followed")
	// ErrNotRegular: the name is not a regular file (a FIFO, a device, a
	// directory, or a link: a file is opened without following one; see
	// OpenFileDir for following those only root or the caller made).
	ErrNotRegular = errors.New("not a regular file")
	// ErrHardLinked: the file has another name, which may be anywhere on
	// the file system; writing to it would write there.
	ErrHardLinked = errors.New("file has other hard links")
	// ErrTooLarge: a file read with a bound is larger.
	ErrTooLarge = errors.New("file too large")
	// ErrName: not one path component (empty, ".", "..", or with a '/').
	ErrName = errors.New("not a single file name")
	// ErrShared: MkdirPrivate found a directory on the way that another
	// account may change.
	ErrShared = errors.New("directory other accounts may write")
)

// pathFlag opens a directory on the way only to look up names in it: no
// read permission needed (a 0711 home), nothing readable through it.
const pathFlag = unix.O_PATH

// maxLinks bounds the symbolic links followed in one path, as the kernel
// does (ELOOP after 40).
const maxLinks = 40

// Dir is an open directory. Its methods act on names within it, one
// component each. It is not safe for concurrent use with Close.
type Dir struct {
	f    *os.File // O_RDONLY|O_DIRECTORY
	path string   // absolute, with no symbolic link in it
}

// Path is the directory's absolute path with every link resolved, for
// messages and for programs (SQLite) that open by name.
func (d *Dir) Path() string { return d.path }

// Close closes the directory.
func (d *Dir) Close() error { return d.f.Close() }

// Stat describes the directory itself.
func (d *Dir) Stat() (fs.FileInfo, error) { return d.f.Stat() }

// Sync flushes the directory's entries (a rename or a create) to disk.
func (d *Dir) Sync() error { return d.f.Sync() }

// Trusted reports whether only root and the caller may change the entries
// of a directory with this owner and mode: owned by one of them and not
// writable by group or others; or sticky (like /tmp), where only an
// entry's owner may rename or remove it, and the entry (owned by
// entryUID) is root's or the caller's. A link in a trusted directory is
// the administrator's (/var/run -> /run) and is followed.
func Trusted(dirUID uint32, dirMode uint32, entryUID uint32) bool {
	me := uint32(os.Geteuid())
	ours := func(uid uint32) bool { return uid == 0 || uid == me }
	if !ours(dirUID) {
		return false
	}
	if dirMode&0o022 == 0 {
		return true
	}
	return dirMode&unix.S_ISVTX != 0 && ours(entryUID)
}

// OpenDir opens the existing directory at path (relative to the working
// directory when not absolute).
func OpenDir(path string) (*Dir, error) {
	return walk(path, 0, false, false)
}

// MkdirAll opens the directory at path, first creating it and any missing
// parent with mode perm (less the umask, as os.MkdirAll does).
func MkdirAll(path string, perm fs.FileMode) (*Dir, error) {
	return walk(path, perm, true, false)
}

// MkdirPrivate is MkdirAll for a directory whose path must stay what it
// is: every directory from "/" to it, itself included, must be one no
// account but root and the caller may change (Trusted), else ErrShared.
// Names in it may then be used by path, as code that can only take a path
// must (bind(2) of a unix socket and the chmod after it).
func MkdirPrivate(path string, perm fs.FileMode) (*Dir, error) {
	return walk(path, perm, true, true)
}

// walk resolves path one component at a time from "/", each opened
// relative to its parent with O_NOFOLLOW. A component that is a link is
// followed only when its directory is Trusted; ".." goes back to the
// directory it came from. With create, a missing component is made.
//
// fds and names are the stack of the directories opened so far, which
// every case (".", "..", a directory, one to make, a link) changes: they
// stay here, with the deferred loop that closes them, in view. The checks
// that only read a directory (trustedChild, trustedForCaller,
// trustedLink) are apart; none of them opens or closes a descriptor.
func walk(path string, perm fs.FileMode, create, private bool) (*Dir, error) {
	fail := func(err error) (*Dir, error) {
		return nil, &fs.PathError{Op: "open directory", Path: path, Err: err}
	}
	if path == "" {
		return fail(ErrName)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fail(err)
	}
	rootFD, err := openat(unix.AT_FDCWD, "/", pathFlag|unix.O_DIRECTORY, 0)
	if err != nil {
		return fail(err)
	}
	// fds[i] is the directory named by names[:i]; fds[0] is "/".
	fds, names := []int{rootFD}, []string{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	rest := split(abs)
	links, made := 0, 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(fds) > 1 {
				unix.Close(fds[len(fds)-1])
				fds, names = fds[:len(fds)-1], names[:len(names)-1]
			}
			continue
		}
		cur := fds[len(fds)-1]
		fd, err := openat(cur, c, pathFlag|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		switch {
		case err == nil:
			fds, names = append(fds, fd), append(names, c)
			if private {
				if err := trustedChild(cur, fd); err != nil {
					return nil, &fs.PathError{Op: "open directory", Path: "/" + strings.Join(names, "/"), Err: err}
				}
			}
			continue
		case errors.Is(err, unix.ENOENT) && create && made < 100:
			made++ // bounds a race with someone removing what we make
			// MkdirPrivate makes nothing where it would be refused.
			if private {
				if err := trustedForCaller(cur); err != nil {
					return nil, &fs.PathError{Op: "mkdir", Path: "/" + strings.Join(append(names[:len(names):len(names)], c), "/"), Err: err}
				}
			}
			if err := mkdirat(cur, c, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
				return fail(err)
			}
			rest = append([]string{c}, rest...)
			continue
		case !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP):
			return fail(err)
		}
		// Not a directory: a link (followed when trusted) or something else.
		if err := trustedLink(cur, c); errors.Is(err, ErrLink) {
			return nil, &fs.PathError{Op: "open directory", Path: "/" + strings.Join(append(names[:len(names):len(names)], c), "/"), Err: ErrLink}
		} else if err != nil {
			return fail(err)
		}
		if links++; links > maxLinks {
			return fail(unix.ELOOP)
		}
		target, err := readlinkat(cur, c)
		if err != nil {
			return fail(err)
		}
		if strings.HasPrefix(target, "/") {
			for _, fd := range fds[1:] {
				unix.Close(fd)
			}
			fds, names = fds[:1], names[:0]
		}
		rest = append(split(target), rest...)
	}
	resolved := "/" + strings.Join(names, "/")
	if private { // the entries to be made in it are the caller's
		if err := trustedForCaller(fds[len(fds)-1]); err != nil {
			return nil, &fs.PathError{Op: "open directory", Path: resolved, Err: err}
		}
	}
	fd, err := openat(fds[len(fds)-1], ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fail(err)
	}
	return &Dir{f: os.NewFile(uintptr(fd), resolved), path: resolved}, nil
}

// trustedChild checks a directory child just opened in parent for
// MkdirPrivate: parent is Trusted for child's owner, else ErrShared.
func trustedChild(parent, child int) error {
	var dst, cst unix.Stat_t
	err := errors.Join(unix.Fstat(parent, &dst), unix.Fstat(child, &cst))
	if err == nil && !Trusted(dst.Uid, dst.Mode, cst.Uid) {
		err = ErrShared
	}
	return err
}

// trustedForCaller checks the directory fd for an entry the caller makes
// in it (MkdirPrivate): fd is Trusted for the effective user, else
// ErrShared.
func trustedForCaller(fd int) error {
	var st unix.Stat_t
	err := unix.Fstat(fd, &st)
	if err == nil && !Trusted(st.Uid, st.Mode, uint32(os.Geteuid())) {
		err = ErrShared
	}
	return err
}

// trustedLink checks the entry name of the directory dir, which is not a
// directory, for walk to follow: unix.ENOTDIR where it is not a link,
// ErrLink where dir is not Trusted for the link's owner (another account
// could have put it there), nil where it may be followed. It reads the
// entry without following it (AT_SYMLINK_NOFOLLOW).
func trustedLink(dir int, name string) error {
	var dst, lst unix.Stat_t
	if err := fstatat(dir, name, &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if lst.Mode&unix.S_IFMT != unix.S_IFLNK {
		return unix.ENOTDIR
	}
	if err := unix.Fstat(dir, &dst); err != nil {
		return err
	}
	if !Trusted(dst.Uid, dst.Mode, lst.Uid) {
		return ErrLink
	}
	return nil
}

// OpenFileDir opens the directory of the file at path (made with mode
// perm when missing and perm is not 0, as MkdirAll) and returns it with
// the file's name in it, following the file's name while it is a link that
// only root or the caller could have made (a link in a directory of the
// caller's own, such as ~/gpuprof.db -> data/gpuprof.db); a link where
// another account may write is ErrLink. The file itself is not opened:
// the caller opens the name in the directory, which never follows a link,
// so one planted since is refused. The caller closes the directory.
func OpenFileDir(path string, perm fs.FileMode) (*Dir, string, error) {
	var d *Dir
	var err error
	if perm != 0 {
		d, err = MkdirAll(filepath.Dir(path), perm)
	} else {
		d, err = OpenDir(filepath.Dir(path))
	}
	if err != nil {
		return nil, "", err
	}
	name := filepath.Base(path)
	for links := 0; ; links++ {
		if err := checkName(name); err != nil {
			d.Close()
			return nil, "", &fs.PathError{Op: "open", Path: path, Err: err}
		}
		var lst, dst unix.Stat_t
		if err := fstatat(d.fd(), name, &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil || lst.Mode&unix.S_IFMT != unix.S_IFLNK {
			return d, name, nil // missing or not a link: the caller's open decides
		}
		err := unix.Fstat(d.fd(), &dst)
		switch {
		case err != nil:
		case !Trusted(dst.Uid, dst.Mode, lst.Uid):
			err = ErrLink
		case links >= maxLinks:
			err = unix.ELOOP
		}
		var target string
		if err == nil {
			target, err = readlinkat(d.fd(), name)
		}
		if err != nil {
			d.Close()
			return nil, "", d.pathErr("open", name, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(d.path, target)
		}
		d.Close()
		if d, err = OpenDir(filepath.Dir(target)); err != nil {
			return nil, "", err
		}
		name = filepath.Base(target)
	}
}

func split(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return ErrName
	}
	return nil
}

func (d *Dir) fd() int { return int(d.f.Fd()) }

func (d *Dir) pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: filepath.Join(d.path, name), Err: err}
}

// Sub opens the subdirectory name, creating it with mode perm (less the
// umask) when missing and perm is not 0. created says whether this call
// made it: only then may the caller change its mode (on the open
// directory, with Chmod). A link is followed only where d is Trusted.
func (d *Dir) Sub(name string, perm fs.FileMode) (sub *Dir, created bool, err error) {
	if err := checkName(name); err != nil {
		return nil, false, d.pathErr("open directory", name, err)
	}
	if perm != 0 {
		err := mkdirat(d.fd(), name, uint32(perm.Perm()))
		switch {
		case err == nil:
			created = true
		case !errors.Is(err, unix.EEXIST):
			return nil, false, d.pathErr("mkdir", name, err)
		}
	}
	fd, err := openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err == nil {
		sub := &Dir{f: os.NewFile(uintptr(fd), filepath.Join(d.path, name)), path: filepath.Join(d.path, name)}
		if created { // someone may have swapped in a directory of theirs since
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != os.Geteuid() {
				created = false
			}
		}
		return sub, created, nil
	}
	if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		return nil, false, d.pathErr("open directory", name, err)
	}
	// A link, perhaps: the whole walk decides whether to follow it.
	sub, err = OpenDir(filepath.Join(d.path, name))
	return sub, false, err
}

// Chmod sets the directory's own mode (on the open directory, so nothing
// planted since is re-moded).
func (d *Dir) Chmod(mode fs.FileMode) error {
	return d.f.Chmod(mode)
}

// ReadDir lists the directory's entries, in directory order.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	fd, err := openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, d.pathErr("readdir", ".", err)
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.ReadDir(-1)
}

// Create makes a new file name with mode perm (whatever the umask),
// open for reading and writing. It fails with fs.ErrExist when anything,
// a link included, has that name.
func (d *Dir) Create(name string, perm fs.FileMode) (*os.File, error) {
	return d.create(name, perm, unix.O_RDWR)
}

// create makes a new file as Create does, opened with flags (the access
// mode and O_APPEND).
func (d *Dir) create(name string, perm fs.FileMode, flags int) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, d.pathErr("create", name, err)
	}
	fd, err := openat(d.fd(), name, flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, uint32(perm.Perm()))
	if err != nil {
		return nil, d.pathErr("create", name, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(d.path, name))
	if err := f.Chmod(perm); err != nil { // the umask may have narrowed it
		f.Close()
		unix.Unlinkat(d.fd(), name, 0)
		return nil, err
	}
	return f, nil
}

// CreateTemp makes a new file named prefix followed by a random number,
// as Create, and returns it with its name.
func (d *Dir) CreateTemp(prefix string, perm fs.FileMode) (*os.File, string, error) {
	for range 100 {
		name := prefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := d.Create(name, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", d.pathErr("create", prefix+"*", fs.ErrExist)
}

// OpenAppend opens name for appending, creating it with mode perm
// (whatever the umask) when missing. An existing name must be a regular
// file with no other hard link; a link, a FIFO or a device is refused
// without blocking. Whoever creates the file appends too: a log file is
// shared by several processes (the agent and every hook), and a writer at
// its own offset would overwrite the lines the others appended since.
func (d *Dir) OpenAppend(name string, perm fs.FileMode) (*os.File, error) {
	f, err := d.create(name, perm, unix.O_WRONLY|unix.O_APPEND)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return f, err
	}
	return d.openExisting(name, unix.O_WRONLY|unix.O_APPEND)
}

// Open opens the existing regular file name for reading, under the same
// conditions as OpenAppend.
func (d *Dir) Open(name string) (*os.File, error) {
	return d.openExisting(name, unix.O_RDONLY)
}

func (d *Dir) openExisting(name string, flags int) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, d.pathErr("open", name, err)
	}
	// O_NONBLOCK: opening a FIFO must not wait for the other end.
	fd, err := openat(d.fd(), name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENXIO) {
		err = ErrNotRegular // a link, or a FIFO with no reader
	}
	if err != nil {
		return nil, d.pathErr("open", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, d.pathErr("open", name, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = ErrNotRegular
	case st.Nlink != 1:
		err = ErrHardLinked
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, d.pathErr("open", name, err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// ReadFile reads the regular file name (see Open), refusing one larger
// than max bytes with ErrTooLarge.
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, d.pathErr("read", name, fmt.Errorf("%w: over %d bytes", ErrTooLarge, max))
	}
	return b, nil
}

// Lstat describes name itself, never what it links to.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, d.pathErr("lstat", name, err)
	}
	var st unix.Stat_t
	if err := fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, d.pathErr("lstat", name, err)
	}
	return statInfo{name: name, st: st}, nil
}

// Rename moves name to newName in to (which may be d). A link is moved as
// itself, and a link at newName is replaced, not followed.
func (d *Dir) Rename(name string, to *Dir, newName string) error {
	if err := errors.Join(checkName(name), checkName(newName)); err != nil {
		return d.pathErr("rename", name, ErrName)
	}
	if err := ignoringEINTR(func() error { return unix.Renameat(d.fd(), name, to.fd(), newName) }); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, name), New: filepath.Join(to.path, newName), Err: err}
	}
	return nil
}

// Remove removes the entry name (a link itself, never its target); not a
// directory.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return d.pathErr("remove", name, err)
	}
	if err := ignoringEINTR(func() error { return unix.Unlinkat(d.fd(), name, 0) }); err != nil {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// statInfo is an fs.FileInfo of a unix.Stat_t.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string { return s.name }
func (s statInfo) Size() int64  { return s.st.Size }
func (s statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if s.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Sec, s.st.Mtim.Nsec) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return &s.st }

// The system calls, retried on EINTR as package os does.

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func openat(dir int, name string, flags int, mode uint32) (int, error) {
	var fd int
	err := ignoringEINTR(func() error {
		var err error
		fd, err = unix.Openat(dir, name, flags|unix.O_CLOEXEC, mode)
		return err
	})
	return fd, err
}

func mkdirat(dir int, name string, mode uint32) error {
	return ignoringEINTR(func() error { return unix.Mkdirat(dir, name, mode) })
}

func fstatat(dir int, name string, st *unix.Stat_t, flags int) error {
	return ignoringEINTR(func() error { return unix.Fstatat(dir, name, st, flags) })
}

func readlinkat(dir int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	var n int
	err := ignoringEINTR(func() error {
		var err error
		n, err = unix.Readlinkat(dir, name, buf)
		return err
	})
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
