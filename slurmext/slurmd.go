package slurmext

import (
	"os"
	"path/filepath"
	"strings"
)

// slurmd's files on a node, as Slurm lays them out: where gres.conf is,
// where slurmd's spool is (SlurmdSpoolDir, its %h and %n), and the step
// sockets slurmstepd puts in that spool. Pure but SlurmdSpoolDir, which
// reads slurm.conf: the callers read the rest of the filesystem.

// DefaultSlurmdSpoolDir is slurmd's spool when slurm.conf names none.
const DefaultSlurmdSpoolDir = "/var/spool/slurmd"

// SlurmdSpoolDir reads SlurmdSpoolDir from the slurm.conf at path
// (DefaultSlurmdSpoolDir when it names none), with %h expanded to this
// host's short name (NodeName's); %n, slurmd's node name, is left for
// ExpandNodeName once the node is named. It is "" when slurm.conf is not
// readable, which turns off the agent's check for jobs that ended
// without an epilog.
func SlurmdSpoolDir(path string) string {
	t, err := ReadConfText(path, nil)
	if err != nil {
		return ""
	}
	dir := settingsOf(t.Lines)["slurmdspooldir"]
	if dir == "" {
		return DefaultSlurmdSpoolDir
	}
	return strings.ReplaceAll(dir, "%h", NodeName("", "", os.Hostname))
}

// DefaultGresConf is the gres.conf slurmd reads when nothing else names
// one: the file beside slurm.conf, which is SLURM_CONF when that is set
// (slurmConfEnv; "" when unset), else Slurm's default /etc/slurm.
func DefaultGresConf(slurmConfEnv string) string {
	if slurmConfEnv != "" {
		return filepath.Join(filepath.Dir(slurmConfEnv), "gres.conf")
	}
	return "/etc/slurm/gres.conf"
}

// ExpandNodeName replaces %n in a slurm.conf path (SlurmdSpoolDir,
// SlurmdLogFile, …) with slurmd's node name, as slurmd does.
func ExpandNodeName(path, node string) string {
	return strings.ReplaceAll(path, "%n", node)
}

// StepSocketGlob is the filepath.Glob pattern of the job's step sockets in
// slurmd's spool directory: slurmstepd names each "<node>_<jobid>.<step>"
// ("gpu01_58.0", "gpu01_58.4294967292" for the extern step), so a match
// means a step of the job still runs. ok is false for a job id that is not
// ValidJobID: its glob metacharacters or '/' would match other files.
func StepSocketGlob(jobID string) (pattern string, ok bool) {
	if !ValidJobID(jobID) {
		return "", false
	}
	return "*_" + jobID + ".*", true
}
