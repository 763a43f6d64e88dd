package cliview

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// TestProfilesGPUsColumn: sacct history shows the GPUs it requested and
// "–" for those used (unknown, never 0.0); a task with readings on only
// some runs is marked.
func TestProfilesGPUsColumn(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	mk := func(user, name string, run time.Duration, gpus int, util ...float64) analysis.Job {
		j := analysis.Job{Cluster: "c", ID: name, User: user, Name: name, State: "COMPLETED",
			Submit: t0, Start: t0, End: t0.Add(run), ExitKnown: true, ReqGPUs: gpus}
		for _, u := range util {
			j.GPUs = append(j.GPUs, analysis.GPU{Node: "n1", UtilMean: u, UtilMeanValid: true})
			j.HasGPUData = true
		}
		return j
	}
	jobs := []analysis.Job{
		mk("ann", "sweep", 10*time.Minute, 2), mk("ann", "sweep", 12*time.Minute, 2), // sacct history
		mk("bob", "train", 6*time.Hour, 2, 90, 1), mk("bob", "train", 6*time.Hour, 4), // readings on one run
	}
	var b bytes.Buffer
	if err := WriteProfiles(&b, analyseJobs(jobs, analysis.DefaultConfig()), 5); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"short_debug", "2.0/–", // ann: short runs from the scheduler view, used unknown
		"3.0/1.0*", // bob: 2 + 4 requested over both runs; 1 used on the run with readings
		"– no run has GPU utilisation readings", "* over the runs with readings only",
		"Asks for 2.0 GPUs per run; how many it used is unknown (no GPU readings).",
		"Asks for 2.0 GPUs per run but uses 1.0 (over the 1 of 2 runs with readings).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0.0/0.0") || strings.Contains(out, "2.0/0.0") {
		t.Errorf("GPUs used printed as 0 where unknown:\n%s", out)
	}
}

// TestProfilesWideNames: task names in CJK (two terminal cells a
// character) keep the columns of `gpuprof profiles` straight:
// every line of the task table is as wide as its header, and each class
// starts at the header's CLASS offset, measured in display cells.
func TestProfilesWideNames(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	var jobs []analysis.Job
	for i, name := range []string{"训练大模型", "推理服务", "plain", "データ前処理"} {
		for k := range 2 {
			jobs = append(jobs, analysis.Job{Cluster: "c", ID: fmt.Sprint(i*10 + k), User: "ann", Name: name, State: "COMPLETED",
				Submit: t0, Start: t0, End: t0.Add(time.Duration(1+i) * time.Hour), ExitKnown: true, ReqGPUs: 1,
				GPUs: []analysis.GPU{{Node: "n1", UtilMean: 50, UtilMeanValid: true}}, HasGPUData: true})
		}
	}
	var b bytes.Buffer
	if err := WriteProfiles(&b, analyseJobs(jobs, analysis.DefaultConfig()), 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "USER ") })
	if h < 0 {
		t.Fatalf("no task table:\n%s", b.String())
	}
	header := lines[h]
	classAt := ansi.StringWidth(header[:strings.Index(header, "CLASS")])
	rows := 0
	for _, l := range lines[h+1:] {
		if !strings.HasPrefix(l, "ann ") {
			break
		}
		rows++
		if got, want := ansi.StringWidth(l), ansi.StringWidth(header); got != want {
			t.Errorf("line is %d cells, header %d: %q", got, want, l)
		}
		i := strings.Index(l, "long_training")
		if i < 0 {
			i = strings.Index(l, "other")
		}
		if i < 0 {
			i = strings.Index(l, "short_debug")
		}
		if i >= 0 && ansi.StringWidth(l[:i]) != classAt {
			t.Errorf("class at cell %d, header's at %d:\n%s", ansi.StringWidth(l[:i]), classAt, b.String())
		}
	}
	if rows != 4 {
		t.Errorf("%d task rows, want 4:\n%s", rows, b.String())
	}
	if strings.Contains(b.String(), " 1 runs") {
		t.Errorf("plural for one:\n%s", b.String())
	}
}

// TestProfilesRunningTaskRunTime: a task whose runs are all still running
// has no run time yet and no finished run: its RUN and FAILED columns are
// "—" (unknown), not 00:00:00 and 0 % (issue #38: DLRM's 9 running runs).
func TestProfilesRunningTaskRunTime(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	var jobs []analysis.Job
	for i := range 3 {
		jobs = append(jobs, analysis.Job{Cluster: "c", ID: fmt.Sprint(i), User: "dan", Name: "dlrm", State: "RUNNING",
			Submit: t0, Start: t0.Add(time.Duration(i) * time.Hour), ReqGPUs: 8})
	}
	jobs = append(jobs, analysis.Job{Cluster: "c", ID: "9", User: "eve", Name: "done", State: "COMPLETED",
		Submit: t0, Start: t0, End: t0.Add(2 * time.Hour), ExitKnown: true, ReqGPUs: 1})
	in := analysis.Input{Jobs: jobs, Window: analysis.Window{From: t0, To: t0.Add(24 * time.Hour)}, Now: t0.Add(5 * time.Hour)}
	f, err := analysis.Analyse(in, analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteProfiles(&b, ToProfilesJSON(f, analysis.ConfUse{}), 0); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "dan":
			if strings.Contains(line, "00:00:00") || strings.Contains(line, "0 %") || strings.Count(line, present.Dash) < 4 {
				t.Errorf("running task: %q, want run times and rates unknown", line)
			}
		case len(f) > 0 && f[0] == "eve":
			if !strings.Contains(line, "02:00:00") {
				t.Errorf("finished task: %q, want its run time", line)
			}
		}
	}
}
