package jobsource

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/store"
)

// Digest is the source as the admins' digest reads a day
// (notice.DaySource).
func (s *Source) Digest() notice.DaySource { return daySource{s} }

// daySource is a Source as notice.DaySource.
type daySource struct{ *Source }

// Day reads the day's jobs (lean: the analysis reads no TRES text, node
// list or reason) and, from the same pass, the notices decided in it.
func (d daySource) Day(ctx context.Context, w analysis.Window, now time.Time) (analysis.Input, []notice.Row, error) {
	return d.InputAndNotices(ctx, store.ViewFilter{Since: w.From, Until: w.To, Lean: true}, now,
		NoticeQuery{Jobs: store.ViewFilter{Since: w.From, Until: w.To}, Since: w.From, Until: w.To})
}

var _ notice.DaySource = daySource{}
