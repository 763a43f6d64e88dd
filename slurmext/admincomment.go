package slurmext

import "strings"

// A job's AdminComment in the accounting database, as sacctmgr writes it:
// `sacctmgr -i modify job where jobid=ID cluster=C set AdminComment=TEXT`
// (sacctmgr's job_functions.c, since 17.11; SlurmUser, root or an
// operator may). sacctmgr's strip_quotes turns every ' and " inside the
// value into a backquote, and before 23.02 (commit 933bf55510, bug 14338)
// also lowercases the whole value: Debian 12's 22.05 stores
// "GPUPROF:{\"A\":1}" as "gpuprof:{`a`:1}". So a value meant to be read
// back must be lowercase, quote-free text. sacct shows it with
// `-o AdminComment`; `--parsable2` separates fields with '|', which such a
// value must not hold either.

// AdminCommentSafe says whether s survives sacctmgr's AdminComment= on
// every Slurm from 22.05 on unchanged and reads back from sacct
// --parsable2 as one field: printable ASCII, no upper-case letter, no
// quote, no '|', no space (sacctmgr takes one argv word, but a shell
// user copying it should not need quotes).
func AdminCommentSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c >= 'A' && c <= 'Z' || c == '"' || c == '\'' || c == '|' || c == '`' {
			return false
		}
	}
	return true
}

// SacctmgrSetAdminComment is the sacctmgr argv (without the program) that
// sets job id's AdminComment on cluster to text; -i: no confirmation
// prompt. cluster "" leaves sacctmgr's default (slurm.conf's
// ClusterName).
func SacctmgrSetAdminComment(cluster, jobID, text string) []string {
	args := []string{"-i", "modify", "job", "where", "jobid=" + jobID}
	if cluster != "" {
		args = append(args, "cluster="+cluster)
	}
	return append(args, "set", "AdminComment="+text)
}

// SacctAdminComment is the sacct argv (without the program) that prints
// job id's AdminComment alone: the allocation only (-X), no header.
func SacctAdminComment(cluster, jobID string) []string {
	args := []string{"--noheader", "--parsable2", "--allocations", "--jobs=" + jobID, "--format=AdminComment"}
	if cluster != "" {
		args = append(args, "--clusters="+cluster)
	}
	return args
}

// ParseSacctAdminComment reads SacctAdminComment's output: the comment
// of the last line (without --duplicates sacct prints the latest record
// of the id alone), trimmed of the line end; "" when none.
func ParseSacctAdminComment(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	return strings.TrimRight(lines[len(lines)-1], "\r")
}
