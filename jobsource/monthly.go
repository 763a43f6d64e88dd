package jobsource

import (
	"context"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// Monthly is the source as the monthly report reads it (monthly.Source).
func (s *Source) Monthly() monthly.Source { return monthSource{s} }

// monthSource is a Source as monthly.Source.
type monthSource struct{ *Source }

func (m monthSource) filter(q monthly.Query) store.ViewFilter {
	return store.ViewFilter{Cluster: q.Cluster, Since: q.Window.From, Until: q.Window.To, WithSeries: q.WithSeries, Lean: q.Lean}
}

func (m monthSource) Count(ctx context.Context, q monthly.Query) (int, error) {
	return m.Source.Count(ctx, m.filter(q))
}

func (m monthSource) Input(ctx context.Context, q monthly.Query, each func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	var fn func(store.JobView)
	if each != nil {
		fn = func(v store.JobView) { each(v.Sched, v.Profiles) }
	}
	return m.InputOf(ctx, m.filter(q), fn)
}

var _ monthly.Source = monthSource{}
