package slurmext

import (
	"bufio"
	"io"
	"strings"
)

// ReadSlurmConf returns the last value a slurm.conf gives key (matched
// case-insensitively, as Slurm does), or "" when it gives none. Include
// lines are not followed.
func ReadSlurmConf(r io.Reader, key string) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	val := ""
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		for field := range strings.FieldsSeq(line) {
			k, v, ok := strings.Cut(field, "=")
			if ok && strings.EqualFold(k, key) {
				val = strings.TrimSpace(v)
			}
		}
	}
	return val
}

// ReadClusterName returns the ClusterName set in a slurm.conf, or "" when
// it sets none. Slurm lowercases cluster names; so does this.
func ReadClusterName(r io.Reader) string {
	name := strings.ToLower(ReadSlurmConf(r, "ClusterName"))
	if !ValidClusterName(name) {
		return ""
	}
	return name
}
