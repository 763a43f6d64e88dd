package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGenDocs: a man page for every visible command, in section 1 for
// users' commands and 8 for daemons and hooks, reproducible under
// SOURCE_DATE_EPOCH, rendered by man(1) when it is installed; completion
// scripts that bash loads and that name gpuprof's completion function.
func TestGenDocs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "1764547200") // 2025-12-01
	gen := func(sub string) {
		t.Helper()
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs([]string{"gendocs", "--man", filepath.Join(dir, sub, "man"), "--completions", filepath.Join(dir, sub, "comp")})
		if err := root.Execute(); err != nil {
			t.Fatalf("gendocs: %v\n%s", err, out.String())
		}
	}
	gen("a")
	gen("b")
	// Users' commands in section 1 (gpuprof is in /usr/bin), what root,
	// slurmd, slurmctld and the service units run in section 8.
	root := newRootCommand()
	want := map[string]string{"gpuprof": "1"}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			want["gpuprof-"+c.Name()] = "1"
		}
	}
	for _, name := range []string{"agent", "prolog", "epilog", "jobcomp", "mailprog", "admincomment", "ingest", "serve", "import", "import-sacct", "notices-digest"} {
		want["gpuprof-"+name] = "8"
	}
	for _, name := range []string{"jobs", "show", "tui", "notices", "report", "profiles", "recommend", "plan", "whatif"} {
		if want["gpuprof-"+name] != "1" {
			t.Errorf("gpuprof-%s: section %q, want 1", name, want["gpuprof-"+name])
		}
	}
	for name, section := range want {
		file := filepath.Join("man"+section, name+"."+section)
		a, err := os.ReadFile(filepath.Join(dir, "a", "man", file))
		if err != nil {
			t.Errorf("no man page %s: %v", file, err)
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, "b", "man", file))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with one SOURCE_DATE_EPOCH", file)
		}
		if !bytes.HasPrefix(a, []byte(".nh\n.TH ")) || !bytes.Contains(a, []byte(`"`+section+`"`)) || !bytes.Contains(a, []byte("Dec 2025")) {
			t.Errorf("%s: not a section-%s man page dated by SOURCE_DATE_EPOCH:\n%.200s", file, section, a)
		}
		// SEE ALSO names each page in its own section.
		for _, m := range regexp.MustCompile(`(gpuprof(?:-[a-z0-9]+)*)\(([0-9])\)`).FindAllSubmatch(a, -1) {
			if s, ok := want[string(m[1])]; ok && s != string(m[2]) {
				t.Errorf("%s refers to %s(%s), a page of section %s", file, m[1], m[2], s)
			}
		}
	}
	for _, gone := range []string{"man8/gpuprof-gendocs.8", "man1/gpuprof-gendocs.1"} {
		if _, err := os.Stat(filepath.Join(dir, "a", "man", gone)); err == nil {
			t.Errorf("the hidden gendocs command has a man page %s", gone)
		}
	}
	if man, err := exec.LookPath("man"); err == nil {
		out, err := exec.Command(man, "-l", "-P", "cat", filepath.Join(dir, "a", "man", "man1", "gpuprof-show.1")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SYNOPSIS") || !strings.Contains(string(out), "gpuprof show JOBID") {
			t.Errorf("man -l gpuprof-show.1: %v\n%s", err, out)
		}
	}
	for _, f := range []string{"gpuprof.bash", "_gpuprof", "gpuprof.fish"} {
		b, err := os.ReadFile(filepath.Join(dir, "a", "comp", f))
		if err != nil || !bytes.Contains(b, []byte("__complete")) {
			t.Errorf("completion %s: %v, or it does not ask gpuprof __complete", f, err)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		out, err := exec.Command(bash, "-c", "source "+filepath.Join(dir, "a", "comp", "gpuprof.bash")+" && complete -p gpuprof").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "gpuprof") {
			t.Errorf("bash does not load the completion: %v\n%s", err, out)
		}
	}
}

// TestValueCompletion: <Tab> after --state offers sacct's states with
// their short forms, after --sort the store's sort keys, and after --user
// the users of the jobs in the database (root sees every user's).
func TestValueCompletion(t *testing.T) {
	complete := func(args ...string) []string {
		t.Helper()
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(new(bytes.Buffer))
		root.SetArgs(append([]string{"__complete"}, args...))
		if err := root.Execute(); err != nil {
			t.Fatalf("__complete %v: %v", args, err)
		}
		var vals []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if !strings.HasPrefix(l, ":") {
				vals = append(vals, l)
			}
		}
		return vals
	}
	if got := complete("jobs", "--state", "C"); strings.Join(got, "|") != "CANCELLED\tCA|COMPLETED\tCD" {
		t.Errorf("--state C completes to %q", got)
	}
	if got := complete("jobs", "--sort", "ut"); strings.Join(got, "|") != "util" {
		t.Errorf("--sort ut completes to %q", got)
	}
	if os.Getuid() != 0 {
		t.Skip("the local database shows other users' jobs to root or admin_group only")
	}
	t.Setenv("GPUPROF_CONFIG", "")
	db := filepath.Join(t.TempDir(), "c.db")
	root := newRootCommand()
	root.SetOut(new(bytes.Buffer))
	root.SetArgs([]string{"demo", "month", "--out", t.TempDir(), "--db", db, "--days", "1"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	got := complete("jobs", "--db", db, "--user", "")
	if len(got) < 3 || !strings.Contains(strings.Join(got, " "), "alice") {
		t.Errorf("--user completes to %q, want the demo's users", got)
	}
	if got := complete("jobs", "--db", db, "--partition", "l"); strings.Join(got, "|") != "l40s" {
		t.Errorf("--partition l completes to %q", got)
	}
}
