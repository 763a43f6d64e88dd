package slurmext

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultGresConf(t *testing.T) {
	tests := []struct{ name, env, want string }{
		{"SLURM_CONF unset: Slurm's default", "", "/etc/slurm/gres.conf"},
		{"beside SLURM_CONF", "/opt/slurm/etc/slurm.conf", "/opt/slurm/etc/gres.conf"},
		{"SLURM_CONF relative", "conf/slurm.conf", "conf/gres.conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultGresConf(tt.env); got != tt.want {
				t.Errorf("DefaultGresConf(%q) = %q, want %q", tt.env, got, tt.want)
			}
		})
	}
}

func TestExpandNodeName(t *testing.T) {
	tests := []struct{ path, node, want string }{
		{"/var/spool/slurmd", "gpu01", "/var/spool/slurmd"},
		{"/var/spool/slurmd-%n", "gpu01", "/var/spool/slurmd-gpu01"},
		{"/var/spool/%n/slurmd-%n", "n1", "/var/spool/n1/slurmd-n1"},
		{"/var/spool/slurmd-%n", "", "/var/spool/slurmd-"},
	}
	for _, tt := range tests {
		if got := ExpandNodeName(tt.path, tt.node); got != tt.want {
			t.Errorf("ExpandNodeName(%q, %q) = %q, want %q", tt.path, tt.node, got, tt.want)
		}
	}
}

// TestStepSocketGlob: the pattern matches slurmstepd's sockets of the job
// only, and a job id that is not one yields no pattern at all.
func TestStepSocketGlob(t *testing.T) {
	pattern, ok := StepSocketGlob("58")
	if !ok || pattern != "*_58.*" {
		t.Fatalf("StepSocketGlob(58) = %q, %v; want *_58.*, true", pattern, ok)
	}
	for name, want := range map[string]bool{
		"gpu01_58.0": true, "gpu01_58.4294967292": true, "node_a_58.batch": true,
		"gpu01_581.0": false, "gpu01_158.0": false,
		"gpu01_59.0": false, "58.0": false, "cred_state": false,
	} {
		if got, _ := filepath.Match(pattern, name); got != want {
			t.Errorf("%q matches %q: %v, want %v", pattern, name, got, want)
		}
	}
	for _, bad := range []string{"", "*", "5?", "[5]", "../58", "58/x", "1;rm"} {
		if p, ok := StepSocketGlob(bad); ok {
			t.Errorf("StepSocketGlob(%q) = %q, true; want no pattern", bad, p)
		}
	}
}

func TestJobCgroupDirs(t *testing.T) {
	tests := []struct {
		name, job, sluid string
		want             []string
	}{
		{"job id", "58", "", []string{"system.slice/slurmstepd.scope/job_58", "slurm/job_58"}},
		{"with SLUID", "58", "s5K1KKYAYG5D00", []string{"system.slice/slurmstepd.scope/job_58", "slurm/job_58", "system.slice/slurmstepd.scope/s5K1KKYAYG5D00"}},
		{"bad SLUID left out", "58", "../x", []string{"system.slice/slurmstepd.scope/job_58", "slurm/job_58"}},
		{"bad job id", "../58", "s5K1KKYAYG5D00", nil},
		{"empty job id", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs, n := JobCgroupDirs(tt.job, tt.sluid)
			if got := dirs[:n]; !slices.Equal(got, tt.want) {
				t.Errorf("JobCgroupDirs(%q, %q) = %q, want %q", tt.job, tt.sluid, got, tt.want)
			}
		})
	}
}

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
	short := NodeName("", "", os.Hostname)
	tests := []struct {
		name, path, want string
	}{
		{name: "set", path: write("set.conf", "ClusterName=lab\nSlurmdSpoolDir=/var/spool/slurmd/%n.%h\n"), want: "/var/spool/slurmd/%n." + short},
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
