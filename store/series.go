package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gpuprof/gpuprof/profile"
)

// seriesChunk is the number of consecutive series points in one row of
// gpu_series (migration 0006): about 2 kB of JSON (old rows) or 0.1 kB in
// the binary form (serieschunk.go), so a chunk fits in one page and a
// flush that adds ten points rewrites one or two of them.
const seriesChunk = 32

// seriesMark is what the database holds of a GPU's series: its start and
// step (from the GPU's state) and the number of points in gpu_series.
type seriesMark struct {
	start, step int64
	points      int
}

// storedSeries returns the series marks of the GPUs stored under k.
func (t *Tx) storedSeries(ctx context.Context, k profile.Key) (map[string]seriesMark, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT uuid, state ->> '$.series.start', state ->> '$.series.step', series_points
		FROM job_gpus WHERE cluster = ? AND job_id = ? AND node = ?`, k.Cluster, k.JobID, k.Node)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	marks := map[string]seriesMark{}
	for rows.Next() {
		var uuid string
		var start, step sql.NullInt64
		var m seriesMark
		if err := rows.Scan(&uuid, &start, &step, &m.points); err != nil {
			return nil, classify(err)
		}
		m.start, m.step = start.Int64, step.Int64
		marks[uuid] = m
	}
	return marks, classify(rows.Err())
}

// putSeries writes the series points of j's GPUs to gpu_series. With
// stored nil every series is written whole, replacing whatever the key
// held. Otherwise stored is what the database held before this put
// (storedSeries), and a GPU whose stored series j's extends (same start
// and step, no more points stored than j has) gets only the chunks from
// the one holding the last stored point on; see PutGrowingJob.
func (t *Tx) putSeries(ctx context.Context, j profile.Job, stored map[string]seriesMark) error {
	key := []any{j.Cluster, j.JobID, j.Node}
	if stored == nil {
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM gpu_series WHERE cluster = ? AND job_id = ? AND node = ?`, key...); err != nil {
			return fmt.Errorf("series: %w", classify(err))
		}
	} else {
		held := make(map[string]bool, len(j.GPUs))
		for _, g := range j.GPUs {
			held[g.UUID] = true
		}
		for uuid := range stored {
			if held[uuid] {
				continue
			}
			if _, err := t.tx.ExecContext(ctx, `DELETE FROM gpu_series WHERE cluster = ? AND job_id = ? AND node = ? AND uuid = ?`,
				append(key, uuid)...); err != nil {
				return fmt.Errorf("series of gpu %s: %w", uuid, classify(err))
			}
		}
	}
	var ins *sql.Stmt
	for i := range j.GPUs {
		g := &j.GPUs[i]
		from := 0
		if stored != nil {
			m, ok := stored[g.UUID]
			if ok && m.start == g.Series.Start && m.step == g.Series.Step && m.points > 0 && m.points <= len(g.Series.Points) {
				from = (m.points - 1) / seriesChunk
			}
			if _, err := t.tx.ExecContext(ctx, `DELETE FROM gpu_series
				WHERE cluster = ? AND job_id = ? AND node = ? AND uuid = ? AND chunk >= ?`,
				append(key, g.UUID, from)...); err != nil {
				return fmt.Errorf("series of gpu %s: %w", g.UUID, classify(err))
			}
		}
		for c := from; c*seriesChunk < len(g.Series.Points); c++ {
			pts := g.Series.Points[c*seriesChunk : min((c+1)*seriesChunk, len(g.Series.Points))]
			data := encodeChunk(pts)
			if ins == nil {
				var err error
				if ins, err = t.tx.PrepareContext(ctx, `INSERT INTO gpu_series (cluster, job_id, node, uuid, chunk, points)
					VALUES (?,?,?,?,?,?)`); err != nil {
					return fmt.Errorf("series: %w", classify(err))
				}
				defer ins.Close()
			}
			if _, err := ins.ExecContext(ctx, append(key, g.UUID, c, data)...); err != nil {
				return fmt.Errorf("series of gpu %s: %w", g.UUID, classify(err))
			}
		}
	}
	return nil
}

// seriesColumn is the column a profile query selects beside g.state for
// withSeries: a GPU's chunks in order, each in hex, joined by commas
// (NULL when it has none); without series, NULL. Hex, because a chunk is
// JSON text in old rows and binary in new ones (serieschunk.go), and
// SQLite's string functions are not for bytes; decodeSeries reads it.
func seriesColumn(withSeries bool) string {
	if !withSeries {
		return `NULL`
	}
	return `(SELECT group_concat(hex(c.points), ',' ORDER BY c.chunk)
		FROM gpu_series c WHERE c.cluster = g.cluster AND c.job_id = g.job_id AND c.node = g.node AND c.uuid = g.uuid)`
}

// decodeSeries reads seriesColumn's value: the points of every chunk, in
// order.
func decodeSeries(col string) ([]profile.Point, error) {
	var pts []profile.Point
	buf := make([]byte, 0, 256)
	for i, h := range strings.Split(col, ",") {
		b, err := hex.AppendDecode(buf[:0], []byte(h))
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w: %w", i, errChunk, err)
		}
		buf = b
		c, err := decodeChunk(b)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", i, err)
		}
		pts = append(pts, c...)
	}
	return pts, nil
}
