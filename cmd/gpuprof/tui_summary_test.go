package main

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/jobfixture"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/tui"
)

// TestTUISummaryThroughPipeline: gpuprof tui's month summary (m) reads
// its month through the window pipeline (tuiSource: monthly.SummaryMonth
// over the caller's Scope) from the database, as its owner would: both
// jobs of the month, counted with the analysis' rules. Over the bare
// Source, which reads no month itself, the summary says it cannot.
func TestTUISummaryThroughPipeline(t *testing.T) {
	path := showDB(t,
		jobfixture.Job{ID: "7201", Name: "pair", State: "COMPLETED", Gres: "billing=8,cpu=8,gres/gpu=2,mem=64G,node=1", GPUs: 2, Minutes: 120,
			Util: jobfixture.Steady(40), MemGiB: jobfixture.Steady(20)},
		jobfixture.Job{ID: "7202", Name: "solo", State: "COMPLETED", Gres: "billing=1,cpu=2,gres/gpu=1,mem=16G,node=1", GPUs: 1, Minutes: 60,
			Util: jobfixture.Steady(10), MemGiB: jobfixture.Steady(6)},
	)
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := jobsource.ForCaller(db, store.Caller{UID: 1001, User: "alice"})
	defer src.Close()
	now := jobfixture.Start.AddDate(0, 0, 10)
	summary := func(s tui.Source) string {
		m := tea.Model(tui.New(ctx, s, src.Identity(), tui.Options{NoColor: true, Config: analysis.DefaultConfig(), Now: func() time.Time { return now }}))
		m = settle(t, m, m.Init())
		m = settle(t, m, func() tea.Msg { return tea.WindowSizeMsg{Width: 120, Height: 40} })
		m = settle(t, m, func() tea.Msg { return tea.KeyPressMsg{Code: 'm', Text: "m"} })
		return m.View().Content
	}
	screen := summary(newTUISource(src))
	for _, want := range []string{"November 2026 (2026-11-01 to 2026-11-30)", "2 jobs, 2 with GPUs", "GPU-hours           5.0", "Jobs by class"} {
		if !strings.Contains(screen, want) {
			t.Errorf("summary lacks %q:\n%s", want, screen)
		}
	}
	if screen := summary(src); !strings.Contains(screen, "could not load the summary: this source reads no month's summary") {
		t.Errorf("the bare Source's summary:\n%s", screen)
	}
}
