package cliview

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
)

// TestWhatIfWords: differences are durations with a sign (the durations
// themselves are present.Seconds, tested there), and the counting window
// is in sacct's instant form, local time.
func TestWhatIfWords(t *testing.T) {
	if got := signedDuration(-90); got != "-00:01:30" {
		t.Errorf("signedDuration(-90) = %q", got)
	}
	if got := signedDuration(12); got != "+00:00:12" {
		t.Errorf("signedDuration(12) = %q", got)
	}
	var b bytes.Buffer
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local)
	Counting(&b, analysis.Counting{Window: analysis.Window{From: from, To: from.AddDate(0, 1, 0)}, OpenJobs: 1, End: from.AddDate(0, 1, 0)})
	if want := "Data window: 2026-11-01T00:00:00 to 2026-12-01T00:00:00, 30-00:00:00 of data; 1 job without an end counted up to 2026-12-01T00:00:00"; !strings.Contains(b.String(), want) {
		t.Errorf("counting %q, want it to contain %q", b.String(), want)
	}
}

// TestWhatIfScenarioWideNames: a partition named in CJK (two terminal
// cells a character) keeps the scenario table's columns straight: rows
// with the same numbers are the same number of cells wide.
func TestWhatIfScenarioWideNames(t *testing.T) {
	g := func(name string) analysis.Group {
		return analysis.Group{Name: name, GPUs: 8, WaitP95: analysis.Spread{Median: 3600, P10: 3600, P90: 3600}}
	}
	var b bytes.Buffer
	writeScenario(&b, capacity.Scenario{Partitions: []analysis.Group{g("gpu"), g("训练分区"), g("🚀fast")}})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3:\n%s", len(lines), b.String())
	}
	for _, l := range lines[2:] {
		if got, want := ansi.StringWidth(l), ansi.StringWidth(lines[1]); got != want {
			t.Errorf("row is %d cells, the first %d: columns shifted\n%s", got, want, b.String())
		}
	}
	if !strings.Contains(b.String(), "01:00:00") {
		t.Errorf("wait not in Slurm's form:\n%s", b.String())
	}
}

