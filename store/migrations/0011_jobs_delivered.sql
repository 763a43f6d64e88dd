-- 0011: when the collector acknowledged a node's profile of the job as it
-- is stored now (unix seconds; 0: not known delivered). Retention prunes
-- a node's job only once its profile is known delivered (Retention,
-- Delivered): the outbox alone could not tell a profile delivered from one
-- recorded while no collector was configured.
ALTER TABLE jobs ADD COLUMN delivered_at INTEGER NOT NULL DEFAULT 0;

-- Rows written before this version keep 0: nothing recorded says whether
-- the collector has them (a node may have run without one), and retention
-- never prunes a job not known delivered (docs/configuration.md, [retention]).
