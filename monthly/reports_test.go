package monthly

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/report"
)

func TestParseMonth(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for s, want := range map[string]analysis.Window{"": month(2026, 11), "2026-02": month(2026, 2)} {
		w, err := ParseMonth(s, now, time.UTC)
		if err != nil || w != want {
			t.Errorf("ParseMonth(%q) = %v, %v; want %v", s, w, err, want)
		}
	}
	if _, err := ParseMonth("11/2026", now, time.UTC); err == nil || err.Error() != `want YYYY-MM, got "11/2026"` {
		t.Errorf("11/2026: err = %v", err)
	}
}

// reportAll runs Reports as gpuprof report does: each cluster bound,
// then built, in turn; it returns the month, the clusters' Slurm
// configuration notes, the reports and their suffixes.
func reportAll(t *testing.T, sc jobsource.Scope, p Params) (*Month, []string, []report.Data, []string) {
	t.Helper()
	m, err := Reports(context.Background(), sc, p)
	if err != nil {
		t.Fatal(err)
	}
	var confs, suffixes []string
	var reports []report.Data
	for i := range m.Clusters {
		b, err := m.Bind(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		confs = append(confs, b.ConfUse().Cluster)
		d, suffix, err := m.Build(context.Background(), b, i)
		if err != nil {
			t.Fatal(err)
		}
		reports, suffixes = append(reports, d), append(suffixes, suffix)
	}
	return m, confs, reports, suffixes
}

// TestReports: with no month the last one with jobs is chosen; a month
// of several clusters gives one report each, bound in turn, named by a
// file-safe suffix; who reads comes from the scope.
func TestReports(t *testing.T) {
	nov := month(2026, 11)
	src := &fakeSource{jobs: map[string][]analysis.Job{
		"2026-10": {gpuJob("10", "ann", "bio", month(2026, 10).From.Add(time.Hour))},
	}, clusters: []string{"Lab", "b/c"}}
	m, confs, reports, suffixes := reportAll(t, annOf(src, ""), Params{Window: nov, Latest: true, Top: 10, Config: analysis.DefaultConfig()})
	if m.Window != month(2026, 10) || !m.Chosen || !slices.Equal(m.Clusters, src.clusters) || !slices.Equal(src.bound, src.clusters) || !slices.Equal(confs, src.clusters) {
		t.Errorf("chosen %v (%v), clusters %v, bound %v, conf notes %v", m.Window, m.Chosen, m.Clusters, src.bound, confs)
	}
	if !slices.Equal(suffixes, []string{"-Lab", "-b_c"}) || len(reports) != 2 || reports[0].Cluster != "lab" || reports[0].Month != "2026-10" {
		t.Errorf("suffixes %q, %d reports", suffixes, len(reports))
	}
	if len(src.counts) != 4 {
		t.Errorf("counted %+v, want two months searched, then each cluster's month once", src.counts)
	}
	if r := reports[0]; r.Sources.Database != "/db" || len(r.Sources.Notes) == 0 || r.Sources.Notes[0] != "only the jobs of ann (uid 1001): the reader is not an admin" {
		t.Errorf("sources = %+v", r.Sources)
	}

	// One cluster named: no suffix, no listing of clusters.
	src.bound = nil
	m, _, _, suffixes = reportAll(t, annOf(src, ""), Params{Window: nov, Cluster: " Lab ", Top: 10, Config: analysis.DefaultConfig()})
	if !slices.Equal(src.bound, []string{"lab"}) || !slices.Equal(suffixes, []string{""}) || len(m.Clusters) != 1 || m.Chosen {
		t.Errorf("--cluster: bound %v, suffixes %q, clusters %v", src.bound, suffixes, m.Clusters)
	}

	// The month's one cluster: the count that named it sizes the read,
	// which is not counted again.
	src.clusters, src.counts, src.queries = []string{"lab"}, nil, nil
	reportAll(t, annOf(src, ""), Params{Window: nov, Top: 10, Config: analysis.DefaultConfig()})
	if len(src.counts) != 0 || src.queries[0] != (jobsource.Query{Cluster: "lab", Window: nov, WithSeries: true, Lean: true, Jobs: 7}) {
		t.Errorf("one cluster: counted %+v, read %+v; want no count, the read sized by the clusters' count", src.counts, src.queries[0])
	}
}
