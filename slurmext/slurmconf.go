package slurmext

import (
	"io"
	"strings"
)

// ReadSlurmConf returns the last value a slurm.conf text gives key (matched
// case-insensitively, as Slurm does), or "" when it gives none. Lines it
// cannot read, and Include lines, are read past: a caller that must follow
// them reads the file with LoadClusterConf.
func ReadSlurmConf(r io.Reader, key string) string {
	b, err := io.ReadAll(io.LimitReader(r, MaxConfBytes))
	if err != nil {
		return ""
	}
	val := ""
	_ = scanConfLines(b, func(_ int, line string) error {
		if _, inc := includeTarget(line); inc {
			return nil
		}
		pairs, err := splitConfPairs(line)
		if err != nil {
			return nil
		}
		for _, p := range pairs {
			if strings.EqualFold(p.Key, key) {
				val = strings.TrimSpace(p.Value)
			}
		}
		return nil
	})
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
