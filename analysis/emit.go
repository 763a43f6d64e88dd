package analysis

import (
	"strings"
)

// emitOrder is the order EmitSlurm writes the targets in: accounting
// first (partitions name QOS that must exist), then the configuration
// files, then run-time changes, then what goes into users' scripts.
var emitOrder = [...]struct{ target, header string }{
	{TargetSacctmgr, "# sacctmgr: run as an operator (needs AccountingStorageEnforce=limits,qos)"},
	{TargetSlurmConf, "# slurm.conf: add or merge, then scontrol reconfigure (Gres changes need a slurmd restart)"},
	{TargetGresConf, "# gres.conf: on the named nodes, then restart slurmd there"},
	{TargetScontrol, "# scontrol: run-time changes (also make them in slurm.conf to keep them)"},
	{TargetSbatch, "# sbatch: lines for users' batch scripts"},
}

// EmitSlurm writes the configuration lines of recs as a script-like text
// grouped by target, each group under a comment header and each line
// preceded by the recommendation's ID in a comment the first time it
// contributes to the group. A line that an earlier recommendation already
// emitted (GresTypes, a QOS created twice) is written once. Lines of
// unknown targets are left out.
func EmitSlurm(recs []Recommendation) string {
	var b strings.Builder
	for _, t := range emitOrder {
		seen := map[string]bool{}
		var group strings.Builder
		for _, r := range recs {
			wroteID := false
			for _, l := range r.Config {
				if l.Target != t.target || seen[l.Text] {
					continue
				}
				seen[l.Text] = true
				if !wroteID {
					group.WriteString("# " + r.ID + ": " + oneLine(r.Title) + "\n")
					wroteID = true
				}
				group.WriteString(l.Text + "\n")
			}
		}
		if group.Len() == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.header + "\n")
		b.WriteString(group.String())
	}
	return b.String()
}

// oneLine keeps a title from breaking the comment it is written in.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
