package report

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// sacctOnly is a month of GPU jobs known only from the scheduler: no
// readings, so no utilisation, memory or models.
func sacctOnly() Data {
	d := fixture()
	w := &d.Workload
	h := &w.Headline
	h.MeasuredGPUHours, h.UsedGPUHours, h.Utilisation, h.Coverage, h.IdleGPUHours = 0, 0, 0, 0, 0
	h.VRAMPeakFrac, h.VRAMHeadroom = analysis.Dist{}, 0
	h.Energy = analysis.Energy{}
	w.Models = nil
	w.Util = analysis.UtilHistogram{}
	for i := range w.Daily {
		w.Daily[i].Used = 0
	}
	for i := range w.Users {
		w.Users[i].UsedGPUHours, w.Users[i].Utilisation, w.Users[i].IdleGPUHours = 0, 0, 0
		w.Users[i].Energy = analysis.Energy{}
	}
	for i := range w.Accounts {
		w.Accounts[i].Energy = analysis.Energy{}
	}
	s := &d.Findings.Summary
	s.WithoutGPUData += s.WithGPUData
	s.WithGPUData = 0
	for i := range d.Findings.Profiles {
		p := &d.Findings.Profiles[i]
		p.WithGPUData, p.UtilMean, p.VRAMPeakFrac = 0, analysis.Dist{}, analysis.Dist{}
	}
	d.Earlier = nil
	return d
}

func TestMissingData(t *testing.T) {
	oneModel := fixture()
	oneModel.Workload.Models = oneModel.Workload.Models[:1]
	nan := fixture()
	nan.Workload.Headline.Utilisation = nan.Workload.Headline.Utilisation * 0 / zero()
	nan.Findings.Plan.CFuture = 1 / zero()

	tests := []struct {
		name    string
		data    Data
		missing []string
		say     []string // in both HTML and Markdown
		html    []string // in HTML only
	}{
		{
			name:    "empty month",
			data:    Data{Month: "2026-11"},
			missing: []string{missingNoJobs, missingNoCapacity, missingNoEarlier},
			say: []string{"No jobs ran or waited in this month", "No partition data", "No earlier months are on record",
				"No capacity plan was simulated for this report", "Cross-check by averages", "thresholds in force were not recorded", "No jobs: no rule had data to look at", "No task profiles"},
			html: []string{`id="chart-daily" class="chart chart-empty"`, `id="chart-vram"`, `id="chart-plan" class="chart chart-empty"`},
		},
		{
			name:    "sacct only",
			data:    sacctOnly(),
			missing: []string{missingNoGPUData, missingNoModel, missingNoEarlier, missingNoEnergy},
			say: []string{"only the scheduler", "no GPU readings", "no GPU memory readings", "unknown (no GPU recorded its energy)",
				"from the scheduler record alone", "record names a GPU model (the jobs carry no GPU readings)",
				"1,100 have only the scheduler"},
			html: []string{`id="chart-util" class="chart chart-empty"`, "used is not known", `id="chart-daily" class="chart"`},
		},
		{
			name:    "one model",
			data:    oneModel,
			missing: []string{missingSomeGPUData, missingOneModel},
			say:     []string{"Only one GPU model was used this month"},
			html:    []string{`id="chart-vram" class="chart"`},
		},
		{
			name:    "several models",
			data:    fixture(),
			missing: []string{missingSomeGPUData},
			say:     []string{"NVIDIA A100-SXM4-40GB"},
		},
		{
			name:    "non-finite input",
			data:    nan,
			missing: []string{missingSomeGPUData},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderAll(t, tt.data)
			for format, s := range out {
				for _, bad := range []string{"NaN", "Inf", "null"} {
					if strings.Contains(s, bad) {
						i := strings.Index(s, bad)
						t.Errorf("%s contains %q: …%s", format, bad, s[max(0, i-200):i+len(bad)])
					}
				}
			}
			for _, want := range tt.say {
				for _, format := range []string{"html", "md"} {
					if !strings.Contains(out[format], want) {
						t.Errorf("%s lacks %q", format, want)
					}
				}
			}
			for _, want := range tt.html {
				if !strings.Contains(out["html"], want) {
					t.Errorf("HTML lacks %q", want)
				}
			}
			var v struct {
				Missing []string `json:"missing"`
			}
			if err := json.Unmarshal([]byte(out["json"]), &v); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v.Missing, tt.missing) {
				t.Errorf("JSON missing = %q, want %q", v.Missing, tt.missing)
			}
		})
	}
}

func TestChartIDs(t *testing.T) {
	for name, d := range map[string]Data{"full": fixture(), "empty": {}} {
		out := renderAll(t, d)
		ids := []string{chartDaily, chartVRAM, chartUtil, chartWait, chartClass, chartHeatmap, chartPlan}
		if name == "full" { // the trend needs earlier months
			ids = append(ids, chartTrend)
		}
		for _, id := range ids {
			if n := strings.Count(out["html"], `<figure id="`+id+`"`); n != 1 {
				t.Errorf("%s: %d figures with id %s, want 1", name, n, id)
			}
			fig := out["html"][strings.Index(out["html"], `<figure id="`+id+`"`):]
			fig = fig[:strings.Index(fig, "</figure>")]
			if !regexp.MustCompile(`<figcaption>[^<]+</figcaption>`).MatchString(fig) {
				t.Errorf("%s: figure %s has no caption", name, id)
			}
		}
		if name == "full" && strings.Contains(out["html"], `class="chart chart-empty"`) {
			t.Error("full fixture has an empty chart")
		}
	}
}

func zero() float64 { return 0 }
