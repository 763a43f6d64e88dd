// Package procread reads the head of small kernel files (/proc/PID/stat,
// /proc/stat, PSI files) that the agent and the simulated node read every
// second, with one open, one read and one close: os.ReadFile and os.Open
// add a stat, a poller registration and file-flag calls to each, which on a
// node of 16 GPU processes were most of the agent's system calls.
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
