package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// jsonReport is the JSON report, schema gpuprof.report/v2 (docs/json.md).
type jsonReport struct {
	Schema     string      `json:"schema"`
	Title      string      `json:"title"`
	Cluster    string      `json:"cluster"`
	Month      string      `json:"month"`
	Generated  *time.Time  `json:"generated,omitempty"`
	Anonymized bool        `json:"anonymized"`
	Missing    []string    `json:"missing"`
	Sources    jsonSources `json:"sources"`

	Workload        analysis.Workload         `json:"workload"`
	Summary         analysis.ClusterSummary   `json:"summary"`
	Profiles        []analysis.TaskProfile    `json:"profiles"`
	ProfilesTotal   int                       `json:"profiles_total"`
	Recommendations []analysis.Recommendation `json:"recommendations"`
	NoChange        []analysis.NoChange       `json:"no_change"`
	// Plan is Little's law, the cross-check by averages; SimulatedPlan
	// the plan on the queue replay, with the verdict (absent when the
	// report has none).
	Plan          analysis.CapacityPlan `json:"plan"`
	SimulatedPlan *capacity.SimPlan     `json:"simulated_plan,omitempty"`
	Earlier       []MonthHeadline       `json:"earlier"`
	Thresholds    []jsonThreshold       `json:"thresholds"`
	// Notices is the month's notices to users (analysis.NoticeSummary):
	// zeros and an empty counts list when there were none.
	Notices analysis.NoticeSummary `json:"notices"`
}

type jsonSources struct {
	Sources
	Jobs           int `json:"jobs"`
	GPUJobs        int `json:"gpu_jobs"`
	CPUJobs        int `json:"cpu_jobs"`
	WithGPUData    int `json:"with_gpu_data"`
	WithoutGPUData int `json:"without_gpu_data"`
}

type jsonThreshold struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// WriteJSON writes the report as one indented JSON object with
// "schema": "gpuprof.report/v2". Strings are sanitised as in the other
// formats, non-finite numbers written as 0 (the "missing" list says which
// data is absent), slices are never null, and profiles are the report's
// top ones (profiles_total says how many there were).
func WriteJSON(w io.Writer, d Data) error {
	d = cleanData(d)
	f := d.Findings
	r := jsonReport{
		Schema:     Schema,
		Title:      title(&d),
		Cluster:    d.Cluster,
		Month:      d.Month,
		Anonymized: d.Anonymized,
		Missing:    nonNil(missing(&d)),
		Sources: jsonSources{
			Sources:        d.Sources,
			Jobs:           f.Summary.Jobs,
			GPUJobs:        f.Summary.GPUJobs,
			CPUJobs:        f.Summary.CPUJobs,
			WithGPUData:    f.Summary.WithGPUData,
			WithoutGPUData: f.Summary.WithoutGPUData,
		},
		Workload:        d.Workload,
		Summary:         f.Summary,
		Profiles:        nonNil(f.Profiles[:min(len(f.Profiles), topProfiles)]),
		ProfilesTotal:   len(f.Profiles),
		Recommendations: nonNil(f.Recommendations),
		NoChange:        nonNil(f.NoChange),
		Plan:            f.Plan,
		SimulatedPlan:   d.SimPlan,
		Earlier:         nonNil(d.Earlier),
		Notices:         d.Notices,
	}
	if !d.Generated.IsZero() {
		g := d.Generated.UTC()
		r.Generated = &g
	}
	if r.Summary.PercentileMethod == "" {
		r.Summary.PercentileMethod = analysis.PercentileMethod
	}
	r.Thresholds = []jsonThreshold{}
	for _, t := range thresholds(d.Config) {
		if !configRecorded(d.Config) {
			break // not recorded: an empty list, not a list of zeros
		}
		r.Thresholds = append(r.Thresholds, jsonThreshold{Key: t.Key, Value: t.Value})
	}
	r.Workload.Daily = nonNil(r.Workload.Daily)
	r.Workload.Models = nonNil(r.Workload.Models)
	r.Workload.Users = nonNil(r.Workload.Users)
	r.Workload.Accounts = nonNil(r.Workload.Accounts)
	r.Workload.Lost = nonNil(r.Workload.Lost)
	r.Notices.Counts = nonNil(r.Notices.Counts)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: write JSON: %w", err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
