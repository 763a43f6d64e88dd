package cliview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/jobfixture"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// showViews are the views of jobs as show reads them from the store: one
// per job, its scheduler record and its one node's profile.
func showViews(jobs ...jobfixture.Job) []store.JobView {
	built := jobfixture.Build(jobs...)
	views := make([]store.JobView, len(built))
	for i, b := range built {
		views[i] = store.JobView{Cluster: b.Sched.Cluster, JobID: b.Sched.JobID, Sched: &b.Sched, Profiles: []profile.Job{b.Profile}}
	}
	return views
}

// renderShow is show's text of view v, as gpuprof show prints it under
// the built-in analysis configuration, with no carbon factor and no GPU
// type known beside the job's.
func renderShow(t *testing.T, v store.JobView) string {
	t.Helper()
	ref, err := slurmext.ParseJobRef(v.JobID)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Show(&b, ref, []store.JobView{v}, analysis.DefaultConfig(), ShowCarbon{}, func(string) []analysis.GPUType { return nil }, time.Now())
	return b.String()
}

// TestShowGolden: show's text and JSON (its GPUs) of the fixture jobs
// (jobfixture.ShowJobs: a 2-GPU training job, a shard job, an idle
// allocation, an OOM kill with XIDs, an idle job with a sent and a capped
// notice, a job busy by its duty cycle and not its SMs) against golden
// files (go test ./cliview -run ShowGolden -update rewrites them). Times
// are in UTC so that the files hold on any host; cmd/gpuprof's
// TestShowThroughStore checks that the command prints the same.
func TestShowGolden(t *testing.T) {
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	for _, v := range showViews(jobfixture.ShowJobs()...) {
		t.Run(v.JobID, func(t *testing.T) {
			out := renderShow(t, v)
			if strings.Contains(out, "\x1b") || strings.Contains(out, "\r") {
				t.Errorf("show %s lets a control character through:\n%q", v.JobID, out)
			}
			golden.RequireEqual(t, []byte(out))
		})
		t.Run(v.JobID+"_json", func(t *testing.T) {
			js := JobsJSON([]store.JobView{v}, analysis.DefaultConfig(), time.Now())
			if len(js) != 1 || len(js[0].GPUs) == 0 {
				t.Fatalf("show --json %s: %d jobs", v.JobID, len(js))
			}
			summary, _ := json.MarshalIndent(js[0].GPUs, "", "  ")
			golden.RequireEqual(t, summary)
		})
	}
}
