// Package jobend puts a job's GPU summary where users and admins already
// look when a job ends: Slurm's own job-end mail (MailProg) and the job's
// AdminComment in Slurm's accounting (sacct -o AdminComment).
//
// Summarise turns one job view into the few figures both carry (GPUs held
// and used, the VRAM peak against its card, utilisation and SM activity,
// the idle share, the class and the one most useful hint), from the
// job's fact sheet (analysis.ExamineView), the one gpuprof show and the
// TUI's detail draw. MailProg passes Slurm's mail to the site's mailer
// unchanged, with the summary appended to the body of the mails that
// report a run, and always within its deadline: when the summary is not
// ready, the mail goes out as Slurm wrote it. Annotate writes the
// AdminComment, never over another tool's.
//
// It must not decide who may read a job (jobsource and the store do) nor
// format a number itself (internal/present does).
package jobend
