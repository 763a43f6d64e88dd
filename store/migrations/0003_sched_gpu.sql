-- 0003: Slurm's own GPU readings, lookups by Slurm's job id, and a lighter
-- write per imported job.

-- What Slurm's accounting recorded for the job's run (acct_gather_gpu,
-- Slurm ≥ 23.02: sacct TRESUsageInMax gres/gpumem, TRESUsageInAve
-- gres/gpuutil; see slurmext.JobRecord): the highest GPU memory of any
-- step in bytes, and the highest mean utilisation of any step in percent.
-- NULL: not recorded (older Slurm, no gpu/nvml plugin, MIG, jobcomp), which
-- is not the same as 0.
ALTER TABLE sched_jobs ADD COLUMN slurm_gpu_mem INTEGER;
ALTER TABLE sched_jobs ADD COLUMN slurm_gpu_util REAL;

-- Jobs as Slurm shows them ("53_1", "53+0"): what users type.
CREATE INDEX sched_jobs_display ON sched_jobs (cluster, display_id);

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
