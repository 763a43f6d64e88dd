package slurmext

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestClusterName(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("# test\nClusterName=GpuLab\nSlurmctldHost=h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.conf")
	if err := os.WriteFile(empty, []byte("SlurmctldHost=h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, configured, slurm, conf, want string
	}{
		{"configuration first", "site", "fromenv", conf, "site"},
		{"then the environment", "", "FromEnv", conf, "fromenv"},
		{"then slurm.conf", "", "", conf, "gpulab"},
		{"slurm.conf without ClusterName", "", "", empty, "default"},
		{"unreadable slurm.conf", "", "", filepath.Join(dir, "missing"), "default"},
		{"nothing", "", "", "", "default"},
		{"blank configured", "  ", "", conf, "gpulab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterName(tc.configured, tc.slurm, tc.conf); got != tc.want {
				t.Errorf("ClusterName(%q, %q, %q) = %q, want %q", tc.configured, tc.slurm, tc.conf, got, tc.want)
			}
		})
	}
}

func TestValidClusterName(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"plain", "gpulab", true},
		{"digits and punctuation", "lab-2_b.x", true},
		{"empty", "", false},
		{"het-job plus", "a+b", false},
		{"space", "gpu lab", false},
		{"slash", "../x", false},
		{"65 characters", "a234567890123456789012345678901234567890123456789012345678901234x", false},
		{"64 characters", "a234567890123456789012345678901234567890123456789012345678901234", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidClusterName(tc.in); got != tc.want {
				t.Errorf("ValidClusterName(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
	if got := NormalClusterName("  GpuLab \n"); got != "gpulab" {
		t.Errorf("NormalClusterName = %q, want gpulab", got)
	}
}

func TestNodeName(t *testing.T) {
	host := func(h string) func() (string, error) { return func() (string, error) { return h, nil } }
	broken := func() (string, error) { return "", errors.New("no uts") }
	for _, tc := range []struct {
		name, configured, slurm string
		hostname                func() (string, error)
		want                    string
	}{
		{"configuration first", "n1", "gpu01", host("gpu01.lab.example"), "n1"},
		{"then SLURMD_NODENAME", "", "gpu01", host("other.lab.example"), "gpu01"},
		{"then the short host name", "", "", host("gpu01.lab.example"), "gpu01"},
		{"host name without a domain", "", "", host("vm"), "vm"},
		{"host name unknown", "", "", broken, "localhost"},
		{"no host name function", "", "", nil, "localhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NodeName(tc.configured, tc.slurm, tc.hostname); got != tc.want {
				t.Errorf("NodeName(%q, %q) = %q, want %q", tc.configured, tc.slurm, got, tc.want)
			}
		})
	}
}
