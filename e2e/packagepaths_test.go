package e2e

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's install steps name paths an admin copies into slurm.conf
// and an init script; these tests hold every such path against what the
// package (packaging/nfpm.yaml) and `make install` (the Makefile) really
// install. scripts/package-check.sh checks the same after dpkg -i. They
// need neither root nor Slurm.

// TestExampleSlurmConfIsREADMEBlock: the package's example slurm.conf
// (contrib/slurm/slurm.conf.example, installed as
// /usr/share/doc/gpuprof/examples/slurm.conf) holds the README's package
// block line for line, and every path either names is in the package.
func TestExampleSlurmConfIsREADMEBlock(t *testing.T) {
	root := moduleRoot(t)
	readme := readText(t, filepath.Join(root, "README.md"))
	example := readText(t, filepath.Join(root, "contrib", "slurm", "slurm.conf.example"))
	pkg := packageContents(t, root)

	block := fencedBlockWith(t, readme, "Prolog=/usr/lib/gpuprof/")
	if !strings.Contains(example, block) {
		t.Errorf("contrib/slurm/slurm.conf.example does not hold the README's package block:\n%s", block)
	}
	if !pkg.has("/usr/share/doc/gpuprof/examples/slurm.conf") {
		t.Error("the package does not install the example as /usr/share/doc/gpuprof/examples/slurm.conf")
	}
	for _, key := range []string{"Prolog", "Epilog", "PrologFlags", "JobCompType", "JobCompLoc", "PrologEpilogTimeout"} {
		if confValue(block, key) == "" {
			t.Errorf("the README's package block sets no %s", key)
		}
	}
	for _, text := range []string{block, example} {
		for _, p := range confPaths(text) {
			if !pkg.has(p) {
				t.Errorf("slurm.conf names %s, which the package does not install", p)
			}
		}
	}
	// The agent's command without systemd names the package's binary.
	agent := fencedBlockWith(t, readme, "gpuprof agent --config")
	for _, p := range absPaths(agent) {
		if !pkg.has(p) && !strings.HasPrefix(p, "/dev/") {
			t.Errorf("the README's agent command names %s, which the package does not install", p)
		}
	}
	if !strings.Contains(agent, "/usr/bin/gpuprof agent") {
		t.Errorf("the README's agent command does not run /usr/bin/gpuprof:\n%s", agent)
	}
}

// TestImportCronIsREADMELine: the README's cron line for the import
// without systemd is the package's example (contrib/cron/gpuprof-import,
// /usr/share/doc/gpuprof/examples/gpuprof-import.cron), and the binary it
// runs is the package's.
func TestImportCronIsREADMELine(t *testing.T) {
	root := moduleRoot(t)
	readme := readText(t, filepath.Join(root, "README.md"))
	example := readText(t, filepath.Join(root, "contrib", "cron", "gpuprof-import"))
	block := strings.TrimSpace(fencedBlockWith(t, readme, "gpuprof import sacct --config"))
	if !strings.Contains(example, block+"\n") {
		t.Errorf("contrib/cron/gpuprof-import does not hold the README's cron line:\n%s", block)
	}
	if !strings.HasPrefix(block, "*/15 * * * * gpuprof ") {
		t.Errorf("the README's cron line does not run every 15 minutes as the gpuprof user: %s", block)
	}
	pkg := packageContents(t, root)
	if !pkg.has("/usr/share/doc/gpuprof/examples/gpuprof-import.cron") {
		t.Error("the package does not install the cron example")
	}
	if !strings.Contains(block, " /usr/bin/gpuprof import sacct") || !pkg.has("/usr/bin/gpuprof") {
		t.Errorf("the README's cron line does not run the package's /usr/bin/gpuprof: %s", block)
	}
}

// TestREADMEInstallBlock: the README's `make install` block names what
// `make install` installs.
func TestREADMEInstallBlock(t *testing.T) {
	root := moduleRoot(t)
	readme := readText(t, filepath.Join(root, "README.md"))
	installed := makeInstallPaths(t, root)
	block := fencedBlockWith(t, readme, "Prolog=/etc/slurm/")
	paths := confPaths(block)
	if len(paths) < 3 {
		t.Fatalf("the README's make install block names %d paths, want Prolog, Epilog and JobCompLoc:\n%s", len(paths), block)
	}
	for _, p := range paths {
		if !installed.has(p) {
			t.Errorf("the README's make install block names %s, which make install does not install", p)
		}
	}
	if !installed.has("/usr/local/bin/gpuprof") {
		t.Error("make install does not put gpuprof in /usr/local/bin, on every user's PATH")
	}
}

