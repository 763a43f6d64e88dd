-- 0005: what Slurm's accounting measured of a job's CPUs and host memory,
-- and the memory it asked for (sacct TotalCPU, MaxRSS or TRESUsageInMax
-- mem, ReqMem; see slurmext.HostUsage): what `gpuprof show` prints as CPU
-- efficiency, total_cpu ÷ (("end" − "start") × cpus), and host memory peak
-- of the request. NULL: not reported (jobcomp, sacct -X, a layout without
-- these columns, a step never sampled), which is not the same as 0.
ALTER TABLE sched_jobs ADD COLUMN total_cpu REAL;        -- CPU seconds (user + system) of all the job's steps
ALTER TABLE sched_jobs ADD COLUMN host_mem_peak INTEGER; -- bytes: the highest MaxRSS of any step
ALTER TABLE sched_jobs ADD COLUMN req_mem INTEGER;       -- bytes requested, in total
