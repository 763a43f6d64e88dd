package monthly

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/store"
)

// TestAnalyse: with no window given the default one is read (the last
// complete month with jobs, said by its rule), of the cluster bound, for
// the user asked, lean, and analysed.
func TestAnalyse(t *testing.T) {
	last, err := ParseMonth("", time.Now(), time.Local)
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{jobs: map[string][]analysis.Job{last.From.Format("2006-01"): {gpuJob("1", "ann", "bio", last.From)}}}
	a, err := Analyse(context.Background(), annOf(src, ""), Ask{Cluster: "Lab", User: "ann", WithSeries: true}, analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := jobsource.Query{Cluster: "lab", User: "ann", Window: last, WithSeries: true, Lean: true}
	if !slices.Equal(src.bound, []string{"Lab"}) || len(src.queries) != 1 || src.queries[0] != want {
		t.Errorf("bound %v, read %+v; want Lab bound and %+v read", src.bound, src.queries, want)
	}
	if a.Input.WindowRule != analysis.WindowLastMonth || a.Input.Window != last || len(a.Input.Jobs) != 1 {
		t.Errorf("input %v by rule %q with %d jobs, want the last month, said", a.Input.Window, a.Input.WindowRule, len(a.Input.Jobs))
	}
}

// TestWhatIfAdminOnly: the what-if replays every user's jobs, so a
// caller who is not an admin is refused by the one check, before
// anything is read.
func TestWhatIfAdminOnly(t *testing.T) {
	src := &fakeSource{jobs: map[string][]analysis.Job{"2026-11": {gpuJob("1", "ann", "bio", month(2026, 11).From)}}}
	_, err := WhatIf(context.Background(), annOf(src, ""), Ask{Window: month(2026, 11)}, analysis.DefaultConfig(), capacity.WhatIfParams{Seeds: 1})
	if !errors.Is(err, store.ErrAdminOnly) || len(src.counts)+len(src.queries)+len(src.bound) != 0 {
		t.Errorf("err = %v after %d counts, %d reads, %d binds; want the admin-only refusal before any read", err, len(src.counts), len(src.queries), len(src.bound))
	}
}
