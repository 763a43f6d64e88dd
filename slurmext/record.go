package slurmext

import "time"

// JobRecord is the scheduler's view of one job allocation, as jobcomp/script
// or sacct report it. It is keyed by (Cluster, JobID) where JobID is the raw
// job id (each array task and each heterogeneous component has its own),
// which is also the SLURM_JOB_ID the node hooks see.
type JobRecord struct {
	Cluster string `json:"cluster"`
	JobID   string `json:"job_id"` // raw id (sacct JobIDRaw, jobcomp JOBID)
	// DisplayID is how Slurm shows the job: "123", "123_4", "123_[1-5%2]",
	// "123+0".
	DisplayID string `json:"display_id"`

	ArrayJobID    string `json:"array_job_id,omitempty"`    // "" when not an array
	ArrayTaskID   int    `json:"array_task_id"`             // -1 when not an array task
	ArrayTaskSpec string `json:"array_task_spec,omitempty"` // pending, unsplit tasks: "1-5%2"
	HetJobID      string `json:"het_job_id,omitempty"`
	HetOffset     int    `json:"het_offset"` // -1 when not heterogeneous

	Name      string `json:"name"`
	User      string `json:"user"`
	UID       int    `json:"uid"` // -1 when unknown
	Account   string `json:"account,omitempty"`
	Partition string `json:"partition,omitempty"`
	QOS       string `json:"qos,omitempty"`

	// State is the base state in capitals (COMPLETED, FAILED, TIMEOUT,
	// CANCELLED, OUT_OF_MEMORY, PENDING, RUNNING, …); CancelledBy is the
	// uid from "CANCELLED by <uid>", -1 otherwise.
	State       JobState `json:"state"`
	CancelledBy int      `json:"cancelled_by"`
	// Reason is why the job last waited before it ran (Slurm's
	// state_reason_prev: "Priority", "Resources", "QOSMaxGRESPerUser",
	// "JobArrayTaskLimit", "None"): jobcomp STATEREASONPREV, sacct Reason,
	// sacct --json state.reason. It is what queueing analysis needs.
	Reason string `json:"reason,omitempty"`

	Submit   time.Time `json:"submit,omitzero"`
	Eligible time.Time `json:"eligible,omitzero"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`

	// TimeLimit is the requested limit; Unlimited is true for UNLIMITED /
	// INFINITE (TimeLimit is then 0). Both zero: unknown.
	TimeLimit time.Duration `json:"time_limit_ns"`
	Unlimited bool          `json:"unlimited"`

	ExitStatus    int `json:"exit_status"`
	ExitSignal    int `json:"exit_signal"`
	DerivedStatus int `json:"derived_status"`
	DerivedSignal int `json:"derived_signal"`
	// ExitUnknown is set when the report carried no exit code (sacct text
	// in a layout without an ExitCode column, or an empty one): the zeros
	// above then mean "not reported", not 0:0. A merge keeps another
	// report's exit code over it (store).
	ExitUnknown bool `json:"exit_unknown,omitempty"`

	NodeList  string `json:"node_list,omitempty"` // hostlist expression, e.g. "gpu[01-02]"
	NodeCount int    `json:"node_count"`
	CPUs      int    `json:"cpus"`

	// GPUs requested: whole GPUs (gres/gpu, any type), their type when one
	// was named, and shards (gres/shard). ReqTRES/AllocTRES keep the raw
	// strings. GPUsFrom says which of the two the counts were read from
	// (GPUsFromReqTRES, or GPUsFromAllocTRES when the report had no
	// ReqTRES; "" when it had neither, as jobcomp's): see RequestedGPUs.
	ReqGPUs    int    `json:"req_gpus"`
	ReqGPUType string `json:"req_gpu_type,omitempty"`
	ReqShards  int    `json:"req_shards"`
	ReqTRES    string `json:"req_tres,omitempty"`
	AllocTRES  string `json:"alloc_tres,omitempty"`
	GPUsFrom   string `json:"gpus_from,omitempty"`

	// Readings Slurm's own accounting recorded (acct_gather_gpu, Slurm ≥ 23.02): the
	// highest GPU memory any task used (TRESUsageInMax gres/gpumem), and the mean GPU
	// utilisation (TRESUsageInAve gres/gpuutil, percent).
	SlurmGPUMem       uint64  `json:"slurm_gpu_mem,omitempty"` // bytes
	SlurmGPUMemValid  bool    `json:"slurm_gpu_mem_valid,omitempty"`
	SlurmGPUUtil      float64 `json:"slurm_gpu_util,omitempty"` // percent
	SlurmGPUUtilValid bool    `json:"slurm_gpu_util_valid,omitempty"`
	// Usage is what Slurm's accounting measured of the job's CPUs and host
	// memory, and the memory it asked for (sacct TotalCPU, MaxRSS, ReqMem):
	// each value unknown unless imported.
	Usage HostUsage `json:"usage,omitzero"`

	Restarts int `json:"restarts"`
	// Source says who reported the record: "jobcomp" or "sacct".
	Source string `json:"source"`
}

// Started reports whether the job ran (see the function Started): false
// for a job cancelled while pending.
func (r JobRecord) Started() bool { return Started(r.Start, r.End, r.NodeList) }

// Wait returns how long the job waited between eligibility (or submission)
// and start, and whether both times are known; a job that never started
// (Started) has no wait to a start.
func (r JobRecord) Wait() (time.Duration, bool) {
	from := r.Eligible
	if from.IsZero() {
		from = r.Submit
	}
	if from.IsZero() || !r.Started() || r.Start.Before(from) {
		return 0, false
	}
	return r.Start.Sub(from), true
}

// Elapsed returns the run time, and whether it is known; a job that never
// started has none.
func (r JobRecord) Elapsed() (time.Duration, bool) {
	if !r.Started() || r.End.IsZero() || r.End.Before(r.Start) {
		return 0, false
	}
	return r.End.Sub(r.Start), true
}
