// Package procread reads the head of small kernel files (/proc/PID/stat,
// /proc/stat, PSI files) that the agent and the simulated node read every
// second, with one open, one read and one close: os.ReadFile and os.Open
// add a stat, a poller registration and file-flag calls to each, which on a
// node of 16 GPU processes were most of the agent's system calls.
//
// File keeps such a file open and reads it with pread, which a process's
// /proc entry answers afresh each time.
//
// It must not be used for files that may be longer than the buffer and
// must be read whole: it returns what one read gives.
package procread

import (
	"errors"
	"syscall"
)

// Head reads the first len(buf) bytes of the file at path into buf (one
// read: for /proc and sysfs files, up to a page, that is the file or its
// head) and returns them.
func Head(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for errors.Is(err, syscall.EINTR) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &pathError{path, err}
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, buf)
	for errors.Is(err, syscall.EINTR) {
		n, err = syscall.Read(fd, buf)
	}
	if err != nil {
		return nil, &pathError{path, err}
	}
	return buf[:max(n, 0)], nil
}

// pathError names the file, as os.PathError does, and unwraps to the errno
// (errors.Is(err, fs.ErrNotExist) holds for a missing file).
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return "read " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// procSuperMagic is the file system type of /proc (statfs(2)).
const procSuperMagic = 0x9fa0

// File is a file kept open and read again from its start with one pread
// each time: one system call a read instead of three.
//
// A /proc/PID file kept open refers to that process for good: after the
// process has been reaped, reads fail with ESRCH, even once its PID has
// been given to another process. A plain file kept open keeps its old
// contents when it is replaced or removed; InProcfs tells the two apart.
type File struct {
	fd     int
	path   string
	procfs bool
}

// Open opens path for repeated reads.
func Open(path string) (*File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for errors.Is(err, syscall.EINTR) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &pathError{path, err}
	}
	var st syscall.Statfs_t
	procfs := syscall.Fstatfs(fd, &st) == nil && st.Type == procSuperMagic
	return &File{fd: fd, path: path, procfs: procfs}, nil
}

// InProcfs reports whether the file lives in a proc file system, where
// reading it again gives the kernel's current answer.
func (f *File) InProcfs() bool { return f.procfs }

// Head reads the first len(buf) bytes of the file, as the package's Head
// does, from offset 0 of the open file.
func (f *File) Head(buf []byte) ([]byte, error) {
	n, err := syscall.Pread(f.fd, buf, 0)
	for errors.Is(err, syscall.EINTR) {
		n, err = syscall.Pread(f.fd, buf, 0)
	}
	if err != nil {
		return nil, &pathError{f.path, err}
	}
	return buf[:max(n, 0)], nil
}

// Close closes the file. It must not be used afterwards.
func (f *File) Close() error {
	if err := syscall.Close(f.fd); err != nil {
		return &pathError{f.path, err}
	}
	return nil
}
