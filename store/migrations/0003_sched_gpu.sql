-- 0003: Slurm's own GPU readings, an unknown exit code, lookups by Slurm's
-- job id, and a lighter write per imported job.

-- What Slurm's accounting recorded for the job's run (acct_gather_gpu,
-- Slurm ≥ 23.02: sacct TRESUsageInMax gres/gpumem, TRESUsageInAve
-- gres/gpuutil; see slurmext.JobRecord): the highest GPU memory of any
-- step in bytes, and the highest mean utilisation of any step in percent.
-- NULL: not recorded (older Slurm, no gpu/nvml plugin, MIG, jobcomp), which
-- is not the same as 0.
ALTER TABLE sched_jobs ADD COLUMN slurm_gpu_mem INTEGER;
ALTER TABLE sched_jobs ADD COLUMN slurm_gpu_util REAL;

-- 1: the report carried no exit code (sacct text in a layout without
-- ExitCode): exit_status and exit_signal are then not 0:0 but unknown.
ALTER TABLE sched_jobs ADD COLUMN exit_unknown INTEGER NOT NULL DEFAULT 0;

-- Jobs as Slurm shows them ("53_1", "60+1", and "53", which also names
-- every task of array 53): what users type to `gpuprof show`.
CREATE INDEX sched_jobs_array ON sched_jobs (array_job_id, array_task_id);
CREATE INDEX sched_jobs_het ON sched_jobs (het_job_id, het_offset);

-- No query filters or sorts on these (the views use the coalesce("start",
-- submit) indexes of 0002, which lead with the same columns where they
-- matter), and each cost every imported job a B-tree insert.
DROP INDEX sched_jobs_user_submit;
DROP INDEX sched_jobs_submit;
DROP INDEX sched_jobs_start;

-- From this version, a job's first report is not copied into sched_events
-- while it is the job's only one: a sched_jobs row with no sched_events row
-- is its own single report (seq 1, reported at updated_at). The second
-- report writes the first out before it changes the row (see
-- store.PutSchedJob), so every report is still kept. A bulk import of new
-- jobs then writes each job once, not twice with a JSON copy.
