-- 0010: what Slurm allocated a job on a node (profile.Job.Shards,
-- AllocKnown), as the agent read it from slurmctld: the prolog names the
-- GPU behind a shard job but not its shard count, so without this a
-- --gres=shard:2 job alone on its GPU was judged as holding the whole GPU.
-- Rows written before this version stay unknown (alloc_known 0), never
-- whole GPUs by default.
ALTER TABLE jobs ADD COLUMN alloc_known INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN alloc_shards INTEGER NOT NULL DEFAULT 0;
