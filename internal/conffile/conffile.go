// Package conffile reads root's own configuration files (gpuprof.toml,
// slurm.conf, gres.conf, an address map) with a bound: opened without
// blocking, used only when a regular file, and read up to a size limit.
// A FIFO, a device or a directory in place of one is refused at once,
// never waited on: a prolog reading gres.conf has two seconds in all.
//
// Links are followed: configuration files are the administrator's, often
// linked (configless Slurm's /run/slurm/conf, a config management
// checkout), in directories only root writes. Files in directories another
// account may write are package safefs's.
package conffile

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// MaxSize bounds a configuration file unless a caller names its own
// bound: far above any real slurm.conf or gres.conf.
const MaxSize = 16 << 20

// Errors, wrapped with the path.
var (
	// ErrNotRegular: a FIFO, device, socket or directory in place of the
	// file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the bound.
	ErrTooLarge = errors.New("file too large")
)

// Read reads the regular file at path, at most max bytes (MaxSize when max
// is not positive). A missing file's error satisfies errors.Is(err,
// fs.ErrNotExist).
func Read(path string, max int64) ([]byte, error) {
	if max <= 0 {
		max = MaxSize
	}
	// O_NONBLOCK: opening a FIFO for reading must not wait for a writer;
	// O_NOCTTY: a terminal does not become the caller's.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%v)", ErrNotRegular, fi.Mode().Type())}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)}
	}
	return b, nil
}

// Sum is the fingerprint of a configuration file's bytes: FNV-1a, 64 bits,
// 16 hex digits. The agent keeps its configuration's (config.LoadFile
// returns it) and takes a forwarded hook only when the hook read the same
// bytes (hooks.Forwarder); it tells an edit apart, not an adversary (only
// root writes the file).
func Sum(data []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(data) // a hash.Hash never fails
	return fmt.Sprintf("%016x", h.Sum64())
}
