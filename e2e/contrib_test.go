package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/config"
)

// The files an admin installs from contrib/ must work as shipped; these
// tests need neither root nor Slurm.

func TestConfigExampleIsDefaults(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "contrib", "slurm", "gpuprof.toml.example")
	got, err := config.Load(path, true)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	// The example claims to show the defaults except where marked.
	want := config.Default()
	want.LogFile = "/var/log/gpuprof/gpuprof.log"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("example config:\n got %+v\nwant %+v", got, want)
	}
}

// TestHookWrappers runs the production wrappers with slurmd's bare
// environment (no PATH) against a stand-in binary.
func TestHookWrappers(t *testing.T) {
	const installed = "/usr/local/sbin/gpuprof"
	tests := []struct {
		name string
		file string
		kind string
	}{
		{name: "prolog", file: "prolog.sh", kind: "prolog"},
		{name: "epilog", file: "epilog.sh", kind: "epilog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(moduleRoot(t), "contrib", "slurm", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), installed) {
				t.Fatalf("%s does not run %s", tt.file, installed)
			}
			dir := t.TempDir()
			record := filepath.Join(dir, "args")
			fake := filepath.Join(dir, "gpuprof")
			fakeSrc := "#!/bin/sh\necho \"$# $*\" >" + record + "\nexit 0\n"
			if err := os.WriteFile(fake, []byte(fakeSrc), 0o755); err != nil {
				t.Fatal(err)
			}
			wrapper := filepath.Join(dir, tt.file)
			if err := os.WriteFile(wrapper, []byte(strings.ReplaceAll(string(src), installed, fake)), 0o755); err != nil {
				t.Fatal(err)
			}
			missing := filepath.Join(dir, "missing.sh")
			if err := os.WriteFile(missing, []byte(strings.ReplaceAll(string(src), installed, filepath.Join(dir, "absent"))), 0o755); err != nil {
				t.Fatal(err)
			}

			// slurmd execs the hook directly: the #! line matters, and the
			// environment has no PATH.
			cmd := exec.Command(wrapper)
			cmd.Env = []string{"SLURM_JOB_ID=7", "SLURM_SCRIPT_CONTEXT=" + tt.kind + "_slurmd"}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tt.file, err, out)
			}
			got, err := os.ReadFile(record)
			if err != nil {
				t.Fatalf("%s did not run gpuprof: %v", tt.file, err)
			}
			if want := "3 " + tt.kind + " --config /etc/gpuprof/gpuprof.toml\n"; string(got) != want {
				t.Errorf("gpuprof ran with %q, want %q", got, want)
			}

			// Without the binary the hook must still exit 0: a failing hook
			// drains the node.
			cmd = exec.Command(missing)
			cmd.Env = []string{}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s without gpuprof installed: %v, want exit 0\n%s", tt.file, err, out)
			}
		})
	}
}

func TestShellScriptsParse(t *testing.T) {
	root := moduleRoot(t)
	tests := []struct {
		name  string
		shell string
		path  string
	}{
		{name: "testcluster", shell: "bash", path: "contrib/slurm/testcluster.sh"},
		{name: "ci", shell: "bash", path: ".ci/run"},
		{name: "prolog", shell: "sh", path: "contrib/slurm/prolog.sh"},
		{name: "epilog", shell: "sh", path: "contrib/slurm/epilog.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(root, tt.path)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&0o111 == 0 {
				t.Errorf("%s mode %v, want executable", tt.path, fi.Mode())
			}
			if out, err := exec.Command(tt.shell, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s -n %s: %v\n%s", tt.shell, tt.path, err, out)
			}
		})
	}
}
