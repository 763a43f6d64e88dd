-- 0007: where a job's GPU counts (req_gpus, req_gpu_type, req_shards) were
-- read from (slurmext.RequestedGPUs): 'ReqTRES', or 'AllocTRES' for a
-- report without ReqTRES (sacct exports that keep only AllocTRES), or ''
-- when the report had neither (jobcomp).
ALTER TABLE sched_jobs ADD COLUMN gpus_from TEXT NOT NULL DEFAULT '';

-- Before this version only ReqTRES was read: a row that holds one had its
-- counts from it. A row without one stays '' (its counts are 0; importing
-- its sacct text again reads AllocTRES).
UPDATE sched_jobs SET gpus_from = 'ReqTRES' WHERE req_tres != '';
