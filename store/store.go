// Package store keeps job profiles (profile.Job) in a SQLite database: the
// node-local database the agent and hooks write, and the central one the
// collector fills. The central one also keeps the scheduler's view of each
// job (slurmext.JobRecord from jobcomp and sacct, merged whatever the order
// of arrival) and joins both into JobViews; the node one also keeps the
// outbox of profiles waiting for the collector.
//
// It owns the schema (embedded, numbered migrations under migrations/), the
// connection settings (WAL, immediate write transactions, busy timeout) and
// the queries. It must not interpret profiles beyond deriving the summary
// columns from profile.GPU's own methods (nor scheduler records beyond the
// merge rules of PutSchedJob), and it must never modify a file it
// did not create as a gpuprof database: a foreign SQLite database, a corrupt
// file or one written by a newer gpuprof is refused untouched.
//
// It also owns the access rule "an admin reads every user's jobs, anyone
// else their own" (reader.go): the readers of job views and notices are
// reached only through a Reader made for one Caller, whom the collector,
// the agent's query socket and the commands name.
//
// Time is stored as whole unix seconds in UTC (see Normalize): a profile
// read back equals Normalize of what was written, not the value itself.
//
// Files: the database is created with mode 0640 (its WAL and shared-memory
// files inherit that mode from SQLite); its parent directory is created with
// 0755 when missing. WAL does not work on network filesystems: keep the file
// on local disk, one per host.
//
// Open follows no link another account could have planted (the packaged
// directory is root:gpuprof 2770, and root writes it), read-only or not:
// the directory is resolved and the file created or checked through
// package safefs, and every connection is refused unless SQLite opened
// that very file (SQLite resolves links in a path itself). Root opens the
// file, and every connection to it, with the directory frozen
// (safefs.Dir.Frozen: no group write while SQLite opens by name), so that
// no other account can swap a name between the check and SQLite's open;
// it refuses a directory it cannot freeze.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"

	"github.com/gpuprof/gpuprof/internal/groupdir"
	"github.com/gpuprof/gpuprof/internal/safefs"
)

// Errors. Callers test them with errors.Is; the store wraps them with
// context and, where SQLite said more, with SQLite's own error.
var (
	// ErrNotFound: no profile (scheduler record, job view, queued
	// profile) with that key.
	ErrNotFound = errors.New("job profile not found")
	// ErrFinished: the stored profile is finished and the one being written
	// is not; a late running snapshot must not undo a finished profile.
	ErrFinished = errors.New("job profile already finished")
	// ErrInvalid: the profile or scheduler record cannot be stored as given
	// (empty key field, unknown status, duplicate GPU UUID, non-finite
	// number).
	ErrInvalid = errors.New("invalid job profile")
	// ErrSchemaTooNew: the database was written by a newer gpuprof.
	ErrSchemaTooNew = errors.New("database schema is newer than this gpuprof")
	// ErrSchemaTooOld: a read-only open, or a writer that does not migrate
	// (Options.NoMigrate: the hooks and jobcomp), found a database that
	// needs migrating; the agent, serve, import or an admin's read-write
	// open migrates it.
	ErrSchemaTooOld = errors.New("database schema is older than this gpuprof")
	// ErrForeign: the file is a SQLite database of some other program.
	ErrForeign = errors.New("not a gpuprof database")
	// ErrEmpty: a read-only open found an empty file (or a SQLite
	// database with nothing in it): no gpuprof database yet. A writer
	// initialises such a file instead.
	ErrEmpty = errors.New("database file is empty: not a gpuprof database yet")
	// ErrCorrupt: the file is not a SQLite database or is damaged.
	ErrCorrupt = errors.New("database file is corrupt or not a database")
	// ErrLocked: another writer held the database past the busy timeout.
	// Nothing was written; callers may retry or fall back to the spool.
	ErrLocked = errors.New("database is locked")
	// ErrReadOnly: a write on a database opened with Options.ReadOnly.
	ErrReadOnly = errors.New("database opened read-only")
	// ErrFull: the disk (or the database's page limit, LimitPages) had
	// no room for the write (SQLITE_FULL). Nothing of the transaction was
	// written; callers keep what they tried to write and retry when space
	// returns.
	ErrFull = errors.New("database or disk is full")
	// ErrReplaced: a new connection found another file at the database's
	// name than the one Open checked (a link planted since); it was closed
	// before any statement ran on it.
	ErrReplaced = errors.New("database file replaced since it was opened")
)

