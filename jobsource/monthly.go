package jobsource

import (
	"context"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// Monthly is the source as the monthly report reads it
// (monthly.ClusterSource).
func (s *Source) Monthly() monthly.ClusterSource { return monthSource{s} }

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
	return m.inputSized(ctx, m.filter(q), time.Now(), q.Jobs, fn)
}

// Reader says who reads and from where: the collector or the database,
// and the uid the local reads are scoped to.
func (m monthSource) Reader() monthly.Reader {
	uid, scoped := m.ScopedUID()
	id := m.Identity()
	return monthly.Reader{Collector: m.Collector(), Database: m.Database(), Admin: id.Admin, User: id.User, Scoped: scoped, UID: uid}
}

// Clusters names the clusters of w's jobs (Source.Clusters) and, when
// they are one, how many jobs it has in w.
func (m monthSource) Clusters(ctx context.Context, w analysis.Window) ([]string, int, error) {
	return m.clusters(ctx, store.ViewFilter{Since: w.From, Until: w.To})
}

// Bind chooses the cluster and binds its slurm.conf (ForCluster).
func (m monthSource) Bind(ctx context.Context, w analysis.Window, cluster string) (monthly.Bound, error) {
	f := store.ViewFilter{Since: w.From, Until: w.To}
	n, err := m.forCluster(ctx, &f, cluster)
	if err != nil {
		return monthly.Bound{}, err
	}
	return monthly.Bound{Cluster: f.Cluster, Conf: m.Conf().Use, WhatIf: m.Conf().WhatIf(), Jobs: n}, nil
}

var _ monthly.ClusterSource = monthSource{}
