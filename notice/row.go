package notice

import "github.com/gpuprof/gpuprof/profile"

// Row is one notice with the job it is about, as gpuprof notices lists it
// and --json prints it (docs/notices.md): the notice's own fields (rule,
// time, since, gpus, recipient, status, evidence, fix, detail) beside the
// job's. jobsource.Source.Notices reads them; cliview lists them, and the
// admins' digest counts and lists the day's (monthly.Digest).
type Row struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"`
	// SlurmID is the job as Slurm shows it (53_1, 60+1); JobID the raw id.
	SlurmID string `json:"slurm_id"`
	Node    string `json:"node"`
	User    string `json:"user"`
	JobName string `json:"job_name,omitempty"`
	profile.Notice
}
