package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// TestPostinstRefusesPlantedLinks: postinst runs as root on every install
// and upgrade and fixes owners and modes in /var/lib/gpuprof, its spool
// and /var/log/gpuprof, directories the group gpuprof (the gpuprof user,
// the SlurmUser) may write. A link planted there (spool -> /etc,
// gpuprof.db -> a file of root's, a log -> another), or a hard link, must
// not have root chown or chmod its target. The script runs on copies of
// the directories in a temporary one, with the group root standing in
// for gpuprof (no account is made) and nothing of systemd or Slurm
// reached.
func TestPostinstRefusesPlantedLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFail(t, "postinst changes owners: needs root")
	}
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "packaging", "scripts", "postinst.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tg := safefstest.New(t)
	tmp := t.TempDir()
	lib, logDir := filepath.Join(tmp, "lib"), filepath.Join(tmp, "log")
	for _, d := range []string{lib, logDir} {
		if err := os.Mkdir(d, 0o770); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o770|os.ModeSetgid); err != nil {
			t.Fatal(err)
		}
	}
	safefstest.Plant(t, tg.Dir, filepath.Join(lib, "spool"))
	// A second pass below finds a real spool with another run's records:
	// one root-only (made the group's), one a planted link (left alone).
	safefstest.Plant(t, tg.File, filepath.Join(lib, "gpuprof.db"))
	safefstest.Plant(t, tg.Missing, filepath.Join(lib, "gpuprof.db-wal"))
	if err := os.Link(tg.Empty, filepath.Join(lib, "other.db")); err != nil {
		t.Fatal(err)
	}
	safefstest.Plant(t, tg.File, filepath.Join(logDir, "gpuprof.log"))
	if err := os.WriteFile(filepath.Join(logDir, "hooks.log"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	script := strings.NewReplacer(
		"/var/lib/gpuprof", lib,
		"/var/log/gpuprof", logDir,
		"/etc/slurm/slurm.conf /etc/slurm-llnl/slurm.conf", filepath.Join(tmp, "no-slurm.conf"),
		"${slurmuser:-slurm}", "${slurmuser:-root}",
		"getent group gpuprof", "getent group root",
		"getent passwd gpuprof", "getent passwd root",
		"-g gpuprof", "-g root",
		"root:gpuprof", "root:root",
		"chgrp gpuprof", "chgrp root",
		"/run/systemd/system", filepath.Join(tmp, "no-systemd"),
	).Replace(string(src))
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, left := range []string{"/var/", "/etc/slurm", "/run/systemd"} {
			if strings.Contains(line, left) {
				t.Fatalf("the test's copy of postinst still reaches %s: %s", left, line)
			}
		}
	}
	path := filepath.Join(tmp, "postinst")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/sh", path, "configure").CombinedOutput()
	if err != nil {
		t.Fatalf("postinst configure: %v\n%s", err, out)
	}
	tg.Untouched(t)
	for _, d := range []string{lib, filepath.Join(lib, "spool"), logDir} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o770 || fi.Mode()&os.ModeSetgid == 0 {
			t.Errorf("%s: %v, %v; want a directory of mode 2770", d, fi, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(logDir, "hooks.log")); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("hooks.log: %v, %v; want mode 0660 (the group's too)", fi, err)
	}
	if !strings.Contains(string(out), "spool was not a directory") || !strings.Contains(string(out), "other hard links") {
		t.Errorf("postinst said %q; want the replaced spool and the hard-linked file named", out)
	}

	// An upgrade over a spool that holds another run's root-only records.
	spool := filepath.Join(lib, "spool")
	record := filepath.Join(spool, "1764979200000000000-42-abcd.end.json")
	if err := os.WriteFile(record, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	safefstest.Plant(t, tg.File, filepath.Join(spool, "1764979200000000001-43-abce.end.json"))
	if out, err := exec.Command("/bin/sh", path, "configure").CombinedOutput(); err != nil {
		t.Fatalf("postinst configure, second run: %v\n%s", err, out)
	}
	tg.Untouched(t)
	if fi, err := os.Stat(record); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("a root-only spool record after postinst: %v, %v; want mode 0660 (the group's, so serve can ingest it)", fi, err)
	}
	if fi, err := os.Lstat(spool); err != nil || fi.Mode().Perm() != 0o770 || fi.Mode()&os.ModeSetgid == 0 {
		t.Errorf("spool after the second run: %v, %v; want a directory of mode 2770", fi, err)
	}
}
