package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runMain runs gpuprof as main does (newCLI, exitCode) in-process, with an
// empty configuration file, and returns stdout, stderr and the exit code.
func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "gpuprof.toml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	root := newCLI()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"--config", cfg}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), exitCode(err)
}

// Every bad input of issue #11 point 6 is a clear error with its exit code:
// usage errors exit 2 and say what is accepted; good values of the same
// flags work.
func TestUsageErrors(t *testing.T) {
	db := slurmIDDB(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string // in the error cobra prints to stderr
	}{
		{"unknown state", []string{"jobs", "--db", db, "--state", "bogus"}, exitUsage,
			[]string{`--state: job state "bogus"`, "CD COMPLETED", "TO TIMEOUT", "OOM OUT_OF_MEMORY", "finished"}},
		{"state cut short as sacct prints it", []string{"jobs", "--db", db, "--state", "CANCELLED+"}, exitUsage, []string{"--state"}},
		{"state name", []string{"jobs", "--db", db, "--state", "completed"}, exitOK, nil},
		{"state short form", []string{"jobs", "--db", db, "--state", "CD"}, exitOK, nil},
		{"gpuprof's finished", []string{"jobs", "--db", db, "--state", "finished"}, exitOK, nil},
		{"gpuprof's running", []string{"jobs", "--db", db, "--state", "running"}, exitOK, nil},
		{"unknown command", []string{"jbos"}, exitUsage, []string{`unknown command "jbos"`, "Did you mean this?", "jobs", "--help"}},
		{"unknown command, nothing near", []string{"frobnicate"}, exitUsage, []string{`unknown command "frobnicate"`}},
		{"bare gpuprof prints help", []string{}, exitOK, nil},
		{"unknown flag", []string{"jobs", "--db", db, "--bogus"}, exitUsage, []string{"unknown flag: --bogus"}},
		{"bad time", []string{"jobs", "--db", db, "--since", "last tuesday"}, exitUsage,
			[]string{`--since: time "last tuesday"`, "now[{+|-}count", "YYYY-MM-DD[THH:MM[:SS]]", "7d"}},
		{"bad until", []string{"jobs", "--db", db, "--until", "2026-02-30"}, exitUsage, []string{"--until:", "MM/DD[/YY]"}},
		{"relative 7d", []string{"jobs", "--db", db, "--since", "7d"}, exitOK, nil},
		{"relative 12h", []string{"jobs", "--db", db, "--since", "12h"}, exitOK, nil},
		{"yesterday", []string{"jobs", "--db", db, "--since", "yesterday"}, exitOK, nil},
		{"now-7days to now", []string{"jobs", "--db", db, "--since", "now-7days", "--until", "now"}, exitOK, nil},
		{"slurm date forms", []string{"jobs", "--db", db, "--since", "12/01/26", "--until", "2026-12-03T00:00"}, exitOK, nil},
		{"reversed window", []string{"jobs", "--db", db, "--since", "2026-05-01", "--until", "2026-04-01"}, exitUsage,
			[]string{"--since 2026-05-01", "is not before --until 2026-04-01"}},
		{"empty window", []string{"jobs", "--db", db, "--since", "today", "--until", "midnight"}, exitUsage, []string{"is not before --until"}},
		{"negative limit", []string{"jobs", "--db", db, "--limit", "-5"}, exitUsage, []string{"--limit -5", "want 0"}},
		{"limit not a number", []string{"jobs", "--db", db, "--limit", "many"}, exitUsage, []string{"--limit"}},
		{"show: not a job id", []string{"show", "--db", db, "abc"}, exitUsage, []string{`"abc" is not a job id`}},
		{"show: no such job", []string{"show", "--db", db, "999"}, exitError, []string{"job 999: not found"}},
		{"show: no id", []string{"show", "--db", db}, exitUsage, []string{"accepts 1 arg"}},
		{"empty database file", []string{"jobs", "--db", empty}, exitError, []string{"empty", "not a gpuprof database"}},
		{"text file as database", []string{"show", "--db", text, "1"}, exitError, []string{"not a gpuprof database", "left untouched"}},
		{"import: reversed window", []string{"import", "sacct", "--db", db, "--since", "2026-05-01", "--until", "2026-04-01"}, exitUsage,
			[]string{"is not before --until 2026-04-01"}},
		{"import: since in the future", []string{"import", "sacct", "--db", db, "--since", "now+2days"}, exitUsage,
			[]string{"is not before now"}},
		{"import: bad time", []string{"import", "sacct", "--db", db, "--until", "soon"}, exitUsage, []string{"--until:", "now[{+|-}count"}},
		{"profiles: bad time", []string{"profiles", "--db", db, "--since", "bogus"}, exitUsage, []string{"--since:", "now[{+|-}count"}},
		{"profiles: reversed window", []string{"profiles", "--db", db, "--since", "now", "--until", "now-1day"}, exitUsage, []string{"is not before --until"}},
		{"profiles: negative top", []string{"profiles", "--db", db, "--top", "-1"}, exitUsage, []string{"--top -1"}},
		{"recommend: bad time", []string{"recommend", "--db", db, "--until", "someday"}, exitUsage, []string{"--until:"}},
		{"recommend: reversed window", []string{"recommend", "--db", db, "--since", "2w", "--until", "3w"}, exitUsage, []string{"is not before --until"}},
		{"plan: bad time", []string{"plan", "--db", db, "--since", "now+"}, exitUsage, []string{"--since:"}},
		{"report: bad month", []string{"report", "--db", db, "--month", "May"}, exitUsage, []string{"--month: want YYYY-MM"}},
		{"report: negative top", []string{"report", "--db", db, "--top", "-3"}, exitUsage, []string{"--top"}},
		{"report: negative compare", []string{"report", "--db", db, "--compare", "-1"}, exitUsage, []string{"--compare"}},
		{"tui: page size 0", []string{"tui", "--db", db, "--page-size", "0"}, exitUsage, []string{"--page-size 0"}},
		{"import: bad time", []string{"import", "sacct", "--db", filepath.Join(dir, "import.db"), "--since", "bogus"}, exitUsage, []string{"--since:", "now[{+|-}count"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != tt.code {
				t.Errorf("gpuprof %s: exit %d, want %d; stderr:\n%s", strings.Join(tt.args, " "), code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("gpuprof %s: stderr does not say %q:\n%s", strings.Join(tt.args, " "), w, stderr)
				}
			}
			if tt.code == exitOK && strings.Contains(stderr, "Error") {
				t.Errorf("gpuprof %s succeeded with an error on stderr:\n%s", strings.Join(tt.args, " "), stderr)
			}
		})
	}
	// Nothing beside the files that were refused.
	for _, f := range []string{empty, text} {
		for _, side := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(f + side); err == nil {
				t.Errorf("%s%s exists after gpuprof refused %s", filepath.Base(f), side, filepath.Base(f))
			}
		}
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("a reader wrote %d bytes into the empty file", len(b))
	}
}

// The state filter selects what it names, in either form.
func TestStateFilterSelects(t *testing.T) {
	db := slurmIDDB(t)
	long, _, code := runMain(t, "jobs", "--db", db, "--state", "COMPLETED")
	short, _, code2 := runMain(t, "jobs", "--db", db, "--state", "cd")
	if code != 0 || code2 != 0 {
		t.Fatalf("exit %d, %d", code, code2)
	}
	if long != short {
		t.Errorf("--state COMPLETED and --state cd differ:\n%s\n%s", long, short)
	}
	lines := strings.Split(strings.TrimSpace(long), "\n")[1:]
	if len(lines) == 0 {
		t.Fatalf("--state COMPLETED lists no job:\n%s", long)
	}
	for _, line := range lines {
		if !strings.Contains(line, "COMPLETED") {
			t.Errorf("--state COMPLETED lists %q", line)
		}
	}
}
