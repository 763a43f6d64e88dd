// Package groupdir holds the one rule for the mode of a file gpuprof
// creates where several service users write: the database with its WAL
// and shm files, the log file.
//
// The packaged /var/lib/gpuprof and /var/log/gpuprof are root:gpuprof with
// mode 2770: the set-group-ID bit gives every file created in them the
// group gpuprof, whose members (the gpuprof user that runs serve and
// import, the SlurmUser that runs jobcomp) write them beside root (the
// agent and the node hooks). A file created in such a directory is made
// group-writable; anywhere else it keeps its group-readable default, so a
// database in a directory of no shared group gives no group write access.
// SQLite gives a database's -wal and -shm files the database's own mode
// (and, when root creates them, its owner), so the rule for the database
// file is the rule for all three.
//
// It must not change the mode or group of anything that exists.
package groupdir

import (
	"io/fs"
	"os"
)

// Modes of a created file: Shared in a set-group-ID directory, Private
// elsewhere.
const (
	Shared  fs.FileMode = 0o660
	Private fs.FileMode = 0o640
)

// FileMode returns the mode for a file created in dir: Shared when dir is
// set-group-ID, else Private (also when dir cannot be read).
func FileMode(dir string) fs.FileMode {
	fi, err := os.Stat(dir)
	if err != nil {
		return Private
	}
	return ModeIn(fi)
}

// ModeIn is FileMode for a directory already open (safefs.Dir.Stat), so
// that the mode is decided by the directory the file goes into, not by
// whatever its path names by then.
func ModeIn(dir fs.FileInfo) fs.FileMode {
	if dir.Mode()&fs.ModeSetgid != 0 {
		return Shared
	}
	return Private
}
