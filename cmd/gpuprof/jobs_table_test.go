package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gpuprof/gpuprof/cliview"
)

// TestJobsTableWidth: `gpuprof jobs` with 4-GPU jobs, CJK and emoji names
// (two terminal cells a character) and long users fits 120 columns, keeps
// every column at the same display offset on every line, writes one value
// for memory and utilisation (the largest, "×4"), and durations as Slurm
// does.
func TestJobsTableWidth(t *testing.T) {
	// 01:00 local two days ago: every job starts on that day, whatever
	// the hour the test runs at (the check below looks for its date).
	y, m, d := time.Now().Add(-48 * time.Hour).Date()
	start := time.Date(y, m, d, 1, 0, 0, 0, time.Local)
	db := reportDB(t,
		reportJob{id: "4001", user: "alice", account: "vision", name: "训练大模型实验第一轮", start: start, run: 26*time.Hour + 5*time.Second, wait: 90 * time.Minute, util: 70, gpus: 4},
		reportJob{id: "4002", user: "bartholomew-long", account: "nlp-research", name: "🚀rocket-launch-sweep", start: start.Add(time.Hour), run: 3 * time.Hour, wait: 5 * time.Second, util: 35, gpus: 4, node: "gpu02"},
		reportJob{id: "4003", user: "chen", account: "bio", name: "plain", start: start.Add(2 * time.Hour), run: 40 * time.Minute, util: 90},
	)
	out, err := runCLI(t, "jobs", "--db", db)
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3 jobs:\n%s", len(lines), out)
	}
	// The display offset where each line's START value begins: the same
	// on every line when padding counts display cells.
	offset := func(line, field string) int {
		i := strings.Index(line, field)
		if i < 0 {
			t.Fatalf("line lacks %q: %q", field, line)
		}
		return ansi.StringWidth(line[:i])
	}
	want := offset(lines[0], "START")
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 120 {
			t.Errorf("line is %d cells wide, want ≤ 120: %q", w, l)
		}
	}
	day := start.Local().Format("01-02T")
	for _, l := range lines[1:] {
		if got := offset(l, day); got != want {
			t.Errorf("START at cell %d, header's at %d: columns shifted by a wide name\n%s", got, want, out)
		}
	}
	// Memory is the largest peak ×4; utilisation the mean over the GPUs
	// (analysis.Shown), with no ×4.
	for _, s := range []string{"1-02:00:05", "01:30:00", "×4", "20×4", " 70 % "} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "20.0,20.0") || strings.Contains(out, "70 %,70 %") {
		t.Errorf("values per GPU, want one per job:\n%s", out)
	}
}

// The -update flag (make update-golden) rewrites golden files. It is
// defined here unless another test file of the package already defines
// it: package-level definitions run before init.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

// goldenUpdate reports whether -update was given.
func goldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with testdata/name, or rewrites it under
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if goldenUpdate() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run Golden -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// goldenJobs is the fixture of the jobs goldens, written through the
// real store: two 4-GPU jobs, CJK and emoji names, a job known only from
// sacct. Times are wall-clock times in the local zone, so that the
// printed local times are the same in every TZ.
func goldenJobs(t *testing.T) string {
	start := time.Date(2026, 11, 10, 9, 0, 0, 0, time.Local)
	return reportDB(t,
		reportJob{id: "4001", user: "alice", account: "vision", name: "训练大模型实验第一轮", start: start, run: 26*time.Hour + 5*time.Second, wait: 90 * time.Minute, util: 70, gpus: 4},
		reportJob{id: "4002", user: "bartholomew-long", account: "nlp-research", name: "🚀rocket-launch-sweep", start: start.Add(time.Hour), run: 3 * time.Hour, wait: 5 * time.Second, util: 35, gpus: 4, node: "gpu02"},
		reportJob{id: "4003", user: "chen", account: "bio", name: "plain", start: start.Add(2 * time.Hour), run: 40 * time.Minute, util: 90},
		reportJob{id: "4004", user: "dana", account: "bio", name: "データ前処理", start: start.Add(3 * time.Hour), run: 12 * time.Minute, wait: time.Minute, state: "FAILED", sacctOnly: true},
	)
}

