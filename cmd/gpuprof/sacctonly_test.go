package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A month known only from sacct — the real test cluster's output in the
// layout an admin keeps (header, steps, ISO times) — is first-class: the
// scheduler view decides classes where it can, requested GPUs are shown
// and the debug-partition rule counts the short jobs.
func TestSacctOnlyHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gpuprof.db")
	file := filepath.Join("..", "..", "slurmext", "testdata", "real", "22.05-issue-P-steps.txt")
	if _, err := runCLI(t, "--db", db, "import", "sacct", "--file", file); err != nil {
		t.Fatalf("import: %v", err)
	}

	js, err := runCLI(t, "--db", db, "profiles", "--json")
	if err != nil {
		t.Fatalf("profiles: %v", err)
	}
	var p struct {
		Profiles []struct {
			Name          string   `json:"name"`
			GPUsRequested float64  `json:"gpus_requested"`
			GPUsUsed      *float64 `json:"gpus_used"`
		} `json:"profiles"`
		Summary struct {
			GPUJobs        int `json:"gpu_jobs"`
			WithGPUData    int `json:"with_gpu_data"`
			WithoutGPUData int `json:"without_gpu_data"`
			ByClass        []struct {
				Class string `json:"class"`
				Jobs  int    `json:"jobs"`
			} `json:"by_class"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatalf("profiles JSON: %v\n%s", err, js)
	}
	s := p.Summary
	if s.GPUJobs == 0 || s.WithGPUData != 0 || s.WithoutGPUData != s.GPUJobs {
		t.Errorf("summary = %+v, want GPU jobs, all without readings", s)
	}
	decided := 0
	for _, c := range s.ByClass {
		if c.Class != "unknown" {
			decided += c.Jobs
		}
	}
	if decided == 0 {
		t.Errorf("every GPU job of the sacct month is unknown: %+v", s.ByClass)
	}
	if len(p.Profiles) == 0 {
		t.Fatal("no task profiles")
	}
	for _, tp := range p.Profiles {
		if tp.GPUsRequested <= 0 || tp.GPUsUsed != nil {
			t.Errorf("profile %s: requested %v, used %v; want requested known, used unknown", tp.Name, tp.GPUsRequested, tp.GPUsUsed)
		}
	}
	table, err := runCLI(t, "--db", db, "profiles")
	if err != nil {
		t.Fatalf("profiles: %v", err)
	}
	if strings.Contains(table, "0.0/0.0") || !strings.Contains(table, "/–") {
		t.Errorf("profiles table shows GPUs used as 0 (want –):\n%s", table)
	}

	// The debug-partition rule sees the short jobs (the test cluster's jobs
	// are short) and says how many had a known wait.
	js, err = runCLI(t, "--db", db, "recommend", "--json")
	if err != nil {
		t.Fatalf("recommend: %v", err)
	}
	var r struct {
		NoChange []struct {
			Rule string `json:"rule"`
			Note string `json:"note"`
		} `json:"no_change"`
		Recommendations []struct {
			Kind string `json:"kind"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	short := regexp.MustCompile(`^(\d+) short jobs`)
	found := false
	for _, n := range r.NoChange {
		if n.Rule != "debug_partition" {
			continue
		}
		found = true
		m := short.FindStringSubmatch(n.Note)
		if m == nil {
			t.Errorf("debug_partition note %q names no short jobs", n.Note)
			continue
		}
		if k, _ := strconv.Atoi(m[1]); k == 0 {
			t.Errorf("debug_partition counts 0 short jobs: %q", n.Note)
		}
	}
	for _, rec := range r.Recommendations {
		if rec.Kind == "debug_partition" {
			found = true
		}
	}
	if !found {
		t.Errorf("the debug-partition rule said nothing: %s", js)
	}
}
