package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion is the schema this gpuprof writes: the number of the last
// migration, kept in PRAGMA user_version.
const SchemaVersion = 11

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in order. They must be
// numbered 1..SchemaVersion without gaps ("0001_init.sql", ...).
func loadMigrations() ([]migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, f := range files {
		base := path.Base(f)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_what.sql", base)
		}
		b, err := migrationFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want number %d", m.name, i+1)
		}
	}
	if len(ms) != SchemaVersion {
		return nil, fmt.Errorf("%d migrations embedded, SchemaVersion is %d", len(ms), SchemaVersion)
	}
	return ms, nil
}

// header is what identifies a database as ours and its schema version.
type header struct {
	appID   int64
	version int
	objects int // entries in sqlite_master
	// schedIndexes counts the indexes of schedIndexes present: fewer than
	// all in a database of the current version means they are to be
	// re-created (see migrateTo).
	schedIndexes int
}

// current reports whether a database with this header needs nothing done to
// reach version target: its schema is there and, at SchemaVersion, so is
// every index of schedIndexes.
func (h header) current(target int) bool {
	return h.appID == ApplicationID && h.version >= target &&
		(target < SchemaVersion || h.schedIndexes == len(schedIndexes))
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readHeader(ctx context.Context, q queryRower) (header, error) {
	var h header
	// One statement, so one snapshot: read apart, another process's
	// migration could commit between the reads and show its schema without
	// its application id.
	err := q.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master), (`+
		schedIndexesPresentSQL+`)`).
		Scan(&h.appID, &h.version, &h.objects, &h.schedIndexes)
	if err != nil {
		return h, fmt.Errorf("read header: %w", classify(err))
	}
	return h, nil
}

// check refuses a database that is not ours or is too new. An empty
// database with no application id is ours to initialise.
func (h header) check() error {
	switch {
	case h.appID != ApplicationID && (h.objects > 0 || h.version != 0):
		return fmt.Errorf("%w: a SQLite database of another program (application_id %#x, %d schema objects), left untouched; check the db path",
			ErrForeign, h.appID, h.objects)
	case h.version > SchemaVersion:
		return fmt.Errorf("%w: version %d, this gpuprof knows up to %d", ErrSchemaTooNew, h.version, SchemaVersion)
	}
	return nil
}

// checkOpen is check for a writer that migrates up to target when
// upgrade is set; without it, a gpuprof database older than target is
// refused with ErrSchemaTooOld (an empty one is still initialised).
func (h header) checkOpen(target int, upgrade bool) error {
	if err := h.check(); err != nil {
		return err
	}
	if !upgrade && h.appID == ApplicationID && h.version < target {
		return fmt.Errorf("%w: version %d, want %d; not migrated here (the agent, serve, import or ingest migrates it)", ErrSchemaTooOld, h.version, target)
	}
	return nil
}

// migrateTo brings the schema to version target (SchemaVersion, except in
// tests that build the databases older releases wrote) in one immediate
// transaction, so concurrent openers of a new file serialise and the second
// finds the work done; at SchemaVersion, that includes re-creating any
// index of schedIndexes that is missing. A current schema with all its
// indexes needs no transaction at all.
// Without upgrade, only an empty database is initialised (checkOpen).
func migrateTo(ctx context.Context, w *sql.DB, busy time.Duration, target int, upgrade bool) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if target < 1 || target > len(ms) {
		return fmt.Errorf("migrate: no schema version %d", target)
	}
	// Most opens find the schema current: check without the write lock, so
	// opening does not wait for another process's long transaction. A new
	// file being migrated by another opener is not in WAL mode yet and
	// blocks even this read (for the writer's short busy slice): then wait
	// for the lock like a migration would, and check under it.
	h, err := readHeader(ctx, w)
	switch {
	case errors.Is(err, ErrLocked):
	case err != nil:
		return fmt.Errorf("migrate: %w", err)
	default:
		if err := h.checkOpen(target, upgrade); err != nil {
			return err
		}
		if h.current(target) {
			return nil
		}
	}
	tx, err := beginWrite(ctx, w, busy)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", classify(err))
	}
	defer tx.end()
	stx := tx.tx
	defer stx.Rollback() //nolint:errcheck // no-op after Commit
	// Again under the lock: another process may have migrated meanwhile.
	h, err = readHeader(ctx, stx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := h.checkOpen(target, upgrade); err != nil {
		return err
	}
	if h.current(target) {
		return nil
	}
	for _, m := range ms[min(h.version, target):target] {
		if _, err := stx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.name, classify(err))
		}
	}
	if target == SchemaVersion {
		// An index missing from a database of this version (dropped by
		// hand or another tool: BulkLoad drops them only inside its own
		// transaction, so no crash leaves them dropped) would leave every
		// read silently slow: made again here, where every writer passes.
		if err := createSchedIndexes(ctx, stx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	// Pragmas cannot take bound parameters; both values are constants.
	if _, err := stx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
		return fmt.Errorf("migrate: set application_id: %w", classify(err))
	}
	if _, err := stx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", target)); err != nil {
		return fmt.Errorf("migrate: set user_version: %w", classify(err))
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", classify(err))
	}
	return nil
}
