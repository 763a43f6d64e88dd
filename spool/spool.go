// Package spool is a durable local directory of records (JSON documents)
// that could not be written to the database in time, for example while
// another process held the SQLite write lock. A later pass lists them,
// writes them to the database and removes them.
//
// A record is either fully visible under its final name or not at all: Put
// writes a hidden temporary file, syncs it, renames it into place and syncs
// the directory. Records are plain files named
// "<unixnano>-<pid>-<random>.<kind>.json", so they sort oldest first and
// humans can read them. The package knows nothing of what a record means;
// it must not import the store, and it keeps no state outside Dir.Path.
//
// The packaged spool is root:gpuprof 2770, written by root (the agent, the
// hooks), the SlurmUser (jobcomp) and the gpuprof user (serve): any of them
// may plant links in it. So every file is created, read, renamed and
// removed relative to the open directory, with no link followed and no
// mode changed by path (package safefs).
package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/groupdir"
	"github.com/gpuprof/gpuprof/internal/safefs"
)

// Errors.
var (
	// ErrBadKind: a kind must be non-empty and made of a-z, 0-9, '_' or '-',
	// so it survives in a file name and parses back.
	ErrBadKind = errors.New("invalid spool record kind")
	// ErrBadName: the name is not one of this spool's record names.
	ErrBadName = errors.New("invalid spool record name")
)

const (
	tmpPrefix = ".tmp-" // ignored by List; a crash may leave such files behind
	ext       = ".json"
	// BadDir is the subdirectory of Path holding quarantined records.
	BadDir = "bad"
	// MaxRecordSize bounds a record: Put refuses a larger one and List
	// reads no more of a file (a profile of 8 GPUs with full series is
	// about 1 MiB).
	MaxRecordSize = 64 << 20
)

// Dir is a spool directory. The zero value is not usable: set Path.
type Dir struct {
	Path string
}

// Entry is one record.
type Entry struct {
	Name string // file name within Path: pass it to Remove or Quarantine
	Kind string
	Time time.Time // when Put wrote it (from the name)
	Data []byte    // the JSON document; nil when Err is set
	// Err is set when the file could not be read; Quarantine it rather
	// than retrying forever.
	Err error
}

// Put writes v as JSON as a new record of the given kind and returns its
// name. When it returns nil the record is on disk (file and directory
// entry synced); when it returns an error no record is visible. It creates
// Path (mode 0700) if missing; records are 0600: they may hold user names.
func (d Dir) Put(kind string, v any) (string, error) {
	name, err := d.put(kind, v)
	if err != nil {
		return "", fmt.Errorf("spool put %s in %s: %w", kind, d.Path, err)
	}
	return name, nil
}

