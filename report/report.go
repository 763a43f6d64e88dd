// Package report renders the monthly workload report — HTML, Markdown and
// JSON — from numbers the analysis already computed (analysis.Workload,
// analysis.Findings and the simulated capacity plan, capacity.SimPlan). It formats, sorts for display and charts; it must not
// compute statistics of its own, read a database or reach the network: the
// HTML is one self-contained file with inline CSS and SVG charts, no script
// and no external resource, so it can be opened on an air-gapped cluster.
// WriteFiles writes a report's files, each whole (through a temporary
// file), in the formats asked for (Formats).
//
// Every string that reaches a report (job, user and account names come
// from users) is sanitised first: ANSI escape sequences are removed and
// other control characters, bidirectional overrides and invalid UTF-8 are
// replaced by U+FFFD. HTML is escaped by html/template, Markdown by
// escapeMarkdown, JSON by encoding/json.
package report

import (
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// Schema is the value of the JSON report's "schema" field; it changes
// only when a field is renamed or removed (docs/json.md). v2: the
// cross-check's "plan.verdict" and "plan.summary" became "constraint" and
// "cross_check".
const Schema = "gpuprof.report/v2"

// Data is everything one report shows.
type Data struct {
	Title     string // e.g. "GPU workload report, November 2026"
	Cluster   string
	Month     string // "2026-11"
	Generated time.Time
	Workload  analysis.Workload
	// Findings are the analysis' conclusions; Findings.Jobs is ignored.
	// Findings.Plan (Little's law) is shown only as the cross-check by
	// averages.
	Findings analysis.Findings
	// SimPlan is the capacity plan on the queue replay
	// (capacity.SimulatePlan, or capacity.NotSimulatedPlan saying why no
	// replay ran), made from the same findings, whose recommendations
	// carry their simulated effects. Its Verdict is the report's verdict.
	// nil: no plan was made; the report says so and shows the cross-check
	// alone.
	SimPlan *capacity.SimPlan
	// Earlier holds the headlines of earlier months, oldest first; it may
	// be empty.
	Earlier []MonthHeadline
	// Config is the analysis configuration in force (the thresholds).
	Config  analysis.Config
	Sources Sources
	// Notices is the tally of the notices the agents decided in the month
	// (analysis.NoticeTally over every job of the month); the zero value
	// is a month without any, which the report says plainly.
	Notices analysis.NoticeSummary
	// Anonymized says user and account names were replaced (Anonymize
	// sets it); the report then says so.
	Anonymized bool
}

// MonthHeadline is one earlier month's first numbers, for the comparison
// table and the trend chart.
type MonthHeadline struct {
	Month    string            `json:"month"` // "2026-10"
	Headline analysis.Headline `json:"headline"`
	// LostGPUHours is the month's Workload.LostGPUHours: GPU-hours of
	// jobs that ended failed, timed out, preempted, ….
	LostGPUHours float64 `json:"lost_gpu_hours"`
}

// Sources says where the data came from. The counts of jobs with and
// without GPU data come from Findings.Summary, not from here.
type Sources struct {
	// Database is the SQLite file read, Collector the collector's address;
	// either may be empty.
	Database  string `json:"database,omitempty"`
	Collector string `json:"collector,omitempty"`
	// Notes describe import coverage: "sacct history imported for
	// 2026-11-01 to 2026-11-30", "node gpu07 sent no profiles".
	Notes []string `json:"notes,omitempty"`
}

// topProfiles is how many task profiles the report lists.
const topProfiles = 15
