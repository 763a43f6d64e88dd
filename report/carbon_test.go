package report

import (
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/analysis"
)

// TestCO2eTables: with a configured emission factor the model and account
// energy tables have a CO2e column, unknown where a row has no reading;
// without one neither has the column nor any word of CO2e (issue #28).
func TestCO2eTables(t *testing.T) {
	tests := []struct {
		name   string
		carbon string
		want   []string // in the markdown
		html   int      // CO2e header cells in the HTML
	}{
		{name: "no factor", carbon: "", want: []string{
			"| Model | Job GPUs | VRAM peak p50 | VRAM peak p95 | Preallocated | Energy | Energy measured |\n",
			"| Account | GPU-hours | Energy | Energy measured | kWh per measured GPU-hour |\n",
			"| Month | Jobs | GPU-h allocated | GPU-h used | Utilisation | Occupancy | Observed GPU wait p95 | GPU-h lost | Energy |\n",
		}},
		{name: "fixed factor", carbon: "fixed 350 gCO2e/kWh", html: 3, want: []string{
			"| Model | Job GPUs | VRAM peak p50 | VRAM peak p95 | Preallocated | Energy | Energy measured | CO2e |\n",
			"| NVIDIA H100 80GB HBM3 | 1,200 | 35.0 % | 85.0 % | 40 (800.0 GPU-h) | 2,900 kWh | 77.8 % | 1.0 t CO2e |\n",
			// No energy reading, no CO2e: unknown, never 0.
			"| NVIDIA A100-SXM4-40GB | 500 | 52.0 % | 97.0 % | 0 | unknown | none | unknown |\n",
			"CO2e is the energy times the configured emission factor (fixed 350 gCO2e/kWh), over the part of each job's run in the month",
			"| Account | GPU-hours | Energy | Energy measured | kWh per measured GPU-hour | CO2e |\n",
			"| physics | 8,000 | 2,400 kWh | 87.5 % | 0.34 | 840.0 kg CO2e |\n",
			"| 4 others | 1,960 | unknown | none | unknown | unknown |\n",
			// Every month's CO2e beside its energy; an earlier month
			// without energy readings has none.
			"| Month | Jobs | GPU-h allocated | GPU-h used | Utilisation | Occupancy | Observed GPU wait p95 | GPU-h lost | Energy | CO2e |\n",
			"| 2026-09 | 900 | 10,000 | — | — | — | 02:00:00 | 410.0 | unknown | unknown |\n",
			"| 2026-10 | 1,100 | 11,800 | 5,200 | 52.0 % | 49.6 % | 02:30:00 | 380.5 | 2,950 kWh | 1.0 t CO2e |\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := fixture()
			w := &d.Workload
			w.Carbon = tt.carbon
			if tt.carbon != "" {
				// 350 g/kWh of the row's kWh, as analysis would give.
				for _, e := range []*analysis.Energy{&w.Models[0].Energy, &w.Accounts[0].Energy, &d.Earlier[1].Headline.Energy, &w.Headline.Energy} {
					kg := e.KWh * 0.35
					e.CO2eKg, e.CO2eCoverage = &kg, 1
				}
			}
			out := renderAll(t, d)
			for _, want := range tt.want {
				if !strings.Contains(out["md"], want) {
					t.Errorf("markdown lacks %q", want)
				}
			}
			if tt.carbon == "" && (strings.Contains(out["md"], "CO2e") || strings.Contains(out["html"], "CO2e")) {
				t.Errorf("CO2e without a factor")
			}
			if got := strings.Count(out["html"], `<th class="num">CO2e</th>`); got != tt.html {
				t.Errorf("HTML: %d CO2e columns, want %d", got, tt.html)
			}
		})
	}
}
