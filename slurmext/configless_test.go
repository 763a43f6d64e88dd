package slurmext

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindSlurmConf: the lookup on fixture trees laid out as slurmd lays
// out a configless node (conf-cache under the spool directory, the
// /run/slurm/conf link to it).
func TestFindSlurmConf(t *testing.T) {
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "slurm", "slurm.conf")
	spool := filepath.Join(root, "var", "spool", "slurmd")
	cache := filepath.Join(spool, "conf-cache")
	run := filepath.Join(root, "run", "slurm", "conf")
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("ClusterName=c\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roots := ConfRoots{RunDir: run, SpoolDirs: []string{spool}}
	if p, src := FindSlurmConf(etc, roots); p != etc || src != ConfNone {
		t.Fatalf("nothing anywhere: %s %s", p, src)
	}
	write(filepath.Join(cache, "slurm.conf"))
	if p, src := FindSlurmConf(etc, roots); p != filepath.Join(cache, "slurm.conf") || src != ConfSpoolCache {
		t.Fatalf("spool cache only: %s %s", p, src)
	}
	if err := os.MkdirAll(filepath.Dir(run), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cache, run); err != nil {
		t.Fatal(err)
	}
	if p, src := FindSlurmConf(etc, roots); p != filepath.Join(run, "slurm.conf") || src != ConfRunCache {
		t.Fatalf("run link: %s %s", p, src)
	}
	write(etc)
	if p, src := FindSlurmConf(etc, roots); p != etc || src != ConfConfigured {
		t.Fatalf("configured file present: %s %s", p, src)
	}
	// slurmd's SLURM_CONF (its Prolog's environment) comes after the
	// configured file and before the cache.
	env := filepath.Join(root, "env", "slurm.conf")
	write(env)
	withEnv := roots
	withEnv.Env = env
	if p, src := FindSlurmConf(filepath.Join(root, "absent.conf"), withEnv); p != env || src != ConfEnv {
		t.Fatalf("SLURM_CONF: %s %s", p, src)
	}
	if p, src := FindSlurmConf(etc, withEnv); p != etc || src != ConfConfigured {
		t.Fatalf("configured before SLURM_CONF: %s %s", p, src)
	}
	// A directory in place of the configured file is not a file.
	dir := filepath.Join(root, "dir.conf")
	os.Mkdir(dir, 0o755)
	if p, src := FindSlurmConf(dir, roots); src != ConfRunCache {
		t.Fatalf("directory configured: %s %s", p, src)
	}
	// The cached configuration's Include lines resolve inside the cache.
	write(filepath.Join(cache, "nodes.conf"))
	os.WriteFile(filepath.Join(cache, "slurm.conf"), []byte("ClusterName=c\nInclude nodes.conf\n"), 0o644)
	c, err := LoadClusterConf(filepath.Join(run, "slurm.conf"), nil)
	if err != nil || c.ClusterName != "c" || len(c.Files) != 2 {
		t.Fatalf("cached conf: %+v %v", c, err)
	}
}
