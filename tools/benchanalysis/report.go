package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/report"
)

// reportStats are one report round's phase times, seconds.
type reportStats struct {
	total, analyse, workload, html, md, json float64
	htmlKiB                                  float64
}

// reportRound does what `gpuprof report` does once the month's jobs are
// in memory: Analyse (which includes the plan), SummariseWorkload, and the
// three formats written to files in dir.
func reportRound(in analysis.Input, c analysis.Config, dir string) (reportStats, error) {
	var s reportStats
	t0 := time.Now()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		return s, fmt.Errorf("analyse: %w", err)
	}
	f.Jobs = nil
	t1 := time.Now()
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	wl := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: analysis.Window{From: from, To: from.AddDate(0, 1, 0)}, TopN: 10}, c)
	t2 := time.Now()
	d := report.Data{Title: "GPU workload report, October 2026", Cluster: "bench", Month: "2026-10", Generated: t2,
		Workload: wl, Findings: f, Config: c}
	phase := func(name string, write func(*os.File, report.Data) error) (float64, error) {
		t := time.Now()
		file, err := os.Create(filepath.Join(dir, "report."+name))
		if err != nil {
			return 0, err
		}
		if err := write(file, d); err != nil {
			file.Close()
			return 0, fmt.Errorf("report %s: %w", name, err)
		}
		if err := file.Close(); err != nil {
			return 0, err
		}
		return time.Since(t).Seconds(), nil
	}
	if s.html, err = phase("html", func(f *os.File, d report.Data) error { return report.WriteHTML(f, d) }); err != nil {
		return s, err
	}
	if s.md, err = phase("md", func(f *os.File, d report.Data) error { return report.WriteMarkdown(f, d) }); err != nil {
		return s, err
	}
	if s.json, err = phase("json", func(f *os.File, d report.Data) error { return report.WriteJSON(f, d) }); err != nil {
		return s, err
	}
	s.analyse, s.workload = t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
	s.total = time.Since(t0).Seconds()
	if st, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		s.htmlKiB = float64(st.Size()) / 1024
	}
	return s, nil
}