func (d Dir) put(kind string, v any) (string, error) {
	if !validKind(kind) {
		return "", fmt.Errorf("%w: %q", ErrBadKind, kind)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if len(data) > MaxRecordSize {
		return "", fmt.Errorf("record of %d bytes: over %d, List would not read it", len(data), MaxRecordSize)
	}
	if d.Path == "" {
		return "", errors.New("empty spool path")
	}
	// The packaged spool is shared with the group's service users, who may
	// plant links in it: every name is opened within the directory, with
	// no link followed (safefs).
	dir, err := safefs.MkdirAll(d.Path, 0o700)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	fi, err := dir.Stat()
	if err != nil {
		return "", err
	}
	// In a shared spool (set-group-ID, as packaged) the record must be
	// readable and removable by the group's other service users: jobcomp
	// writes as the SlurmUser, serve drains as gpuprof.
	mode := fs.FileMode(0o600)
	if groupdir.ModeIn(fi) == groupdir.Shared {
		mode = groupdir.Shared
	}
	f, tmp, err := dir.CreateTemp(tmpPrefix, mode)
	if err != nil {
		return "", err
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%020d-%d-%016x.%s%s", time.Now().UnixNano(), os.Getpid(), rand.Uint64(), kind, ext)
	if err := dir.Rename(tmp, dir, name); err != nil {
		return "", err
	}
	committed = true
	if err := dir.Sync(); err != nil {
		// The record is in place but may not survive a crash; report it so
		// the caller does not count on it, and remove it so it is not
		// delivered twice (once by the caller's retry, once from here).
		dir.Remove(name)
		return "", err
	}
	return name, nil
}

func validKind(kind string) bool {
	if kind == "" {
		return false
	}
	for _, r := range kind {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// recordName is a parsed record file name.
type recordName struct {
	nano int64
	pid  int
	rnd  uint64
	kind string
}

// parseName parses "<unixnano>-<pid>-<random>.<kind>.json".
func parseName(name string) (recordName, bool) {
	var r recordName
	stem, ok := strings.CutSuffix(name, ext)
	if !ok || strings.ContainsRune(name, '/') {
		return r, false
	}
	id, kind, ok := strings.Cut(stem, ".")
	if !ok || !validKind(kind) {
		return r, false
	}
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return r, false
	}
	var err1, err2, err3 error
	r.nano, err1 = strconv.ParseInt(parts[0], 10, 64)
	r.pid, err2 = strconv.Atoi(parts[1])
	r.rnd, err3 = strconv.ParseUint(parts[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil || r.nano < 0 || r.pid < 0 {
		return r, false
	}
	r.kind = kind
	return r, true
}

// List returns the records, oldest first. It skips temporary files (of a
// Put in progress or interrupted by a crash), the quarantine directory and
// files whose names it cannot parse. A missing directory is an empty spool.
// A record that is not a regular file of its own (a link, a FIFO, a hard
// link: what another account could plant in a shared spool) or is larger
// than MaxRecordSize comes with Err set and no data.
func (d Dir) List() ([]Entry, error) {
	dir, err := safefs.OpenDir(d.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool list %s: %w", d.Path, err)
	}
	defer dir.Close()
	des, err := dir.ReadDir()
	if err != nil {
		return nil, fmt.Errorf("spool list %s: %w", d.Path, err)
	}
	type rec struct {
		recordName
		name string
	}
	var recs []rec
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		if r, ok := parseName(de.Name()); ok {
			recs = append(recs, rec{r, de.Name()})
		}
	}
	// By the time in the name, numerically: names from another writer's
	// clock format still order right.
	slices.SortFunc(recs, func(a, b rec) int {
		if c := compareInt(a.nano, b.nano); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	entries := make([]Entry, 0, len(recs))
	for _, r := range recs {
		e := Entry{Name: r.name, Kind: r.kind, Time: time.Unix(0, r.nano)}
		e.Data, e.Err = dir.ReadFile(r.name, MaxRecordSize)
		if errors.Is(e.Err, fs.ErrNotExist) {
			continue // removed by a concurrent pass since ReadDir
		}
		if e.Err != nil {
			e.Data = nil
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Remove deletes a delivered record. Removing a record that is already
// gone is not an error, so two delivery passes may race safely.
func (d Dir) Remove(name string) error {
	if _, ok := parseName(name); !ok {
		return fmt.Errorf("spool remove %q: %w", name, ErrBadName)
	}
	dir, err := safefs.OpenDir(d.Path)
	if err != nil {
		return fmt.Errorf("spool remove %s: %w", name, err)
	}
	defer dir.Close()
	if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool remove %s: %w", name, err)
	}
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("spool remove %s: %w", name, err)
	}
	return nil
}

// Quarantine moves a record that cannot be delivered (unreadable, not
// valid JSON, refused by the database for good) to Path/bad/, with the
// reason in a "<name>.reason" file next to it, so humans can inspect it and
// List no longer returns it.
func (d Dir) Quarantine(name, reason string) error {
	if err := d.quarantine(name, reason); err != nil {
		return fmt.Errorf("spool quarantine %s: %w", name, err)
	}
	return nil
}

func (d Dir) quarantine(name, reason string) error {
	if _, ok := parseName(name); !ok {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	dir, err := safefs.OpenDir(d.Path)
	if err != nil {
		return err
	}
	defer dir.Close()
	if _, err := dir.Lstat(name); err != nil {
		return err // gone already: a concurrent pass delivered it
	}
	fi, err := dir.Stat()
	if err != nil {
		return err
	}
	shared := groupdir.ModeIn(fi) == groupdir.Shared
	fileMode := fs.FileMode(0o600)
	if shared {
		fileMode = groupdir.Shared
	}
	// bad/ is opened, not followed: in a shared spool anyone of the group
	// may have replaced it with a link.
	bad, created, err := dir.Sub(BadDir, 0o700)
	if err != nil {
		return err
	}
	defer bad.Close()
	if shared && created { // umask may have narrowed what Sub made
		if err := bad.Chmod(0o770 | os.ModeSetgid); err != nil {
			return err
		}
	}
	// The reason first: a crash between the two leaves a stray reason
	// file, never a quarantined record without one. Written aside and
	// renamed into place, so that whatever has its name (a planted link,
	// a stray reason of an earlier crash) is replaced, never written
	// through.
	f, tmp, err := bad.CreateTemp(tmpPrefix, fileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteString(reason + "\n")
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = bad.Rename(tmp, bad, name+".reason")
	}
	if err != nil {
		bad.Remove(tmp)
		return err
	}
	if err := dir.Rename(name, bad, name); err != nil {
		return err
	}
	return errors.Join(bad.Sync(), dir.Sync())
}
