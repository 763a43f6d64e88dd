package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// A format Formats would refuse is an error, with no file (not even an
// empty one) left behind; a nil wrote is allowed.
func TestWriteFilesRefusesUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFiles(dir, []string{"pdf"}, Data{Month: "2026-11"}, "", nil); err == nil || !strings.Contains(err.Error(), "pdf") {
		t.Errorf("WriteFiles(pdf) = %v, want an error naming the format", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left in the directory, want none", len(entries))
	}
	if err := WriteFiles(dir, []string{"md"}, Data{Month: "2026-11"}, "", nil); err != nil {
		t.Errorf("WriteFiles with a nil wrote: %v", err)
	}
}

// A link another account planted where the report directory should be, in
// a directory that account can write, is not followed (a root cron job
// writes reports: docs/report.md); a link planted at a report's own name
// is replaced, its target left as it was.
func TestWriteFilesFollowsNoPlantedLink(t *testing.T) {
	shared, victim := t.TempDir(), t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil { // writable by every account, no sticky bit
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(shared, "out")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(filepath.Join(shared, "out"), []string{"md"}, Data{Month: "2026-11"}, "", nil); err == nil {
		t.Error("WriteFiles through a planted directory link succeeded, want it refused")
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("%d files written where the link pointed, want none", len(entries))
	}

	dir, target := t.TempDir(), filepath.Join(victim, "keep")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "gpuprof-report-2026-11.md")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, []string{"md"}, Data{Month: "2026-11"}, "", nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target now holds %q, want it untouched", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "gpuprof-report-2026-11.md")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Errorf("report file: %v, %v; want a regular 0644 file", fi, err)
	}
}
