package collect

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/store"
)

// Thinning is the collector's downsampling of old series (serve.series_age,
// serve.series_points): a finished profile that ended more than Age ago
// keeps at most Points points per GPU (store.Tx.ThinSeries; its figures
// unchanged). Age zero turns it off.
type Thinning struct {
	Age    time.Duration
	Points int
}

// thinBatch is how many profiles one write transaction thins: a few
// milliseconds of the write lock, so a push waits on it no longer than on
// another push.
const thinBatch = 50

// thinEvery is how often serve looks for series to thin. Each round only
// reads where nothing is old enough.
const thinEvery = time.Hour

// ThinOnce thins every profile that ended before now − th.Age, batch after
// batch, and returns how many it thinned; it stops early when ctx ends.
func ThinOnce(ctx context.Context, db *store.DB, th Thinning, now time.Time) (int, error) {
	if th.Age <= 0 {
		return 0, nil
	}
	cut := now.Add(-th.Age)
	total := 0
	for ctx.Err() == nil {
		var n int
		err := db.WithTx(ctx, func(tx *store.Tx) (err error) {
			n, err = tx.ThinSeries(ctx, cut, th.Points, thinBatch)
			return err
		})
		total += n
		if err != nil {
			return total, err
		}
		if n < thinBatch {
			return total, nil
		}
	}
	return total, ctx.Err()
}

// ThinEvery runs ThinOnce at once and then every hour until ctx ends,
// logging what it thinned; a failed round (the database busy past its
// timeout) is logged and tried again at the next.
func ThinEvery(ctx context.Context, db *store.DB, th Thinning, log *slog.Logger) {
	if th.Age <= 0 {
		log.Info("series kept as recorded: serve.series_age is 0")
		return
	}
	t := time.NewTicker(thinEvery)
	defer t.Stop()
	for {
		start := time.Now()
		n, err := ThinOnce(ctx, db, th, start)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("series not thinned yet", "thinned", n, "err", err)
		case n > 0:
			log.Info("old series thinned", "profiles", n, "older_than", th.Age, "points", th.Points,
				"took", time.Since(start).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