// IsSchemaMismatch reports whether err says the database's schema is not
// this gpuprof's: older (ErrSchemaTooOld) or newer (ErrSchemaTooNew). A
// writer that does not migrate (the hooks, jobcomp) spools instead and
// says why.
func IsSchemaMismatch(err error) bool {
	return errors.Is(err, ErrSchemaTooOld) || errors.Is(err, ErrSchemaTooNew)
}

// ApplicationID marks a gpuprof database in the SQLite header
// (PRAGMA application_id): "gppf".
const ApplicationID = 0x67707066

// DefaultBusyTimeout is used when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// Options configure Open.
type Options struct {
	// BusyTimeout is how long a write transaction waits for another
	// connection's write lock (and a read for a WAL recovery) before failing
	// with ErrLocked; the wait ends early when the context is done. Zero
	// means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// ReadOnly opens the database with mode=ro: nothing is created or
	// migrated, writes fail with ErrReadOnly, and the file must exist with
	// the current schema.
	ReadOnly bool
	// NoMigrate opens for writing without migrating, for the Slurm hooks
	// and jobcomp: a migration (0006 rewrites every job_gpus row) is not
	// work for a hook's second or two. A database with an older schema is
	// refused with ErrSchemaTooOld and left untouched (the agent, serve,
	// import or ingest migrate it; the hooks spool meanwhile), a newer one
	// with ErrSchemaTooNew as always. A missing or empty file has no rows
	// to rewrite: it is created with the current schema, as by any writer.
	NoMigrate bool
	// SplitReadMin is the number of scheduler records from which a lean
	// whole-period read (EachView with ViewFilter.Lean) scans the table in
	// two halves on two read connections at once; 0 means
	// defaultSplitReadMin. Tests set 1 to exercise the split.
	SplitReadMin int
}

// defaultSplitReadMin: below this, one scan is fast enough that a second
// connection is not worth its start.
const defaultSplitReadMin = 100_000

// DB is an open database. It is safe for concurrent use. Writes go through
// one connection (SQLite allows one writer at a time anyway, so a pool would
// only make this process's writers wait on each other's locks); reads use a
// separate pool of query-only connections so they never take the write lock.
type DB struct {
	path     string
	w        *sql.DB // nil when read-only
	r        *sql.DB
	readOnly bool
	busy     time.Duration
	dir      *safefs.Dir // the database's directory, which connections open in
	splitMin int
}

// busySlice bounds how long SQLite's own busy handler waits for the write
// lock in one go. SQLite does not see the context while it waits, so
// beginWrite retries in slices of this length and checks the context
// between them, up to the whole busy timeout.
const busySlice = 100 * time.Millisecond

// Open opens (creating and migrating if needed) the database at path.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	db, err := open(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db.splitMin = opts.SplitReadMin
	return db, nil
}

func open(ctx context.Context, path string, opts Options) (*DB, error) {
	return openAt(ctx, path, opts, SchemaVersion)
}

