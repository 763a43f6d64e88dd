-- 0008: a GPU's activity as NVML's GPM measured it (profile.Activity:
-- Hopper and later, per MIG instance too), summarised for SQL queries like
-- the utilisation columns of 0001; job_gpus.state keeps the whole of it.
-- util_* are the duty cycle (the share of time any kernel ran); these say
-- how much of the GPU the kernels used.
--
-- NULL: not measured (a GPU without GPM, a profile recorded before this
-- version), which is not the same as 0. activity_scope says whose activity
-- it was: 'gpu' (the job's GPU), 'mig' (its MIG instance), 'shared_gpu'
-- (the whole GPU while other jobs held it too: not the job's share), ''
-- when not measured. Percent, 0-100; percentiles to the resolution of
-- profile.ActivityLevels. activity_seconds is the time the readings cover.
ALTER TABLE job_gpus ADD COLUMN activity_scope TEXT NOT NULL DEFAULT '';
ALTER TABLE job_gpus ADD COLUMN activity_seconds REAL;
ALTER TABLE job_gpus ADD COLUMN sm_mean REAL;
ALTER TABLE job_gpus ADD COLUMN sm_p95 REAL;
ALTER TABLE job_gpus ADD COLUMN tensor_mean REAL;
ALTER TABLE job_gpus ADD COLUMN tensor_p95 REAL;
ALTER TABLE job_gpus ADD COLUMN dram_mean REAL;
ALTER TABLE job_gpus ADD COLUMN dram_p95 REAL;
