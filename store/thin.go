package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// ThinSeries downsamples the series of finished profiles that ended before
// endedBefore to at most maxPoints points per GPU (profile.Series.Coarsened:
// sums, counts and maxima exact, the figures read from the points kept as
// they were), at most limit profiles (at least 1) in this transaction, and
// returns how many it thinned. A running profile, or one that ended since,
// is never touched; a GPU within the bound keeps its series as it is. Call
// it again while it returns limit: each call is one short write
// transaction, so pushes wait on it for one batch at most.
//
// It finds candidates by the jobs' start (indexed): a job that ended
// before endedBefore started before it. Profiles already thinned have at
// most maxPoints points and are passed over.
func (t *Tx) ThinSeries(ctx context.Context, endedBefore time.Time, maxPoints, limit int) (int, error) {
	maxPoints, limit = max(maxPoints, 2), max(limit, 1)
	cut := endedBefore.Unix()
	rows, err := t.tx.QueryContext(ctx, `SELECT j.cluster, j.job_id, j.node FROM jobs j
		WHERE j."start" < ? AND j.status = ? AND j."end" < ?
		AND EXISTS (SELECT 1 FROM job_gpus g WHERE g.cluster = j.cluster AND g.job_id = j.job_id AND g.node = j.node AND g.series_points > ?)
		LIMIT ?`, cut, profile.StatusFinished, cut, maxPoints, limit)
	if err != nil {
		return 0, classify(err)
	}
	var keys []profile.Key
	for rows.Next() {
		var k profile.Key
		if err := rows.Scan(&k.Cluster, &k.JobID, &k.Node); err != nil {
			rows.Close()
			return 0, classify(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return 0, classify(err)
	}
	for _, k := range keys {
		js, err := t.list(ctx, Filter{Cluster: k.Cluster, Node: k.Node, JobID: k.JobID, WithSeries: true}, true)
		if err != nil {
			return 0, fmt.Errorf("thin job %s: %w", keyString(k), err)
		}
		if len(js) != 1 {
			return 0, fmt.Errorf("thin job %s: %w", keyString(k), ErrNotFound)
		}
		j := js[0]
		for i := range j.GPUs {
			g := &j.GPUs[i]
			if len(g.Series.Points) <= maxPoints {
				continue
			}
			g.Series = g.Series.Coarsened(maxPoints)
			rest := *g
			rest.Series.Points = nil
			state, err := json.Marshal(&rest)
			if err != nil {
				return 0, fmt.Errorf("thin job %s: encode gpu %s: %w", keyString(k), g.UUID, err)
			}
			if _, err := t.tx.ExecContext(ctx, `UPDATE job_gpus SET state = ?, series_points = ?
				WHERE cluster = ? AND job_id = ? AND node = ? AND uuid = ?`,
				string(state), len(g.Series.Points), k.Cluster, k.JobID, k.Node, g.UUID); err != nil {
				return 0, fmt.Errorf("thin job %s gpu %s: %w", keyString(k), g.UUID, classify(err))
			}
		}
		if err := t.putSeries(ctx, j, nil); err != nil {
			return 0, fmt.Errorf("thin job %s: %w", keyString(k), err)
		}
	}
	return len(keys), nil
}
