package report

import (
	"fmt"
	"strings"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
)

// dash stands for a number that is missing or cannot be shown.
const dash = present.Dash

// points prints a value already in percent.
func points(v float64) string { return present.Percent(v / 100) }

// gib prints bytes in GiB (present.GiB), a dash for none.
func gib(b uint64) string {
	if b == 0 {
		return dash
	}
	return present.GiB(b) + " GiB"
}

// share returns part/whole, 0 when whole is not positive. It only
// expresses a given number relative to a given total for display.
func share(part, whole float64) float64 {
	if !(whole > 0) {
		return 0
	}
	return part / whole
}

// words turns a snake_case key into words: "long_training" → "long training".
func words(s string) string { return strings.ReplaceAll(s, "_", " ") }

// energyCells prints an energy figure and the share of GPU-hours it was
// measured on, "unknown" for both when nothing was measured: no reading
// is never written as 0 kWh.
func energyCells(e analysis.Energy) (energy, measured string) {
	if !e.Known() {
		return "unknown", "none"
	}
	return present.KWh(e.KWh), present.Percent(e.Coverage)
}

// energyText is energyCells in one phrase.
func energyText(e analysis.Energy) string {
	if !e.Known() {
		return "unknown (no GPU recorded its energy)"
	}
	return fmt.Sprintf("%s (measured on %s of the GPU-hours)%s", present.KWh(e.KWh), present.Percent(e.Coverage), co2eText(e))
}

// co2e prints emissions as every page does (present.CO2e): "12.3 kg
// CO2e", "1.2 t CO2e".
func co2e(kg float64) string { return present.CO2e(kg) }

// co2eText is ", 12.3 kg CO2e" (with the share of the energy that had a
// factor when not all of it did); empty without a factor.
func co2eText(e analysis.Energy) string {
	if e.CO2eKg == nil {
		return ""
	}
	if e.CO2eCoverage < 1-1e-9 {
		return fmt.Sprintf(", %s (on the %s of the energy with an hourly factor)", co2e(*e.CO2eKg), present.Percent(e.CO2eCoverage))
	}
	return ", " + co2e(*e.CO2eKg)
}

// co2eCell is an energy's CO2e for a table: "unknown" without a reading
// or a factor for it.
func co2eCell(e analysis.Energy) string {
	if e.CO2eKg == nil {
		return "unknown"
	}
	return co2e(*e.CO2eKg)
}
