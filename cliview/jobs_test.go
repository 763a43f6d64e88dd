package cliview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestSacctCut checks %N against sacct's own output: "jobname%5" of
// "training" prints "trai+", of "ab" prints "   ab", and "%-5" "ab   ".
func TestSacctCut(t *testing.T) {
	for _, tc := range []struct {
		in    string
		n     int
		right bool
		want  string
	}{
		{"training", 5, true, "trai+"},
		{"ab", 5, true, "   ab"},
		{"ab", 5, false, "ab   "},
		{"exact", 5, true, "exact"},
		{"训练模型", 5, false, "训练+"},
		{"训练模型", 6, true, " 训练+"},
	} {
		if got := sacctCut(tc.in, tc.n, tc.right); got != tc.want {
			t.Errorf("sacctCut(%q, %d, %v) = %q, want %q", tc.in, tc.n, tc.right, got, tc.want)
		}
		if w := ansi.StringWidth(sacctCut(tc.in, tc.n, tc.right)); w != tc.n {
			t.Errorf("sacctCut(%q, %d) is %d cells", tc.in, tc.n, w)
		}
	}
}

// TestJobsFormatHelp: --format=help lists every column --format takes,
// with its header, and the default format.
func TestJobsFormatHelp(t *testing.T) {
	var b bytes.Buffer
	if err := JobsFormatHelp(&b); err != nil {
		t.Fatal(err)
	}
	for _, c := range jobsColumns {
		if !strings.Contains(b.String(), c.key+" ") || !strings.Contains(b.String(), c.header) {
			t.Errorf("help lacks column %q (%s):\n%s", c.key, c.header, b.String())
		}
	}
	if !strings.Contains(b.String(), "Default: --format="+DefaultJobsFormat+"\n") {
		t.Errorf("help lacks the default format:\n%s", b.String())
	}
}

// TestParseJobsFormat: names are case-insensitive, %N right-aligns, %-N
// left-aligns, a column keeps its own alignment without one; an unknown
// name or a bad width is an error naming what is wanted.
func TestParseJobsFormat(t *testing.T) {
	fields, err := ParseJobsFormat("JobID, elapsed ,name%-12,USER%8")
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		key   string
		width int
		right bool
	}
	want := []got{{"jobid", 0, false}, {"elapsed", 0, true}, {"name", 12, false}, {"user", 8, true}}
	if len(fields) != len(want) {
		t.Fatalf("%d fields, want %d", len(fields), len(want))
	}
	for i, f := range fields {
		if g := (got{f.col.key, f.width, f.right}); g != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, g, want[i])
		}
	}
	if d, err := ParseJobsFormat(" "); err != nil || len(d) != strings.Count(DefaultJobsFormat, ",")+1 {
		t.Errorf("empty format: %d fields, %v; want the default's", len(d), err)
	}
	for _, tc := range []struct{ in, want string }{
		{"jobid,bogus", `--format: unknown column "bogus"; known: jobid, name, jobname`},
		{"name%x", `--format: "name%x": want a width such as name%20`},
		{"name%0", `--format: "name%0"`},
		{",", "--format: no column named; known: jobid"},
	} {
		if _, err := ParseJobsFormat(tc.in); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseJobsFormat(%q) = %v, want %q…", tc.in, err, tc.want)
		}
	}
}
