package slurmext

import (
	"bufio"
	"io"
	"strings"
)

// ReadClusterName returns the ClusterName set in a slurm.conf, or "" when
// it sets none. Slurm lowercases cluster names; so does this.
func ReadClusterName(r io.Reader) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	name := ""
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		for field := range strings.FieldsSeq(line) {
			k, v, ok := strings.Cut(field, "=")
			if ok && strings.EqualFold(k, "ClusterName") {
				name = strings.ToLower(strings.TrimSpace(v))
			}
		}
	}
	if !ValidJobID(name) { // same safe alphabet as job ids
		return ""
	}
	return name
}
