package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capturedSacct is a file of slurmext/testdata/sacct (Slurm 22.05.8's sacct).
func capturedSacct(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "slurmext", "testdata", "sacct", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cutColumn removes the column named name from sacct -P text: fields are
// counted from the end of each record (a job name may hold '|'), and a
// line with too few columns (a name with a line break) is joined with the
// next first.
func cutColumn(t *testing.T, text, name string) string {
	t.Helper()
	ls := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	header := strings.Split(ls[0], "|")
	fromEnd := -1
	for i, h := range header {
		if h == name {
			fromEnd = len(header) - 1 - i
		}
	}
	if fromEnd < 0 {
		t.Fatalf("no column %s", name)
	}
	var out []string
	for k := 0; k < len(ls); k++ {
		rec := ls[k]
		for strings.Count(rec, "|")+1 < len(header) && k+1 < len(ls) {
			k++
			rec += "\n" + ls[k]
		}
		f := strings.Split(rec, "|")
		j := len(f) - 1 - fromEnd
		out = append(out, strings.Join(append(f[:j:j], f[j+1:]...), "|"))
	}
	return strings.Join(out, "\n") + "\n"
}

// TestImportCommandSaysWhatItRead: the import's summary says where the
// jobs' GPUs came from, and which job ids the file holds twice with
// different content; show says a job's GPUs were read from AllocTRES.
func TestImportCommandSaysWhatItRead(t *testing.T) {
	t.Setenv("TZ", "UTC")
	text := capturedSacct(t, "22.05-P-steps-iso.txt")
	allocOnly := cutColumn(t, text, "ReqTRES")
	tests := []struct {
		name string
		in   string
		want []string
		not  []string
	}{
		{name: "ReqTRES", in: text, want: []string{"26 jobs read: 26 new", "GPUs and shards read from ReqTRES for 26 jobs\n"},
			not: []string{"more than once"}},
		{name: "AllocTRES only", in: allocOnly,
			want: []string{"26 jobs read: 26 new", "GPUs and shards read from AllocTRES for 21 jobs (no ReqTRES), from neither column for 5 (no GPU counted)\n"}},
		{name: "neither", in: cutColumn(t, allocOnly, "AllocTRES"),
			want: []string{"GPUs and shards read from neither column for 26 jobs (no GPU counted)\n"}},
		{name: "with a byte order mark", in: "\xef\xbb\xbf" + text, want: []string{"26 jobs read: 26 new, 0 updated, 0 unchanged; 0 skipped"}},
		{name: "the same file twice", in: text + text, want: []string{"52 jobs read: 26 new, 0 updated, 26 unchanged"},
			not: []string{"more than once"}},
		{name: "two clusters' files without a Cluster column", in: cutColumn(t, text, "Cluster") + cutColumn(t, shiftTimes(t, text), "Cluster"),
			want: []string{"26 job ids appear more than once with different content (first: 1, 2, 3, 4, 5); " +
				"the one kept is decided as docs/sacct.md says (\"Duplicate job ids\")\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "gpuprof.db")
			out, err := runCLI(t, "--db", db, "import", "sacct", "--file", writeFile(t, tt.in))
			if err != nil {
				t.Fatalf("import: %v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("stdout has %q:\n%s", n, out)
				}
			}
			if tt.name == "ReqTRES" {
				// Job 9 was cancelled while pending: sacct gives it Start = End.
				show, err := runCLI(t, "--db", db, "show", "9")
				if err != nil || !strings.Contains(show, "Started never (left the queue at its end)") ||
					!strings.Contains(show, "Waited     -   Ran -") {
					t.Errorf("show 9: %v\n%s", err, show)
				}
			}
			if tt.name == "AllocTRES only" {
				show, err := runCLI(t, "--db", db, "show", "1")
				if err != nil || !strings.Contains(show, "GPUs allocated 2 (AllocTRES: no ReqTRES imported)") {
					t.Errorf("show 1: %v\n%s", err, show)
				}
			}
		})
	}
}

// shiftTimes moves every 2026-12-02 time of the capture a day later: the
// same job ids, other jobs.
func shiftTimes(t *testing.T, text string) string {
	t.Helper()
	return strings.ReplaceAll(text, "2026-12-02T", "2026-12-03T")
}
