package cliview

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/demo"
	"github.com/gpuprof/gpuprof/store"
)

// demoViews simulates two days on two nodes and reads the jobs back.
func demoViews(t *testing.T) []store.JobView {
	t.Helper()
	dir := t.TempDir()
	s, err := demo.Month(context.Background(), demo.MonthOptions{Dir: dir, DB: filepath.Join(dir, "m.db"), Seed: 1, Days: 2, Nodes: demo.DefaultNodes()[:2]})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), s.DB, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	views, err := db.ReaderFor(store.System).ListViews(context.Background(), store.ViewFilter{WithSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	return views
}

func TestProfilesOutput(t *testing.T) {
	out := analyseViews(demoViews(t), analysis.DefaultConfig())
	var buf bytes.Buffer
	if err := WriteProfiles(&buf, out, 3); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{
		"Task profiles: ", "USER", "VRAM P95",
		"alice", "train_vit_large", "long_training",
		"erin", "serve_embeddings", "inference_service",
		"grace", "preprocess_cryoem", "preprocessing_io",
		"heidi", "interactive_alloc", "idle_allocation",
		"ivan", "test_pipeline", "short_debug",
		"frank", "jax_distill", "prealloc",
		"alice/train_vit_large (vision, gpu): ", "mostly long training",
		"Cluster: ", "BOTTLENECK", "io_bound", "PARTITION", "WAIT P95",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, " of the cluster), mostly "); n != 3 {
		t.Errorf("%d task sentences, want --top 3", n)
	}

	buf.Reset()
	if err := WriteJSON(&buf, out); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Profiles []struct {
			User  string `json:"user"`
			Name  string `json:"name"`
			Class string `json:"class"`
		} `json:"profiles"`
		Summary struct {
			GPUJobs int `json:"gpu_jobs"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if len(back.Profiles) != len(out.Profiles) || back.Summary.GPUJobs == 0 || back.Profiles[0].Class == "" {
		t.Errorf("JSON round trip: %d profiles (want %d), %d GPU jobs, first class %q",
			len(back.Profiles), len(out.Profiles), back.Summary.GPUJobs, back.Profiles[0].Class)
	}
}

func TestProfilesEmpty(t *testing.T) {
	var buf bytes.Buffer
	out := analyseViews(nil, analysis.DefaultConfig())
	if err := WriteProfiles(&buf, out, 5); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "No jobs recorded in this period.\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if out.Profiles == nil {
		t.Error("profiles nil: JSON would print null, want []")
	}
}

// analyseJobs is the analysis `gpuprof profiles` runs (analysis.Analyse)
// over jobs with the data's own window, shaped as it prints it.
func analyseJobs(jobs []analysis.Job, c analysis.Config) ProfilesJSON {
	f, err := analysis.Analyse(analysis.Input{Jobs: jobs}, c)
	if err != nil {
		panic(err) // the tests pass valid configurations
	}
	return ToProfilesJSON(f, analysis.ConfUse{})
}

// analyseViews is analyseJobs over the jobs the views hold, converted as
// the analysis commands read them.
func analyseViews(views []store.JobView, c analysis.Config) ProfilesJSON {
	b := analysis.NewInputBuilder()
	for _, v := range views {
		b.Add(v.Sched, v.Profiles)
	}
	return analyseJobs(b.Input(analysis.Window{}, time.Time{}).Jobs, c)
}
