package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// SlurmdSpoolDir is slurm.conf's, with %h expanded and %n left for the
// node name; slurmd's default when slurm.conf names none; "" (no check)
// when slurm.conf cannot be read.
func TestSlurmdSpoolDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{name: "set", path: write("set.conf", "ClusterName=lab\nSlurmdSpoolDir=/var/spool/slurmd/%n.%h\n"), want: "/var/spool/slurmd/%n." + shortHostname()},
		{name: "default", path: write("default.conf", "ClusterName=lab\n"), want: "/var/spool/slurmd"},
		{name: "unreadable", path: filepath.Join(dir, "absent.conf"), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SlurmdSpoolDir(tt.path); got != tt.want {
				t.Errorf("SlurmdSpoolDir(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}
