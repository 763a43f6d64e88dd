-- 0009: whether an import read a job's CPU time and host memory peak
-- (slurmext.HostUsage.TotalCPURead, MemPeakRead: the job's steps in a
-- layout with the column). show then tells a value Slurm's accounting has
-- none of (no pointer) from one that was not imported (a pointer to the
-- sacct command that shows it).
ALTER TABLE sched_jobs ADD COLUMN total_cpu_read INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sched_jobs ADD COLUMN host_mem_peak_read INTEGER NOT NULL DEFAULT 0;

-- Before this version nothing said so: a row that holds a value read it;
-- one without stays unknown (not read), as show treated it before.
UPDATE sched_jobs SET total_cpu_read = 1 WHERE total_cpu IS NOT NULL;
UPDATE sched_jobs SET host_mem_peak_read = 1 WHERE host_mem_peak IS NOT NULL;