// fileSet is what an install puts on disk: files, and directories with
// everything below them (a glob's destination).
type fileSet struct{ files, dirs []string }

// has says whether p — a file, a directory holding something, or a glob
// such as /etc/slurm/prolog.d/* — is installed.
func (s fileSet) has(p string) bool {
	if strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "/*")
		for _, f := range append(append([]string{}, s.files...), s.dirs...) {
			if strings.HasPrefix(f, p+"/") {
				return true
			}
		}
		return false
	}
	for _, f := range s.files {
		if f == p || strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	for _, d := range s.dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// packageContents reads the dst: of every entry in packaging/nfpm.yaml's
// contents (a dst ending in "/" takes a glob of files: a directory).
func packageContents(t *testing.T, root string) fileSet {
	t.Helper()
	var s fileSet
	for _, m := range regexp.MustCompile(`(?m)^\s+dst:\s*(\S+)\s*$`).FindAllStringSubmatch(readText(t, filepath.Join(root, "packaging", "nfpm.yaml")), -1) {
		if strings.HasSuffix(m[1], "/") {
			s.dirs = append(s.dirs, strings.TrimSuffix(m[1], "/"))
		} else {
			s.files = append(s.files, m[1])
		}
	}
	if len(s.files) < 5 {
		t.Fatalf("packaging/nfpm.yaml: %d files found, its layout changed?", len(s.files))
	}
	return s
}

// makeInstallPaths reads the $(DESTDIR) paths of the Makefile's install
// target.
func makeInstallPaths(t *testing.T, root string) fileSet {
	t.Helper()
	mk := readText(t, filepath.Join(root, "Makefile"))
	i := strings.Index(mk, "\ninstall:")
	if i < 0 {
		t.Fatal("the Makefile has no install target")
	}
	rest := mk[i+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	var s fileSet
	for _, line := range strings.Split(rest, "\n") {
		if strings.Contains(line, "rm -f") {
			continue
		}
		for _, m := range regexp.MustCompile(`\$\(DESTDIR\)(/\S+)`).FindAllStringSubmatch(line, -1) {
			if strings.Contains(line, "install -d") || strings.Contains(line, "--man") {
				s.dirs = append(s.dirs, m[1])
			} else {
				s.files = append(s.files, m[1])
			}
		}
	}
	return s
}

// fencedBlockWith is the text of the first ``` block holding what.
func fencedBlockWith(t *testing.T, md, what string) string {
	t.Helper()
	parts := strings.Split(md, "```")
	for i := 1; i < len(parts); i += 2 {
		b := strings.TrimPrefix(parts[i], "\n")
		if nl := strings.IndexByte(b, '\n'); nl >= 0 && !strings.Contains(b[:nl], " ") && !strings.Contains(b[:nl], "=") && strings.TrimSpace(b[:nl]) != "" {
			b = b[nl+1:] // a language tag
		}
		if strings.Contains(b, what) {
			return b
		}
	}
	t.Fatalf("README.md has no code block with %q", what)
	return ""
}

// confValue is key's value in slurm.conf text, without a trailing comment.
func confValue(conf, key string) string {
	v := ""
	for _, line := range strings.Split(conf, "\n") {
		line, _, _ = strings.Cut(line, "#")
		k, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.EqualFold(k, key) {
			v = strings.TrimSpace(val)
		}
	}
	return v
}

// confPaths are the absolute paths slurm.conf text sets (comments left
// out).
func confPaths(conf string) []string {
	var out []string
	for _, line := range strings.Split(conf, "\n") {
		line, _, _ = strings.Cut(line, "#")
		out = append(out, absPaths(line)...)
	}
	return out
}

// absPaths are the absolute paths in text, outside comments.
func absPaths(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, m := range regexp.MustCompile(`(?:^|[\s=])(/[^\s<>&]+)`).FindAllStringSubmatch(line, -1) {
			out = append(out, path.Clean(m[1]))
		}
	}
	return out
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
