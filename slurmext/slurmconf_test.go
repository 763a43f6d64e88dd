package slurmext

import (
	"strings"
	"testing"
)

func TestReadClusterName(t *testing.T) {
	tests := []struct {
		name, conf, want string
	}{
		{"plain", "ClusterName=gpuproftest\nSlurmctldHost=localhost\n", "gpuproftest"},
		{"case and comment", "# ClusterName=old\nclustername=Lab1 # the lab\n", "lab1"},
		{"last wins", "ClusterName=a\nClusterName=b\n", "b"},
		{"absent", "SlurmctldHost=x\n", ""},
		{"hostile", "ClusterName=$(rm\x1b)\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadClusterName(strings.NewReader(tt.conf)); got != tt.want {
				t.Errorf("ReadClusterName = %q, want %q", got, tt.want)
			}
		})
	}
}
