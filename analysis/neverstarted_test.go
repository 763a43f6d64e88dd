package analysis

import (
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

// realJobs reads sacct text of the real 22.05 test cluster
// (slurmext/testdata) into analysis jobs, as an import and FromView would.
func realJobs(t *testing.T, parts ...string) []Job {
	t.Helper()
	f, err := os.Open(filepath.Join(append([]string{"..", "slurmext", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sacct.NewReader(f, nil, sacct.Options{Cluster: "gpuproftest"})
	var jobs []Job
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return jobs
		}
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, FromView(&rec, nil))
	}
}

// TestNeverStartedRealSacct: the jobs the real test cluster's sacct shows
// as cancelled while pending (job 9: Start = End, NodeList "None
// assigned"; job 25, submitted with --begin=now+1hour and cancelled:
// Start = End, an hour before it was eligible; het jobs 12 and 21: Start
// None) count as never started: no start, no wait, no bad time, not in the
// day's jobs_started.
func TestNeverStartedRealSacct(t *testing.T) {
	jobs := realJobs(t, "sacct", "22.05-P-steps-iso.txt")
	for _, j := range realJobs(t, "sacct", "22.05-P-duplicates.txt") {
		if j.ID == "25" {
			jobs = append(jobs, j)
		}
	}
	never := map[string]bool{"9": true, "12": true, "13": true, "21": true, "22": true, "25": true}
	c := DefaultConfig()
	found := 0
	for _, j := range jobs {
		m := Measure(j, c)
		if !never[j.ID] {
			if m.Start.IsZero() && j.State != "" {
				t.Errorf("job %s (%s) that ran counts as never started", j.ID, j.State)
			}
			continue
		}
		found++
		if !m.Start.IsZero() || m.WaitValid || m.ElapsedValid || m.Notes.BadTimes != 0 {
			t.Errorf("job %s, cancelled while pending: start %v, wait %v (%v), elapsed %v, %d bad times; want none",
				j.ID, m.Start, m.Wait, m.WaitValid, m.ElapsedValid, m.Notes.BadTimes)
		}
	}
	if found != len(never) {
		t.Fatalf("found %d of the %d jobs cancelled while pending", found, len(never))
	}
	day := Window{From: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}
	w := SummariseWorkload(Input{Jobs: jobs, Window: day, Now: day.To}, WorkloadParams{Window: day}, c)
	if len(w.Daily) != 1 || w.Daily[0].JobsStarted != len(jobs)-len(never) || w.Daily[0].JobsSubmitted != len(jobs) {
		t.Errorf("daily %+v; want %d jobs started of %d submitted", w.Daily, len(jobs)-len(never), len(jobs))
	}
}

// TestNeverStartedRealGPUJobs: the test cluster's GPU jobs cancelled while
// pending (e2e TestNeverStartedRealJobs: jobs 1–2 held by
// --begin=now+1hour, 3–4 by sbatch -H, 6–7 waiting for GPUs job 5 held),
// beside jobs that ran (5, 8–10) and one cancelled while it ran (11).
// sacct gives the pending ones Start None; merged with jobcomp's report of
// them (START = END, no NODES, as the e2e test saw in the database) they
// have Start = End. Either way: 5 jobs started, 1 cancelled after it
// started, 75 GPU-seconds.
func TestNeverStartedRealGPUJobs(t *testing.T) {
	sacct := realJobs(t, "real", "22.05-cancelled-pending-P-epoch-steps.txt")
	merged := make([]Job, len(sacct))
	copy(merged, sacct)
	for i := range merged {
		if j := &merged[i]; j.Start.IsZero() {
			j.Start = j.End // jobcomp's START; no nodes
		}
	}
	day := Window{From: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	for name, jobs := range map[string][]Job{"sacct": sacct, "sacct and jobcomp": merged} {
		t.Run(name, func(t *testing.T) {
			if len(jobs) != 11 {
				t.Fatalf("%d jobs, want 11", len(jobs))
			}
			w := SummariseWorkload(Input{Jobs: jobs, Window: day, Now: day.To}, WorkloadParams{Window: day}, DefaultConfig())
			started, submitted := 0, 0
			for _, d := range w.Daily {
				started += d.JobsStarted
				submitted += d.JobsSubmitted
			}
			if started != 5 || submitted != 11 {
				t.Errorf("%d jobs started of %d submitted, want 5 of 11", started, submitted)
			}
			if w.Cancelled.Jobs != 1 {
				t.Errorf("%d jobs cancelled after they started, want 1 (job 11)", w.Cancelled.Jobs)
			}
			if h := w.Headline.AllocatedGPUHours; !approx(h, 75.0/3600) {
				t.Errorf("%.6f GPU-hours, want 4 × 16 s + 3 × 3 s + 2 s = 75 s", h)
			}
			if n := w.Headline.GPUWait.N; n != 5 {
				t.Errorf("%d GPU waits, want the 5 jobs that started", n)
			}
		})
	}
}

// TestNeverStartedNotRuns: the real test cluster's jobs cancelled while
// pending (1-4, 6, 7: Start None) are GPU jobs but not runs: in no task,
// class or bottleneck, counted as never started; the tasks are the jobs
// that ran (issue #38: a task's failure rate over runs that ran).
func TestNeverStartedNotRuns(t *testing.T) {
	jobs := realJobs(t, "real", "22.05-cancelled-pending-P-epoch-steps.txt")
	f, err := Analyse(Input{Jobs: jobs}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := f.Summary
	if s.GPUJobs != 11 || s.NeverStarted != 6 {
		t.Errorf("GPU jobs %d, never started %d; want 11, 6", s.GPUJobs, s.NeverStarted)
	}
	classJobs := 0
	for _, c := range s.ByClass {
		classJobs += c.Jobs
	}
	if classJobs != 5 {
		t.Errorf("class table counts %d jobs, want the 5 that ran", classJobs)
	}
	runs := map[string]int{}
	for _, p := range f.Profiles {
		runs[p.Name] = p.Jobs
		if p.Finished > p.Jobs {
			t.Errorf("task %s: %d finished of %d runs", p.Name, p.Finished, p.Jobs)
		}
	}
	if want := map[string]int{"blocker": 1, "ran": 3, "killed": 1}; !maps.Equal(runs, want) {
		t.Errorf("task runs %v, want %v", runs, want)
	}
}