// TestWhatIfSaysWhatItLeftOut is the real test cluster's case (issue #26,
// item 6): 30 jobs on one node of 4 H100, five of them asking for 3–4
// GPUs; --remove 2xH100 leaves a 2-GPU node, on which those five can
// never start. The changed replay says it left them out, why, and their
// share of the GPU-hours, in the text and the JSON.
func TestWhatIfSaysWhatItLeftOut(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	in := analysis.Input{Window: analysis.Window{From: from, To: from.Add(2 * time.Hour)},
		Nodes: []analysis.Node{{Name: "localhost", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 4, Partitions: []string{"gpu"}}}}
	for i := range 30 {
		at := from.Add(time.Duration(i) * 3 * time.Minute)
		gpus := 1 + i%2
		if i%6 == 5 {
			gpus = 3 + i%2
		}
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(100 + i), User: "u", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(2 * time.Minute), TimeLimit: 5 * time.Minute,
			ReqGPUs: gpus, ReqGPUType: "h100", NodeCount: 1, NodeList: "localhost"})
	}
	res, err := capacity.RunWhatIf(in, capacity.WhatIfParams{Seeds: 1,
		Changes: []analysis.Change{{Kind: analysis.ChangeRemove, Count: 2, Model: "H100", Spec: "2xH100"}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteWhatIf(&b, res, false)
	out := b.String()
	t.Log(out)
	if res.Jobs.LeftOut != 0 || res.Changed.Jobs.LeftOut != 5 || res.Changed.Jobs.Replayed != 25 {
		t.Errorf("today %d left out; with 2 H100 removed %d left out, %d replayed: want 0; 5, 25", res.Jobs.LeftOut, res.Changed.Jobs.LeftOut, res.Changed.Jobs.Replayed)
	}
	for _, want := range []string{
		"Left out with the changes: 5 of 30 GPU jobs left out of the replay",
		"5: more GPUs on one node (up to 4) than a node of type h100 in partition gpu has (2)",
		"its waits are of the other jobs only",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "Left out: ") {
		t.Errorf("today's replay left nothing out, but the output says so")
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"left_out_reasons"`, `"kind": "gpus_per_node"`, `"left_out_share"`, `"unreproduced"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

// TestWhatIfSaysWhatItDoesNotReproduce: a partition whose observed p95
// wait the replay reproduces less than half of is named under the
// calibration, with the shares in its table.
func TestWhatIfSaysWhatItDoesNotReproduce(t *testing.T) {
	half := 0.0
	r := capacity.WhatIf{Jobs: capacity.SimJobs{Replayed: 40}, Calibration: capacity.Calibration{Jobs: 40, Reliable: true, TargetP95Wait: 3600,
		Partitions:   []capacity.CalibratedP{{Partition: "hn", Jobs: 40, ObservedP95: 251, ReproducedWait: &half, ReproducedP95: &half}},
		Unreproduced: []string{"partition hn: the replay reproduces less than half of the observed p95 wait (0s of 4m, 0 %); the error is small against the 1h00m target"}}}
	var b bytes.Buffer
	WriteWhatIf(&b, r, false)
	out := b.String()
	for _, want := range []string{"REPRODUCED", "0 %", "Calibration: good (docs/whatif.md thresholds, relative to the 01:00:00 target).",
		"Not reproduced: partition hn: the replay reproduces less than half of the observed p95 wait (0s of 4m, 0 %); the error is small against the 1h00m target."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestWhatIfSaysWhatPlacementIs is issue #26's item 7: on a partition of
// two models, P100 nodes first and G2 nodes after them, jobs that ask for
// no GPU type all run on the P100s in the replay (first fit), so "model
// G2 8 GPUs, 0 jobs" is placement, not a lack of demand. The rows say
// so, --remove of every G2 says that it moves only untyped jobs the
// replay placed, and the heading says what changed.
func TestWhatIfSaysWhatPlacementIs(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	in := analysis.Input{Window: analysis.Window{From: from, To: from.AddDate(0, 0, 7)}}
	for _, n := range []struct{ name, model string }{{"p0", "P100"}, {"p1", "P100"}, {"g0", "G2"}, {"g1", "G2"}} {
		in.Nodes = append(in.Nodes, analysis.Node{Name: n.name, GPUModel: n.model, GPUs: 4, Partitions: []string{"gpu"}})
	}
	for k := range 50 {
		at := from.Add(time.Duration(3*k) * time.Hour)
		in.Jobs = append(in.Jobs, analysis.Job{ID: fmt.Sprint(100 + k), User: "u", Partition: "gpu", State: "COMPLETED",
			Submit: at, Eligible: at, Start: at, End: at.Add(2 * time.Hour), TimeLimit: 4 * time.Hour,
			ReqGPUs: 1, NodeCount: 1, NodeList: "p0"})
	}
	res, err := capacity.RunWhatIf(in, capacity.WhatIfParams{Seeds: 1,
		Changes: []analysis.Change{{Kind: analysis.ChangeRemove, Count: 8, Model: "G2", Spec: "8xG2"}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteWhatIf(&b, res, false)
	out := b.String()
	t.Log(out)
	for _, want := range []string{
		"model G2 (untyped jobs placed by the replay)",
		"model P100 (untyped jobs placed by the replay)",
		"\nToday, replayed (1 seeded run: median, p10–p90)\n",
		"\nWith 8xG2 removed\n",
		"Placement: --remove 8xG2: no job asked for G2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"placement": [`, `"words": "8xG2 removed"`, `"placeable_jobs": 50`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

// TestWhatIfInventorySummary: a cluster of 1,213 nodes (openb's size) is
// summarised per GPU model and partitions on one short line, not listed
// node by node (issue #38: 63,815 characters); --list-nodes lists them,
// one a line.
func TestWhatIfInventorySummary(t *testing.T) {
	var r capacity.WhatIf
	r.ClusterSource = "slurm.conf of cluster openb"
	for i := range 1213 {
		n := capacity.SimNode{Name: fmt.Sprintf("node%04d", i), Model: "A100", GPUs: 8, Partitions: []string{"ls"}}
		switch {
		case i%3 == 1:
			n.Model, n.Partitions = "V100M32", []string{"be", "ls"}
		case i%3 == 2:
			n.GPUs = 2 + i%2
			n.Model, n.Partitions = "T4", []string{"be"}
		}
		r.Nodes = append(r.Nodes, n)
	}
	r.Nodes = append(r.Nodes, capacity.SimNode{Name: "new1", Model: "H100", GPUs: 8, Partitions: []string{"ls"}, Added: true})
	var b bytes.Buffer
	WriteWhatIf(&b, r, false)
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "Cluster (") {
			line = l
		}
	}
	want := "Cluster (slurm.conf of cluster openb): 1,214 nodes, 7,490 GPUs: 405 nodes of 8× A100 [ls] (3,240 GPUs); " +
		"404 nodes of 8× V100M32 [be,ls] (3,232 GPUs); 404 nodes of T4 [be] (1,010 GPUs); 1 node of 8× H100 [ls] (8 GPUs) (added)."
	if line != want {
		t.Errorf("inventory line\n got %q\nwant %q", line, want)
	}
	if strings.Contains(b.String(), "node0001") || !strings.Contains(b.String(), "--list-nodes") {
		t.Errorf("nodes listed without --list-nodes, or the flag not named:\n%.600s", b.String())
	}
	b.Reset()
	WriteWhatIf(&b, r, true)
	if !strings.Contains(b.String(), "\n  node0001 8× V100M32 [be,ls]\n") || !strings.Contains(b.String(), "\n  new1 8× H100 [ls] (added)\n") {
		t.Errorf("--list-nodes: nodes not one a line:\n%.800s", b.String())
	}
}
