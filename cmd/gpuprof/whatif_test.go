package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gpuprof/gpuprof/analysis"
)

func TestWhatifFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    whatifOptions
	}{
		{"no seeds", whatifOptions{Seeds: 0}},
		{"bad add", whatifOptions{Seeds: 1, Add: []string{"H100"}}},
		{"add zero", whatifOptions{Seeds: 1, Add: []string{"0xH100"}}},
		{"remove with partition", whatifOptions{Seeds: 1, Remove: []string{"1xA100:gpu"}}},
		{"growth alone", whatifOptions{Seeds: 1, Growth: "30%"}},
		{"bare growth", whatifOptions{Seeds: 1, Growth: "30", Horizon: "12mo"}},
		{"month and since", whatifOptions{Seeds: 1, Month: "2026-11", Since: "2026-11-01"}},
		{"bad partition", whatifOptions{Seeds: 1, Partitions: []string{"debug"}}},
		{"bad qos", whatifOptions{Seeds: 1, QOS: []string{"normal:MaxBogus=1"}}},
		{"bad node", whatifOptions{Seeds: 1, Nodes: []string{"gpu01"}}},
	} {
		_, _, err := tt.o.params()
		var u usageError
		if err == nil || !errors.As(err, &u) {
			t.Errorf("%s: err = %v, want a usage error", tt.name, err)
		}
	}
	o := whatifOptions{Seeds: 3, Add: []string{"2xH100:gpu"}, Remove: []string{"1xa100"}, Growth: "30%", Horizon: "1y",
		Nodes: []string{"gpu[01-02]:4xh100"}, Partitions: []string{"debug:Nodes=gpu01,MaxTime=1:00:00"}, QOS: []string{"normal:MaxTRESPerUser=gres/gpu=4"}}
	p, _, err := o.params()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 4 || p.Changes[0].Count != 2 || p.Changes[0].Partition != "gpu" || p.Months != 12 || p.Growth != 0.3 || len(p.FlagNodes) != 2 {
		t.Errorf("params = %+v", p)
	}
}

// TestWhatIfWords: durations are written as Slurm writes them
// ([D-]HH:MM:SS, sacct's Elapsed), differences with a sign, and the
// counting window in sacct's instant form, local time.
func TestWhatIfWords(t *testing.T) {
	for _, tc := range []struct {
		sec  float64
		want string
	}{
		{0, "00:00:00"}, {0.6, "00:00:01"}, {45, "00:00:45"}, {3600, "01:00:00"},
		{4*3600 + 54*60, "04:54:00"}, {86400 + 3661, "1-01:01:01"},
	} {
		if got := shortDuration(tc.sec); got != tc.want {
			t.Errorf("shortDuration(%v) = %q, want %q", tc.sec, got, tc.want)
		}
	}
	if got := signedDuration(-90); got != "-00:01:30" {
		t.Errorf("signedDuration(-90) = %q", got)
	}
	if got := signedDuration(12); got != "+00:00:12" {
		t.Errorf("signedDuration(12) = %q", got)
	}
	var b bytes.Buffer
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local)
	writeCounting(&b, analysis.Counting{Window: analysis.Window{From: from, To: from.AddDate(0, 1, 0)}, OpenJobs: 1, End: from.AddDate(0, 1, 0)})
	if want := "GPU time counted from 2026-11-01T00:00:00 to 2026-12-01T00:00:00; 1 job without an end counted up to 2026-12-01T00:00:00"; !strings.Contains(b.String(), want) {
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
	writeScenario(&b, analysis.Scenario{Partitions: []analysis.Group{g("gpu"), g("训练分区"), g("🚀fast")}})
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
