package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupRestoreCommands: gpuprof backup --to writes a copy that
// backup --check passes, a second backup to the same name is refused,
// and restore --from puts the copy back, keeping the replaced database.
func TestBackupRestoreCommands(t *testing.T) {
	db := runningDB(t)
	dst := filepath.Join(t.TempDir(), "copy.db")
	out, code, err := runCommand(t, db, "backup", "--to", dst)
	if code != 0 || !strings.Contains(out, "1 job profiles") {
		t.Fatalf("backup --to: exit %d, %v, output %q; want 0 and the one job", code, err, out)
	}
	if out, code, err := runCommand(t, db, "backup", "--check", dst); code != 0 || !strings.Contains(out, "ok, schema") {
		t.Errorf("backup --check: exit %d, %v, output %q", code, err, out)
	}
	if _, code, err := runCommand(t, db, "backup", "--to", dst); code != 1 || err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("backup over an existing file: exit %d, %v; want 1, refused", code, err)
	}
	if _, code, _ := runCommand(t, db, "backup"); code != 2 {
		t.Errorf("backup without --to or --check: exit %d, want 2", code)
	}
	out, code, err = runCommand(t, db, "restore", "--from", dst)
	if code != 0 || !strings.Contains(out, "kept as") {
		t.Fatalf("restore: exit %d, %v, output %q", code, err, out)
	}
	if out, _, err := runCommand(t, db, "jobs"); err != nil || !strings.Contains(out, "8101") {
		t.Errorf("jobs after restore: %v, output %q; want job 8101", err, out)
	}
	kept, _ := filepath.Glob(db + ".before-restore-*")
	if len(kept) == 0 {
		t.Error("the replaced database was not kept")
	}
	for _, k := range kept {
		if fi, err := os.Lstat(k); err != nil || (!strings.HasSuffix(k, "-wal") && fi.Size() == 0) {
			t.Errorf("kept %s: %v", k, err)
		}
	}
}
