package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrBackupExists: the backup's destination is already there; a backup
// never overwrites a file.
var ErrBackupExists = errors.New("backup destination exists")

// BackupInfo describes a database file checked by CheckFile.
type BackupInfo struct {
	Bytes   int64 // file size
	Version int   // schema version
	Jobs    int   // job profiles (rows of jobs)
	Sched   int   // scheduler records (rows of sched_jobs)
	Outbox  int   // profiles queued for the collector
}

// Backup writes a consistent copy of the database to dst while other
// connections and processes (the agent, serve, the hooks) keep writing:
// SQLite's VACUUM INTO reads one snapshot (a read transaction, so writers
// are not blocked in WAL mode) and writes a compacted copy. The copy is
// made under a temporary name in dst's directory, created exclusively (no
// link followed), with the database file's permission bits (at most
// 0640), synced, checked (CheckFile) and only then given its name, which
// must not exist (ErrBackupExists). A directory others may write (group or
// world write without being the caller's own group-private one) is
// refused: SQLite writes the copy by name.
func (db *DB) Backup(ctx context.Context, dst string) (BackupInfo, error) {
	info, err := db.backup(ctx, dst)
	if err != nil {
		return info, fmt.Errorf("backup to %s: %w", dst, err)
	}
	return info, nil
}

func (db *DB) backup(ctx context.Context, dst string) (BackupInfo, error) {
	abs, err := filepath.Abs(dst)
	if err != nil {
		return BackupInfo{}, err
	}
	dir := filepath.Dir(abs)
	if err := checkBackupDir(dir); err != nil {
		return BackupInfo{}, err
	}
	if _, err := os.Lstat(abs); err == nil {
		return BackupInfo{}, ErrBackupExists
	} else if !errors.Is(err, fs.ErrNotExist) {
		return BackupInfo{}, err
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(db.path); err == nil {
		mode = fi.Mode().Perm() & 0o640
	}
	tmp, err := exclusiveTemp(dir, filepath.Base(abs), mode)
	if err != nil {
		return BackupInfo{}, err
	}
	keep := false
	defer func() {
		if !keep {
			_ = RemoveFiles(tmp)
		}
	}()
	// VACUUM INTO needs an empty or absent file: the empty one just made.
	// It runs on a reader connection: a read transaction, never the write
	// lock.
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return BackupInfo{}, classify(err)
	}
	// query_only forbids VACUUM INTO; it is lifted on this connection for
	// the statement and set again before the connection goes back.
	_, err = conn.ExecContext(ctx, "PRAGMA query_only = 0")
	if err == nil {
		_, err = conn.ExecContext(ctx, "VACUUM INTO ?", tmp)
		if _, qerr := conn.ExecContext(context.Background(), "PRAGMA query_only = 1"); qerr != nil {
			// Not given back to the pool writable: dropped.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}
	conn.Close()
	if err != nil {
		return BackupInfo{}, fmt.Errorf("vacuum into: %w", classify(err))
	}
	if err := syncFile(tmp); err != nil {
		return BackupInfo{}, err
	}
	info, err := CheckFile(ctx, tmp)
	if err != nil {
		return info, fmt.Errorf("the copy does not check: %w", err)
	}
	// link, not rename: fails when the name appeared meanwhile.
	if err := os.Link(tmp, abs); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return info, ErrBackupExists
		}
		return info, err
	}
	_ = RemoveFiles(tmp)
	keep = true
	return info, syncDir(dir)
}

// checkBackupDir refuses a directory where another account could swap
// the copy's name for a link while SQLite writes it.
func checkBackupDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("%s is world-writable: choose a directory only you (and your group) can write", dir)
	}
	return nil
}

// exclusiveTemp creates an empty file beside base in dir, exclusively and
// following no link, and returns its path.
func exclusiveTemp(dir, base string, mode fs.FileMode) (string, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.partial-%d-%d", base, os.Getpid(), i))
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
		if errors.Is(err, unix.EEXIST) && i < 100 {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "create", Path: name, Err: err}
		}
		// The umask may have taken bits the source has.
		err = unix.Fchmod(fd, uint32(mode))
		unix.Close(fd)
		return name, err
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CheckFile opens the database file at path read-only (nothing written
// beside it: immutable) and checks it whole: SQLite's integrity_check, the
// foreign keys, and that it is a gpuprof database of a schema this
// gpuprof reads. It returns what the file holds.
func CheckFile(ctx context.Context, path string) (BackupInfo, error) {
	var info BackupInfo
	fi, err := os.Lstat(path)
	if err != nil {
		return info, err
	}
	if !fi.Mode().IsRegular() {
		return info, fmt.Errorf("%s is not a regular file", path)
	}
	info.Bytes = fi.Size()
	abs, err := filepath.Abs(path)
	if err != nil {
		return info, err
	}
	c, err := sql.Open("sqlite3", "file:"+escapePath(abs)+"?mode=ro&immutable=1")
	if err != nil {
		return info, err
	}
	defer c.Close()
	var h header
	if err := c.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)`).
		Scan(&h.appID, &h.version, &h.objects); err != nil {
		return info, classify(err)
	}
	info.Version = h.version
	switch {
	case h.appID != ApplicationID:
		return info, fmt.Errorf("%w (application_id %#x)", ErrForeign, h.appID)
	case h.version > SchemaVersion:
		return info, fmt.Errorf("%w: version %d, this gpuprof reads up to %d", ErrSchemaTooNew, h.version, SchemaVersion)
	}
	rows, err := c.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return info, classify(err)
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return info, classify(err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	rows.Close()
	if len(problems) > 0 {
		return info, fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems[:min(len(problems), 5)], "; "))
	}
	var fk int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&fk); err != nil {
		return info, classify(err)
	}
	if fk > 0 {
		return info, fmt.Errorf("%w: %d rows break a foreign key", ErrCorrupt, fk)
	}
	for _, q := range []struct {
		table string
		n     *int
	}{{"jobs", &info.Jobs}, {"sched_jobs", &info.Sched}, {"outbox", &info.Outbox}} {
		if err := c.QueryRowContext(ctx, "SELECT count(*) FROM "+q.table).Scan(q.n); err != nil {
			return info, classify(err)
		}
	}
	return info, nil
}
