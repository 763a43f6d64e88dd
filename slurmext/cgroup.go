package slurmext

import (
	"math"
	"strconv"
	"strings"
)

// Slurm's cgroup layout: which cgroup paths are Slurm's own, and so which
// job a process in one of them belongs to. This is the one place gpuprof
// decides that a process is a job's from its cgroup.
//
// Only root can create a directory where Slurm puts its jobs, so a path
// there is Slurm's word. Anywhere else it is not: systemd delegation gives
// every user a subtree of their own (/user.slice/user-1001.slice/
// user@1001.service/...) in which they can make a directory called job_903
// and move their processes into it. A job_N component is therefore read
// only at its place in Slurm's layout, counted from the root of the
// hierarchy, never wherever it occurs. The layouts (src/plugins/cgroup/v1
// and v2 of Slurm 22.05 to 26.05):
//
//	cgroup v2  /system.slice/slurmstepd.scope/job_<id>/step_<step>/user/task_<n>
//	           /system.slice/<node>_slurmstepd.scope/job_<id>/...   (--enable-multiple-slurmd)
//	           /system.slice/slurmstepd.scope/<SLUID>/...           (26.05 without CgroupJobIdPaths=yes)
//	cgroup v1  /slurm/uid_<uid>/job_<id>/step_<step>/task_<n>       (per controller)
//	           /slurm_<node>/uid_<uid>/job_<id>/...                 (--enable-multiple-slurmd)
//
// <step> is batch, extern, interactive, TBD, a step number, or a number
// and a heterogeneous component ("0+1"). Below the step level everything
// is the job's: cgroup v2 directories there are root's, and on cgroup v1
// Slurm gives the step directory to the job's user, who can only nest
// cgroups inside their own job.
//
// Not covered: a CgroupSlice other than system.slice, and a slurmd started
// inside a cgroup of its own (a container), which put the scope elsewhere;
// a process there is not recognised as a job's and falls back to the
// no-cgroup rule of the caller.

// CgroupJob is the Slurm job a process's cgroup places it in.
type CgroupJob struct {
	// JobID is the job's id from its job_<id> directory; "" when the
	// directory is named by the job's SLUID.
	JobID string
	// SLUID is the job's SLUID from a Slurm 26.05 cgroup v2 directory
	// (as SLURM_JOB_SLUID prints it, "s5K1KKYAYG5D00"); "" otherwise.
	SLUID string
	// UID is the job owner's uid that cgroup v1's uid_<uid> level names;
	// -1 on cgroup v2, which has no such level. A process of another uid
	// in that directory is not the job's.
	UID int
	// Step is the step directory's name without "step_" ("batch",
	// "extern", "0", "0+1"); "" for a process at the job's own level.
	Step string
}

// Key is how the job is named in its cgroup path: its id, else its SLUID.
func (c CgroupJob) Key() string {
	if c.JobID != "" {
		return c.JobID
	}
	return c.SLUID
}

// Bounds on /proc/PID/cgroup: a process is in one cgroup per v1 hierarchy
// (about a dozen controllers) and one v2 cgroup; a path is at most PATH_MAX.
const (
	maxCgroupLines = 64
	maxCgroupPath  = 4096
)

// SlurmCgroupJob reads the contents of /proc/PID/cgroup and returns the job
// whose cgroup the process is in, only when that cgroup is inside Slurm's own
// hierarchy (see the layouts above). Lines in any other hierarchy (a user's
// delegated subtree, slurmd.service, a v1 hierarchy Slurm does not use) are
// ignored. When the lines name more than one job, or one job under
// different uids, the process is in none: Slurm never does that, so the
// answer would be a guess. It never panics, whatever the input.
func SlurmCgroupJob(procCgroup string) (CgroupJob, bool) {
	var found CgroupJob
	ok := false
	n := 0
	for line := range strings.Lines(procCgroup) {
		if n++; n > maxCgroupLines {
			return CgroupJob{}, false
		}
		line = strings.TrimRight(line, "\n")
		id, rest, ok1 := strings.Cut(line, ":")
		controllers, path, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || len(path) > maxCgroupPath {
			continue
		}
		var c CgroupJob
		var in bool
		if id == "0" && controllers == "" {
			c, in = slurmCgroupV2(path)
		} else {
			c, in = slurmCgroupV1(path)
		}
		if !in {
			continue
		}
		if !ok {
			found, ok = c, true
			continue
		}
		if c.JobID != found.JobID || c.SLUID != found.SLUID || c.UID >= 0 && found.UID >= 0 && c.UID != found.UID {
			return CgroupJob{}, false
		}
		if found.UID < 0 {
			found.UID = c.UID // a v1 line of a hybrid host names the owner
		}
		if found.Step == "" {
			found.Step = c.Step
		}
	}
	return found, ok
}