// TestJobsGolden: the default table at 120 columns and a --format table
// (sacct's widths: %N right-aligned, %-N left-aligned, "+" marking a
// cut), each line's columns at the same display offsets.
func TestJobsGolden(t *testing.T) {
	db := goldenJobs(t)
	for _, tc := range []struct{ name, golden, format string }{
		{"default", "jobs/default.golden", ""},
		{"format", "jobs/format.golden", "JobID%-6,jobname%12,User,state,start,elapsed,util%-7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"jobs", "--db", db}
			if tc.format != "" {
				args = append(args, "--format="+tc.format)
			}
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("jobs: %v\n%s", err, out)
			}
			for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
				if w := ansi.StringWidth(l); w > 120 {
					t.Errorf("line is %d cells wide, want ≤ 120: %q", w, l)
				}
			}
			checkGolden(t, tc.golden, out)
		})
	}
}

// TestJobsFormat: --format's columns, case-insensitive names and sacct's
// %N widths: a value longer than N keeps N-1 cells and a "+" (sacct's
// mark of a cut), a shorter one is padded to N, on the left for %N and on
// the right for %-N; wide characters count two cells.
func TestJobsFormat(t *testing.T) {
	db := goldenJobs(t)
	out, err := runCLI(t, "jobs", "--db", db, "--format=jobid,JobName%8,state%-10,start")
	if err != nil {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want a header and 4 jobs:\n%s", len(lines), out)
	}
	if got, want := strings.Fields(lines[0]), []string{"JOBID", "NAME", "STATE", "START"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("header %q, want %q", got, want)
	}
	for _, s := range []string{
		"训练大+",       // 10 CJK characters (20 cells) cut to 8: three and a "+" (7 cells, one pad)
		"🚀rocke+",    // the emoji is two cells
		"   plain",   // right-aligned in 8
		"FAILED    ", // left-aligned in 10
		"2026-11-10T09:00:00",
		"2026-11-10T12:00:00",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// Every START value begins at the header's display offset.
	want := ansi.StringWidth(lines[0][:strings.Index(lines[0], "START")])
	for _, l := range lines[1:] {
		i := strings.Index(l, "2026-11-10T")
		if i < 0 {
			t.Fatalf("line lacks a start: %q", l)
		}
		if got := ansi.StringWidth(l[:i]); got != want {
			t.Errorf("START at cell %d, header's at %d:\n%s", got, want, out)
		}
	}
}

// TestJobsFormatErrors: an unknown column or a bad width is a usage
// error (exit 2) naming the known columns; --format=help and --helpformat
// list every column.
func TestJobsFormatErrors(t *testing.T) {
	db := goldenJobs(t)
	for _, tc := range []struct {
		name   string
		format string
		want   []string
	}{
		{"unknown column", "jobid,bogus", []string{`unknown column "bogus"`, "jobid, name, jobname", "notes"}},
		{"bad width", "name%x", []string{`"name%x"`, "name%20"}},
		{"zero width", "name%0", []string{`"name%0"`}},
		{"nothing", ",", []string{"no column named"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runMain(t, "jobs", "--db", db, "--format="+tc.format)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (usage)", code, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	for _, args := range [][]string{{"--format=help"}, {"--format", "HELP"}, {"--helpformat"}} {
		out, _, code := runMain(t, append([]string{"jobs", "--db", db}, args...)...)
		if code != exitOK {
			t.Errorf("%v: exit %d", args, code)
		}
		var help strings.Builder
		if err := cliview.JobsFormatHelp(&help); err != nil {
			t.Fatal(err)
		}
		if out != help.String() {
			t.Errorf("%v: printed\n%s\nwant the column list (cliview.JobsFormatHelp)\n%s", args, out, help.String())
		}
	}
}
