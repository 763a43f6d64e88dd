package monthly

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
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

// clusterSource is a fakeSource of several clusters.
type clusterSource struct {
	*fakeSource
	clusters []string
	bound    []string
	user     string // the reader, not an admin; "" ann
}

func (s *clusterSource) Reader() Reader {
	if s.user != "" {
		return Reader{User: s.user}
	}
	return Reader{Database: "/db", User: "ann", Scoped: true, UID: 1001}
}

func (s *clusterSource) Clusters(context.Context, analysis.Window) ([]string, int, error) {
	if len(s.clusters) == 1 {
		return s.clusters, 7, nil
	}
	return s.clusters, 0, nil
}

func (s *clusterSource) Bind(_ context.Context, _ analysis.Window, cluster string) (Bound, error) {
	s.bound = append(s.bound, cluster)
	return Bound{Cluster: strings.ToLower(cluster), Conf: analysis.ConfUse{Cluster: cluster}}, nil
}

// TestReports: with no month the last one with jobs is chosen; a month
// of several clusters gives one report each, bound in turn, named by a
// file-safe suffix; who reads comes from the source.
func TestReports(t *testing.T) {
	nov := month(2026, 11)
	src := &clusterSource{fakeSource: &fakeSource{jobs: map[string][]analysis.Job{
		"2026-10": {gpuJob("10", "ann", "bio", month(2026, 10).From.Add(time.Hour))},
	}}, clusters: []string{"Lab", "b/c"}}
	var chosen analysis.Window
	var several, confs, suffixes []string
	var reports []report.Data
	err := Reports(context.Background(), src, Params{Window: nov, Latest: true, Top: 10, Config: analysis.DefaultConfig()}, Out{
		Chosen:  func(w analysis.Window) { chosen = w },
		Several: func(c []string) { several = c },
		Bound:   func(u analysis.ConfUse) { confs = append(confs, u.Cluster) },
		Write: func(d report.Data, suffix string) error {
			reports, suffixes = append(reports, d), append(suffixes, suffix)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if chosen != month(2026, 10) || !slices.Equal(several, src.clusters) || !slices.Equal(src.bound, src.clusters) || !slices.Equal(confs, src.clusters) {
		t.Errorf("chosen %v, several %v, bound %v, conf notes %v", chosen, several, src.bound, confs)
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
	src.bound, suffixes, several = nil, nil, nil
	if err := Reports(context.Background(), src, Params{Window: nov, Cluster: " Lab ", Top: 10, Config: analysis.DefaultConfig()}, Out{
		Several: func(c []string) { several = c },
		Write:   func(_ report.Data, suffix string) error { suffixes = append(suffixes, suffix); return nil },
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.bound, []string{"lab"}) || !slices.Equal(suffixes, []string{""}) || several != nil {
		t.Errorf("--cluster: bound %v, suffixes %q, several %v", src.bound, suffixes, several)
	}

	// The month's one cluster: the count that named it sizes the read,
	// which is not counted again.
	src.clusters, src.counts, src.queries = []string{"lab"}, nil, nil
	if err := Reports(context.Background(), src, Params{Window: nov, Top: 10, Config: analysis.DefaultConfig()}, Out{
		Write: func(report.Data, string) error { return nil },
	}); err != nil {
		t.Fatal(err)
	}
	if len(src.counts) != 0 || src.queries[0] != (Query{Cluster: "lab", Window: nov, WithSeries: true, Lean: true, Jobs: 7}) {
		t.Errorf("one cluster: counted %+v, read %+v; want no count, the read sized by the clusters' count", src.counts, src.queries[0])
	}
}
