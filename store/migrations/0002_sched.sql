-- 0002: the scheduler's view of jobs (jobcomp, sacct), its report history,
-- import marks, and the node outbox for multi-node delivery.
--
-- Same conventions as 0001: times are unix seconds (UTC), NULL when unknown;
-- "user", "partition", "start" and "end" are always double-quoted.

-- One row per job allocation: the merge of every report about it (see
-- PutSchedJob for the rules). The -1 sentinels of slurmext.JobRecord (uid,
-- array_task_id, het_offset, cancelled_by) are kept as they are.
CREATE TABLE sched_jobs (
	cluster         TEXT    NOT NULL,
	job_id          TEXT    NOT NULL,
	display_id      TEXT    NOT NULL DEFAULT '',
	array_job_id    TEXT    NOT NULL DEFAULT '',
	array_task_id   INTEGER NOT NULL DEFAULT -1,
	array_task_spec TEXT    NOT NULL DEFAULT '',
	het_job_id      TEXT    NOT NULL DEFAULT '',
	het_offset      INTEGER NOT NULL DEFAULT -1,
	name            TEXT    NOT NULL DEFAULT '',
	"user"          TEXT    NOT NULL DEFAULT '',
	uid             INTEGER NOT NULL DEFAULT -1,
	account         TEXT    NOT NULL DEFAULT '',
	"partition"     TEXT    NOT NULL DEFAULT '',
	qos             TEXT    NOT NULL DEFAULT '',
	-- NOCASE: filters match states case-insensitively and still use the index.
	state           TEXT    NOT NULL COLLATE NOCASE,
	cancelled_by    INTEGER NOT NULL DEFAULT -1,
	reason          TEXT    NOT NULL DEFAULT '', -- why it last waited (state_reason_prev)
	submit          INTEGER,
	eligible        INTEGER,
	"start"         INTEGER,
	"end"           INTEGER,
	time_limit      INTEGER,          -- seconds; NULL when unknown or unlimited
	unlimited       INTEGER NOT NULL DEFAULT 0,
	exit_status     INTEGER NOT NULL DEFAULT 0,
	exit_signal     INTEGER NOT NULL DEFAULT 0,
	derived_status  INTEGER NOT NULL DEFAULT 0,
	derived_signal  INTEGER NOT NULL DEFAULT 0,
	node_list       TEXT    NOT NULL DEFAULT '',
	node_count      INTEGER NOT NULL DEFAULT 0,
	cpus            INTEGER NOT NULL DEFAULT 0,
	req_gpus        INTEGER NOT NULL DEFAULT 0,
	req_gpu_type    TEXT    NOT NULL DEFAULT '',
	req_shards      INTEGER NOT NULL DEFAULT 0,
	req_tres        TEXT    NOT NULL DEFAULT '',
	alloc_tres      TEXT    NOT NULL DEFAULT '',
	restarts        INTEGER NOT NULL DEFAULT 0,
	source          TEXT    NOT NULL DEFAULT '', -- source of the winning report
	event_seq       INTEGER NOT NULL,            -- sched_events.seq of the winning report
	updated_at      INTEGER NOT NULL,            -- unix seconds of the last change
	-- job_id first: the key serves job ids typed without their cluster too.
	PRIMARY KEY (job_id, cluster)
);

-- Each filter of the views (user, uid, account, partition, state) leads an
-- index that then follows the views' sort order, newest first with ties by
-- cluster and job id: a page of the newest matching jobs reads only that
-- page, whether the filter matches a few jobs or nearly all. The plain
-- time indexes serve queue analysis by submit or start time.
CREATE INDEX sched_jobs_user_submit ON sched_jobs ("user", submit);
CREATE INDEX sched_jobs_submit ON sched_jobs (submit);
CREATE INDEX sched_jobs_start ON sched_jobs ("start");
CREATE INDEX sched_jobs_when ON sched_jobs (coalesce("start", submit), cluster, job_id);
CREATE INDEX sched_jobs_user ON sched_jobs ("user", coalesce("start", submit), cluster, job_id);
CREATE INDEX sched_jobs_uid ON sched_jobs (uid, coalesce("start", submit), cluster, job_id);
CREATE INDEX sched_jobs_account ON sched_jobs (account, coalesce("start", submit), cluster, job_id);
CREATE INDEX sched_jobs_partition ON sched_jobs ("partition", coalesce("start", submit), cluster, job_id);
CREATE INDEX sched_jobs_state ON sched_jobs (state, coalesce("start", submit), cluster, job_id);

-- The same for profiles of jobs without a scheduler record. jobs_start
-- replaces 0001's index of that name on ("start") alone, its prefix; uid is
-- how the collector scopes a user's requests.
DROP INDEX jobs_start;
CREATE INDEX jobs_start ON jobs ("start", cluster, job_id);
CREATE INDEX jobs_uid_start ON jobs (uid, "start", cluster, job_id);
CREATE INDEX jobs_job_id ON jobs (job_id);

-- Every distinct report, append-only; the UNIQUE constraint makes a
-- re-report a no-op. start and end are 0 (not NULL) when unknown:
-- a re-reported PENDING record without times must hit the constraint like any
-- other. seq numbers a job's reports by first arrival (1, 2, …): the order
-- that breaks ties between reports.
CREATE TABLE sched_events (
	cluster     TEXT    NOT NULL,
	job_id      TEXT    NOT NULL,
	state       TEXT    NOT NULL,
	"start"     INTEGER NOT NULL DEFAULT 0,
	"end"       INTEGER NOT NULL DEFAULT 0,
	source      TEXT    NOT NULL DEFAULT '',
	seq         INTEGER NOT NULL,
	reported_at INTEGER NOT NULL,
	payload     TEXT    NOT NULL, -- JSON of slurmext.JobRecord as first reported
	UNIQUE (cluster, job_id, state, "start", "end", source)
);

-- Where an importer stopped: the End of the last record it committed, in the
-- same transaction as the records.
CREATE TABLE import_state (
	cluster    TEXT    NOT NULL,
	source     TEXT    NOT NULL,
	last_end   INTEGER,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (cluster, source)
);

-- Profiles waiting for the collector's acknowledgement (node side). version
-- grows whenever the payload changes, so an acknowledgement for what was
-- read does not delete a newer profile queued meanwhile.
CREATE TABLE outbox (
	cluster    TEXT    NOT NULL,
	job_id     TEXT    NOT NULL,
	node       TEXT    NOT NULL,
	payload    BLOB    NOT NULL, -- JSON of profile.Job
	version    INTEGER NOT NULL,
	attempts   INTEGER NOT NULL DEFAULT 0,
	next_try   INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (cluster, job_id, node)
);

CREATE INDEX outbox_next_try ON outbox (next_try);