// openAt is open migrating only up to schema version target (tests build
// older databases with it).
func openAt(ctx context.Context, path string, opts Options, target int) (*DB, error) {
	if path == "" {
		return nil, errors.New("empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	ms := max(busy.Milliseconds(), 1)
	uri := "file:" + escapePath(abs)

	if opts.ReadOnly {
		// No directory is made, and the name is followed only where a link
		// is root's or the caller's (safefs).
		dir, name, err := safefs.OpenFileDir(abs, 0)
		if err != nil {
			return nil, err
		}
		db, err := openReadOnly(ctx, dir, name, ms, busy)
		if err != nil {
			dir.Close()
			return nil, err
		}
		db.path = abs
		return db, nil
	}

	// The packaged directory is root:gpuprof 2770: the group's accounts
	// may plant links in it. The directory is opened with none followed
	// that they could have made, the file is created exclusively or taken
	// only as a regular file with no other name (safefs), and SQLite gets
	// the resolved path, opens it without creating it (mode=rw) and is
	// held to it (connector). Root does all of it with the directory
	// frozen (safefs.Dir.Frozen): no other account can swap a name while
	// SQLite opens it by name.
	dir, name, err := safefs.OpenFileDir(abs, 0o755)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir.Path(), name)
	uri = "file:" + escapePath(file)
	var id fileID
	var fresh bool
	err = dir.Frozen(busy, func() error {
		var err error
		id, fresh, err = createOrProbe(ctx, dir, name, uri, ms, !opts.NoMigrate)
		return err
	})
	if err != nil {
		dir.Close()
		return nil, err
	}

	setup := writerSetup
	if fresh {
		// A new database: freed pages can be given back to the filesystem
		// a few at a time (IncrementalVacuum) instead of by a VACUUM that
		// rewrites the file under the write lock. SQLite takes auto_vacuum
		// only before the file's first page is written (journal_mode=WAL
		// writes it); an older database keeps its mode until
		// ConvertIncremental.
		setup = "PRAGMA auto_vacuum = INCREMENTAL; " + setup
	}
	w := sql.OpenDB(newConnector(dir, name, id, busy, fmt.Sprintf(
		"%s?mode=rw&_synchronous=NORMAL&_busy_timeout=%d&_txlock=immediate&_foreign_keys=on",
		uri, max(min(busy, busySlice).Milliseconds(), 1)), setup))
	w.SetMaxOpenConns(1)
	// Keep the connection open between writes (no idle timeout): closing the
	// last one checkpoints and removes the WAL, which the next write then has
	// to recreate.
	w.SetConnMaxIdleTime(0)
	if err := migrateTo(ctx, w, busy, target, !opts.NoMigrate); err != nil {
		w.Close()
		dir.Close()
		return nil, err
	}
	r := sql.OpenDB(newConnector(dir, name, id, busy, fmt.Sprintf(
		"%s?mode=rw&_busy_timeout=%d&_foreign_keys=on&_query_only=1", uri, ms), ""))
	return &DB{path: abs, w: w, r: r, busy: busy, dir: dir}, nil
}

// writerSetup runs on every writer connection. journal_mode=WAL writes
// the file: set only once the connection is known to be on it.
const writerSetup = "PRAGMA journal_mode = WAL"

// openReadOnly opens name in dir read-only: its header is checked without
// SQLite first (a file refused gets no -wal or -shm beside it), all of it
// with the directory frozen for root (safefs.Dir.Frozen).
func openReadOnly(ctx context.Context, dir *safefs.Dir, name string, ms int64, busy time.Duration) (*DB, error) {
	file := filepath.Join(dir.Path(), name)
	uri := "file:" + escapePath(file)
	var id fileID
	err := dir.Frozen(busy, func() error {
		f, err := dir.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if id, err = idOf(f); err != nil {
			return err
		}
		empty, err := inspect(f)
		if err == nil && empty {
			err = emptyError()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r := sql.OpenDB(newConnector(dir, name, id, busy, fmt.Sprintf("%s?mode=ro&_busy_timeout=%d&_query_only=1", uri, ms), ""))
	st, err := readHeader(ctx, r)
	if err == nil {
		err = st.check()
	}
	switch {
	case err != nil:
	case st.appID != ApplicationID:
		err = emptyError() // check passed: nothing in it, no gpuprof schema
	case st.version < SchemaVersion:
		err = fmt.Errorf("%w: version %d, want %d (open it once with a writer: the agent or gpuprof ingest)", ErrSchemaTooOld, st.version, SchemaVersion)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return &DB{r: r, readOnly: true, dir: dir}, nil
}

// emptyError is a read-only open's answer for a file that holds no
// database yet.
func emptyError() error {
	return fmt.Errorf("%w (the agent, a hook or gpuprof ingest creates it on its first write; check the db path)", ErrEmpty)
}

// fileID is a file's device and inode: the file a database's
// connections must all be on.
type fileID struct {
	dev, ino uint64
}

func idOf(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.New("no inode number")
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// createOrProbe creates a missing database file name in dir (with
// groupdir's mode: 0660 in a set-group-ID directory, else 0640), or checks
// an existing one before anything opens it for writing: the writer's
// connection settings (journal_mode=WAL) would already change a foreign
// database's header. An existing name must be a regular file with no
// other hard link (safefs): in a shared directory anything else may be
// another account's way to have root write elsewhere. Without upgrade, an
// existing database of an older schema is refused here too, before a
// writer's connection could change its header. It returns the file's
// identity, which every connection is then held to, and whether the file
// is empty (a new database).
func createOrProbe(ctx context.Context, dir *safefs.Dir, name, uri string, ms int64, upgrade bool) (id fileID, empty bool, err error) {
	fi, err := dir.Stat()
	if err != nil {
		return fileID{}, false, err
	}
	// An empty file is a valid empty database; SQLite gives the WAL and
	// shm files the same mode.
	f, err := dir.Create(name, groupdir.ModeIn(fi))
	if err == nil {
		defer f.Close()
		id, err := idOf(f)
		return id, true, err
	}
	if !errors.Is(err, fs.ErrExist) {
		return fileID{}, false, err
	}
	f, err = dir.Open(name)
	if err != nil {
		return fileID{}, false, err
	}
	if id, err = idOf(f); err != nil {
		f.Close()
		return fileID{}, false, err
	}
	empty, err = inspect(f)
	f.Close()
	if err != nil || empty {
		return id, empty, err
	}
	// Called inside dir.Frozen: the probe's connection is opened directly,
	// not through a connector that would freeze again.
	c := newConnector(dir, name, id, 0, fmt.Sprintf("%s?mode=ro&_busy_timeout=%d", uri, ms), "")
	p := sql.OpenDB(frozenConnector{c})
	defer p.Close()
	st, err := readHeader(ctx, p)
	if err != nil {
		return id, false, err
	}
	return id, false, st.checkOpen(SchemaVersion, upgrade)
}

// connector makes the connections to one database file and refuses one
// on any other. SQLite opens its database by name and resolves the links
// in it itself, and creates -wal and -shm beside whatever the name leads
// to; so each connection is opened with the directory frozen (for root:
// no other account may change a name in it meanwhile), only when the name
// is still the regular, single-linked file Open checked (same device and
// inode) and -wal and -shm are absent or regular, single-linked files; and
// before any statement of its own runs, the connect hook checks the file
// SQLite reports and reads the schema, so that SQLite opens -wal and -shm
// while the directory is still frozen.
type connector struct {
	dir  *safefs.Dir
	name string
	id   fileID
	wait time.Duration // bound on the wait for the directory's lock
	file string
	dsn  string
	drv  *sqlite3.SQLiteDriver
}

// newConnector returns a connector to the file name in dir (whose identity
// is id) through dsn, running setup (when not empty) on each new
// connection once it is known to be on that file.
func newConnector(dir *safefs.Dir, name string, id fileID, wait time.Duration, dsn, setup string) *connector {
	file := filepath.Join(dir.Path(), name)
	return &connector{dir: dir, name: name, id: id, wait: wait, file: file, dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if got := c.GetFilename("main"); got != file {
			return fmt.Errorf("%w: SQLite opened %s, not %s", ErrReplaced, got, file)
		}
		if setup != "" {
			if _, err := c.Exec(setup, nil); err != nil {
				return err
			}
		}
		// A read opens -wal and -shm (in WAL mode) now, in the frozen
		// directory.
		_, err := c.Exec("SELECT count(*) FROM sqlite_master", nil)
		return err
	}}}
}

// Connect opens a connection, with the directory frozen, on the file Open
// checked only.
func (c *connector) Connect(context.Context) (driver.Conn, error) {
	var conn driver.Conn
	err := c.dir.Frozen(c.wait, func() error {
		var err error
		conn, err = c.connectFrozen()
		return err
	})
	return conn, err
}

// connectFrozen is Connect's work, inside the frozen directory.
func (c *connector) connectFrozen() (driver.Conn, error) {
	if err := c.checkNames(); err != nil {
		return nil, err
	}
	return c.drv.Open(c.dsn)
}

// checkNames checks that the database's name is the file Open checked and
// that its -wal and -shm are absent or regular files with one name.
func (c *connector) checkNames() error {
	fi, err := c.dir.Lstat(c.name)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReplaced, err)
	}
	st, ok := fi.Sys().(*unix.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is %v, not a regular file", ErrReplaced, c.file, fi.Mode().Type())
	case !ok:
		return fmt.Errorf("%w: %s: no inode number", ErrReplaced, c.file)
	case fileID{dev: uint64(st.Dev), ino: st.Ino} != c.id:
		return fmt.Errorf("%w: %s is another file than the one opened", ErrReplaced, c.file)
	case st.Nlink != 1:
		return fmt.Errorf("%w: %s has other hard links", ErrReplaced, c.file)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		fi, err := c.dir.Lstat(c.name + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !sideFileOK(fi) {
			return fmt.Errorf("%w: %s%s is not a regular file with one name", ErrReplaced, c.file, suffix)
		}
	}
	return nil
}

// sideFileOK says whether a -wal, -shm or -journal file that Lstat found
// may stand beside the database: a regular file with one name, or with
// none left. SQLite unlinks the WAL when its last connection closes (in
// this process or another), and a stat racing that unlink reports the
// file it looked up with no name: the file's absence, which checkNames
// accepts, not a link planted beside the database (two names or more).
func sideFileOK(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*unix.Stat_t)
	return ok && fi.Mode().IsRegular() && st.Nlink <= 1
}

func (c *connector) Driver() driver.Driver { return c.drv }

// frozenConnector is a connector used inside its directory's Frozen
// already (createOrProbe).
type frozenConnector struct{ c *connector }

func (f frozenConnector) Connect(context.Context) (driver.Conn, error) { return f.c.connectFrozen() }
func (f frozenConnector) Driver() driver.Driver                        { return f.c.drv }

// inspect checks an open file's SQLite header without SQLite, so a file
// that is refused gets no -wal or -shm file next to it either. The header
// is authoritative unless a WAL holds newer pages; whatever it misses
// then, the check inside the migration transaction catches before
// anything is written.
func inspect(f *os.File) (empty bool, err error) {
	// The 100-byte database header, then page 1's b-tree page header.
	b := make([]byte, 108)
	n, err := io.ReadFull(f, b)
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return true, nil // empty: a valid empty database
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return false, err
	case string(b[:min(n, 16)]) != "SQLite format 3\x00":
		return false, fmt.Errorf("%w: no SQLite header, so not a gpuprof database (left untouched; check the db path)", ErrCorrupt)
	case n < len(b):
		return false, fmt.Errorf("%w: truncated header (left untouched)", ErrCorrupt)
	}
	pageSize := int(binary.BigEndian.Uint16(b[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return false, fmt.Errorf("%w: page size %d", ErrCorrupt, pageSize)
	}
	h := header{
		version: int(int32(binary.BigEndian.Uint32(b[60:64]))),
		appID:   int64(int32(binary.BigEndian.Uint32(b[68:72]))),
	}
	switch b[100] {
	case 0x0d: // leaf table page: the cells are the schema entries
		h.objects = int(binary.BigEndian.Uint16(b[103:105]))
	case 0x05: // interior page: too many schema entries for one page
		h.objects = 1
	default:
		return false, fmt.Errorf("%w: page 1 type %#x", ErrCorrupt, b[100])
	}
	return false, h.check()
}

// escapePath makes a filesystem path safe inside a file: URI. The driver
// splits its own parameters at the first '?', and SQLite decodes %XX.
func escapePath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// Close closes the database.
func (db *DB) Close() error {
	var errs []error
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if db.dir != nil {
		errs = append(errs, db.dir.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", db.path, err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Tx is one transaction. Its methods are those of DB, run inside the
// transaction; it must not be used after the function given to WithTx
// returns. After a method fails, return its error from that function so the
// transaction rolls back: the method may have done part of its work.
type Tx struct {
	tx *sql.Tx
	// conn is the connection a write transaction runs on (nil in a read
	// one), for what must reach the driver itself: see insertFresh.
	conn *sql.Conn
}

// end releases a write transaction's connection to the writer pool, after
// its commit or rollback.
func (t *Tx) end() {
	if t.conn != nil {
		_ = t.conn.Close()
	}
}

// WithTx runs fn in one immediate (write-locking) transaction and commits
// it if fn returns nil; otherwise, or if fn panics, it rolls back. fn's
// error is returned unchanged. Failing to get the write lock within the busy
// timeout returns ErrLocked.
func (db *DB) WithTx(ctx context.Context, fn func(tx *Tx) error) error {
	if db.readOnly {
		return ErrReadOnly
	}
	return runTx(func() (*Tx, error) { return beginWrite(ctx, db.w, db.busy) }, fn)
}

// beginWrite starts an immediate transaction, waiting up to busy for the
// write lock while honouring ctx (see busySlice). It holds the writer's
// connection as a *sql.Conn beside the transaction (Tx.conn): call
// Tx.end after the commit or rollback.
func beginWrite(ctx context.Context, w *sql.DB, busy time.Duration) (*Tx, error) {
	deadline := time.Now().Add(busy)
	for {
		conn, err := w.Conn(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err == nil {
			return &Tx{tx: tx, conn: conn}, nil
		}
		_ = conn.Close()
		if !errors.Is(classify(err), ErrLocked) || !time.Now().Before(deadline) {
			return nil, err
		}
		// SQLite may report busy without waiting (it skips the handler
		// when waiting could deadlock); do not spin.
		t := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// read runs fn in a deferred (read) transaction on the reader pool, so the
// rows of one call come from one snapshot.
func (db *DB) read(ctx context.Context, fn func(tx *Tx) error) error {
	return runTx(func() (*Tx, error) {
		stx, err := db.r.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &Tx{tx: stx}, nil
	}, fn)
}

func runTx(begin func() (*Tx, error), fn func(tx *Tx) error) (err error) {
	tx, err := begin()
	if err != nil {
		return fmt.Errorf("begin transaction: %w", classify(err))
	}
	defer tx.end()
	stx := tx.tx
	done := false
	defer func() {
		if !done {
			// A panic in fn: release the connection (the writer pool has only
			// one) and let the panic continue.
			_ = stx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		done = true
		_ = stx.Rollback()
		return err
	}
	done = true
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", classify(err))
	}
	return nil
}

// classify maps SQLite's errors to the package's sentinels, keeping the
// original in the chain.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%w: %w", ErrLocked, err)
		case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		case sqlite3.ErrReadonly:
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		case sqlite3.ErrFull:
			return fmt.Errorf("%w: %w", ErrFull, err)
		}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "database is locked"), strings.Contains(msg, "database table is locked"):
		return fmt.Errorf("%w: %w", ErrLocked, err)
	case strings.Contains(msg, "file is not a database"), strings.Contains(msg, "disk image is malformed"):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	case strings.Contains(msg, "database or disk is full"):
		return fmt.Errorf("%w: %w", ErrFull, err)
	}
	return err
}

// RemoveFiles removes the database file at path and SQLite's files beside
// it (-wal, -shm, -journal); files that are not there are no error. It is
// for a database a command created and then stored nothing in: close it
// first.
func RemoveFiles(path string) error {
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
