package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFormats(t *testing.T) {
	got, err := Formats([]string{" HTML", "markdown", "md", "json", "htm"})
	if err != nil || !slices.Equal(got, []string{"html", "md", "json"}) {
		t.Errorf("Formats = %v, %v", got, err)
	}
	for _, in := range [][]string{{"pdf"}, {}} {
		if _, err := Formats(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestFileSafe(t *testing.T) {
	for in, want := range map[string]string{"lab": "lab", "a/b c": "a_b_c", ".hidden": "_.hidden", "": "_", "Lab-2.x_y": "Lab-2.x_y"} {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ClusterSuffix("../x"); got != "-_.._x" {
		t.Errorf("ClusterSuffix = %q", got)
	}
}

// WriteFiles makes the directory and writes each format whole, readable
// by all, telling each path; no temporary file stays behind.
func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	var wrote []string
	if err := WriteFiles(dir, []string{"md", "json"}, Data{Month: "2026-11"}, "-lab", func(p string) { wrote = append(wrote, p) }); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "gpuprof-report-2026-11-lab.md"), filepath.Join(dir, "gpuprof-report-2026-11-lab.json")}
	if !slices.Equal(wrote, want) {
		t.Errorf("wrote %q, want %q", wrote, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files in the directory, want 2", len(entries))
	}
	for _, p := range want {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o644 || fi.Size() == 0 {
			t.Errorf("%s: %v, %v", p, fi, err)
		}
	}
}
