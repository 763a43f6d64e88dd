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
	ConfConfigured ConfSource = "configured" // the path configured
	ConfEnv        ConfSource = "SLURM_CONF" // slurmd's SLURM_CONF (configless: its cache)
	ConfRunCache   ConfSource = "configless cache " + ConfiglessRunDir
	ConfSpoolCache ConfSource = "configless cache SlurmdSpoolDir/" + ConfCacheDir
	ConfNone       ConfSource = "none"
)

// ConfRoots are where FindSlurmConf looks after the configured path: Env,
// the SLURM_CONF of the environment (slurmd gives its Prolog and Epilog
// SLURM_CONF, on a configless node its cache's slurm.conf:
// prep_script_slurmd.c, slurmd.c), RunDir (ConfiglessRunDir in production)
// and the SlurmdSpoolDirs whose conf-cache may hold the files
// (DefaultSlurmdSpoolDir in production: where SlurmdSpoolDir is set is
// itself written in the slurm.conf being looked for).
type ConfRoots struct {
	Env       string
	RunDir    string
	SpoolDirs []string
}

// DefaultConfRoots are the production roots.
func DefaultConfRoots() ConfRoots {
	return ConfRootsFrom(os.Getenv)
}

// ConfRootsFrom is DefaultConfRoots for the environment getenv reads: a
// hook's, which the agent reads for a hook gpuprof-hook forwarded.
func ConfRootsFrom(getenv func(string) string) ConfRoots {
	return ConfRoots{Env: getenv("SLURM_CONF"), RunDir: ConfiglessRunDir, SpoolDirs: []string{DefaultSlurmdSpoolDir}}
}

// FindSlurmConf chooses the slurm.conf to read: the configured path when it
// exists, else SLURM_CONF (Env), else the configless cache
// (RunDir/slurm.conf, then each SpoolDir/conf-cache/slurm.conf), the order
// Slurm's own commands look in after SLURM_CONF and the default file.
// When none exists it returns the configured path (whose read then fails
// with its own error) and ConfNone.
func FindSlurmConf(configured string, roots ConfRoots) (string, ConfSource) {
	if configured != "" && isFile(configured) {
		return configured, ConfConfigured
	}
	if roots.Env != "" && isFile(roots.Env) {
		return roots.Env, ConfEnv
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
