package report

import (
	"bytes"
	"fmt"
	"github.com/gpuprof/gpuprof/internal/present"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// runningMonth is October 2026 on two nodes of 8 H100 (16 GPUs; the
// long-training QOS would cap at 12) with the jobs whose counts disagreed
// in one report (issue #26, item 8): 25 long training runs of 10 h, one
// after another; 14 more started on the 30th and still running when the
// month ends; a CPU job running through the whole month; and a GPU job
// started in September whose end sacct did not record.
func runningMonth() analysis.Input {
	from, to := october.From, october.To
	in := analysis.Input{Window: october, Now: to.Add(6 * time.Hour)}
	for _, n := range []string{"gpu01", "gpu02"} {
		in.Nodes = append(in.Nodes, analysis.Node{Name: n, GPUModel: plantedH100, GPUs: 8, MemoryTotal: 80 << 30, Partitions: []string{"gpu"}})
	}
	gpu := func(node string) analysis.GPU {
		return analysis.GPU{Node: node, Model: plantedH100, MemoryTotal: 80 << 30, VRAMPeak: 40 << 30, VRAMPeakValid: true,
			UtilMean: 85, UtilMeanValid: true, UtilP50: 85, UtilP95: 90, UtilPctValid: true, UtilMax: 95, UtilMaxValid: true, IdleValid: true}
	}
	train := func(id string, start time.Time, run time.Duration) analysis.Job {
		j := analysis.Job{Cluster: "planted", ID: id, User: "ann", Account: "ml", Partition: "gpu", Name: "train", State: "COMPLETED",
			Submit: start.Add(-5 * time.Minute), Start: start, End: start.Add(run), TimeLimit: 7 * 24 * time.Hour, ExitKnown: true,
			ReqGPUs: 1, NodeCount: 1, NodeList: "gpu01", HasGPUData: true, GPUs: []analysis.GPU{gpu("gpu01")}}
		if run == 0 {
			j.State, j.End, j.ExitKnown, j.NodeList = "RUNNING", time.Time{}, false, "gpu02"
			j.GPUs[0].Node = "gpu02"
		}
		return j
	}
	for k := range 25 {
		in.Jobs = append(in.Jobs, train(fmt.Sprint(100+k), from.Add(time.Duration(11*k)*time.Hour), 10*time.Hour))
	}
	for k := range 14 {
		in.Jobs = append(in.Jobs, train(fmt.Sprint(200+k), time.Date(2026, 10, 30, 0, k, 0, 0, time.UTC), 0))
	}
	cpu := analysis.Job{Cluster: "planted", ID: "300", User: "bob", Account: "phys", Partition: "cpu", Name: "mesh", State: "COMPLETED",
		Submit: from.AddDate(0, -1, 0), Start: from.AddDate(0, -1, 0), End: to.AddDate(0, 0, 2), TimeLimit: 90 * 24 * time.Hour}
	lost := analysis.Job{Cluster: "planted", ID: "301", User: "cat", Account: "bio", Partition: "gpu", Name: "fold", State: "FAILED",
		Submit: from.Add(-50 * time.Hour), Start: from.Add(-48 * time.Hour), ReqGPUs: 1, NodeCount: 1}
	in.Jobs = append(in.Jobs, cpu, lost)
	return in
}

// TestReportOneNumberPerFact is issue #26's item 8 on a month with jobs
// running across its end: the headline and the Methods section count the
// same jobs, the long-training rule's peak is the cross-check's
// long-training peak (running jobs included), and the waits the report
// prints are said to be observed.
func TestReportOneNumberPerFact(t *testing.T) {
	in := runningMonth()
	c := analysis.DefaultConfig()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		t.Fatal(err)
	}
	f.Jobs = nil
	w := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: october}, c)
	d := Data{Title: "one number per fact", Cluster: "planted", Month: "2026-10", Generated: october.To,
		Workload: w, Findings: f, Config: c, Notices: analysis.NewNoticeTally(october).Summary()}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()

	// One count of the month's jobs: 39 long training runs, the GPU job
	// without an end and the CPU job running through the month.
	h := w.Headline
	if h.Jobs != 41 || h.GPUJobs != 40 {
		t.Errorf("headline: %d jobs (%d with a GPU), want 41 (40)", h.Jobs, h.GPUJobs)
	}
	for _, want := range []string{
		fmt.Sprintf("| Jobs (with a GPU) | %s (%s) |", present.Int(h.Jobs), present.Int(h.GPUJobs)),
		fmt.Sprintf("Jobs analysed: %s, of which %s used a GPU and %s did not.", present.Int(h.Jobs), present.Int(h.GPUJobs), present.Int(h.Jobs-h.GPUJobs)),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}

	// One peak of long training: the cross-check's class row and the
	// rule's evidence.
	var peak float64
	for _, l := range f.Plan.Classes {
		if l.Class == analysis.ClassLongTraining {
			peak = l.PeakGPUs
		}
	}
	if peak != 14 {
		t.Errorf("the long-training peak is %v GPUs, want the 14 still running at the month's end", peak)
	}
	if want := "long training held " + present.GPUsHeld(peak) + " of 16 GPUs at its peak"; !strings.Contains(md, want) {
		t.Errorf("Markdown lacks %q", want)
	}
	if strings.Contains(md, "long training held at most") {
		t.Error("the long-training rule says it held at most fewer GPUs than its peak")
	}

	// Observed waits are said to be observed.
	for _, want := range []string{"| Queue wait of GPU jobs, observed (p50 / p95) |", "| Observed wait p50 | Observed wait p95 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

// TestReportPlacedModels: the purchase table says which models only took
// untyped jobs the replay placed there, and which took some among jobs
// that needed them (issue #26, item 7).
func TestReportPlacedModels(t *testing.T) {
	d := fixture()
	today := d.SimPlan.Today
	today.Models[0].Demand, today.Models[0].Placeable = 700, 100 // H100: needed, and placed jobs too
	today.Models[1].Demand, today.Models[1].Placeable = 0, 300   // A100: placed jobs only
	out := renderAll(t, d)["md"]
	for _, want := range []string{
		"| NVIDIA H100 80GB HBM3 (with untyped jobs placed by the replay) | 24 |",
		"| NVIDIA A100-SXM4-40GB (untyped jobs placed by the replay) | 8 |",
		"is the replay's placement, not a demand for the model",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if out := renderAll(t, fixture())["md"]; strings.Contains(out, "placed by the replay") {
		t.Error("a plan on models jobs asked for speaks of placement")
	}
}
