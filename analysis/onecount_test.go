package analysis

import (
	"fmt"
	"testing"
	"time"
)

// longRunningMonth is March 2025 on two nodes of 8 H100 (16 GPUs, so the
// long-training QOS would cap at 12): 25 long training runs of 10 h on
// one GPU, one after another, and 14 more on one GPU each started on the
// 30th and still running when the month ends (no end recorded). At the
// month's end long training holds 14 GPUs at once.
func longRunningMonth() Input {
	from := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	in := Input{Window: Window{From: from, To: to}, Now: to.Add(6 * time.Hour)}
	for _, n := range []string{"gpu01", "gpu02"} {
		in.Nodes = append(in.Nodes, Node{Name: n, GPUModel: h100, GPUs: 8, MemoryTotal: card, Partitions: []string{"gpu"}})
	}
	for k := range 25 {
		j := job(10*time.Hour, busy(85, 40))
		j.ID = fmt.Sprint(100 + k)
		j.Submit = from.Add(time.Duration(11*k) * time.Hour)
		j.Start, j.End = j.Submit, j.Submit.Add(10*time.Hour)
		in.Jobs = append(in.Jobs, j)
	}
	for k := range 14 {
		j := job(0, busy(85, 40))
		j.ID = fmt.Sprint(200 + k)
		j.State, j.ExitKnown = "RUNNING", false
		j.Submit = time.Date(2025, 3, 30, 0, k, 0, 0, time.UTC)
		j.Start, j.End = j.Submit, time.Time{}
		j.TimeLimit = 7 * 24 * time.Hour
		in.Jobs = append(in.Jobs, j)
	}
	return in
}