// slurmCgroupV2 reads a cgroup v2 path: /system.slice/[<node>_]slurmstepd.scope/<job>/<step...>.
func slurmCgroupV2(path string) (CgroupJob, bool) {
	parts := strings.Split(path, "/")
	// parts[0] is "" (the path is absolute).
	if len(parts) < 4 || parts[0] != "" || parts[1] != "system.slice" || !isStepdScope(parts[2]) {
		return CgroupJob{}, false
	}
	c := CgroupJob{UID: -1}
	if id, ok := strings.CutPrefix(parts[3], "job_"); ok {
		if !canonicalNumericJobID(id) {
			return CgroupJob{}, false
		}
		c.JobID = id
	} else if s, ok := ParseSLUID(parts[3]); ok && s == parts[3] {
		c.SLUID = s
	} else {
		return CgroupJob{}, false
	}
	step, ok := stepOf(parts[4:])
	if !ok {
		return CgroupJob{}, false
	}
	c.Step = step
	return c, true
}

// slurmCgroupV1 reads a cgroup v1 path: /slurm[_<node>]/uid_<uid>/job_<id>/<step...>.
func slurmCgroupV1(path string) (CgroupJob, bool) {
	parts := strings.Split(path, "/")
	if len(parts) < 4 || parts[0] != "" {
		return CgroupJob{}, false
	}
	if node, ok := strings.CutPrefix(parts[1], "slurm_"); parts[1] != "slurm" && (!ok || node == "") {
		return CgroupJob{}, false
	}
	uidText, ok := strings.CutPrefix(parts[2], "uid_")
	if !ok {
		return CgroupJob{}, false
	}
	uid, ok := ParseDigits(uidText, math.MaxUint32-1)
	if !ok || strconv.FormatUint(uid, 10) != uidText {
		return CgroupJob{}, false
	}
	id, ok := strings.CutPrefix(parts[3], "job_")
	if !ok || !canonicalNumericJobID(id) {
		return CgroupJob{}, false
	}
	step, ok := stepOf(parts[4:])
	if !ok {
		return CgroupJob{}, false
	}
	return CgroupJob{JobID: id, UID: int(uid), Step: step}, true
}

// ParseSLUID reads a SLUID as Slurm's str2sluid does (either case, I and L
// for 1, O for 0) and returns it as sluid2str prints it, the form
// SLURM_JOB_SLUID and the 26.05 cgroup directories carry ("s5K1KKYAYG5D00").
// ok is false for anything else, a numeric job id included.
func ParseSLUID(s string) (string, bool) {
	c, ok := canonicalJobID(s)
	if !ok || isDigits(c) {
		return "", false
	}
	return c, true
}

// isStepdScope accepts slurmstepd's systemd scope: "slurmstepd.scope", or
// "<node>_slurmstepd.scope" of a multiple-slurmd build.
func isStepdScope(s string) bool {
	if s == "slurmstepd.scope" {
		return true
	}
	node, ok := strings.CutSuffix(s, "_slurmstepd.scope")
	return ok && node != ""
}

// canonicalNumericJobID accepts a job id as Slurm prints it in job_%u: a
// number from 1 to maxRawJobID without leading zeros.
func canonicalNumericJobID(s string) bool {
	n, ok := ParseDigits(s, maxRawJobID)
	return ok && n > 0 && strconv.FormatUint(n, 10) == s
}

// stepOf reads what follows the job directory: nothing (the job level), or
// step_<step> and anything below it. It returns the step's name.
func stepOf(rest []string) (string, bool) {
	if len(rest) == 0 || len(rest) == 1 && rest[0] == "" {
		return "", true
	}
	name, ok := strings.CutPrefix(rest[0], "step_")
	if !ok || !validCgroupStep(name) {
		return "", false
	}
	return name, true
}

// validCgroupStep accepts a step as Slurm names its directory
// (log_build_step_id_str without prefix and job): batch, extern,
// interactive, TBD, a number, or a number and a heterogeneous component.
func validCgroupStep(s string) bool {
	switch s {
	case "batch", "extern", "interactive", "TBD":
		return true
	}
	num, het, isHet := strings.Cut(s, "+")
	if _, ok := ParseDigits(num, math.MaxUint32); !ok {
		return false
	}
	if isHet {
		if _, ok := ParseDigits(het, math.MaxUint32); !ok {
			return false
		}
	}
	return true
}

// JobCgroupDirs are the directories, relative to the root of the cgroup
// hierarchy, where a job's own cgroup may be: under slurmstepd's scope by
// the job's id, "slurm/job_<id>", and, when its SLUID is known, under
// slurmstepd's scope by its SLUID (26.05), in the order to try them: the
// first n of dirs (an array, not a slice, so that the agent's sampling
// tick asks without allocating). None for a job id that is not
// ValidJobID, so that an id never leaves the directory it names; a SLUID
// that is not one is left out.
func JobCgroupDirs(jobID, sluid string) (dirs [3]string, n int) {
	if !ValidJobID(jobID) {
		return dirs, 0
	}
	dirs[0], dirs[1], n = "system.slice/slurmstepd.scope/job_"+jobID, "slurm/job_"+jobID, 2
	if sluid != "" && ValidJobID(sluid) {
		dirs[2], n = "system.slice/slurmstepd.scope/"+sluid, 3
	}
	return dirs, n
}
