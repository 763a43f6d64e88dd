package slurmext

import (
	"os"
	"path/filepath"
)

// Where a configless node keeps its configuration. With
// SlurmctldParameters=enable_configless, slurmd fetches the files from
// slurmctld and writes them into SlurmdSpoolDir/conf-cache, and links
// /run/slurm/conf to that directory (slurmd.c since 20.02, the same in
// 22.05 and later); Slurm's own commands look for /run/slurm/conf/slurm.conf
// when the default file is absent (read_config.c,
// _establish_config_source).
const (
	// ConfiglessRunDir is slurmd's link to its cached configuration.
	ConfiglessRunDir = "/run/slurm/conf"
	// ConfCacheDir is the cache's directory under SlurmdSpoolDir.
	ConfCacheDir = "conf-cache"
)

// ConfSource says where the slurm.conf FindSlurmConf chose came from.
type ConfSource string

const (
	ConfConfigured ConfSource = "configured" // the path configured (or SLURM_CONF)
	ConfRunCache   ConfSource = "configless cache " + ConfiglessRunDir
	ConfSpoolCache ConfSource = "configless cache SlurmdSpoolDir/" + ConfCacheDir
	ConfNone       ConfSource = "none"
)

// ConfRoots are where FindSlurmConf looks: RunDir (ConfiglessRunDir in
// production) and the SlurmdSpoolDirs whose conf-cache may hold the files
// (DefaultSlurmdSpoolDir in production: where SlurmdSpoolDir is set is
// itself written in the slurm.conf being looked for).
type ConfRoots struct {
	RunDir    string
	SpoolDirs []string
}

// DefaultConfRoots are the production roots.
func DefaultConfRoots() ConfRoots {
	return ConfRoots{RunDir: ConfiglessRunDir, SpoolDirs: []string{DefaultSlurmdSpoolDir}}
}

// FindSlurmConf chooses the slurm.conf to read, in the order Slurm's own
// commands do: the configured path when it exists, else the configless
// cache (RunDir/slurm.conf, then each SpoolDir/conf-cache/slurm.conf).
// When none exists it returns the configured path (whose read then fails
// with its own error) and ConfNone.
func FindSlurmConf(configured string, roots ConfRoots) (string, ConfSource) {
	if configured != "" && isFile(configured) {
		return configured, ConfConfigured
	}
	if roots.RunDir != "" {
		if p := filepath.Join(roots.RunDir, "slurm.conf"); isFile(p) {
			return p, ConfRunCache
		}
	}
	for _, d := range roots.SpoolDirs {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, ConfCacheDir, "slurm.conf"); isFile(p) {
			return p, ConfSpoolCache
		}
	}
	return configured, ConfNone
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
