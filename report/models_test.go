package report

import (
	"encoding/json"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestModelSentences: "no GPU model known" and "one GPU model" are
// different findings, in the JSON missing list and in the text of every
// format. The Workload's model "" (GPUs without a per-GPU record) is no
// model: a month of sacct history alone has none known, not one.
func TestModelSentences(t *testing.T) {
	unnamed := analysis.ModelUsage{Model: "", JobGPUs: 300, GPUHours: 960.5}
	h100 := fixture().Workload.Models[0]
	with := func(ms ...analysis.ModelUsage) Data {
		d := fixture()
		d.Workload.Models = ms
		return d
	}
	const (
		noneKnown     = "No GPU model is known"
		noRecord      = "no job has a per-GPU record"
		onlyOne       = "Only one GPU model was used this month (NVIDIA H100 80GB HBM3)"
		noReadings    = "the jobs carry no GPU readings"
		cannotCompare = "so models cannot be compared"
		planned       = "come from its inventory (from the profiles and slurm.conf of cluster alpha), on which the capacity plan below replays the jobs"
	)
	noPlan := func(d Data) Data {
		d.SimPlan = nil
		return d
	}
	tests := []struct {
		name    string
		data    Data
		code    string // in the JSON missing list; "" for neither code
		say     []string
		notSay  []string
		unnamed bool // the "no per-GPU record" row is in the table
	}{
		// Issue #26: "No GPU model is known" above a plan per model. The
		// jobs' records name no model, but the plan's inventory does.
		{name: "no models in the records, a plan on two", data: sacctOnly(), code: missingNoModel,
			say: []string{noReadings, planned, "2 GPU models (NVIDIA H100 80GB HBM3 and NVIDIA A100-SXM4-40GB)"}, notSay: []string{noneKnown, "Only one GPU model"}},
		{name: "no models at all", data: noPlan(sacctOnly()), code: missingNoModel,
			say: []string{noneKnown, noReadings}, notSay: []string{"Only one GPU model", planned}},
		{name: "only GPUs without a record, a plan on two", data: with(unnamed), code: missingNoModel,
			say: []string{noRecord, planned}, notSay: []string{noneKnown, "Only one GPU model"}, unnamed: true},
		{name: "only GPUs without a record", data: noPlan(with(unnamed)), code: missingNoModel,
			say: []string{noneKnown, noRecord, cannotCompare}, notSay: []string{"Only one GPU model"}, unnamed: true},
		{name: "one model", data: with(h100), code: missingOneModel,
			say: []string{onlyOne, cannotCompare}, notSay: []string{noneKnown}},
		{name: "one model and GPUs without a record", data: with(h100, unnamed), code: missingOneModel,
			say: []string{onlyOne}, notSay: []string{noneKnown}, unnamed: true},
		{name: "two models", data: fixture(), notSay: []string{noneKnown, "Only one GPU model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderAll(t, tt.data)
			for _, format := range []string{"html", "md"} {
				for _, s := range tt.say {
					if !strings.Contains(out[format], s) {
						t.Errorf("%s lacks %q", format, s)
					}
				}
				for _, s := range tt.notSay {
					if strings.Contains(out[format], s) {
						t.Errorf("%s says %q", format, s)
					}
				}
				text := out[format]
				if format == "html" {
					// Cells wrap words with a break opportunity in spans.
					text = html.UnescapeString(tagRE.ReplaceAllString(text, ""))
				}
				if got := strings.Contains(text, "no per-GPU record: sacct history"); got != tt.unnamed {
					t.Errorf("%s: table row for GPUs without a record = %v, want %v", format, got, tt.unnamed)
				}
			}
			var v struct {
				Missing []string `json:"missing"`
			}
			if err := json.Unmarshal([]byte(out["json"]), &v); err != nil {
				t.Fatal(err)
			}
			for _, code := range []string{missingNoModel, missingOneModel} {
				if got, want := slices.Contains(v.Missing, code), code == tt.code; got != want {
					t.Errorf("JSON missing %q: has %s = %v, want %v", v.Missing, code, got, want)
				}
			}
		})
	}
}
