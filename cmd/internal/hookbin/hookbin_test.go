package hookbin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGPUProfFor: gpuprof-hook finds the gpuprof that goes with it, as
// contrib/slurm/hook.sh found gpuprof-hook from gpuprof: beside it, else
// PREFIX/bin/gpuprof for PREFIX/lib/gpuprof/gpuprof-hook.
func TestGPUProfFor(t *testing.T) {
	root := t.TempDir()
	exe := func(p string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	beside := exe(filepath.Join(root, "bin", "gpuprof"))
	prefixed := exe(filepath.Join(root, "usr", "bin", "gpuprof"))
	if err := os.MkdirAll(filepath.Join(root, "notexec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "notexec", "gpuprof"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A gpuprof any account may rewrite is not run by root's hook.
	loose := exe(filepath.Join(root, "loose", "gpuprof"))
	if err := os.Chmod(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, self string
		want       []string // empty: the fallback, this machine's /usr/local/bin or /usr/bin gpuprof, or ""
	}{
		{name: "beside", self: filepath.Join(root, "bin", "gpuprof-hook"), want: []string{beside}},
		{name: "PREFIX/lib/gpuprof", self: filepath.Join(root, "usr", "lib", "gpuprof", "gpuprof-hook"), want: []string{prefixed}},
		{name: "not executable beside", self: filepath.Join(root, "notexec", "gpuprof-hook")},
		{name: "own path unknown", self: ""},
		{name: "writable by others beside", self: filepath.Join(root, "loose", "gpuprof-hook")},
	}
	fallback := GPUProfFor("")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := GPUProfFor(tt.self)
			want := fallback
			if len(tt.want) > 0 {
				want = tt.want[0]
			}
			if got != want {
				t.Errorf("GPUProfFor(%q) = %q, want %q", tt.self, got, want)
			}
		})
	}
}

// TestHandOverTo: gpuprof-hook hands a hook to gpuprof-hook-full beside
// it, when that is an executable no other account may write; else to the
// gpuprof that goes with it.
func TestHandOverTo(t *testing.T) {
	root := t.TempDir()
	write := func(p string, mode os.FileMode) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := write(filepath.Join(root, "ok", FullHook), 0o755)
	gpuprof := write(filepath.Join(root, "nofull", "gpuprof"), 0o755)
	write(filepath.Join(root, "loose", FullHook), 0o777)
	looseGpuprof := write(filepath.Join(root, "loose", "gpuprof"), 0o755)
	write(filepath.Join(root, "notexec", FullHook), 0o644)
	notexecGpuprof := write(filepath.Join(root, "notexec", "gpuprof"), 0o755)
	for self, want := range map[string]string{
		filepath.Join(root, "ok", "gpuprof-hook"):      full,
		filepath.Join(root, "nofull", "gpuprof-hook"):  gpuprof,
		filepath.Join(root, "loose", "gpuprof-hook"):   looseGpuprof,
		filepath.Join(root, "notexec", "gpuprof-hook"): notexecGpuprof,
	} {
		if got := HandOverTo(self); got != want {
			t.Errorf("HandOverTo(%s) = %s, want %s", self, got, want)
		}
	}
}

// TestKind: the hook a hook binary's arguments name, as both gpuprof-hook
// and gpuprof-hook-full read them.
func TestKind(t *testing.T) {
	tests := []struct {
		name    string
		rest    []string
		context string
		want    string
	}{
		{name: "prolog", rest: []string{"prolog"}, want: "prolog"},
		{name: "jobcomp, extra args ignored", rest: []string{"jobcomp", "extra"}, want: "jobcomp"},
		{name: "slurmd's epilog, no args", context: "epilog_slurmd", want: "epilog"},
		{name: "slurmd's prolog, no args", context: "prolog_slurmd", want: "prolog"},
		{name: "the name beats the context", rest: []string{"epilog"}, context: "prolog_slurmd", want: "epilog"},
		{name: "nothing"},
		{name: "agent", rest: []string{"agent"}},
		{name: "another context", context: "prolog_slurmctld"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Kind(tt.rest, func(string) string { return tt.context }); got != tt.want {
				t.Errorf("Kind(%q, %q) = %q, want %q", tt.rest, tt.context, got, tt.want)
			}
		})
	}
}

// TestConfigFile: --config, else $GPUPROF_CONFIG, else the default; an
// empty flag or variable counts as unset.
func TestConfigFile(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GPUPROF_CONFIG" {
				return v
			}
			return ""
		}
	}
	for _, tt := range []struct {
		flag, env, want string
		explicit        bool
	}{
		{flag: "/a.toml", env: "/b.toml", want: "/a.toml", explicit: true},
		{env: "/b.toml", want: "/b.toml", explicit: true},
		{want: "/etc/gpuprof/gpuprof.toml"},
	} {
		got, explicit := ConfigFile(tt.flag, env(tt.env), "/etc/gpuprof/gpuprof.toml")
		if got != tt.want || explicit != tt.explicit {
			t.Errorf("ConfigFile(%q, $GPUPROF_CONFIG=%q) = %q, %v; want %q, %v", tt.flag, tt.env, got, explicit, tt.want, tt.explicit)
		}
	}
}
