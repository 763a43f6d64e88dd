// Package hookbin is what gpuprof-hook, the thin hook binary, shares with
// gpuprof and gpuprof-hook-full without linking the hook runtime: which
// binary it hands a hook over to, which gpuprof goes with a hook binary,
// and the hidden flag that tells the binary handed to when the hook
// began. It imports the standard library only
// (internal/archtest's TestThinHookIsSmall).
package hookbin

import (
	"os"
	"path/filepath"
	"syscall"
)

// BeganFlag is gpuprof prolog's and epilog's hidden flag through which
// gpuprof-hook, handing a hook over, tells when it started it
// (hooks.Runtime.Began), in RFC 3339 with nanoseconds.
const BeganFlag = "hook-began"

// Kind is the hook a hook binary's arguments name (rest: what is left
// after the flags), as gpuprof's hook commands take it: its first
// argument, prolog, epilog or jobcomp (the ones after it ignored); with
// none, the one slurmd's SLURM_SCRIPT_CONTEXT says (installed directly as
// Prolog= or Epilog=); "" for none. contrib/slurm/hook.sh applies the same
// rule in shell.
func Kind(rest []string, getenv func(string) string) string {
	if len(rest) == 0 {
		switch getenv("SLURM_SCRIPT_CONTEXT") {
		case "prolog_slurmd":
			return "prolog"
		case "epilog_slurmd":
			return "epilog"
		}
		return ""
	}
	switch rest[0] {
	case "prolog", "epilog", "jobcomp":
		return rest[0]
	}
	return ""
}

// ConfigFile is the configuration file every gpuprof command reads, and
// whether it was asked for: flag (--config) when not empty, else
// $GPUPROF_CONFIG when not empty, else def (config.DefaultPath, which the
// hook binaries cannot import without the TOML decoder).
func ConfigFile(flag string, getenv func(string) string, def string) (string, bool) {
	if flag != "" {
		return flag, true
	}
	if p := getenv("GPUPROF_CONFIG"); p != "" {
		return p, true
	}
	return def, false
}

// FullHook is the name of the binary that runs a hook whole
// (cmd/gpuprof-hook-full), installed beside gpuprof-hook.
const FullHook = "gpuprof-hook-full"

// HandOverTo is the binary gpuprof-hook at self hands a hook to:
// gpuprof-hook-full beside it, else the gpuprof that goes with it
// (GPUProfFor); both run it whole with the same arguments. "" when neither
// is there. Either must be a regular executable that belongs to root or to
// the hook's own user and that no one else may write.
func HandOverTo(self string) string {
	if self != "" {
		if full := filepath.Join(filepath.Dir(self), FullHook); runnable(full) {
			return full
		}
	}
	return GPUProfFor(self)
}

// GPUProfFor is the gpuprof binary that goes with the hook binary at self:
// the one beside it (make build's bin/, make install's /usr/local/bin),
// else PREFIX/bin/gpuprof for a hook binary in PREFIX/lib/gpuprof (the
// package's /usr/lib/gpuprof), else the first of the paths
// contrib/slurm/hook.sh searches; "" when none is there.
func GPUProfFor(self string) string {
	var candidates []string
	if self != "" {
		dir := filepath.Dir(self)
		candidates = append(candidates, filepath.Join(dir, "gpuprof"))
		if filepath.Base(dir) == "gpuprof" && filepath.Base(filepath.Dir(dir)) == "lib" {
			candidates = append(candidates, filepath.Join(filepath.Dir(filepath.Dir(dir)), "bin", "gpuprof"))
		}
	}
	candidates = append(candidates, "/usr/local/bin/gpuprof", "/usr/bin/gpuprof")
	for _, c := range candidates {
		if runnable(c) {
			return c
		}
	}
	return ""
}

// runnable: path is a regular executable file a hook may run
// (trustedBinary).
func runnable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && trustedBinary(fi)
}

// trustedBinary: the hooks run as root (slurmd) or the SlurmUser
// (slurmctld), and what they start runs with that identity, so a binary
// another account could have written is passed over: it must belong to
// root or to the hook's own user and be writable by no one else.
func trustedBinary(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return false
	}
	return fi.Mode().Perm()&0o022 == 0
}
