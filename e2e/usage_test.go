package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The real binary exits 2 on usage errors and says what it accepts, and a
// file that is not a gpuprof database is named as such and left exactly as
// it was, with nothing beside it. Needs no Slurm and no root.
func TestUsageErrorsOfTheBinary(t *testing.T) {
	bin := gpuprofBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "gpuprof.toml")
	// Its own spool, so that ingest never drains the host's.
	if err := os.WriteFile(cfg, []byte("spool_dir = \""+t.TempDir()+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(notes, []byte("SQLite? no, my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	if out, err := exec.Command("sqlite3", other, "PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.db")
	before := map[string][]byte{}
	for _, f := range []string{notes, other, empty} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	files := func() []string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	filesBefore := files()

	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"jbos"}, 2, "Did you mean this?"},
		{[]string{"jobs", "--db", good, "--state", "bogus"}, 2, "CD COMPLETED"},
		{[]string{"jobs", "--db", good, "--since", "7 days ago"}, 2, "now[{+|-}count"},
		{[]string{"jobs", "--db", good, "--since", "now", "--until", "now-1hour"}, 2, "is not before --until"},
		{[]string{"jobs", "--db", good, "--limit", "-5"}, 2, "--limit -5"},
		{[]string{"show", "--db", good, "abc"}, 2, "is not a job id"},
		{[]string{"jobs", "--db", notes}, 1, "not a gpuprof database"},
		{[]string{"jobs", "--db", other}, 1, "another program"},
		{[]string{"ingest", "--db", other}, 1, "another program"},
		{[]string{"jobs", "--db", empty}, 1, "empty"},
	}
	// A writer creates good.db first, so the readers above have a database.
	if out, err := exec.Command(bin, "--config", cfg, "ingest", "--db", good).CombinedOutput(); err != nil {
		t.Fatalf("ingest into a new database: %v\n%s", err, out)
	}
	filesBefore = append(filesBefore, filepath.Base(good))
	slices.Sort(filesBefore)
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"--config", cfg}, tt.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, want %d, and stderr saying %q:\n%s", code, tt.code, tt.want, stderr.String())
			}
		})
	}
	for f, b := range before {
		if after, _ := os.ReadFile(f); !bytes.Equal(after, b) {
			t.Errorf("%s changed", filepath.Base(f))
		}
	}
	got := files()
	slices.Sort(got)
	// good.db may keep its own -wal/-shm; nothing else may appear.
	got = slices.DeleteFunc(got, func(n string) bool { return strings.HasPrefix(n, "good.db-") })
	if !slices.Equal(got, filesBefore) {
		t.Errorf("files after = %v, want %v", got, filesBefore)
	}
}