// TestLongTrainingPeakCountsRunningJobs is issue #26's "held at most 30
// of 6,212 beside a peak of 52.46": the long-training rule counts GPUs
// held at once by the one rule of every table (the counted part of each
// run, jobs still running up to the counting end), so its number is the
// plan's long-training peak, and the running jobs are in it.
func TestLongTrainingPeakCountsRunningJobs(t *testing.T) {
	in := longRunningMonth()
	f, err := Analyse(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var peak float64
	for _, l := range f.Plan.Classes {
		if l.Class == ClassLongTraining {
			peak = l.PeakGPUs
		}
	}
	if peak != 14 {
		t.Fatalf("setup: the plan's long-training peak is %v GPUs, want the 14 still running at the month's end", peak)
	}
	recs := recsOf(f, RecLongQOS)
	if len(recs) != 1 {
		for _, n := range f.NoChange {
			t.Logf("no change: %s: %s", n.Rule, n.Note)
		}
		t.Fatalf("long training held 14 of 16 GPUs (cap 12), but no long-training QOS is recommended: %v", kinds(f))
	}
	var note string
	for _, e := range recs[0].Evidence {
		if e.Rule == "long.peak" {
			note = e.Note
		}
	}
	if want := "long training held 14 of 16 GPUs at its peak"; note != want {
		t.Errorf("long.peak says %q, want %q (the plan's peak)", note, want)
	}
}

// TestPeaksCountRunningJobs: the per-user peaks (the per-user limit's
// evidence) sweep the counted part of each run, as every table does: a
// job still running counts up to the counting end.
func TestPeaksCountRunningJobs(t *testing.T) {
	jobs := []jobFact{
		{cs: 100, ce: 110, gpus: 2, share: 2, user: "a"},
		// Still running: no end of its own, counted up to 200.
		{cs: 105, ce: 200, gpus: 3, share: 3, user: "a"},
	}
	if got := peaksBy(jobs, func(j *jobFact) string { return j.user })["a"]; got != 5 {
		t.Errorf("user a's peak %d GPUs, want 5 (the running job with the other)", got)
	}
}

// oneCountMonth is November 2026 with the jobs whose count differed
// between the report's headline and its Methods section: besides ten
// GPU jobs inside the month, a CPU job running through the whole month,
// a CPU job still running, a GPU job whose end sacct did not record
// (FAILED, started in October), a job pending since October whose
// --begin is in December, and a job that ended in October (not the
// month's).
func oneCountMonth() Input {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	in := Input{Window: Window{From: from, To: to}, Now: to.Add(time.Hour)}
	for k := range 10 {
		j := job(2*time.Hour, busy(80, 30))
		j.ID = fmt.Sprint(k + 1)
		j.Submit = from.Add(time.Duration(k*24+1) * time.Hour)
		j.Start, j.End = j.Submit, j.Submit.Add(2*time.Hour)
		in.Jobs = append(in.Jobs, j)
	}
	cpu := Job{Cluster: "c1", ID: "50", User: "bob", Account: "lab", Partition: "cpu", State: "COMPLETED",
		Submit: from.AddDate(0, -1, 0), Start: from.AddDate(0, -1, 0), End: to.AddDate(0, 0, 3), TimeLimit: 60 * 24 * time.Hour}
	running := cpu
	running.ID, running.State, running.End = "51", "RUNNING", time.Time{}
	noEnd := job(0)
	noEnd.ID, noEnd.State, noEnd.ReqGPUs = "52", "FAILED", 1
	noEnd.Submit, noEnd.Start, noEnd.End = from.Add(-48*time.Hour), from.Add(-47*time.Hour), time.Time{}
	begin := job(0)
	begin.ID, begin.Name, begin.State, begin.ReqGPUs = "53", "held", "PENDING", 1
	begin.Submit, begin.Eligible, begin.Start, begin.End = from.Add(-72*time.Hour), to.AddDate(0, 0, 5), time.Time{}, time.Time{}
	october := job(time.Hour, busy(80, 30))
	october.ID = "54"
	october.Submit = from.Add(-10 * time.Hour)
	october.Start, october.End = october.Submit, october.Submit.Add(time.Hour)
	in.Jobs = append(in.Jobs, cpu, running, noEnd, begin, october)
	return in
}

// TestHeadlineAndSummaryCountTheSameJobs is issue #26's "headline jobs
// 7,640 vs Methods 7,642": the workload's headline and the analysis'
// summary count the same jobs of the month, by one rule — a job is the
// month's when its life, from its submission to its end (or on, while it
// has none), overlaps the month.
func TestHeadlineAndSummaryCountTheSameJobs(t *testing.T) {
	in := oneCountMonth()
	c := DefaultConfig()
	f, err := Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	h := SummariseWorkload(in, WorkloadParams{Window: in.Window}, c).Headline
	s := SummariseInput(in, c)
	// All but the job that ended in October: 10 + 2 CPU + 2 GPU.
	if h.Jobs != 14 || h.GPUJobs != 12 {
		t.Errorf("headline: %d jobs (%d GPU), want 14 (12)", h.Jobs, h.GPUJobs)
	}
	for name, got := range map[string]ClusterSummary{"Analyse": f.Summary, "SummariseInput": s} {
		if got.Jobs != h.Jobs || got.GPUJobs != h.GPUJobs || got.CPUJobs != h.Jobs-h.GPUJobs {
			t.Errorf("%s: %d jobs (%d GPU, %d CPU); the headline %d (%d GPU)", name, got.Jobs, got.GPUJobs, got.CPUJobs, h.Jobs, h.GPUJobs)
		}
		if got.WithGPUData+got.WithoutGPUData != got.GPUJobs {
			t.Errorf("%s: %d with and %d without GPU data, of %d GPU jobs", name, got.WithGPUData, got.WithoutGPUData, got.GPUJobs)
		}
	}
	// The job outside the month is in no table: its task's runs are the
	// month's only.
	for _, p := range f.Profiles {
		if p.Name == "train" && p.Jobs != 11 {
			t.Errorf("task train: %d runs, want the 10 of the month and the one without an end", p.Jobs)
		}
	}
	if n := f.Jobs[len(f.Jobs)-1]; n.Task != -1 {
		t.Errorf("the October job belongs to task %d, want none (-1)", n.Task)
	}
	// An unbounded window keeps every job given.
	in.Window = Window{}
	if f, _ := Analyse(in, c); f.Summary.Jobs != len(in.Jobs) {
		t.Errorf("without a window: %d jobs, want all %d", f.Summary.Jobs, len(in.Jobs))
	}
}
