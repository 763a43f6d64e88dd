package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/store"
)

// realSacct is a file of slurmext/testdata/real (Slurm 22.05.8's sacct).
func realSacct(name string) string {
	return filepath.Join("..", "..", "slurmext", "testdata", "real", name)
}

// importedJobs returns how many jobs and which import mark a database has.
func importedJobs(t *testing.T, path string) (int, time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.ReaderFor(store.System).CountViews(ctx, store.ViewFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mark, err := db.GetImportMark(ctx, "default", history.Source)
	if err != nil {
		t.Fatal(err)
	}
	return n, mark
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sacct.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportCommandRefuses: text that does not fit its columns, or another
// tool's output, makes `gpuprof import sacct` exit 1 with a message saying
// what it expected, and leaves the database as it was.
func TestImportCommandRefuses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gpuprof.db")
	if _, err := runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-own-P-epoch-steps.txt")); err != nil {
		t.Fatalf("import of gpuprof's own layout: %v", err)
	}
	jobs, mark := importedJobs(t, db)
	if jobs != 12 || mark.IsZero() {
		t.Fatalf("%d jobs, mark %v after the first import; want 12 and a mark", jobs, mark)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "header without a job id column", args: []string{"--file", realSacct("22.05-no-jobid-XP.txt")}, want: "neither JobID nor JobIDRaw"},
		{name: "header-less, another layout", args: []string{"--file", realSacct("22.05-issue-XP-noheader.txt")},
			want: fmt.Sprintf("expected %d columns", len(sacct.Fields()))}, // gpuprof's own, the first tried
		{name: "header-less, wrong --columns", args: []string{"--file", realSacct("22.05-issue-XP-noheader.txt"), "--columns", "JobIDRaw,State,Start"},
			want: "expected 3 columns"},
		{name: "squeue output", args: []string{"--file", realSacct("squeue.txt")}, want: "does not fit"},
		{name: "sacct without -P", args: []string{"--file", realSacct("22.05-sacct-default-columns.txt")}, want: "does not fit"},
		{name: "CSV", args: []string{"--file", writeFile(t, "JobID,State\n1,COMPLETED\n2,FAILED\n")}, want: "does not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"--db", db, "import", "sacct"}, tt.args...)...)
			if code := exitCode(err); code != exitError {
				t.Fatalf("exit %d (%v), want %d", code, err, exitError)
			}
			if !errors.Is(err, sacct.ErrLayout) || !strings.Contains(err.Error(), tt.want) ||
				!strings.Contains(err.Error(), "nothing imported") {
				t.Errorf("error %v, want ErrSacctLayout saying %q and that nothing was imported", err, tt.want)
			}
			if out != "" {
				t.Errorf("stdout %q, want no counts for a refused file", out)
			}
			if j, m := importedJobs(t, db); j != jobs || !m.Equal(mark) {
				t.Errorf("%d jobs, mark %v after the refusal; want %d, %v", j, m, jobs, mark)
			}
		})
	}
}

// TestImportCommandColumns: header-less text in another layout imports with
// --columns; the flag is checked before anything is read.
func TestImportCommandColumns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gpuprof.db")
	issue := "JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,NodeList,ReqTRES,AllocTRES"
	out, err := runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-issue-XP-noheader.txt"), "--columns", issue)
	if err != nil {
		t.Fatalf("import with --columns: %v", err)
	}
	if !strings.HasPrefix(out, "12 jobs read: 12 new, 0 updated, 0 unchanged; 0 skipped") {
		t.Errorf("stdout %q, want 12 new jobs, none skipped", out)
	}
	// The same layout with its header needs no --columns.
	out, err = runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-issue-P-steps.txt"))
	if err != nil || !strings.HasPrefix(out, "12 jobs read: 0 new, 0 updated, 12 unchanged; 0 skipped") {
		t.Errorf("import of the same jobs with a header: %q, %v; want 12 unchanged", out, err)
	}

	for _, tt := range []struct{ name, columns, file string }{
		{"no job id column", "State,Start,End", realSacct("22.05-issue-XP-noheader.txt")},
		{"not a field name", "JobIDRaw,St ate", realSacct("22.05-issue-XP-noheader.txt")},
		{"json", "JobIDRaw,State", realSacct("22.05-steps-usage.json") + "\x00json"},
		{"without --file", "JobIDRaw,State", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--db", db, "import", "sacct", "--columns", tt.columns}
			switch file, isJSON := strings.CutSuffix(tt.file, "\x00json"); {
			case isJSON:
				args = append(args, "--file", file, "--format", "json")
			case tt.file != "":
				args = append(args, "--file", tt.file)
			}
			if _, err := runCLI(t, args...); exitCode(err) != exitUsage {
				t.Errorf("exit %d (%v), want %d", exitCode(err), err, exitUsage)
			}
		})
	}
}

