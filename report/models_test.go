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
	)
	tests := []struct {
		name    string
		data    Data
		code    string // in the JSON missing list; "" for neither code
		say     []string
		notSay  []string
		unnamed bool // the "no per-GPU record" row is in the table
	}{
		{name: "no models at all", data: sacctOnly(), code: missingNoModel,
			say: []string{noneKnown, noReadings}, notSay: []string{"Only one GPU model"}},
		{name: "only GPUs without a record", data: with(unnamed), code: missingNoModel,
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
