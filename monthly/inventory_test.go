package monthly

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// typesReads is a scope's reads for GPUTypes: the newest job's start,
// the inventory of a read, and what was asked.
type typesReads struct {
	newest  time.Time
	nodes   []analysis.Node
	bindErr error
	bound   []string
	reads   []jobsource.Query
	confs   []*jobsource.Conf
	newests []jobsource.Query
}

func (r *typesReads) Count(context.Context, jobsource.Query) (int, error) { return 1, nil }

func (r *typesReads) Input(_ context.Context, q jobsource.Query, conf *jobsource.Conf, _ func(*slurmext.JobRecord, []profile.Job)) (analysis.Input, error) {
	r.reads, r.confs = append(r.reads, q), append(r.confs, conf)
	return analysis.Input{Window: q.Window, Nodes: slices.Clone(r.nodes)}, nil
}

func (r *typesReads) InputAndNotices(context.Context, jobsource.Query) (analysis.Input, []notice.Row, error) {
	return analysis.Input{}, nil, nil
}

func (r *typesReads) Newest(_ context.Context, q jobsource.Query) (time.Time, error) {
	r.newests = append(r.newests, q)
	return r.newest, nil
}

func (r *typesReads) Clusters(context.Context, jobsource.Query) ([]string, int, error) {
	return []string{"lab"}, 0, nil
}

func (r *typesReads) Bind(_ context.Context, _ jobsource.Query, cluster string) (string, *jobsource.Conf, int, error) {
	r.bound = append(r.bound, cluster)
	if r.bindErr != nil {
		return "", nil, 0, r.bindErr
	}
	return cluster, &jobsource.Conf{Use: analysis.ConfUse{Cluster: cluster}}, 0, nil
}

// TestGPUTypesThroughThePipeline: the hints' inventory is read through
// the caller's scope, as the analysis reads a window (issue #41: only the
// pipeline reads a window): the newest job of the cluster, then the 31
// days before its start, lean, bound to the cluster's configuration — or
// without it when it cannot be read; nothing read without a job; each
// cluster read once by Inventories.
func TestGPUTypesThroughThePipeline(t *testing.T) {
	ctx := context.Background()
	last := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	r := &typesReads{newest: last, nodes: []analysis.Node{
		{Name: "a", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 8, MemoryTotal: 80 << 30},
		{Name: "b", GPUModel: "NVIDIA L4", GPUs: 4, MemoryTotal: 24 << 30},
	}}
	sc := jobsource.NewScope(store.Caller{UID: 1001, User: "ann"}, "", "/db", r)
	types := GPUTypes(ctx, sc, "lab")
	if len(types) != 2 || types[0].Type != "l4" || types[1].Type != "h100" {
		t.Errorf("types = %+v, want l4 then h100", types)
	}
	want := jobsource.Query{Cluster: "lab", Window: analysis.Window{From: last.Add(-31 * 24 * time.Hour)}, Lean: true}
	if !slices.Equal(r.newests, []jobsource.Query{{Cluster: "lab"}}) || !slices.Equal(r.bound, []string{"lab"}) ||
		!slices.Equal(r.reads, []jobsource.Query{want}) || r.confs[0] == nil {
		t.Errorf("newest asked %+v, bound %q, read %+v with conf %v; want lab's newest, lab bound, %+v with its conf", r.newests, r.bound, r.reads, r.confs, want)
	}

	// A configuration that cannot be read: the jobs' own GPUs.
	r.bindErr, r.reads, r.confs = errors.New("read /etc/slurm/slurm.conf: bad line"), nil, nil
	if types := GPUTypes(ctx, sc, "lab"); len(types) != 2 || len(r.reads) != 1 || r.reads[0].Cluster != "lab" || r.confs[0] != nil {
		t.Errorf("without the configuration: types %+v, read %+v with conf %v; want the jobs' own, of lab, no conf", types, r.reads, r.confs)
	}

	// No job: nothing read, no type.
	r.newest, r.reads = time.Time{}, nil
	if types := GPUTypes(ctx, sc, "lab"); types != nil || r.reads != nil {
		t.Errorf("no job: types %+v after reading %+v, want none and no read", types, r.reads)
	}

	// Inventories read each cluster once, a cluster without types too.
	r.newest, r.reads, r.bindErr = last, nil, nil
	inv := NewInventories(sc)
	for range 3 {
		inv.GPUTypes(ctx, "lab")
		inv.GPUTypes(ctx, "other")
	}
	if len(r.reads) != 2 || r.reads[0].Cluster != "lab" || r.reads[1].Cluster != "other" {
		t.Errorf("Inventories read %+v, want lab's and other's once", r.reads)
	}
}
