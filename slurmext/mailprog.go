package slurmext

import "strings"

// Slurm's MailProg, as slurmctld runs it (src/slurmctld/agent.c,
// _mail_proc and _build_mail_env, the same from 22.05 to 25.x): argv is
// exactly `MailProg -s SUBJECT RECIPIENT`, the subject being
// "Slurm Job_id=ID Name=NAME TYPE, Run time …, STATE, ExitCode N" (an
// array's: "Slurm Array Summary Job_id=ID_* (RAW) …" or "Slurm Array Task
// Job_id=ID_TASK (RAW) …"); stdin is /dev/null; stdout and stderr go to
// slurmctld's log; the program is killed after 120 s. The environment is
// built by slurmctld alone (not inherited): the job's common variables
// (SLURM_JOB_ID, SLURM_JOB_USER, SLURM_JOB_UID, SLURM_JOB_NAME,
// SLURM_CLUSTER_NAME, SLURM_JOB_ACCOUNT, SLURM_JOB_PARTITION, …) plus
// SLURM_JOB_STATE and SLURM_JOB_MAIL_TYPE, and for ends
// SLURM_JOB_RUN_TIME and SLURM_JOB_EXIT_CODE_MAX.

// MailProgEnv names the MailProg environment variables gpuprof reads.
const (
	MailEnvJobID    = "SLURM_JOB_ID"
	MailEnvCluster  = "SLURM_CLUSTER_NAME"
	MailEnvMailType = "SLURM_JOB_MAIL_TYPE"
	MailEnvState    = "SLURM_JOB_STATE"
	MailEnvUser     = "SLURM_JOB_USER"
)

// SLURM_JOB_MAIL_TYPE's values (agent.c, _mail_type_str).
const (
	MailTypeBegan       = "Began"
	MailTypeEnded       = "Ended"
	MailTypeFailed      = "Failed"
	MailTypeRequeued    = "Requeued"
	MailTypeStageOut    = "StageOut/Teardown"
	MailTypeTimeLimit   = "Reached time limit"
	MailTypeInvalidDeps = "Invalid dependency"
	// "Reached 90% of time limit", 80 % and 50 %: TimeLimitShare matches
	// them.
)

// MailTypeReportsRun says whether a mail of type t (SLURM_JOB_MAIL_TYPE)
// is about a job that has run, so that what it used so far means
// something: an end (Ended, Failed), a requeue, the time limit reached,
// or a share of it (TIME_LIMIT_90/80/50, while the job still runs). Not
// Began (nothing measured yet), a dependency never met, a stage-out, or
// anything this Slurm does not name.
func MailTypeReportsRun(t string) bool {
	switch t {
	case MailTypeEnded, MailTypeFailed, MailTypeRequeued, MailTypeTimeLimit:
		return true
	}
	return strings.HasPrefix(t, "Reached ") && strings.HasSuffix(t, "% of time limit")
}
