-- 0004: notices to a job's user about idle or oversized GPU allocations
-- (package notice). One row per cluster, job, node and rule: the node's
-- agent inserts the row (INSERT OR IGNORE: the claim) before it sends
-- anything, so a restarted agent never sends a notice twice; the collector
-- stores the rows that arrive with the profile (profile.Job.Notices).
--
-- "user", uid and account are the job's, copied so that the per-user daily
-- cap and the user/account scoping of listings need no join (a node claims
-- a notice before its job's row may be written). Times are unix seconds
-- (UTC); since is NULL when unknown. gpus is a JSON array of Slurm GPU
-- indices on the node. No foreign key to jobs: the claim may precede the
-- job's first flush.
CREATE TABLE notices (
	id         INTEGER PRIMARY KEY,
	cluster    TEXT    NOT NULL,
	job_id     TEXT    NOT NULL,
	node       TEXT    NOT NULL,
	rule       TEXT    NOT NULL,
	"user"     TEXT    NOT NULL DEFAULT '',
	uid        INTEGER NOT NULL DEFAULT -1,
	account    TEXT    NOT NULL DEFAULT '',
	"time"     INTEGER NOT NULL,
	since      INTEGER,
	gpus       TEXT    NOT NULL DEFAULT '[]',
	recipient  TEXT    NOT NULL DEFAULT '',
	status     TEXT    NOT NULL,
	evidence   TEXT    NOT NULL DEFAULT '',
	fix        TEXT    NOT NULL DEFAULT '',
	detail     TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL,
	UNIQUE (cluster, job_id, node, rule)
);

CREATE INDEX notices_time ON notices ("time");
CREATE INDEX notices_user_time ON notices ("user", "time");
CREATE INDEX notices_uid_time ON notices (uid, "time");
