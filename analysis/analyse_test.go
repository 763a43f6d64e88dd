package analysis

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestAnalyseAgrees checks that the one-pass Analyse gives every job the
// class and bottlenecks that Classify and Diagnose give it alone, points it
// at its task, and builds the same profiles and summary as Profiles and
// Summarise.
func TestAnalyseAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	jobs := append(aliceRuns(), summaryJobs()...)
	for range 500 {
		jobs = append(jobs, randomJob(r))
	}
	c := DefaultConfig()
	f, err := Analyse(Input{Jobs: jobs}, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Jobs) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(f.Jobs), len(jobs))
	}
	for i, j := range jobs {
		cls, _ := Classify(j, c)
		var kinds Kinds
		for _, b := range Diagnose(j, c) {
			kinds = kinds.With(b.Kind)
		}
		got := f.Jobs[i]
		if got.Class != cls || got.Bottlenecks != kinds {
			t.Errorf("job %d: %s %v, alone %s %v", i, got.Class, got.Bottlenecks.List(), cls, kinds.List())
		}
		m := Measure(j, c)
		if m.GPUs == 0 || !RanJob(&m) {
			if got.Task != -1 {
				t.Errorf("job %d: CPU job or job never started in task %d", i, got.Task)
			}
			continue
		}
		if got.Task < 0 || int(got.Task) >= len(f.Profiles) {
			t.Fatalf("job %d: task %d out of range", i, got.Task)
		}
		p := f.Profiles[got.Task]
		if p.Cluster != j.Cluster || p.User != j.User {
			t.Errorf("job %d (%s/%s %q) points at task %+v", i, j.Cluster, j.User, j.Name, p.TaskKey)
		}
	}
	if ps := Profiles(jobs, c); !reflect.DeepEqual(ps, f.Profiles) {
		t.Error("Analyse's profiles differ from Profiles'")
	}
	if s := Summarise(jobs, c); !reflect.DeepEqual(s, f.Summary) {
		t.Error("Analyse's summary differs from Summarise's")
	}
}

func TestAnalyseEmpty(t *testing.T) {
	f, err := Analyse(Input{}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	// Lists are empty, never null: consumers of the JSON need not guard.
	for _, key := range []string{`"jobs":[]`, `"profiles":[]`, `"partitions":[]`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
}

func TestAnalyseRejectsBadConfig(t *testing.T) {
	c := DefaultConfig()
	c.Classes.IdleUtilMax = 50
	if _, err := Analyse(Input{Jobs: aliceRuns()}, c); !errors.Is(err, ErrConfig) {
		t.Errorf("error = %v, want ErrConfig", err)
	}
}

func TestFindingsJSON(t *testing.T) {
	f, err := Analyse(Input{Jobs: aliceRuns()}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(f.Jobs[2]) // J2: long training, underused
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"class":"long_training","bottlenecks":["underused"],"task":0}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	b, err = json.Marshal(f.Profiles[0].ByClass)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"class":"unknown","jobs":1,"gpu_hours":3},{"class":"long_training","jobs":1,"gpu_hours":8},{"class":"other","jobs":2,"gpu_hours":3}]`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}
