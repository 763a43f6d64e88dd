-- 0001: job profiles per node and their GPUs.
--
-- Times are unix seconds (UTC), NULL when unknown. "user", "partition",
-- "start" and "end" collide with SQL keywords: always double-quote them.
-- job_gpus.state is the whole profile.GPU as JSON and is what the store reads
-- back; the other job_gpus columns are derived summaries for SQL queries.

CREATE TABLE jobs (
	cluster            TEXT    NOT NULL,
	job_id             TEXT    NOT NULL,
	node               TEXT    NOT NULL,
	"user"             TEXT    NOT NULL DEFAULT '',
	uid                INTEGER NOT NULL,
	gid                INTEGER NOT NULL,
	account            TEXT    NOT NULL DEFAULT '',
	"partition"        TEXT    NOT NULL DEFAULT '',
	comment            TEXT    NOT NULL DEFAULT '',
	"start"            INTEGER,
	"end"              INTEGER,
	status             TEXT    NOT NULL CHECK (status IN ('running', 'finished')),
	source             TEXT    NOT NULL DEFAULT '',
	exit_known         INTEGER NOT NULL DEFAULT 0,
	exit_status        INTEGER NOT NULL DEFAULT 0,
	exit_signal        INTEGER NOT NULL DEFAULT 0,
	partial            INTEGER NOT NULL DEFAULT 0,
	partial_reasons    TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
	sample_interval_ms INTEGER NOT NULL DEFAULT 0,
	last_sample        INTEGER,
	driver             TEXT    NOT NULL DEFAULT '',
	cuda_driver        TEXT    NOT NULL DEFAULT '',
	io_scope           TEXT    NOT NULL DEFAULT '',
	io_stall_s         REAL    NOT NULL DEFAULT 0,
	io_seconds         REAL    NOT NULL DEFAULT 0,
	updated_at         INTEGER NOT NULL, -- unix seconds of the last write
	PRIMARY KEY (cluster, job_id, node)
);

CREATE INDEX jobs_user_start ON jobs ("user", "start");
CREATE INDEX jobs_status ON jobs (status);
CREATE INDEX jobs_start ON jobs ("start");

CREATE TABLE job_gpus (
	cluster         TEXT    NOT NULL,
	job_id          TEXT    NOT NULL,
	node            TEXT    NOT NULL,
	uuid            TEXT    NOT NULL,
	position        INTEGER NOT NULL, -- order of the GPU in the profile
	slurm_index     INTEGER NOT NULL,
	minor           INTEGER NOT NULL,
	model           TEXT    NOT NULL DEFAULT '',
	memory_total    INTEGER NOT NULL, -- bytes
	shared          INTEGER NOT NULL,
	samples         INTEGER NOT NULL,
	util_mean       REAL,             -- percent; NULL when no samples
	util_p50        INTEGER,          -- nearest-rank percentiles, percent
	util_p95        INTEGER,
	util_max        INTEGER,
	idle_fraction   REAL,             -- 0..1
	mem_peak        INTEGER,          -- bytes; NULL when no memory samples
	energy_j        REAL,             -- NULL when not attributable/measured
	max_temp_c      INTEGER,          -- NULL when not measured
	xid_count       INTEGER NOT NULL,
	idle_allocation INTEGER NOT NULL,
	preallocated    INTEGER NOT NULL,
	state           TEXT    NOT NULL, -- JSON of profile.GPU: the source of truth
	PRIMARY KEY (cluster, job_id, node, uuid),
	FOREIGN KEY (cluster, job_id, node) REFERENCES jobs (cluster, job_id, node) ON DELETE CASCADE
);