// TestImportCommandEmpty: sacct prints nothing for a window without jobs;
// importing that is no jobs and exit 0.
func TestImportCommandEmpty(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gpuprof.db")
	out, err := runCLI(t, "--db", db, "import", "sacct", "--file", writeFile(t, ""))
	if err != nil || !strings.HasPrefix(out, "0 jobs read") {
		t.Errorf("empty file: %q, %v; want 0 jobs and no error", out, err)
	}
}

// TestImportCommandHostUsage: real sacct output with TotalCPU, MaxRSS and
// ReqMem (testdata/real/README.md: a job that burnt 2 × 10 s of CPU in 17 s
// on 2 CPUs, one that held 300 MiB of a 512M request) imports, and show
// prints what the jobs did; the same jobs from sacct -X, whose job lines
// carry no steps, leave the values the import with steps gave.
func TestImportCommandHostUsage(t *testing.T) {
	t.Setenv("TZ", "UTC")
	db := filepath.Join(t.TempDir(), "gpuprof.db")
	out, err := runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-own-P-epoch-usage.txt"))
	if err != nil || !strings.HasPrefix(out, "5 jobs read: 5 new") {
		t.Fatalf("import: %q, %v", out, err)
	}
	if out, err = runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-own-XP-epoch-usage-noheader.txt")); err != nil {
		t.Fatalf("import of -X: %q, %v", out, err)
	}
	for id, want := range map[string][]string{
		"1": {"CPU efficiency 57 % (00:00:19 of 00:00:34 core time)", "host memory peak 6.1 MiB of 15.6 GiB requested (0 %)"},
		"2": {"host memory peak 307.9 MiB of 512 MiB requested (60 %)"},
		"3": {"CPU efficiency unknown (00:00:00 of CPU time, but no run time to compare it with)"},
		// Job 4's steps ended before their first sample: sacct has no
		// MaxRSS for it, so show names no sacct command (issue #30).
		"4": {"host memory peak unknown: Slurm's accounting recorded none (MaxRSS empty); 200 MiB requested"},
	} {
		out, err := runCLI(t, "--db", db, "show", id)
		if err != nil {
			t.Fatalf("show %s: %v", id, err)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("show %s lacks %q:\n%s", id, w, out)
			}
		}
		if strings.Contains(out, "-o MaxRSS") || strings.Contains(out, "-o TotalCPU") {
			t.Errorf("show %s points to sacct for a value the import read:\n%s", id, out)
		}
	}
}

// TestImportRefusedLeavesNothing: a header-less file in another column
// order (a real 22.05 capture) is refused saying the order is wrong and how
// to declare it, and an import to a new path that stored nothing leaves no
// database, -wal or -shm behind.
func TestImportRefusedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db")
	_, err := runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-issue-XP-noheader.txt"))
	if err == nil {
		t.Fatal("a header-less file in another layout was imported")
	}
	for _, want := range []string{"another order", "--columns", "header line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 0 {
		t.Errorf("a refused import to a new path left %q", left)
	}
	// The same file declared with its columns imports.
	if _, err := runCLI(t, "--db", db, "import", "sacct", "--file", realSacct("22.05-issue-XP-noheader.txt"), "--columns",
		"JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,NodeList,ReqTRES,AllocTRES"); err != nil {
		t.Fatalf("declared: %v", err)
	}
	if jobs, _ := importedJobs(t, db); jobs != 12 {
		t.Errorf("%d jobs imported, want 12", jobs)
	}
}
