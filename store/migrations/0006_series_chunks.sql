-- 0006: a GPU's time series leaves job_gpus.state for gpu_series, in chunks
-- of consecutive points (store.seriesChunk, 32, of them a chunk), so that
-- the agent's flush of a running job, every flush_interval, writes only the
-- chunks its new readings changed (the last one or two) instead of the
-- whole series (up to 1,024 points, ~70 kB of JSON a GPU) with every other
-- column of the GPU. job_gpus.state keeps the rest of profile.GPU, the
-- series' start, step and bound among it, with "points" null;
-- series_points says how many points gpu_series holds for the GPU.
CREATE TABLE gpu_series (
	cluster TEXT    NOT NULL,
	job_id  TEXT    NOT NULL,
	node    TEXT    NOT NULL,
	uuid    TEXT    NOT NULL,
	chunk   INTEGER NOT NULL, -- holds points chunk*32 … chunk*32+31 of the series
	points  TEXT    NOT NULL, -- JSON array of profile.Point, 1 to 32 of them, in time order
	PRIMARY KEY (cluster, job_id, node, uuid, chunk),
	FOREIGN KEY (cluster, job_id, node) REFERENCES jobs (cluster, job_id, node) ON DELETE CASCADE
);

ALTER TABLE job_gpus ADD COLUMN series_points INTEGER NOT NULL DEFAULT 0;

INSERT INTO gpu_series (cluster, job_id, node, uuid, chunk, points)
SELECT g.cluster, g.job_id, g.node, g.uuid, p.key / 32, json_group_array(json(p.value) ORDER BY p.key)
FROM job_gpus g, json_each(g.state, '$.series.points') p
WHERE json_type(g.state, '$.series.points') = 'array'
GROUP BY g.cluster, g.job_id, g.node, g.uuid, p.key / 32;

UPDATE job_gpus SET
	series_points = coalesce(json_array_length(state, '$.series.points'), 0),
	state = json_set(state, '$.series.points', json('null'))
WHERE json_type(state, '$.series.points') IS NOT NULL;
