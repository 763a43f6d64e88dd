package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrInUse: a process holds the database open (the agent, serve, a
// hook); a restore under it would be overwritten by its next write or
// corrupt its view.
var ErrInUse = errors.New("database in use")

// Holders returns the ids of the processes, other than this one, that
// hold the database file at path (or its -wal or -shm) open, read from
// procfs (/proc/PID/fd). A process whose open files cannot be read (another
// account's, to a caller not root) is an error, not a guess that it holds
// nothing.
func Holders(procfs, path string) ([]int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{abs: true, abs + "-wal": true, abs + "-shm": true, abs + "-journal": true}
	if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		base := filepath.Join(r, filepath.Base(abs))
		names[base], names[base+"-wal"], names[base+"-shm"], names[base+"-journal"] = true, true, true, true
	}
	ents, err := os.ReadDir(procfs)
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var pids []int
	var unreadable int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join(procfs, e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone meanwhile
		}
		if err != nil {
			unreadable++
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && names[target] {
				pids = append(pids, pid)
				break
			}
		}
	}
	if unreadable > 0 {
		return pids, fmt.Errorf("the open files of %d processes cannot be read (run as root): cannot tell whether the database is in use", unreadable)
	}
	return pids, nil
}

// Restore replaces the database at path with the backup from (checked by
// CheckFile first), refusing while any process holds the database open
// (Holders, ErrInUse): stop the agent or serve first. The replaced
// database, with its -wal, is kept beside it as PATH.before-restore-UNIX;
// the restored file takes its owner, group and mode (else 0640). The new
// file is written under a temporary name, synced, then renamed into place.
// It returns the name the old database was kept under ("" when there was
// none).
func Restore(ctx context.Context, procfs, from, path string) (kept string, err error) {
	if _, err := CheckFile(ctx, from); err != nil {
		return "", fmt.Errorf("restore: backup %s: %w", from, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	pids, err := Holders(procfs, abs)
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	if len(pids) > 0 {
		return "", fmt.Errorf("restore: %w: %s is open in process %v (stop the agent or gpuprof serve first)", ErrInUse, abs, pids)
	}
	dir := filepath.Dir(abs)
	if err := checkBackupDir(dir); err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	mode, uid, gid := fs.FileMode(0o640), -1, -1
	old, err := os.Lstat(abs)
	switch {
	case err == nil && !old.Mode().IsRegular():
		return "", fmt.Errorf("restore: %s is not a regular file", abs)
	case err == nil:
		mode = old.Mode().Perm()
		if st, ok := old.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("restore: %w", err)
	}
	tmp, err := exclusiveTemp(dir, filepath.Base(abs), mode)
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp)
		}
	}()
	if err := copyInto(from, tmp); err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	if uid >= 0 && os.Geteuid() == 0 {
		if err := os.Lchown(tmp, uid, gid); err != nil {
			return "", fmt.Errorf("restore: %w", err)
		}
	}
	if old != nil {
		kept = fmt.Sprintf("%s.before-restore-%d", abs, time.Now().Unix())
		if err := os.Link(abs, kept); err != nil {
			return "", fmt.Errorf("restore: keep the old database: %w", err)
		}
		if err := os.Rename(abs+"-wal", kept+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("restore: keep the old database's WAL: %w", err)
		}
		if err := os.Remove(abs + "-shm"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, abs); err != nil {
		return kept, fmt.Errorf("restore: %w", err)
	}
	done = true
	return kept, syncDir(dir)
}

// copyInto copies the file from into the existing empty file to (opened
// with no link followed) and syncs it.
func copyInto(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
